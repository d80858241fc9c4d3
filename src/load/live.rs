//! What a running scenario shows on the progress line, read while the run goes on.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A running scenario's figures, for the progress line (read while the run goes on).
#[derive(Debug, Default)]
pub struct Live {
    /// t = 0 of the schedule, once the run has started.
    pub t0: OnceLock<Instant>,
    /// Seconds from t = 0 to the last slot, and the slots planned.
    pub span: OnceLock<f64>,
    pub total: AtomicUsize,
    pub in_flight: AtomicUsize,
    pub done: AtomicU64,
    pub admitted: AtomicU64,
    pub throttled: AtomicU64,
}

impl Live {
    /// `name 12.3/18.0 s, 120/360 sent, 4 in flight, 60 admitted, 60 throttled` (or
    /// `name waiting for its keys`).
    pub fn line(&self, name: &str) -> String {
        match (self.t0.get(), self.span.get()) {
            (Some(t0), Some(span)) => format!(
                "{name} {:.1}/{span:.1} s, {}/{} sent, {} in flight, {} admitted, {} throttled",
                Instant::now().saturating_duration_since(*t0).as_secs_f64(),
                self.done.load(Ordering::Relaxed) + self.in_flight.load(Ordering::Relaxed) as u64,
                self.total.load(Ordering::Relaxed),
                self.in_flight.load(Ordering::Relaxed),
                self.admitted.load(Ordering::Relaxed),
                self.throttled.load(Ordering::Relaxed),
            ),
            _ => format!("{name} waiting for its keys"),
        }
    }
}

/// The scenarios running now, for one progress line that shows each of them.
#[derive(Debug, Default)]
pub struct LiveBoard {
    running: Mutex<Vec<(String, Arc<Live>)>>,
}

impl LiveBoard {
    /// A new scenario on the board; its run updates what this returns.
    pub fn add(&self, name: &str) -> Arc<Live> {
        let live = Arc::new(Live::default());
        self.lock().push((name.to_string(), live.clone()));
        live
    }
    pub fn remove(&self, name: &str) {
        self.lock().retain(|(n, _)| n != name);
    }
    /// Every running scenario's figures, ` | `-separated.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self.lock().iter().map(|(n, l)| l.line(n)).collect();
        parts.join(" | ")
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Arc<Live>)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether a progress line makes sense (stderr is a terminal).
pub fn progress_wanted() -> bool {
    std::io::stderr().is_terminal()
}
