//! load.admitted (admitted within [N(k-1), N(ceil(k)+1)] plus slack under sustained overload,
//! and window by window as `windows.rs` counts it) and load.rolling-window (at most N in a
//! rolling window; up to 2N is fixed-window semantics).

use linkcert_registry::rule_id;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use super::windows::{Breach, Persistent, Tiling};
use linkcert_rate::windows::{Bounds, NamedFixed, NamedWindows, ResetWindows, RollingMax};
use crate::record::Record;
use linkcert_rate::headers as rate_headers;
use linkcert_spec::verdict::Verdict;

/// What the two rules keep of a key's answers, fed in send order.
pub(super) struct State {
    pub rolling: RollingMax,
    sends: SendBins,
    tiling: Tiling,
    resets: ResetWindows,
    named: NamedWindows,
    /// Under sustained overload only.
    persistent: Option<Persistent>,
    n: u64,
}

/// What `State::finish` hands the judge.
pub(super) struct Counted {
    /// The most admissions in one rolling window.
    pub rolling: u64,
    /// Every whole window from the first send carried N or more requests.
    pub sent_overload: bool,
    /// Where windows of N could no longer cover the admissions.
    tiling: Option<Breach>,
    /// The most admissions naming one Reset within one window, and that Reset.
    reset_most: (u64, u64),
    named: NamedFixed,
    persistent: Option<Persistent>,
}

impl State {
    /// `overloaded`: the scenario keeps this key over its limit for the whole run.
    pub fn new(n: u64, w: f64, overloaded: bool) -> State {
        State {
            rolling: RollingMax::new(w),
            sends: SendBins::new(n, w),
            tiling: Tiling::new(n, w),
            resets: ResetWindows::new(w),
            named: NamedWindows::new(w),
            persistent: overloaded.then(|| Persistent::new(n, w)),
            n,
        }
    }
    pub fn observe(&mut self, x: &Record) {
        self.sends.observe(x.sent, x.recv);
        if let Some(p) = &mut self.persistent {
            // What a window owes at least is judged on what the quota may have been spent on.
            p.observe(x.sent, x.recv, x.spent());
        }
        let named = x.reset.as_deref().and_then(rate_headers::epoch_reset);
        if let Some(v) = named {
            if x.refused() {
                self.named.refusal(x.sent, v);
            } else if x.admitted() || x.throttled() {
                let remaining = rate_headers::parse_count(x.remaining.as_deref());
                self.named.observe(x.sent, x.admitted(), v, remaining);
            }
        }
        if x.admitted() {
            self.rolling.observe(x.sent, x.recv);
            self.tiling.observe(x.sent, x.recv);
            if let Some(v) = named {
                self.resets.observe(x.sent, x.recv, v);
            }
        }
    }
    pub fn finish(self) -> Counted {
        Counted {
            rolling: self.rolling.finish(),
            sent_overload: self.sends.finish(),
            tiling: self.tiling.finish(),
            reset_most: self.resets.finish(),
            named: self.named.finish(self.n),
            persistent: self.persistent.map(Persistent::finish),
        }
    }
}

/// load.admitted, window by window (`windows.rs`): the first failure, else what was judged.
/// `reset_trusted`: load.reset did not fail, so the target's Reset names its windows.
fn per_window(view: &KeyView, c: &Counted, reset_trusted: bool) -> (Option<Failure>, Vec<String>) {
    let (n, w) = (view.n, view.window.as_secs_f64());
    let mut judged = Vec::new();
    let mut fail = None;
    match c.tiling {
        Some(b) => {
            fail = Some(Failure {
                msg: format!(
                    "more admitted than a limit of {n} per {w} s allows, however its windows are aligned: at best one admits {}, from {:.2} s",
                    b.admitted, b.from
                ),
                expected: format!(
                    "at most {n} in each window of {w} s, at some alignment (a sliding limit: at every one)"
                ),
                actual: format!("{} admitted in one window", b.admitted),
            });
        }
        None => judged.push(format!("every window of {w} s at most {n}")),
    }
    let (most, reset) = c.reset_most;
    // Whole seconds tell windows apart, even rounded either way, from 3 s on.
    if reset_trusted && w >= 3.0 && most > 0 {
        if most > n && fail.is_none() {
            fail = Some(Failure {
                msg: format!(
                    "one window admitted more than the limit: {most} admissions name X-RateLimit-Reset {reset} and fall within {w} s"
                ),
                expected: format!("at most {n} per window (the target's own Reset)"),
                actual: format!("{most} admitted naming Reset {reset}"),
            });
        } else {
            judged.push(format!("at most {most} naming one Reset"));
        }
    }
    // Windows the target named and said were fresh: exact, window by window.
    if reset_trusted && c.named.judged > 0 {
        match c.named.short {
            Some(s) if fail.is_none() => {
                fail = Some(Failure {
                    msg: format!(
                        "a window that began with its whole quota (X-RateLimit-Remaining {} on its first admission) admitted fewer than it had room for: of {} requests naming X-RateLimit-Reset {}, {} admitted (some requests cost more than one, or refusals use quota)",
                        n - 1,
                        s.answers,
                        s.reset,
                        s.admitted
                    ),
                    expected: format!(
                        "min({n}, requests naming it) = {} admitted",
                        n.min(s.answers)
                    ),
                    actual: format!("{} admitted naming Reset {}", s.admitted, s.reset),
                });
            }
            _ => judged.push(format!(
                "{} windows it named and began fresh each admitted what it had room for",
                c.named.judged
            )),
        }
    }
    if let Some(p) = &c.persistent
        && let Some(s) = p.worst
    {
        let slack = p.slack();
        if s.owed > s.admitted + slack && fail.is_none() {
            fail = Some(Failure {
                msg: format!(
                    "a key that keeps sending is admitted less than its limit: {} admitted in the window from {:.2} s, where a fixed window of {n} would have admitted {} of what was sent",
                    s.admitted, s.at, s.fixed
                ),
                expected: format!(
                    "at least {} (3/4 of {}, less {slack}) in every window of {w} s from one window after the first send",
                    s.owed.saturating_sub(slack),
                    s.fixed
                ),
                actual: format!("{} admitted from {:.2} s", s.admitted, s.at),
            });
        } else if p.judged > 0 {
            judged.push(format!(
                "{} windows of a persistent client each admitted its due (the closest: {} admitted where a fixed window admits {})",
                p.judged, s.admitted, s.fixed
            ));
        }
    }
    (fail, judged)
}

