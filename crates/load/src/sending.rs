//! How the generator sends (the request timeout, the in-flight ceiling) and how long a run
//! lasts: one computation for the run and for the plan's estimate.

use std::time::Duration;

use super::resolved::Resolved;
use super::scenario::Shape;
use super::schedule::Summary;

/// How the generator sends: the request timeout, and the ceiling on requests in flight.
#[derive(Clone, Copy, Debug)]
pub struct Sending {
    /// Per request: an answer slower than this is a transport error (no answer).
    pub request_timeout: Duration,
    /// At most this many requests in flight (goose users) per scenario, whatever the rate.
    pub max_in_flight: usize,
}

/// The default ceiling on requests in flight per scenario: 60 requests per second (the
/// Advanced plan's overload at the real window) with answers up to 10 s fit under it.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;
/// The default request timeout of `load`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for Sending {
    fn default() -> Self {
        Sending {
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
        }
    }
}

impl Sending {
    /// Requests that may be in flight for a schedule whose peak rate is `peak` per second:
    /// enough that no answer faster than the timeout can hold back a send, under the ceiling.
    pub fn in_flight(&self, peak: f64) -> usize {
        let need = (peak * self.request_timeout.as_secs_f64()).ceil();
        let need = if need.is_finite() {
            need as usize
        } else {
            usize::MAX
        };
        need.clamp(1, self.max_in_flight.max(1))
    }
}

/// How long a run lasts: goose users, their launch lead, the schedule's span and the tail
/// expected for the last answers (the run itself waits for them up to the request timeout).
/// One computation for the run and for the plan's estimate.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub users: usize,
    pub lead: Duration,
    pub span: f64,
    pub tail: f64,
}

impl Timing {
    pub fn of(r: &Resolved, schedule: &Summary, sending: &Sending) -> Timing {
        let users = sending.in_flight(schedule.peak_rate);
        let span = schedule.last_due.unwrap_or(0.0);
        // Expected time for the last answers (and for the retry shape, a window's
        // Retry-After); the run waits for them as long as they take, up to the timeout.
        let tail = if r.scenario.shape == Shape::RetryAfter {
            r.window.as_secs_f64() + 1.5
        } else {
            0.5
        };
        // Users are launched before the schedule starts (goose: about one a millisecond).
        let lead = Duration::from_millis(300 + users as u64 * 3 / 2);
        Timing {
            users,
            lead,
            span,
            tail,
        }
    }

    /// Expected wall time of the run, goose's start and shutdown included (about a second).
    pub fn estimate(r: &Resolved, sending: &Sending) -> Duration {
        let t = Timing::of(r, &Summary::of_scenario(r), sending);
        Duration::from_secs_f64(t.lead.as_secs_f64() + t.span + t.tail + 1.0)
    }
}
