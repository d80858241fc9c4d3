//! Whether a target can be judged at all, asked before `check` or `load` sends anything: a
//! wrong URL or a server that is down says so at once (exit 2), not as a run of failures.

use std::time::Duration;

use linkcert_http::BaseUrl;

/// No connection could be opened to the target at all.
#[derive(Debug, thiserror::Error)]
#[error("the target {url} cannot be reached: {why}")]
pub struct Unreachable {
    pub url: String,
    pub why: String,
}

/// Whether a TCP connection to the target opens (within 10 s): before `check` or `load`
/// starts, so that a wrong URL or a server that is down says so, not a run of failures.
pub async fn reachable(base: &BaseUrl) -> Result<(), Unreachable> {
    let unreachable = |why: String| Unreachable {
        url: base.to_string(),
        why,
    };
    let (host, port) = base.host_port();
    match tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(unreachable(e.to_string())),
        Err(_) => Err(unreachable("no connection within 10 s".into())),
    }
}
