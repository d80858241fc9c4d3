//! The TLS every client of ours speaks, made once for reqwest (`check`, the probes) and the
//! generator's bare client (`load`), so both trust exactly the same certificates: the
//! system's (rustls-platform-verifier, as reqwest does by itself), plus a PEM the target names,
//! or any certificate for self-signed targets.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use super::HttpError;

/// The rustls configuration for a client: `trust_pem` trusted besides the system's roots, or
/// any certificate when `insecure`. No ALPN: our clients speak HTTP/1.1 only, which needs none
/// (and hyper-rustls refuses a configuration that sets it).
pub(super) fn config(
    trust_pem: Option<&str>,
    insecure: bool,
    plain_http: bool,
) -> Result<rustls::ClientConfig, HttpError> {
    // A provider the process installed wins, as it does in reqwest.
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(HttpError::Tls)?
        .dangerous();
    let builder = if insecure {
        builder.with_custom_certificate_verifier(Arc::new(AnyCertificate(
            provider.signature_verification_algorithms,
        )))
    } else {
        let extra = match trust_pem {
            Some(pem) => certificates(pem)?,
            None => Vec::new(),
        };
        let platform = Platform {
            extra,
            provider,
            verifier: OnceLock::new(),
        };
        if !plain_http {
            platform.get().map_err(HttpError::Tls)?;
        }
        builder.with_custom_certificate_verifier(Arc::new(platform))
    };
    Ok(builder.with_no_client_auth())
}

/// What `config` refuses of the certificate a server presents over `tcp` as `host`, if
/// anything: a TLS handshake as any request's. Only the certificate's trust is said (for another
/// name, expired, signed by a CA not trusted); a handshake that fails otherwise (no TLS there,
/// closed, silent) is `None`: that is the server's behaviour, for a run to judge.
pub(super) async fn certificate_refused(
    config: rustls::ClientConfig,
    host: &str,
    tcp: tokio::net::TcpStream,
) -> Option<String> {
    let name = ServerName::try_from(host.to_string()).ok()?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let e = connector.connect(name, tcp).await.err()?;
    match e.get_ref()?.downcast_ref::<rustls::Error>()? {
        rustls::Error::InvalidCertificate(c) => Some(c.to_string()),
        _ => None,
    }
}

/// Every certificate of a PEM bundle; one that does not parse, or none at all, is an error
/// (a file that trusts nothing is a mistake worth saying).
fn certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, HttpError> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(HttpError::Certificate)?;
    if certs.is_empty() {
        return Err(HttpError::NoCertificate);
    }
    Ok(certs)
}

/// Accepts any certificate (`--insecure`), but still checks that the handshake was signed by
/// the key of the certificate presented.
#[derive(Debug)]
struct AnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// The platform's verifier, made when first needed: up front for a TLS target (so a failure is a
/// setup error), at the first handshake for a plain-HTTP one, which never needs the system's
/// roots (reading them takes a few milliseconds). A failure made lazily fails every handshake,
/// with its reason.
#[derive(Debug)]
struct Platform {
    extra: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    verifier: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl Platform {
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.verifier
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new_with_extra_roots(
                    self.extra.clone(),
                    self.provider.clone(),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for Platform {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use tokio::io::AsyncWriteExt;
    use tokio::net::{TcpListener, TcpStream};

    use crate::ClientConfig;

    /// A TLS server's side with a self-signed certificate for `name`, and the certificate
    /// (PEM) for a client to trust: the test servers of this crate.
    pub(crate) fn self_signed(name: &str) -> (tokio_rustls::TlsAcceptor, String) {
        let ck = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![ck.cert.der().clone()], key)
            .unwrap();
        (Arc::new(config).into(), ck.cert.pem())
    }

    /// A server on 127.0.0.1 presenting a self-signed certificate for `localhost` only (or
    /// speaking plain HTTP when `tls` is false); its port and the certificate (PEM).
    async fn server(tls: bool) -> (u16, String) {
        let (acceptor, pem) = self_signed("localhost");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                if tls {
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move { acceptor.accept(tcp).await.map(drop) });
                } else {
                    let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
                }
            }
        });
        (port, pem)
    }

    async fn refused(cfg: &ClientConfig, host: &str, port: u16) -> Option<String> {
        let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        cfg.certificate_refused(host, tcp).await.unwrap()
    }

    /// What a run is told before it starts: a certificate the client does not trust, named;
    /// a server that is not TLS at all is no trust question (the run judges it).
    #[tokio::test]
    async fn only_a_certificate_the_client_does_not_trust_is_refused() {
        let (port, pem) = server(true).await;
        let trusting = ClientConfig {
            trust_pem: Some(pem),
            ..ClientConfig::new(std::time::Duration::from_secs(5), 0)
        };
        assert_eq!(refused(&trusting, "localhost", port).await, None);
        let other_name = refused(&trusting, "127.0.0.1", port).await.unwrap();
        assert!(other_name.contains("not valid for name"), "{other_name}");
        let plain = ClientConfig::new(std::time::Duration::from_secs(5), 0);
        let unknown = refused(&plain, "localhost", port).await.unwrap();
        assert!(unknown.contains("UnknownIssuer"), "{unknown}");
        let insecure = ClientConfig {
            insecure: true,
            ..plain.clone()
        };
        assert_eq!(refused(&insecure, "127.0.0.1", port).await, None);
        let (http_port, _) = server(false).await;
        assert_eq!(refused(&plain, "localhost", http_port).await, None);
    }
}
