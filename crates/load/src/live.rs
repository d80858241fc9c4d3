//! What a running scenario shows on the progress line, read while the run goes on.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::resolved::Resolved;

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

/// The progress lines of a run on stderr: one line per scenario as it starts, ends or runs
/// again, and a line rewritten in place with every running scenario's figures.
pub struct Progress {
    on: bool,
    total: usize,
    board: Arc<LiveBoard>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

/// The in-place line is cut to this many characters (one terminal line).
const LINE: usize = 180;

impl Progress {
    /// `on`: whether anything is printed; `total`: the scenarios of the run. Call within the
    /// runtime (the in-place line is rewritten by a task).
    pub fn new(on: bool, total: usize) -> Progress {
        let board = Arc::new(LiveBoard::default());
        let ticker = on.then(|| {
            let board = board.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                    let text: String = board.line().chars().take(LINE).collect();
                    eprint!("\r{text:<LINE$}\r");
                }
            })
        });
        Progress {
            on,
            total,
            board,
            ticker,
        }
    }
    fn clear_line(&self) {
        if self.on {
            eprint!("\r{:LINE$}\r", "");
        }
    }
    fn say(&self, step: usize, text: &str) {
        if self.on {
            self.clear_line();
            eprintln!("[{}/{}] {text}", step + 1, self.total);
        }
    }
    pub fn skipped(&self, step: usize, name: &str, why: &str) {
        self.say(step, &format!("{name}: skipped ({why})"));
    }
    /// A scenario starts (after `not_before`, for its keys' quota): what the line reads.
    pub fn starting(
        &self,
        step: usize,
        r: &Resolved,
        keys: &[String],
        not_before: Instant,
    ) -> Arc<Live> {
        let wait = not_before.saturating_duration_since(Instant::now());
        self.say(
            step,
            &format!(
                "{}: {} plan on {}, {} x {} per {:.2} s, {} for {} windows{}",
                r.scenario.name,
                r.scenario.plan,
                crate::judge::fleet::labels(keys),
                r.scenario.rate,
                r.limit,
                r.window.as_secs_f64(),
                r.scenario.shape.as_str(),
                r.scenario.windows,
                if wait.is_zero() {
                    String::new()
                } else {
                    format!(", after {:.1} s for its keys' quota", wait.as_secs_f64())
                }
            ),
        );
        self.board.add(&r.scenario.name)
    }
    /// A scenario is no longer running (ended, or never started).
    pub fn stopped(&self, name: &str) {
        self.board.remove(name);
    }
    pub fn finished(&self, step: usize, line: &str) {
        self.say(step, line);
    }
    pub fn again(&self, step: usize, name: &str, why: &str) {
        self.say(step, &format!("{name}: again, alone: {why}"));
    }
    /// The run is over: the in-place line goes.
    pub fn done(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
            self.clear_line();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done();
    }
}
