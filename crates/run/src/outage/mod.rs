//! Telling a target that went away from a target that answers badly.
//!
//! Whoever sends reports every exchange here (`check`'s probe, `load`'s generator): an HTTP
//! answer (whatever its status) or a transport failure (refused, reset, timed out, a body that
//! trickled). The sender then asks the target whether it is still there, with one plain
//! request on a fresh connection read byte by byte within a short budget (`diagnose`), not by
//! waiting out more full request timeouts: at once after a failure that cost time (a timeout, a
//! body that stalled), after a streak of cheap failures once the target has answered, and when
//! an answer comes after such failures (it may have been on its way on a connection the target
//! had not cut yet). What the bytes say (`Diagnosis`):
//! - an answer: the target is there, and the failures are the target's;
//! - refused, reset, or silent after the target had answered: an outage. The watch trips and the
//!   sender stops; in `check` what the recorder was told during the streak is "not judged", in
//!   `load` no scenario starts after it and the ones overlapping it are incomplete;
//! - a target that trickles, breaks off after a Content-Length, speaks something that is not
//!   HTTP, or accepts connections and never answered anything: broken. The sender stops too
//!   (each further request would cost a full timeout), but what was judged stays the target's
//!   failure, named in these words.
//!
//! A target that never answered and refuses is not an outage either (it is certified, and
//! fails), and a transport failure among answers stays a finding.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use linkcert_http::{
    BaseUrl, ClientConfig, Failure, FailureKind, RawFailure, RawReading, declared_length, head_end,
    raw_get,
};
use linkcert_spec::clock::now_epoch;
mod account;
pub use account::{Outage, TransportKind};

/// Answers in a row that broke the rules of every answer (a body past what the spec allows,
/// one that does not inflate) before the sender takes the target for broken and stops: under
/// load each costs the machine megabytes and milliseconds, and the next will do the same.
pub const BAD_ANSWERS_IN_A_ROW: u64 = 16;

/// Bytes a second below which an answer still arriving at the end of the probe's budget is a
/// trickle (a slow link still brings kilobytes a second).
const TRICKLE_BELOW: f64 = 256.0;

/// The budget of the plain request that asks whether the target is still there: long enough
/// for a target 500 ms away under load, short enough that a stall is told within a minute at
/// the default 30 s request timeout.
pub const PROBE_BUDGET: Duration = Duration::from_secs(5);

/// Transport failures in a row before the target is asked whether it is still there; asked
/// again at every doubling (2, 4, 8...) while the streak lasts and the target keeps answering
/// the plain request.
pub const SUSPECT_AFTER: u64 = 2;

/// An answer to a request sent this soon after the first failure of a streak may have come on
/// a connection the target had not cut yet when it went away (a pool's, its bytes on their
/// way): the target is asked on a fresh connection before the answer ends the streak. Later,
/// a connection still answering says the target is there.
pub const IN_FLIGHT: Duration = Duration::from_secs(2);

#[derive(Default)]
struct State {
    /// Some HTTP answer came back at some point.
    answered_once: bool,
    /// Transport failures since the last answer.
    in_a_row: u64,
    /// Answers in a row that broke the rules of every answer (`bad_answer`).
    bad_in_a_row: u64,
    /// Counts streaks: what is recorded during one is tagged with its number.
    streak: u64,
    /// The first failure of the current streak: when (epoch, since start), its kind, its text.
    first: Option<(f64, Duration, TransportKind, String)>,
    confirming: bool,
    tripped: Option<(u64, Outage)>,
    /// What a broken target did, in words (the sender stops; the failures are the target's).
    broken: Option<String>,
    /// What the last plain request found, for the failures of its streak to carry.
    found: Option<(u64, String)>,
    /// The plain request of that streak could not be made here: this machine is out of
    /// sockets, files or ports, and the streak's failures say nothing of the target.
    found_local: Option<u64>,
    /// The plain request under way was asked for by an answer (`answered_to`): unless it
    /// finds the target gone or broken, the answer ends the streak.
    asked_by_answer: bool,
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

