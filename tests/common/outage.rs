//! A TCP proxy in front of either implementation that forwards faithfully, then, some time
//! after its first connection, turns hostile for good: the target "goes away" in the middle of
//! a run. Bytes are forwarded as they are (TLS passes through), so what the runner sees before
//! the switch is the implementation itself.

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// How the target goes away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Forward,
    /// Every connection, open or new, reset (RST).
    Reset,
    /// The listener closes: new connections refused; open ones reset (the process died).
    Refuse,
    /// Connections accepted and read, never answered; open ones fall silent.
    Stall,
}

pub struct OutageProxy {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for OutageProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A proxy to `upstream` (a base URL on 127.0.0.1) that turns to `mode` `after` its first
/// connection.
pub async fn start(upstream: &str, mode: Mode, after: Duration) -> OutageProxy {
    let (scheme, rest) = upstream.split_once("://").expect("a base URL");
    let upstream_addr = rest.trim_end_matches('/').to_string();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("{scheme}://{}", listener.local_addr().unwrap());
    // The connections follow `tx`; the timer turns the accept loop first (`turn`), so a
    // process that "dies" stops listening before its open connections are reset, as one
    // does: a new client then meets a refusal, never an accepted connection reset.
    let (tx, rx) = watch::channel(Mode::Forward);
    let (turn_tx, mut turn) = watch::channel(Mode::Forward);
    let task = tokio::spawn(async move {
        let mut turned = false;
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = turn.changed() => {
                    let mode = *turn.borrow();
                    if mode == Mode::Refuse {
                        // Dropping the listener: the port refuses from now on.
                        drop(listener);
                        let _ = tx.send(mode);
                        // Keep the channel alive for the connections still open.
                        std::future::pending::<()>().await;
                        unreachable!();
                    }
                    let _ = tx.send(mode);
                    continue;
                }
            };
            let Ok((client, _)) = accepted else { continue };
            if !turned {
                turned = true;
                let turn_tx = turn_tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    let _ = turn_tx.send(mode);
                });
            }
            let rx = rx.clone();
            let upstream_addr = upstream_addr.clone();
            tokio::spawn(async move { connection(client, &upstream_addr, rx).await });
        }
    });
    OutageProxy { url, task }
}

async fn connection(mut client: TcpStream, upstream: &str, mut rx: watch::Receiver<Mode>) {
    let mode = *rx.borrow();
    match mode {
        Mode::Forward => {}
        Mode::Reset | Mode::Refuse => return reset(client),
        Mode::Stall => return stall(client).await,
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return reset(client);
    };
    let mode = tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => return,
        m = rx.wait_for(|m| *m != Mode::Forward) => m.map_or(Mode::Reset, |m| *m),
    };
    drop(server);
    match mode {
        Mode::Stall => stall(client).await,
        _ => reset(client),
    }
}

fn reset(s: TcpStream) {
    let _ = s.set_zero_linger();
    drop(s);
}

/// Read and discard, never answer, for longer than any test lasts.
async fn stall(mut s: TcpStream) {
    let mut buf = vec![0u8; 16 * 1024];
    let _ = tokio::time::timeout(Duration::from_secs(300), async {
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}
