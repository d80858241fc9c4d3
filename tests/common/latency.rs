//! A TCP proxy that puts a target far away: every chunk the implementation sends back (an
//! answer, a TLS handshake message) reaches the client a delay later, each with its own jitter
//! (±`jitter` of the delay, uniformly), in order. Requests go through at once, so the server
//! sees each when it was sent and only the answer is late, as across a slow network or behind a
//! slow gateway. Bytes pass as they are (TLS end to end).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

pub struct LatencyProxy {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Jitter without a random crate: a shared xorshift, seeded per proxy.
struct Jitter(AtomicU64);

impl Jitter {
    /// A number in [-1, 1).
    fn next(&self) -> f64 {
        let mut x = self.0.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0.store(x, Ordering::Relaxed);
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// A proxy to `upstream` (a base URL on 127.0.0.1) adding `delay` ± `jitter` × `delay` to every
/// chunk of every answer.
pub async fn start(upstream: &str, delay: Duration, jitter: f64) -> LatencyProxy {
    let (scheme, rest) = upstream.split_once("://").expect("a base URL");
    let upstream_addr = rest.trim_end_matches('/').to_string();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("{scheme}://{}", listener.local_addr().unwrap());
    let seed = Arc::new(Jitter(AtomicU64::new(
        0x9E37_79B9_7F4A_7C15 ^ delay.as_nanos() as u64,
    )));
    let task = tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream_addr = upstream_addr.clone();
            let jit = seed.clone();
            tokio::spawn(async move {
                let _ = client.set_nodelay(true);
                let Ok(server) = TcpStream::connect(&upstream_addr).await else {
                    return;
                };
                let _ = server.set_nodelay(true);
                connection(client, server, delay, jitter, jit).await;
            });
        }
    });
    LatencyProxy { url, task }
}

async fn connection(
    client: TcpStream,
    server: TcpStream,
    delay: Duration,
    jitter: f64,
    jit: Arc<Jitter>,
) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    // Requests: straight through.
    let up = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    });
    // Answers: each chunk released at its own due time, never before the one ahead of it.
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let reader = tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut last = Instant::now();
        loop {
            let n = match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let d = delay.as_secs_f64() * (1.0 + jitter * jit.next());
            let due = (Instant::now() + Duration::from_secs_f64(d.max(0.0))).max(last);
            last = due;
            if tx.send((due, buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    while let Some((due, chunk)) = rx.recv().await {
        tokio::time::sleep_until(due).await;
        if client_write.write_all(&chunk).await.is_err() {
            break;
        }
    }
    let _ = client_write.shutdown().await;
    reader.abort();
    up.abort();
}
