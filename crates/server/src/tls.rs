//! TLS for `serve`: a given certificate and key, or a self-signed pair made at start.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::ServerError;

#[derive(Clone, Debug)]
pub enum TlsMode {
    /// A certificate for localhost, 127.0.0.1 and ::1, made at start.
    SelfSigned,
    Files {
        cert: PathBuf,
        key: PathBuf,
    },
    /// Unencrypted: only behind an explicit flag, for local benchmarking.
    Plain,
}

pub struct Tls {
    pub acceptor: Option<TlsAcceptor>,
    /// The self-signed certificate (PEM), for clients to trust.
    pub self_signed_pem: Option<String>,
}

pub fn setup(mode: &TlsMode, extra_host: Option<String>) -> Result<Tls, ServerError> {
    let (certs, key, pem) = match mode {
        TlsMode::Plain => {
            return Ok(Tls {
                acceptor: None,
                self_signed_pem: None,
            });
        }
        TlsMode::SelfSigned => {
            let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
            names.extend(extra_host.filter(|h| !names.contains(h)));
            let ck = rcgen::generate_simple_self_signed(names)
                .map_err(|e| ServerError::Tls(format!("cannot make a certificate: {e}")))?;
            let pem = ck.cert.pem();
            let key = PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
            (vec![ck.cert.der().clone()], key, Some(pem))
        }
        TlsMode::Files { cert, key } => {
            let certs = CertificateDer::pem_file_iter(cert)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| ServerError::Tls(format!("{}: {e}", cert.display())))?;
            if certs.is_empty() {
                return Err(ServerError::Tls(format!(
                    "{}: no certificate in the file",
                    cert.display()
                )));
            }
            let k = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| ServerError::Tls(format!("{}: {e}", key.display())))?;
            (certs, k, None)
        }
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| ServerError::Tls(format!("the certificate and key do not fit: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls {
        acceptor: Some(TlsAcceptor::from(Arc::new(config))),
        self_signed_pem: pem,
    })
}