struct Failure {
    msg: String,
    expected: String,
    actual: String,
}

pub(super) fn judge(j: &mut Judge, view: &KeyView, b: &Bounds, c: &Counted, reset_trusted: bool) {
    let KeyView {
        label: lbl,
        f,
        n,
        window,
        ..
    } = *view;
    let w = window.as_secs_f64();
    let Bounds {
        lower,
        upper,
        slack,
        k,
    } = *b;
    let (rolling, sent_overload) = (c.rolling, c.sent_overload);
    let (window_fail, window_judged) = per_window(view, c, reset_trusted);
    // Window by window, what was really sent decides what is owed: a total short of the
    // bounds because the client sent too little is then no reason to skip.
    let persistent_judged = c.persistent.as_ref().is_some_and(|p| p.judged > 0);
    // Admitted over the windows loaded: at most what the upper bound allows; at least, with the
    // clean refusals (they may have used quota), what the lower one does.
    let a = f.admitted as f64;
    let spent = (f.admitted + f.refused) as f64;
    let bounds = format!("[{lower:.0}, {upper:.0}] over {k:.2} windows of {n} (slack {slack:.0})");
    if a > upper {
        j.fail(
            rule_id!("load.admitted"),
            lbl,
            "more admitted than the limit allows: not enforced".into(),
            bounds,
            format!("{a:.0} admitted"),
        );
    } else if let Some(x) = window_fail {
        j.fail(rule_id!("load.admitted"), lbl, x.msg, x.expected, x.actual);
    } else if spent < lower && sent_overload {
        j.fail(
            rule_id!("load.admitted"),
            lbl,
            "fewer admitted than the limit allows: the plan is under-served".into(),
            bounds,
            format!("{a:.0} admitted"),
        );
    } else if spent < lower && !persistent_judged {
        j.add(
            rule_id!("load.admitted"),
            Verdict::Skipped,
            lbl,
            "fewer admitted than the limit allows, but fewer than the limit were sent in some window: not judged"
                .into(),
            bounds,
            format!("{a:.0} admitted"),
        );
    } else {
        j.pass(
            rule_id!("load.admitted"),
            lbl,
            format!(
                "{a:.0} admitted, {} {bounds}; {}",
                if spent < lower {
                    "fewer than the limit sent in some window, below"
                } else {
                    "within"
                },
                window_judged.join("; ")
            ),
        );
    }
    // Rolling window.
    let double = 2.0 * n as f64 + slack;
    if rolling <= n {
        j.pass(
            rule_id!("load.rolling-window"),
            lbl,
            format!("at most {rolling} admitted in any rolling window of {w} s (limit {n})"),
        );
    } else if rolling as f64 <= double {
        j.add(rule_id!("load.rolling-window"), Verdict::Informational, lbl,
            "fixed-window semantics: more than the limit in a rolling window, up to twice at a boundary (the spec names no algorithm)".into(),
            format!("at most {n} (ideal), at most {double:.0} (fixed window)"), format!("{rolling}"));
    } else {
        j.fail(
            rule_id!("load.rolling-window"),
            lbl,
            "more than twice the limit in a rolling window".into(),
            format!("at most {double:.0}"),
            format!("{rolling}"),
        );
    }
}

