//! When a send is late, and how much lateness makes a run client saturated.

/// A request sent later than this after its planned time is late, or later than a hundredth of
/// the window when that is longer: reported, second by second (a busy machine's scheduler
/// easily delays a wake-up by tens of ms).
pub const LATE_SECS: f64 = 0.020;

/// How late a send may be, for a scenario of window `w`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lateness {
    /// Later than this: late (reported; at the in-flight ceiling, held back by the client).
    pub late: f64,
    /// Later than this through the send loop's own lag (users were free): the run is not the
    /// one the scenario asked for. Every rule counts the real send times, so a send less than a
    /// tenth of a window late moves no rule's verdict, only where in the window it fell; a
    /// lagging busy machine is not a reason to withhold the verdict until then.
    pub lag: f64,
}

/// When a send is late, for a scenario of window `w`.
pub fn lateness(window: std::time::Duration) -> Lateness {
    let w = window.as_secs_f64();
    let late = LATE_SECS.max(w / 100.0);
    Lateness {
        late,
        lag: late.max(w / 10.0),
    }
}
/// Held back at the in-flight ceiling, lagged past `Lateness::lag`, unsent or refused locally
/// above this share of the schedule: client saturated.
pub const SATURATION_SHARE: f64 = 0.02;
