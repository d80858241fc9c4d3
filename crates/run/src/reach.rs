//! Whether a target can be judged at all, asked before `check` or `load` sends anything: a
//! wrong URL, a server that is down, or a certificate the client does not trust says so at
//! once (exit 2), not as a run of failures.

use std::time::Duration;

use crate::target::Target;

/// How long opening a connection, and then a TLS handshake, may take before the run starts.
const WAIT: Duration = Duration::from_secs(10);

/// Why nothing of a target could be judged.
#[derive(Debug, thiserror::Error)]
pub enum Unreachable {
    /// No connection could be opened at all.
    #[error("the target {url} cannot be reached: {why}")]
    Connection { url: String, why: String },
    /// Its certificate is one the client does not trust. Trust is the deployment's, not the
    /// API's: judging every request's failure to connect would fail the API for it.
    #[error(
        "the target {url} presents a certificate this client does not trust ({why}); nothing \
         was judged. A private or self-signed CA: trust it with SSL_CERT_FILE=ca.pem (a PEM \
         bundle), or judge the API regardless with --insecure"
    )]
    Untrusted { url: String, why: String },
}

/// Whether a TCP connection to the target opens (within 10 s) and, for an https:// target
/// not judged `insecure`, whether its certificate is one the run's client trusts. A handshake
/// that fails for another reason (no TLS there, a reset, silence) is the target's behaviour,
/// and the run judges it.
pub async fn reachable(target: &Target) -> Result<(), Unreachable> {
    let url = || target.base_url.to_string();
    let (host, port) = target.base_url.host_port();
    let connect = tokio::net::TcpStream::connect((host.as_str(), port));
    let tcp = match tokio::time::timeout(WAIT, connect).await {
        Ok(Ok(tcp)) => Ok(tcp),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no connection within {} s", WAIT.as_secs())),
    }
    .map_err(|why| Unreachable::Connection { url: url(), why })?;
    if !target.is_https() || target.insecure {
        return Ok(());
    }
    // A trust that cannot be made (a PEM that is no certificate) is refused where the run's
    // client is built, with its own words.
    let client = target.client_config(WAIT, 0);
    match tokio::time::timeout(WAIT, client.certificate_refused(&host, tcp)).await {
        Ok(Ok(Some(why))) => Err(Unreachable::Untrusted { url: url(), why }),
        _ => Ok(()),
    }
}
