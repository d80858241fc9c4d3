//! One plain request on a fresh connection, read as raw bytes within a short budget: what a
//! new client meets at the target right now, byte by byte. A pooled client only says "timed
//! out"; these bytes say whether the target was silent, trickled, broke off after a
//! Content-Length, or spoke something that is not HTTP (`outage::Diagnosis` reads them).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::failure::kind_of_words;
use super::{BaseUrl, ClientConfig, Failure, FailureKind};

/// Bytes kept of a raw answer: a head larger than this is itself a finding.
pub const RAW_KEEP: usize = 64 * 1024;

/// What came back on the fresh connection.
#[derive(Clone, Debug, Default)]
pub struct RawReading {
    /// The first `RAW_KEEP` bytes.
    pub bytes: Vec<u8>,
    /// All bytes received.
    pub received: u64,
    /// The target closed the connection.
    pub closed: bool,
    /// From the request written to the end of the reading.
    pub secs: f64,
    /// Seconds without a byte at the end of the reading.
    pub silent_secs: f64,
    /// The answer's head and its body (by Content-Length or the last chunk) are all in.
    pub complete: bool,
}

/// Why the fresh connection gave no reading at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawFailure {
    Refused(String),
    /// No connection (or TLS handshake) within the budget.
    Silent,
    Reset(String),
    /// The TLS handshake failed (words from `failure::explain_tls`).
    Tls(String),
    Other(Failure),
}

impl std::fmt::Display for RawFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawFailure::Refused(e) => write!(f, "connection refused ({e})"),
            RawFailure::Silent => write!(f, "no connection within the budget"),
            RawFailure::Reset(e) => write!(f, "connection reset ({e})"),
            RawFailure::Tls(e) => f.write_str(e),
            RawFailure::Other(e) => write!(f, "{e}"),
        }
    }
}