/// Sends counted per whole window from the first one, fed in send order: only the window under
/// way is counted; the closed ones leave whether each carried `n`.
pub(super) struct SendBins {
    n: u64,
    w: f64,
    first: Option<f64>,
    last: f64,
    /// The window under way (from the first send), the sends the target certainly had within
    /// it (answered in it too), and whether every closed one carried `n`.
    at: usize,
    count: u64,
    full: bool,
}

impl SendBins {
    pub fn new(n: u64, w: f64) -> SendBins {
        SendBins {
            n,
            w,
            first: None,
            last: 0.0,
            at: 0,
            count: 0,
            full: true,
        }
    }
    /// A request sent at `t` and answered (or failed) at `recv`. The target had it somewhere
    /// between: it loads the window of its send only when answered within that window too. A
    /// target (or a link) that held requests for a window or more may have seen them all at
    /// once, and admitted few: slowness, not a stingy limiter, so such windows are not loaded.
    pub fn observe(&mut self, t: f64, recv: f64) {
        let first = *self.first.get_or_insert(t);
        self.last = self.last.max(t);
        if self.w <= 0.0 {
            return;
        }
        let i = ((t - first) / self.w) as usize;
        if i > self.at {
            // The window under way closes; any skipped between carried nothing.
            self.full &= self.count >= self.n && (i == self.at + 1 || self.n == 0);
            self.at = i;
            self.count = 0;
        }
        if ((recv - first) / self.w) as usize == i {
            self.count += 1;
        }
    }
    /// Every whole window from the first send held at least `n` sends (none whole: false).
    pub fn finish(&self) -> bool {
        let Some(first) = self.first else {
            return false;
        };
        let whole = ((self.last - first) / self.w).floor() as usize;
        whole != 0 && self.w > 0.0 && self.full
    }
}

/// load.admitted and load.rolling-window, for every key.
pub(super) struct Admitted;

impl Rule for Admitted {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        let w = s.r.window.as_secs_f64();
        Some(Box::new(State::new(s.r.key_limit(s.key), w, s.overloaded())))
    }
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        State::observe(self, x);
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, notes: &mut KeyNotes) {
        let mut counted = (*self).finish();
        notes.rolling = counted.rolling;
        // Whether the key really was overloaded, by what was sent (not by the schedule):
        // every whole window from the first send carried at least N requests. Then
        // under-service is judged even where the generator fell behind its schedule.
        counted.sent_overload &= view.overloaded;
        judge(j, view, view.bounds, &counted, !notes.reset_failed);
    }
}

#[cfg(test)]
mod tests {
    use super::SendBins;

    /// Every whole window of `w` seconds, counted from the first send, holds at least `n` sends
    /// answered within it (`(sent, recv)` pairs).
    fn overloaded_by_sends(sends: &[(f64, f64)], n: u64, w: f64) -> bool {
        let mut sorted = sends.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut bins = SendBins::new(n, w);
        for (t, recv) in sorted {
            bins.observe(t, recv);
        }
        bins.finish()
    }

    #[test]
    fn overload_is_read_from_the_real_send_times() {
        // Answered 1 ms after the send.
        let now = |ts: &[f64]| ts.iter().map(|t| (*t, t + 0.001)).collect::<Vec<_>>();
        // 10 per window of 1 s for 3 windows: overloaded at N = 10, not at N = 11.
        let even: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.1).collect();
        assert!(overloaded_by_sends(&now(&even), 10, 1.0));
        assert!(!overloaded_by_sends(&now(&even), 11, 1.0));
        // A generator that stalled through the second window: not overloaded there.
        let stalled: Vec<f64> = (0..30)
            .map(|i| f64::from(i) * 0.1)
            .filter(|t| !(1.0..2.0).contains(t))
            .chain([2.95])
            .collect();
        assert!(!overloaded_by_sends(&now(&stalled), 10, 1.0));
        // Late but dense: sends that all came late still overload every window.
        let late: Vec<f64> = even.iter().map(|t| t + 0.5).collect();
        assert!(overloaded_by_sends(&now(&late), 10, 1.0));
        assert!(!overloaded_by_sends(&[], 1, 1.0));
        assert!(!overloaded_by_sends(&now(&[0.0, 0.5]), 1, 1.0));
        // Sent on time, but the second window's answers all came a window later (a target or a
        // link that held them): the target may have seen them at once, so that window is not
        // known to be loaded, and a few admissions there say nothing of its limiter.
        let held: Vec<(f64, f64)> = even
            .iter()
            .map(|t| (*t, if (1.0..2.0).contains(t) { t + 1.0 } else { t + 0.001 }))
            .collect();
        assert!(!overloaded_by_sends(&held, 10, 1.0));
    }
}
