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
