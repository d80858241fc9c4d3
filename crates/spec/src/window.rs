//! The target's standard rate window: given once (`--rate-window`, a profile's
//! `rate_window_secs`, `serve --window`), validated where it is given, and the one place every
//! other rate class is scaled with it.

use std::time::Duration;

/// Why a length given for the window is not one.
#[derive(Debug, thiserror::Error)]
#[error("the rate window must be a positive number of seconds, got {0}")]
pub struct WindowError(pub f64);

/// The length of a target's standard window (the spec's minute, unless shortened): positive
/// and finite by construction.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct RateWindow(Duration);

impl RateWindow {
    /// The spec's own: a minute.
    pub const SPEC: RateWindow = RateWindow(Duration::from_secs(60));

    pub fn from_secs(secs: f64) -> Result<RateWindow, WindowError> {
        match Duration::try_from_secs_f64(secs) {
            Ok(d) if secs.is_finite() && !d.is_zero() => Ok(RateWindow(d)),
            _ => Err(WindowError(secs)),
        }
    }

    pub fn duration(self) -> Duration {
        self.0
    }

    pub fn secs(self) -> f64 {
        self.0.as_secs_f64()
    }

    /// A window the spec gives (`spec_window`, whose standard is `spec_standard`) at a target
    /// whose standard window is this one: every class shrinks in proportion.
    pub fn scale(self, spec_window: Duration, spec_standard: Duration) -> Duration {
        spec_window.mul_f64(self.secs() / spec_standard.as_secs_f64())
    }
}

impl Default for RateWindow {
    fn default() -> RateWindow {
        RateWindow::SPEC
    }
}

impl std::fmt::Display for RateWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} s", self.secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_positive_finite_length_is_a_window() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-12, 1e30] {
            assert!(RateWindow::from_secs(bad).is_err(), "{bad}");
        }
        assert_eq!(RateWindow::from_secs(6.0).unwrap().secs(), 6.0);
    }

    #[test]
    fn every_class_shrinks_with_the_standard() {
        let w = RateWindow::from_secs(6.0).unwrap();
        let minute = Duration::from_secs(60);
        assert_eq!(w.scale(minute, minute), Duration::from_secs(6));
        assert_eq!(
            w.scale(Duration::from_secs(1), minute),
            Duration::from_millis(100)
        );
    }
}