    /// An HTTP answer came back: the target is there (`answered_to`).
    #[must_use]
    pub fn answered(&self) -> bool {
        self.answered_to(Instant::now())
    }

    /// An HTTP answer came back to a request sent at `sent`. Sent before the first failure of
    /// the streak under way, it says only that the target was there then (an answer in flight
    /// when it went away): the streak goes on, so what failed in it stays held for the
    /// outage to take, however the answers and failures of requests at once interleave.
    ///
    /// Sent within `IN_FLIGHT` after it, the answer may still have come on a connection
    /// opened before the target went away. So it does not end a streak of held failures by
    /// itself: true means "ask now" (the caller asks on a fresh connection and reports
    /// `confirmed`, which ends the streak unless the target is gone or broken). While a plain
    /// request is under way, its finding decides.
    #[must_use]
    pub fn answered_to(&self, sent: Instant) -> bool {
        let sent = sent.saturating_duration_since(self.started);
        self.with(|s| {
            let held = s.answered_once && s.in_a_row > 0;
            s.answered_once = true;
            s.bad_in_a_row = 0;
            if s.first.as_ref().is_some_and(|f| sent < f.1) {
                return false;
            }
            let in_flight = s.first.as_ref().is_some_and(|f| sent < f.1 + IN_FLIGHT);
            if held && s.tripped.is_none() && s.broken.is_none() && (in_flight || s.confirming) {
                if s.confirming {
                    return false;
                }
                s.confirming = true;
                s.asked_by_answer = true;
                return true;
            }
            s.in_a_row = 0;
            s.first = None;
            false
        })
    }

    /// An answer came back that no answer may be (its words): after `BAD_ANSWERS_IN_A_ROW`
    /// of them with no good answer between, the target is broken and the sender stops.
    pub fn bad_answer(&self, words: &str) {
        self.with(|s| {
            s.answered_once = true;
            s.in_a_row = 0;
            s.bad_in_a_row += 1;
            if s.bad_in_a_row >= BAD_ANSWERS_IN_A_ROW && s.broken.is_none() && s.tripped.is_none() {
                s.broken = Some(format!(
                    "{} answers in a row broke what every answer must be: {words}",
                    s.bad_in_a_row
                ));
            }
        });
    }

    /// A transport failure. True when the target should now be asked whether it is still
    /// there (the caller then reports `confirmed`): at once when the failure cost time (a
    /// timeout, a body that stalled), otherwise after a streak once the target has answered.
    pub fn failed(&self, failure: &Failure) -> bool {
        let since = self.started.elapsed();
        self.with(|s| {
            if s.tripped.is_some() || s.broken.is_some() {
                return false;
            }
            if s.in_a_row == 0 {
                s.streak += 1;
                let kind = TransportKind::of(failure.kind);
                s.first = Some((now_epoch(), since, kind, failure.to_string()));
            }
            s.in_a_row += 1;
            let doubling = s.in_a_row.is_power_of_two();
            let ask = !s.confirming
                && ((s.answered_once && s.in_a_row >= SUSPECT_AFTER && doubling)
                    || (failure.kind.costly() && doubling));
            if ask {
                s.confirming = true;
            }
            ask
        })
    }

    /// Whether a plain request is under way (the failures of its streak wait for its words).
    pub fn confirming(&self) -> bool {
        self.with(|s| s.confirming)
    }

    /// What the last plain request found during the streak under way, when it was not an
    /// answer: words a failure of that streak carries.
    pub fn found(&self) -> Option<String> {
        self.with(|s| match &s.found {
            Some((n, words)) if *n == s.streak && s.in_a_row > 0 => Some(words.clone()),
            _ => s.broken.clone(),
        })
    }

    /// Whether the plain request of the streak under way could not be made here (this machine
    /// out of sockets, files or ports): the streak's failures are then this machine's.
    pub fn found_here(&self) -> bool {
        self.with(|s| s.found_local == Some(s.streak) && s.in_a_row > 0)
    }

    /// Waits (briefly) for the plain request under way, then `found`.
    pub async fn found_after_confirming(&self) -> Option<String> {
        let until = Instant::now() + PROBE_BUDGET + Duration::from_secs(2);
        while self.confirming() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.found()
    }