/// `GET <base path>/` on a new connection (TLS as `cfg` trusts), `Connection: close`, read
/// until the target closes, the answer is complete, or `budget` runs out (connecting and the
/// handshake have a `budget` of their own before it).
pub async fn raw_get(
    cfg: &ClientConfig,
    base: &BaseUrl,
    budget: Duration,
) -> Result<RawReading, RawFailure> {
    let url = base.url();
    // An IPv6 host without its brackets, to connect to and to name in TLS.
    let (host, port) = base.host_port();
    let deadline = Instant::now() + budget;
    let connect = TcpStream::connect((host.as_str(), port));
    let tcp = match tokio::time::timeout_at(deadline, connect).await {
        Err(_) => return Err(RawFailure::Silent),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(RawFailure::Refused(e.to_string()));
        }
        Ok(Err(e)) if cut_off(&e) => return Err(RawFailure::Reset(e.to_string())),
        Ok(Err(e)) => {
            let words = format!("could not connect: {e}");
            return Err(RawFailure::Other(Failure::new(
                kind_of_words(&words),
                words,
            )));
        }
        Ok(Ok(s)) => s,
    };
    let path = format!("{}/", url.path().trim_end_matches('/'));
    let named = url.host_str().unwrap_or(&host).to_string();
    let host_header = match url.port() {
        Some(p) => format!("{named}:{p}"),
        None => named,
    };
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host_header}\r\nAccept: */*\r\nUser-Agent: linkcert\r\nConnection: close\r\n\r\n"
    );
    if url.scheme() != "https" {
        return exchange(tcp, request.as_bytes(), budget).await;
    }
    let other = |e: String| RawFailure::Other(Failure::new(FailureKind::Other, e));
    let tls = cfg.tls().map_err(|e| other(e.to_string()))?;
    let name =
        rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| other(e.to_string()))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(tls));
    match tokio::time::timeout_at(deadline, connector.connect(name, tcp)).await {
        Err(_) => Err(RawFailure::Silent),
        Ok(Err(e)) if cut_off(&e) => {
            Err(RawFailure::Reset(format!("during the TLS handshake: {e}")))
        }
        Ok(Err(e)) => Err(RawFailure::Tls(super::explain_tls(format!(
            "the TLS handshake failed: {e}"
        )))),
        Ok(Ok(s)) => exchange(s, request.as_bytes(), budget).await,
    }
}

/// Writes the request and reads for `budget` from then: the connection and the handshake had a
/// budget of their own, so a slow handshake on a busy machine leaves the reading its time.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    request: &[u8],
    budget: Duration,
) -> Result<RawReading, RawFailure> {
    let start = Instant::now();
    let deadline = start + budget;
    match tokio::time::timeout_at(deadline, s.write_all(request)).await {
        Err(_) => return Err(RawFailure::Silent),
        Ok(Err(e)) => return Err(RawFailure::Reset(e.to_string())),
        Ok(Ok(())) => {}
    }
    let mut r = RawReading::default();
    let mut last = Instant::now();
    let mut buf = [0u8; 8192];
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => break,
            Ok(Ok(0)) => {
                r.closed = true;
                break;
            }
            Ok(Ok(n)) => {
                last = Instant::now();
                r.received += n as u64;
                let room = RAW_KEEP.saturating_sub(r.bytes.len());
                r.bytes.extend_from_slice(&buf[..n.min(room)]);
                if complete(&r.bytes, r.received) {
                    r.complete = true;
                    break;
                }
                // A head past what is kept, with no end in sight: enough is known.
                if r.bytes.len() >= RAW_KEEP && head_end(&r.bytes).is_none() {
                    break;
                }
            }
            Ok(Err(e)) if r.received == 0 => return Err(RawFailure::Reset(e.to_string())),
            Ok(Err(_)) => {
                r.closed = true;
                break;
            }
        }
    }
    let end = Instant::now();
    r.secs = end.saturating_duration_since(start).as_secs_f64();
    r.silent_secs = end.saturating_duration_since(last).as_secs_f64();
    if r.closed && !r.complete {
        // A close ends a body without a length.
        r.complete = head_end(&r.bytes).is_some() && declared_length(&r.bytes).is_none();
    }
    Ok(r)
}

/// The connection was reset or closed under us (not a TLS or protocol failure).
fn cut_off(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionReset | ConnectionAborted | UnexpectedEof | BrokenPipe
    )
}

/// Where the head ends (the index after its blank line).
pub fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

/// A header of the head, by name (case-insensitive).
pub fn head_header<'a>(bytes: &'a [u8], name: &str) -> Option<&'a str> {
    let head = std::str::from_utf8(&bytes[..head_end(bytes)?]).ok()?;
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The Content-Length the head declares.
pub fn declared_length(bytes: &[u8]) -> Option<u64> {
    head_header(bytes, "content-length")?.parse().ok()
}

/// The head, and its body by Content-Length or the last chunk, are all in
/// (`received`: every byte that came; `bytes` holds only the first `RAW_KEEP`).
fn complete(bytes: &[u8], received: u64) -> bool {
    let Some(end) = head_end(bytes) else {
        return false;
    };
    let body = &bytes[end..];
    if let Some(n) = declared_length(bytes) {
        return received.saturating_sub(end as u64) >= n;
    }
    if head_header(bytes, "transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        return body.ends_with(b"0\r\n\r\n");
    }
    // Neither: the body runs until the close (or there is none, for a 204 or 304).
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_complete_by_its_length_or_its_last_chunk() {
        let all = |b: &[u8]| complete(b, b.len() as u64);
        assert!(all(
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\n{}"
        ));
        assert!(!all(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n{}"));
        // Past what is kept: counted by what came.
        assert!(complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n{}",
            6000
        ));
        assert!(all(
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        ));
        assert!(!all(b"HTTP/1.1 200 OK\r\ncontent-le"));
        assert_eq!(
            declared_length(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"),
            Some(5000)
        );
    }
}
