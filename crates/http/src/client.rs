//! The one place a client is configured: every request of ours leaves through a client built
//! from a `ClientConfig`.

use std::time::Duration;

use http::HeaderValue;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::BareClient;

/// Longest wait for a connection, whoever sends.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle connections are dropped after this. Servers close keep-alive connections idle for 5 s
/// (Node's default) or more (the reference: 10 s); a request sent on one as the server closes
/// it gets a reset that is neither side's fault, and read as the target's under load (seen: 2
/// resets in 8,100 requests, a pool of 1,024 mostly idle at 300 requests/s).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// The generator's read buffer per connection, and so the largest head it reads.
pub const BARE_MAX_BUF: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("the certificate to trust is not a PEM certificate")]
    Certificate(#[source] rustls::pki_types::pem::Error),
    #[error("the certificate file to trust holds no PEM certificate")]
    NoCertificate,
    #[error("the TLS settings were refused")]
    Tls(#[source] rustls::Error),
    #[error("the client's settings were refused")]
    Build(#[source] reqwest::Error),
}

/// How a client of ours talks to a target: bounded in time, never redirected, never proxied,
/// trusting what it must.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Per request, answer included.
    pub timeout: Duration,
    /// Idle connections kept per host.
    pub pool: usize,
    /// A certificate to trust besides the system's (PEM).
    pub trust_pem: Option<String>,
    /// Accept any certificate (self-signed targets).
    pub insecure: bool,
    /// Sent as User-Agent when set.
    pub user_agent: Option<&'static str>,
    /// The target speaks plain HTTP: the system's roots are read at a first TLS handshake, if
    /// one ever happens, not when the client is built (they take milliseconds to read). For a
    /// TLS target they are read up front, so a trust that cannot be made is a setup error,
    /// not a handshake the target seems to fail.
    pub plain_http: bool,
}

impl ClientConfig {
    pub fn new(timeout: Duration, pool: usize) -> ClientConfig {
        ClientConfig {
            timeout,
            pool,
            trust_pem: None,
            insecure: false,
            user_agent: None,
            plain_http: false,
        }
    }

    /// The TLS both clients speak (`tls::config`). Certificates are parsed here, so one that
    /// does not parse is an error before any request.
    pub(super) fn tls(&self) -> Result<rustls::ClientConfig, HttpError> {
        super::tls::config(self.trust_pem.as_deref(), self.insecure, self.plain_http)
    }

    /// What this client refuses of the certificate a TLS server presents over `tcp` as
    /// `host`, if anything (`tls::certificate_refused`): asked once before a run.
    pub async fn certificate_refused(
        &self,
        host: &str,
        tcp: tokio::net::TcpStream,
    ) -> Result<Option<String>, HttpError> {
        Ok(super::tls::certificate_refused(self.tls()?, host, tcp).await)
    }

    /// The client of `check`, the probes and the tests.
    pub fn build(&self) -> Result<reqwest::Client, HttpError> {
        let mut b = reqwest::Client::builder()
            .timeout(self.timeout)
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_max_idle_per_host(self.pool)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            // Bodies are inflated by `http::body`, under the answer's cap and named as
            // compressed; reqwest's own decoding would hide both.
            .no_gzip()
            .tls_backend_preconfigured(self.tls()?);
        if let Some(ua) = self.user_agent {
            b = b.user_agent(ua);
        }
        b.build().map_err(HttpError::Build)
    }

    /// The generator's client: the same settings as `build`'s (timeouts, pool, TLS, no proxy,
    /// no redirects: hyper follows none), on hyper without reqwest's layers.
    pub fn build_bare(&self) -> Result<BareClient, HttpError> {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(self.tls()?)
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            // Each connection's read buffer at most this (hyper's default is about 400 KB):
            // a thousand connections in flight streaming bodies at full speed held 758 MB.
            // A head larger than this is refused, as one larger than 400 KB is in `check`.
            .http1_max_buf_size(BARE_MAX_BUF)
            .pool_max_idle_per_host(self.pool)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(BareClient {
            client,
            timeout: self.timeout,
            user_agent: self.user_agent.map(HeaderValue::from_static),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_that_does_not_parse_is_an_error_not_dropped() {
        let bad = ClientConfig {
            trust_pem: Some(
                "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".into(),
            ),
            ..ClientConfig::new(Duration::from_secs(1), 1)
        };
        assert!(matches!(bad.build(), Err(HttpError::Certificate(_))));
        assert!(matches!(bad.build_bare(), Err(HttpError::Certificate(_))));
        let empty = ClientConfig {
            trust_pem: Some("no certificate here\n".into()),
            ..ClientConfig::new(Duration::from_secs(1), 1)
        };
        assert!(matches!(empty.build(), Err(HttpError::NoCertificate)));
        assert!(ClientConfig::new(Duration::from_secs(1), 1).build().is_ok());
        assert!(
            ClientConfig::new(Duration::from_secs(1), 1)
                .build_bare()
                .is_ok()
        );
    }

    /// A PEM block whose bytes are no certificate can only be refused when the trust is made:
    /// before any request for a TLS target; for a plain-HTTP one, which never needs it, only
    /// at a handshake that never comes.
    #[test]
    fn a_trust_that_cannot_be_made_stops_a_tls_target_before_any_request() {
        let garbage = ClientConfig {
            trust_pem: Some(
                "-----BEGIN CERTIFICATE-----\nAAECAwQFBgcICQ==\n-----END CERTIFICATE-----\n".into(),
            ),
            ..ClientConfig::new(Duration::from_secs(1), 1)
        };
        assert!(matches!(garbage.build(), Err(HttpError::Tls(_))));
        assert!(matches!(garbage.build_bare(), Err(HttpError::Tls(_))));
        let plain = ClientConfig {
            plain_http: true,
            ..garbage
        };
        assert!(plain.build().is_ok());
        assert!(plain.build_bare().is_ok());
    }
}