    /// What the plain request asked after a failure found (`diagnose`): an answer ends the
    /// streak (its failures are the target's); refused, reset or silence after answers means
    /// the target is gone, and its kind is how (what a new client meets now); a target that
    /// trickles, breaks off or speaks no HTTP is broken.
    pub fn confirmed(&self, found: &Diagnosis) {
        let detected = self.started.elapsed();
        self.with(|s| {
            s.confirming = false;
            let by_answer = std::mem::take(&mut s.asked_by_answer);
            // Asked for by an answer, and the target is neither gone nor broken: the answer
            // stands, and the streak is over.
            let stands = by_answer && found.gone_kind().is_none() && !found.broken();
            if matches!(found, Diagnosis::Answered) || stands {
                s.in_a_row = 0;
                s.first = None;
                s.found = None;
                return;
            }
            s.found = Some((s.streak, format!("a fresh connection to GET / {found}")));
            s.found_local =
                matches!(found, Diagnosis::Other(f) if f.kind == FailureKind::LocalLimit)
                    .then_some(s.streak);
            if s.tripped.is_some() || s.broken.is_some() {
                return;
            }
            let now = match (found.gone_kind(), found.broken()) {
                (Some(kind), _) if s.answered_once => kind,
                // Never answered: silence is how this target always was (broken); refused or
                // reset are the target's failures, as they come.
                (Some(TransportKind::Timeout), _) => {
                    s.broken = Some(format!(
                        "the target never answered: a fresh connection to GET / {found}"
                    ));
                    return;
                }
                (_, true) => {
                    s.broken = Some(format!("a fresh connection to GET / {found}"));
                    return;
                }
                // Nothing more is known: the streak goes on.
                _ => return,
            };
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
                    first_failure_at: linkcert_spec::clock::rfc3339(epoch as u64),
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

    /// What a broken target did (the sender stopped; the failures stay the target's).
    pub fn broken(&self) -> Option<String> {
        self.with(|s| s.broken.clone())
    }

    /// Nothing more is sent: the target went away, or is broken.
    pub fn gone(&self) -> bool {
        self.with(|s| s.tripped.is_some() || s.broken.is_some())
    }

    /// Resolves once the target is gone (polled: cheap, and no waker to forget).
    pub async fn until_gone(&self) {
        while !self.gone() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// What a plain request on a fresh connection found.
#[derive(Clone, Debug, PartialEq)]
pub enum Diagnosis {
    /// An HTTP answer, whatever its status: the target is there.
    Answered,
    Refused(String),
    Reset(String),
    /// Accepted, then nothing within the budget.
    Silent {
        secs: f64,
    },
    Trickled {
        bytes: u64,
        secs: f64,
    },
    ShortThenSilent {
        declared: u64,
        got: u64,
        silent: f64,
    },
    NotHttp {
        first: String,
    },
    HugeHead {
        bytes: u64,
    },
    Tls(String),
    Other(Failure),
}

impl Diagnosis {
    /// Reads what came back on the fresh connection.
    pub fn of(reading: Result<RawReading, RawFailure>, budget: Duration) -> Diagnosis {
        let r = match reading {
            Ok(r) => r,
            Err(RawFailure::Refused(e)) => return Diagnosis::Refused(e),
            Err(RawFailure::Reset(e)) => return Diagnosis::Reset(e),
            Err(RawFailure::Silent) => {
                return Diagnosis::Silent {
                    secs: budget.as_secs_f64(),
                };
            }
            Err(RawFailure::Tls(e)) => return Diagnosis::Tls(e),
            Err(RawFailure::Other(e)) => return Diagnosis::Other(e),
        };
        let b = &r.bytes;
        if b.is_empty() {
            return if r.closed {
                Diagnosis::Reset("closed without a byte".into())
            } else {
                Diagnosis::Silent { secs: r.secs }
            };
        }
        let n = b.len().min(5);
        if b[..n] != b"HTTP/"[..n] {
            let first: String = b
                .iter()
                .take(16)
                .flat_map(|c| c.escape_ascii())
                .map(char::from)
                .collect();
            return Diagnosis::NotHttp { first };
        }
        if r.complete || (r.closed && head_end(b).is_some()) {
            return Diagnosis::Answered;
        }
        if head_end(b).is_none() && r.received >= linkcert_http::RAW_KEEP as u64 {
            return Diagnosis::HugeHead { bytes: r.received };
        }
        let silent_at_end = r.silent_secs * 2.0 >= r.secs && r.silent_secs >= 1.0;
        let rate = r.received as f64 / r.secs.max(0.001);
        match (head_end(b), declared_length(b)) {
            (Some(end), Some(declared)) if silent_at_end => Diagnosis::ShortThenSilent {
                declared,
                got: r.received.saturating_sub(end as u64),
                silent: r.silent_secs,
            },
            _ if r.closed => Diagnosis::Reset(format!("closed after {} bytes", r.received)),
            // A whole head came, and the body is still coming at a fair pace (a large page on
            // a slow link), or stopped without a length to break: the target answers.
            (Some(_), _) if rate >= TRICKLE_BELOW || silent_at_end => Diagnosis::Answered,
            _ => Diagnosis::Trickled {
                bytes: r.received,
                secs: r.secs,
            },
        }
    }

    /// The kind of outage this is when the target had answered before: none for an answer or
    /// for a broken target.
    fn gone_kind(&self) -> Option<TransportKind> {
        match self {
            Diagnosis::Refused(_) => Some(TransportKind::Refused),
            Diagnosis::Reset(_) => Some(TransportKind::Reset),
            Diagnosis::Silent { .. } => Some(TransportKind::Timeout),
            Diagnosis::Other(e) => {
                Some(TransportKind::of(e.kind)).filter(|k| *k != TransportKind::Other)
            }
            _ => None,
        }
    }

    /// The target answers, but not as HTTP allows: it trickles, breaks off after a
    /// Content-Length, sends no HTTP or endless headers, or fails the TLS handshake.
    fn broken(&self) -> bool {
        matches!(
            self,
            Diagnosis::Trickled { .. }
                | Diagnosis::ShortThenSilent { .. }
                | Diagnosis::NotHttp { .. }
                | Diagnosis::HugeHead { .. }
                | Diagnosis::Tls(_)
        )
    }
}

impl std::fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Diagnosis::Answered => write!(f, "got an answer"),
            Diagnosis::Refused(e) => write!(f, "was refused ({e})"),
            Diagnosis::Reset(e) => write!(f, "was reset ({e})"),
            Diagnosis::Silent { secs } => {
                write!(
                    f,
                    "got nothing in {secs:.0} s (no connection, handshake or answer)"
                )
            }
            Diagnosis::Trickled { bytes, secs } => {
                let rate = (*bytes as f64 / secs.max(0.001)).round();
                let unit = if rate == 1.0 { "byte" } else { "bytes" };
                write!(
                    f,
                    "trickled: {bytes} bytes in {secs:.0} s (about {rate} {unit} a second), the answer still incomplete"
                )
            }
            Diagnosis::ShortThenSilent {
                declared,
                got,
                silent,
            } => write!(
                f,
                "got a Content-Length of {declared} with {got} bytes sent, then silence for {silent:.0} s"
            ),
            Diagnosis::NotHttp { first } => write!(
                f,
                "got bytes that are not HTTP (\"{first}\"…): an https:// port reached with http://, or the reverse?"
            ),
            Diagnosis::HugeHead { bytes } => write!(
                f,
                "got {bytes} bytes of headers without their end: more headers than any client reads"
            ),
            Diagnosis::Tls(e) => write!(f, "failed: {e}"),
            Diagnosis::Other(e) => write!(f, "failed: {e}"),
        }
    }
}

/// Asks whether the target is still there: `GET /` on a fresh connection, read byte by byte
/// within `budget` (the probe's words for what came back). One for `check` and `load`.
pub async fn diagnose(cfg: &ClientConfig, base: &BaseUrl, budget: Duration) -> Diagnosis {
    Diagnosis::of(raw_get(cfg, base, budget).await, budget)
}

#[cfg(test)]
mod tests;
