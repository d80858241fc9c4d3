//! The target's own windows, named by X-RateLimit-Reset (epoch seconds): counted exactly, since
//! the target's Reset places each answer. `check` (limiter.windows) and `load` (load.admitted)
//! judge a key's windows by these.

use std::collections::BTreeMap;

use super::RollingMax;

/// Admissions naming one X-RateLimit-Reset (epoch seconds) and provably within one window of W:
/// the target's own window, counted exactly.
pub struct ResetWindows {
    w: f64,
    /// Reset -> (last send naming it, its admissions).
    open: BTreeMap<u64, (f64, RollingMax)>,
    /// The most, and the Reset.
    pub most: (u64, u64),
}

impl ResetWindows {
    pub fn new(w: f64) -> ResetWindows {
        ResetWindows {
            w,
            open: BTreeMap::new(),
            most: (0, 0),
        }
    }
    pub fn observe(&mut self, sent: f64, recv: f64, reset: u64) {
        let e = self
            .open
            .entry(reset)
            .or_insert_with(|| (sent, RollingMax::new(self.w)));
        e.0 = sent;
        e.1.observe(sent, recv);
        // A Reset not named for a window and the rounding is closed: its count is final.
        let stale: Vec<u64> = self
            .open
            .iter()
            .filter(|(_, (last, _))| *last + self.w + crate::headers::SLACK_SECS < sent)
            .map(|(r, _)| *r)
            .collect();
        for r in stale {
            if let Some((_, m)) = self.open.remove(&r) {
                self.close(r, m);
            }
        }
    }
    fn close(&mut self, reset: u64, m: RollingMax) {
        let count = m.finish();
        if count > self.most.0 {
            self.most = (count, reset);
        }
    }
    pub fn finish(mut self) -> (u64, u64) {
        for (r, (_, m)) in std::mem::take(&mut self.open) {
            self.close(r, m);
        }
        self.most
    }
}

/// Windows the target names and says are fresh: a key's answers by the X-RateLimit-Reset (epoch
/// seconds) they name. A window whose admissions say X-RateLimit-Remaining N - 1 at their
/// highest began with the whole quota, by the target's own word; from then on any limiter that
/// says so (a fixed window; a sliding log or counter whose earlier admissions have all gone)
/// refuses only once N are in. So such a window admits exactly min(N, the requests naming it):
/// the target's Reset places each answer, and no slack for timing is left. A window that did
/// not start fresh (a sliding log's Reset moving on with one slot back, a sliding counter still
/// weighing the window before) is not judged so: the three-quarter floor is its measure. The
/// first window is not judged either (what came before the run may have used it). A forbidden
/// request refused cleanly counts as admitted here: whether it used quota is the target's
/// choice, and min(N, requests) is owed of the two together either way.
pub struct NamedWindows {
    w: f64,
    /// Judge the first window too: the caller knows nothing came before (a key of its own).
    first_too: bool,
    /// Reset -> its answers.
    windows: BTreeMap<u64, Named>,
}

#[derive(Clone, Debug)]
struct Named {
    answers: u64,
    /// Admissions and clean refusals (`Record::spent`).
    admitted: u64,
    /// The highest Remaining an admission naming it said.
    most_remaining: Option<u64>,
    first_sent: f64,
    last_sent: f64,
}

/// A fresh named window that admitted fewer than it had room for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Short {
    pub reset: u64,
    pub answers: u64,
    pub admitted: u64,
}

/// What `NamedWindows::finish` found: how many fresh named windows were judged exactly, and
/// the one short of its room the most, if any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamedFixed {
    pub judged: usize,
    pub short: Option<Short>,
}

impl NamedWindows {
    pub fn new(w: f64) -> NamedWindows {
        NamedWindows {
            w,
            first_too: false,
            windows: BTreeMap::new(),
        }
    }

    /// As `new`, the first window judged too: for a key nothing else uses, whose first
    /// window's room is all the caller's (`check`'s limiter keys).
    pub fn with_first(w: f64) -> NamedWindows {
        NamedWindows {
            first_too: true,
            ..NamedWindows::new(w)
        }
    }

    /// A 2xx, clean refusal or 429 naming Reset `reset` (with the Remaining an admission said),
    /// in send order; `admitted`: the quota may have been spent on it (`Record::spent`).
    pub fn observe(&mut self, sent: f64, admitted: bool, reset: u64, remaining: Option<u64>) {
        let e = self.window(sent, reset);
        e.answers += 1;
        if admitted {
            e.admitted += 1;
            e.most_remaining = e.most_remaining.max(remaining);
        }
        e.last_sent = sent;
    }

    /// A clean refusal naming Reset `reset`, in send order: room owed counts it as admitted.
    pub fn refusal(&mut self, sent: f64, reset: u64) {
        let e = self.window(sent, reset);
        e.answers += 1;
        e.admitted += 1;
        e.last_sent = sent;
    }

    fn window(&mut self, sent: f64, reset: u64) -> &mut Named {
        self.windows.entry(reset).or_insert(Named {
            answers: 0,
            admitted: 0,
            most_remaining: None,
            first_sent: sent,
            last_sent: sent,
        })
    }

    pub fn finish(self, n: u64) -> NamedFixed {
        let slack = crate::headers::SLACK_SECS;
        let mut out = NamedFixed {
            judged: 0,
            short: None,
        };
        if self.w < 3.0 || n == 0 {
            return out;
        }
        let fresh = |x: &Named| {
            x.most_remaining.is_some_and(|r| r + 1 >= n)
                && x.last_sent - x.first_sent <= self.w + slack
        };
        let skip = usize::from(!self.first_too);
        for (reset, x) in self
            .windows
            .into_iter()
            .skip(skip)
            .filter(|(_, x)| fresh(x))
        {
            out.judged += 1;
            let room = n.min(x.answers);
            let gap = |s: &Short| n.min(s.answers) - s.admitted;
            if x.admitted < room && out.short.is_none_or(|s| room - x.admitted > gap(&s)) {
                out.short = Some(Short {
                    reset,
                    answers: x.answers,
                    admitted: x.admitted,
                });
            }
        }
        out
    }
}
