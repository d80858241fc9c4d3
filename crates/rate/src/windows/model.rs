//! The limiter a key's answers show, learned from the X-RateLimit-Reset (epoch seconds) they
//! name, in send order: `check`'s limiter.model and `load`'s load.behaviour read how Reset moves
//! with this one reading. The spec names no algorithm (field facts, "Rate limiting, from
//! outside"), so this is what the run reports, never a failure by itself: a Reset that stays
//! put for a window and moves by about a window names the target's windows (a fixed window; a
//! sliding counter naming its window's end; a sliding log whose oldest admission stays the
//! oldest), a Reset that creeps (a token bucket, a sliding log under spread traffic, a Reset
//! counted from the answer) does not.

/// What the answers showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Every move of Reset was by about a window; `clock`: every Reset a multiple of the window
    /// since the epoch, over three windows or more (windows aligned to the clock, not to the
    /// key's first request: a Reset counted from a request falls on the grid by chance, seldom
    /// three times).
    NamedWindows { clock: bool },
    /// Reset moved by less than a window at least once.
    Moving,
    /// Reset never moved (one window seen) or was never in epoch seconds.
    Unknown,
}

impl Model {
    /// The run's model from its keys': keys that saw nothing say nothing; keys that disagree
    /// make it `Moving` (the weaker reading); windows are aligned to the clock only if every
    /// key's are.
    pub fn of_run(keys: impl IntoIterator<Item = Model>) -> Model {
        let mut out = Model::Unknown;
        for m in keys {
            out = match (out, m) {
                (Model::Moving, _) | (_, Model::Moving) => Model::Moving,
                (Model::Unknown, m) | (m, Model::Unknown) => m,
                (Model::NamedWindows { clock: a }, Model::NamedWindows { clock: b }) => {
                    Model::NamedWindows { clock: a && b }
                }
            };
        }
        out
    }

    /// The model as a report says it.
    pub fn describe(&self, w: f64) -> String {
        match self {
            Model::NamedWindows { clock: true } => format!(
                "named windows aligned to the clock: X-RateLimit-Reset stays put for a window and moves by {w} s, always a multiple of {w} s since the epoch (a fixed window or a sliding counter naming its window's end)"
            ),
            Model::NamedWindows { clock: false } => format!(
                "named windows: X-RateLimit-Reset stays put for a window and moves by about {w} s or more (a fixed window from a key's first request, or a sliding log whose oldest admission stays the oldest)"
            ),
            Model::Moving => "a moving Reset: X-RateLimit-Reset moved by less than a window (a token bucket, a sliding log under spread traffic, or a Reset counted from each answer)".into(),
            Model::Unknown => "not learned: no key's X-RateLimit-Reset moved, or none was in epoch seconds".into(),
        }
    }
}

/// A key's Resets, fed in send order.
pub struct Learner {
    w: f64,
    last: Option<u64>,
    /// Moves by about a window or more, and by less (more than a second of rounding).
    jumps: u64,
    creeps: u64,
    clock: bool,
}

impl Learner {
    pub fn new(window_secs: f64) -> Learner {
        Learner {
            w: window_secs,
            last: None,
            jumps: 0,
            creeps: 0,
            clock: true,
        }
    }

    /// The Reset an admission or a 429 named (None: absent or in another unit).
    pub fn observe(&mut self, reset: Option<u64>) {
        let Some(r) = reset else { return };
        let w = self.w;
        // A window of whole seconds: its boundaries are multiples of it since the epoch.
        let whole = w >= 1.0 && w.fract() == 0.0;
        self.clock &= whole && r % (w as u64) == 0;
        if let Some(last) = self.last.replace(r) {
            // Answers overtake each other near a boundary: a move back is a move.
            let moved = r.abs_diff(last) as f64;
            // (Judged from 3 s on: a window's move is then never a second's rounding.)
            if moved >= w - 1.0 {
                self.jumps += 1;
            } else if moved > 1.0 {
                self.creeps += 1;
            }
        }
    }

    pub fn finish(&self) -> Model {
        // Whole seconds tell a window's move from rounding only from 3 s on.
        if self.w < 3.0 || self.last.is_none() {
            Model::Unknown
        } else if self.creeps > 0 {
            Model::Moving
        } else if self.jumps > 0 {
            Model::NamedWindows {
                clock: self.clock && self.jumps >= 2,
            }
        } else {
            Model::Unknown
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learn(w: f64, resets: &[u64]) -> Model {
        let mut l = Learner::new(w);
        for r in resets {
            l.observe(Some(*r));
        }
        l.finish()
    }

    #[test]
    fn a_reset_that_moves_by_windows_names_them() {
        // A fixed window of 6 s from the epoch, answers overtaking each other at a boundary.
        assert_eq!(
            learn(6.0, &[1002, 1002, 1008, 1002, 1008, 1026]),
            Model::NamedWindows { clock: true }
        );
        // Two windows on the grid may be chance (a Reset counted from a request): not yet the
        // clock's.
        assert_eq!(
            learn(6.0, &[1002, 1002, 1008]),
            Model::NamedWindows { clock: false }
        );
        // From a key's first request: moves by a window or more, not on the clock's grid.
        assert_eq!(
            learn(6.0, &[1003, 1003, 1004, 1017, 1017]),
            Model::NamedWindows { clock: false }
        );
    }

    #[test]
    fn a_reset_that_creeps_is_moving_and_one_window_teaches_nothing() {
        // A token bucket's "full at" moves a second or two at a time.
        assert_eq!(learn(6.0, &[1001, 1003, 1005, 1006]), Model::Moving);
        assert_eq!(learn(6.0, &[1002, 1002, 1002]), Model::Unknown);
        assert_eq!(learn(2.0, &[1002, 1004]), Model::Unknown);
        assert_eq!(Learner::new(6.0).finish(), Model::Unknown);
    }

    #[test]
    fn the_grid_is_the_clocks_only_for_whole_seconds_and_every_reset() {
        // One Reset off the grid, or a window not of whole seconds: not the clock's windows.
        assert_eq!(
            learn(6.0, &[1002, 1008, 1014, 1015]),
            Model::NamedWindows { clock: false }
        );
        assert_eq!(
            learn(4.5, &[1000, 1008, 1016]),
            Model::NamedWindows { clock: false }
        );
        // A move of a window less a second of rounding is a window's move; 3 s windows count.
        assert_eq!(
            learn(6.0, &[1000, 1005, 1010]),
            Model::NamedWindows { clock: false }
        );
        assert_eq!(
            learn(3.0, &[999, 1002, 1005]),
            Model::NamedWindows { clock: true }
        );
        let said = |m: Model| m.describe(6.0);
        assert!(said(Model::NamedWindows { clock: true }).contains("aligned to the clock"));
        assert!(said(Model::NamedWindows { clock: false }).contains("first request"));
        assert!(said(Model::Moving).contains("moving Reset"));
        assert!(said(Model::Unknown).contains("not learned"));
    }

    #[test]
    fn the_run_takes_the_weaker_reading() {
        let named = |clock| Model::NamedWindows { clock };
        assert_eq!(Model::of_run([Model::Unknown, named(true)]), named(true));
        assert_eq!(Model::of_run([named(true), named(false)]), named(false));
        assert_eq!(Model::of_run([named(true), Model::Moving]), Model::Moving);
        assert_eq!(Model::of_run([]), Model::Unknown);
    }
}
