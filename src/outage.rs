//! Telling a target that went away from a target that answers badly.
//!
//! Whoever sends reports every exchange here (`check`'s probe, `load`'s generator): an HTTP
//! answer (whatever its status) or a transport failure (refused, reset, timed out). A streak of
//! transport failures after the target has answered at least once is a *suspected* outage; the
//! sender confirms it with one plain request (`GET /`, any status is life). If that fails too,
//! the target is gone: the watch trips and the sender stops. In `check` the runner stops the
//! families and what the recorder was told during the streak is "not judged"; in `load` no
//! scenario starts after it and the one running is incomplete, not the target's failure. A
//! target that never answered is not an outage (it is certified, and fails), and a transport
//! failure among answers stays a finding.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::clock::now_epoch;
use crate::http::{describe, read_capped};
pub use crate::report::model::{Outage, TransportKind};

/// Transport failures in a row before the target is asked whether it is still there; asked
/// again at every doubling (2, 4, 8...) while the streak lasts and the target keeps answering
/// the plain request.
pub const SUSPECT_AFTER: u64 = 2;

#[derive(Default)]
struct State {
    /// Some HTTP answer came back at some point.
    answered_once: bool,
    /// Transport failures since the last answer.
    in_a_row: u64,
    /// Counts streaks: what is recorded during one is tagged with its number.
    streak: u64,
    /// The first failure of the current streak: when (epoch, since start), its kind, its text.
    first: Option<(f64, Duration, TransportKind, String)>,
    confirming: bool,
    tripped: Option<(u64, Outage)>,
}

/// Shared by the probe (which feeds it), the recorder and the runner (which read it).
pub struct Watch {
    started: Instant,
    state: Mutex<State>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch::new()
    }
}

impl Watch {
    pub fn new() -> Watch {
        Watch {
            started: Instant::now(),
            state: Mutex::new(State::default()),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// An HTTP answer came back: the target is there.
    pub fn answered(&self) {
        self.with(|s| {
            s.answered_once = true;
            s.in_a_row = 0;
            s.first = None;
        });
    }

    /// A transport failure (its text as the probe describes it). True when the target should
    /// now be asked whether it is still there (the caller then reports `confirmed`).
    pub fn failed(&self, error: &str) -> bool {
        let since = self.started.elapsed();
        self.with(|s| {
            if s.tripped.is_some() {
                return false;
            }
            if s.in_a_row == 0 {
                s.streak += 1;
                s.first = Some((now_epoch(), since, TransportKind::of(error), error.into()));
            }
            s.in_a_row += 1;
            let ask = s.answered_once
                && !s.confirming
                && s.in_a_row >= SUSPECT_AFTER
                && s.in_a_row.is_power_of_two();
            if ask {
                s.confirming = true;
            }
            ask
        })
    }

    /// What the plain request asked after a suspicious streak found: an answer ends the
    /// streak (its failures are the target's); a transport failure means the target is gone,
    /// and its kind is how (what a new client meets now).
    pub fn confirmed(&self, asked: Result<(), String>) {
        let detected = self.started.elapsed();
        self.with(|s| {
            s.confirming = false;
            let now = match asked {
                Ok(()) => {
                    s.in_a_row = 0;
                    s.first = None;
                    return;
                }
                Err(e) => TransportKind::of(&e),
            };
            if s.tripped.is_some() {
                return;
            }
            let Some((epoch, since, first_kind, error)) = s.first.clone() else {
                return;
            };
            let kind = if now == TransportKind::Other {
                first_kind
            } else {
                now
            };
            s.tripped = Some((
                s.streak,
                Outage {
                    kind,
                    first_failure_at: crate::clock::rfc3339(epoch as u64),
                    first_failure_secs: since.as_secs_f64(),
                    detected_secs: detected.as_secs_f64(),
                    failures_in_a_row: s.in_a_row + 1,
                    first_error: error,
                },
            ));
        });
    }

    /// The streak under way, if what is recorded now may yet turn out to be the outage's:
    /// transport failures in a row after the target had answered.
    pub fn open_streak(&self) -> Option<u64> {
        self.with(|s| match &s.tripped {
            Some((n, _)) => Some(*n),
            None => (s.answered_once && s.in_a_row > 0).then_some(s.streak),
        })
    }

    /// The outage, once confirmed, and the streak it ended.
    pub fn outage(&self) -> Option<(u64, Outage)> {
        self.with(|s| s.tripped.clone())
    }

    pub fn gone(&self) -> bool {
        self.with(|s| s.tripped.is_some())
    }

    /// Resolves once the target is gone (polled: cheap, and no waker to forget).
    pub async fn until_gone(&self) {
        while !self.gone() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The plain request that confirms a suspected outage: `GET /` with `client`; any answer,
/// whatever its status, means the target is still there. One for `check` and `load`.
pub async fn still_there(client: &reqwest::Client, base_url: &str) -> Result<(), String> {
    let url = format!("{}/", base_url.trim_end_matches('/'));
    let mut r = client.get(&url).send().await.map_err(|e| describe(&e))?;
    read_capped(&mut r, 64 * 1024)
        .await
        .map(drop)
        .map_err(|e| describe(&e))
}

impl TransportKind {
    /// The kind of a transport failure, from the probe's description of it.
    pub fn of(error: &str) -> TransportKind {
        let e = error.to_ascii_lowercase();
        if e.contains("timed out") || e.contains("timeout") {
            TransportKind::Timeout
        } else if e.contains("refused") {
            TransportKind::Refused
        } else if ["reset", "closed", "broken pipe", "eof", "aborted"]
            .iter()
            .any(|w| e.contains(w))
        {
            TransportKind::Reset
        } else {
            TransportKind::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streak_after_answers_is_suspected_and_confirmed_or_cleared() {
        let w = Watch::new();
        // Never answered: failures are the target's, never an outage.
        assert!(!w.failed("could not connect: Connection refused"));
        assert!(!w.failed("could not connect: Connection refused"));
        assert_eq!(w.open_streak(), None);
        w.answered();
        assert!(!w.failed("request failed: connection reset by peer"));
        assert!(w.open_streak().is_some());
        assert!(w.failed("timed out"));
        w.confirmed(Ok(()));
        assert_eq!(w.open_streak(), None, "alive: the streak is over");
        assert!(!w.failed("timed out"));
        assert!(w.failed("timed out"));
        w.confirmed(Err("could not connect: Connection refused".into()));
        let (_, o) = w.outage().unwrap();
        assert_eq!(
            o.kind,
            TransportKind::Refused,
            "how it is now, not how it began"
        );
        assert_eq!(o.first_error, "timed out");
        assert_eq!(o.failures_in_a_row, 3);
        assert!(w.gone());
    }

    #[test]
    fn kinds_are_read_from_the_error() {
        for (e, k) in [
            (
                "could not connect: tcp connect error: Connection refused (os error 111)",
                TransportKind::Refused,
            ),
            (
                "request failed: connection closed before message completed",
                TransportKind::Reset,
            ),
            (
                "request failed: Connection reset by peer (os error 104)",
                TransportKind::Reset,
            ),
            ("timed out: operation timed out", TransportKind::Timeout),
            (
                "request failed: invalid HTTP version parsed",
                TransportKind::Other,
            ),
        ] {
            assert_eq!(TransportKind::of(e), k, "{e}");
        }
    }
}
