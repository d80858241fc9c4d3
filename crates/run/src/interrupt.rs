//! "The run was asked to stop": Ctrl-C (SIGINT) or SIGTERM, what CI runners and Kubernetes
//! send. `check` and `load` install the handlers when they start (`install`, from the command
//! line, before any goose attack: `listen` keeps goose's own Ctrl-C handler out), read
//! `requested` between steps and race `until_requested` against their work.
//! The first signal is recorded (`Interrupted`): the run stops sending, what it cut short is
//! not judged, and its reports are still written, marked interrupted (exit 3). A second
//! signal quits at once (exit 130), for a user who will not wait for the reports.
//!
//! The record and its wake-up live in an `Interrupt`, one per process for the runs
//! (`process`); tests make their own and call `request` as the handler does.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;
use tokio::sync::Notify;

use linkcert_spec::clock::{now_epoch_secs, rfc3339};

pub use crate::outcome::EXIT_AT_ONCE;

/// Which signal asked the run to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Signal {
    #[serde(rename = "SIGINT")]
    Int,
    #[serde(rename = "SIGTERM")]
    Term,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "SIGINT",
            Signal::Term => "SIGTERM",
        }
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The first stop request: which signal, when (UTC), and how far into the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interrupted {
    pub signal: Signal,
    pub at: String,
    pub after_secs: f64,
}

impl Interrupted {
    /// `interrupted by SIGINT after 3.2 s (2026-11-23T15:10:37Z)`.
    pub fn sentence(&self) -> String {
        format!(
            "interrupted by {} after {:.1} s ({})",
            self.signal, self.after_secs, self.at
        )
    }
}

/// Whether a run was asked to stop, and a wake-up for whoever waits on it.
#[derive(Debug)]
pub struct Interrupt {
    started: Instant,
    first: OnceLock<Interrupted>,
    notify: Notify,
}

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt::new()
    }
}

impl Interrupt {
    /// Nothing requested yet; `after_secs` counts from now.
    pub fn new() -> Interrupt {
        Interrupt {
            started: Instant::now(),
            first: OnceLock::new(),
            notify: Notify::new(),
        }
    }

    /// A stop request (what the signal handler calls). True when it is the first: only the
    /// first is recorded and wakes the waiters.
    pub fn request(&self, signal: Signal) -> bool {
        let mut first = false;
        self.first.get_or_init(|| {
            first = true;
            Interrupted {
                signal,
                at: rfc3339(now_epoch_secs()),
                after_secs: self.started.elapsed().as_secs_f64(),
            }
        });
        if first {
            self.notify.notify_waiters();
        }
        first
    }

    /// Whether a stop was requested (one atomic load: cheap enough for every slot).
    pub fn requested(&self) -> bool {
        self.first.get().is_some()
    }

    /// The first request, if any.
    pub fn interrupted(&self) -> Option<Interrupted> {
        self.first.get().cloned()
    }

    /// Resolves once a stop is requested (at once if it already was): for `tokio::select!`.
    pub async fn until_requested(&self) {
        loop {
            let notified = self.notify.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a request between the two still wakes it.
            notified.as_mut().enable();
            if self.requested() {
                return;
            }
            notified.await;
        }
    }
}

/// The process's `Interrupt`: what the signal handlers set and the runs read.
pub fn process() -> &'static Interrupt {
    static PROCESS: OnceLock<Interrupt> = OnceLock::new();
    PROCESS.get_or_init(Interrupt::new)
}

/// Handles SIGINT and SIGTERM from now on (once per process; needs the tokio runtime):
/// the first is recorded in `process()`, a second quits at once. `after_secs` counts from the
/// first call.
pub fn install() -> std::io::Result<&'static Interrupt> {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    let stop = process();
    if INSTALLED.load(Ordering::SeqCst) {
        return Ok(stop);
    }
    listen(stop)?;
    INSTALLED.store(true, Ordering::SeqCst);
    Ok(stop)
}

/// goose calls `ctrlc::set_handler` when an attack starts, which replaces whatever handles
/// SIGINT, once per process (ctrlc allows one handler; later calls fail, and goose carries on
/// without). That one is taken here first, a no-op: signal-hook, under tokio's handlers
/// registered after it, keeps them on top and calls it too. goose's Ctrl-C handling never
/// sees a signal, so it never decides a verdict.
#[cfg(unix)]
fn listen(stop: &'static Interrupt) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Already taken (an attack ran before): ours, registered now, are on top of it all the same.
    let _ = ctrlc::set_handler(|| {});
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    tokio::spawn(async move {
        loop {
            let got = tokio::select! {
                Some(()) = int.recv() => Signal::Int,
                Some(()) = term.recv() => Signal::Term,
                else => return,
            };
            on_signal(stop, got);
        }
    });
    Ok(())
}

/// Elsewhere only Ctrl-C is there to catch.
#[cfg(not(unix))]
fn listen(stop: &'static Interrupt) -> std::io::Result<()> {
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            on_signal(stop, Signal::Int);
        }
    });
    Ok(())
}

fn on_signal(stop: &Interrupt, signal: Signal) {
    if stop.request(signal) {
        eprintln!(
            "linkcert: {signal}: stopping; the reports of what ran come next ({signal} again quits at once, without waiting for them)"
        );
    } else {
        eprintln!("linkcert: {signal} again: quitting at once, without waiting for the reports");
        std::process::exit(EXIT_AT_ONCE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn the_first_request_is_recorded_and_later_ones_change_nothing() {
        let stop = Interrupt::new();
        assert!(!stop.requested());
        assert_eq!(stop.interrupted(), None);
        assert!(stop.request(Signal::Term));
        assert!(
            !stop.request(Signal::Int),
            "a second request is not a first"
        );
        let i = stop.interrupted().expect("recorded");
        assert_eq!(i.signal, Signal::Term);
        assert!(i.after_secs >= 0.0 && i.after_secs < 60.0, "{i:?}");
        assert_eq!(i.at.len(), "2026-11-23T15:10:37Z".len(), "{}", i.at);
        assert!(i.sentence().starts_with("interrupted by SIGTERM after "));
        let json = serde_json::to_value(&i).unwrap();
        assert_eq!(json["signal"], "SIGTERM");
        assert!(json["at"].is_string() && json["after_secs"].is_number());
    }

    #[tokio::test]
    async fn waiters_wake_on_the_request_and_later_ones_at_once() {
        let stop = Arc::new(Interrupt::new());
        let waiting = tokio::spawn({
            let stop = stop.clone();
            async move { stop.until_requested().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "nothing requested yet");
        stop.request(Signal::Int);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken by the request")
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), stop.until_requested())
            .await
            .expect("already requested: at once");
    }
}
