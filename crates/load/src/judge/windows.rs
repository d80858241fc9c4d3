//! load.admitted, window by window: what a key is admitted in each window of the plan's length,
//! upper and lower, fed in send order. (`admitted.rs` judges the totals and reads these.)
//!
//! - Too many: the admissions must fit a legal limiter of N per window W. A fixed window (any
//!   alignment) is the most a limiter of N per W may admit, and a sliding one admits less, so
//!   the test is whether at some alignment windows of W, one after another, each hold at most
//!   N (`Tiling`); the first window of the run may hold 2N, as a token bucket of N full at the
//!   start gives its burst and its refill there (the spec names no algorithm, and the field's
//!   fair bound for k windows, N(k+1), allows it), and holds N per window after; each admission counted anywhere between its send and its answer (the server
//!   decided in between: what the measurement cannot know is given to the target). Under
//!   overload a fixed window restarted by the first request after it expired drifts by less
//!   than one request's gap per window, within the empty tail of its windows. And where the
//!   target names its windows (X-RateLimit-Reset in epoch seconds), the admissions naming one
//!   Reset and provably within one window of W are counted exactly (`ResetWindows`; judged for
//!   windows of 3 s or more, so that a Reset off by a second in rounding never joins two).
//! - Too few (`Persistent`, under sustained overload only): in every window [a, a+W] from one
//!   window after the first send, the key must be admitted three quarters of what a fixed window
//!   would admit it given what was really sent (at worst over the boundary's place: what the
//!   legal limiters admit a client that keeps sending; the quarter is for sliding counters),
//!   less a slack for rounding and the requests in flight at the two boundaries. A limiter that
//!   lets rejected requests use up quota admits a persistent client less and less, and fails.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::order::OrdF64;

/// The share of what a fixed window would admit that every window owes a persistent client: a
/// sliding counter (the previous window weighed by how much of it is still in view) admits
/// less than that in a window soon after overload begins, by an eighth at 1.5x; starving or
/// halving fall far below.
const OWED_SHARE: (u64, u64) = (3, 4);

/// Window positions tried per window of the plan's length by `Persistent`.
const STEPS_PER_WINDOW: f64 = 20.0;

/// The most exchanges in flight at once (sent, not yet answered), fed in send order.
#[derive(Default)]
pub(super) struct InFlight {
    open: BinaryHeap<Reverse<OrdF64>>,
    pub most: usize,
}

impl InFlight {
    pub fn observe(&mut self, sent: f64, recv: f64) {
        while self.open.peek().is_some_and(|r| r.0.0 < sent) {
            self.open.pop();
        }
        self.open.push(Reverse(OrdF64(recv.max(sent))));
        self.most = self.most.max(self.open.len());
    }
}

/// Alignments of the windows tried, per window of W.
const PHASES: usize = 400;

/// The least excess over N any alignment of the windows leaves: at that alignment, the window
/// from `from` (seconds of the run) admitted `admitted`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Breach {
    pub from: f64,
    pub admitted: u64,
}

/// Windows of W one after another (a fixed window's, at one of `PHASES` alignments), each
/// admission counted in the window it must have fallen in: between its send and its answer
/// (the server decided in between), widened by half the step between alignments. One whose
/// span crosses a boundary goes to the earlier window while that has room, else to the later;
/// one slower than W is not counted. A legal
/// limiter leaves every window at most N at its own alignment (a sliding one at every
/// alignment).
pub(super) struct Tiling {
    n: u64,
    w: f64,
    /// Empty until the key has been admitted more than N times: before that no window can
    /// hold more than N, so a fleet's quiet keys keep only their few admissions (`early`), not
    /// `PHASES` alignments each.
    phases: Vec<Phase>,
    early: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, Default)]
struct Phase {
    /// The first window (index from the alignment): it may hold a bucket's burst too.
    first: Option<i64>,
    /// The window under way (index from the alignment), its count, and the admissions whose
    /// span crosses into the next one.
    at: Option<i64>,
    count: u64,
    crossing: u64,
    /// The largest count beyond a window's allowance (N; 2N for the first), plus N, and its
    /// window.
    worst: u64,
    worst_at: i64,
}

impl Tiling {
    pub fn new(n: u64, w: f64) -> Tiling {
        Tiling {
            n,
            w,
            phases: Vec::new(),
            early: Vec::new(),
        }
    }

    /// An admission, in send order.
    pub fn observe(&mut self, sent: f64, recv: f64) {
        if self.w <= 0.0 {
            return;
        }
        if self.phases.is_empty() {
            if (self.early.len() as u64) < self.n {
                self.early.push((sent, recv));
                return;
            }
            self.phases = vec![Phase::default(); PHASES];
            for (s, r) in std::mem::take(&mut self.early) {
                self.place(s, r);
            }
        }
        self.place(sent, recv);
    }

    /// Whether the window alignments are kept yet (a key admitted more than N times).
    #[cfg(test)]
    pub fn holds_alignments(&self) -> bool {
        !self.phases.is_empty()
    }

    fn place(&mut self, sent: f64, recv: f64) {
        let (n, w) = (self.n, self.w);
        // Widened by half the step between alignments: at the tried alignment nearest the
        // target's own, every admission may still go to its own window.
        let half = w / PHASES as f64 / 2.0;
        let (from, to) = (sent - half, recv.max(sent) + half);
        for (i, p) in self.phases.iter_mut().enumerate() {
            let shift = w * i as f64 / PHASES as f64;
            let first = ((from - shift) / w).floor() as i64;
            let last = ((to - shift) / w).floor() as i64;
            if last > first + 1 {
                continue;
            }
            p.enter(first, n);
            if last == first {
                p.count += 1;
            } else {
                p.crossing += 1;
            }
        }
    }

    /// The least excess over N at any alignment, where every alignment has one (never, for a
    /// key admitted N times or fewer).
    pub fn finish(mut self) -> Option<Breach> {
        let (n, w) = (self.n, self.w);
        let mut best: Option<(u64, f64)> = None;
        for (i, p) in self.phases.iter_mut().enumerate() {
            if let Some(at) = p.at {
                p.enter(at + 2, n);
            }
            if p.worst <= n {
                return None;
            }
            let from = w * (p.worst_at as f64 + i as f64 / PHASES as f64);
            if best.is_none_or(|b| p.worst < b.0) {
                best = Some((p.worst, from));
            }
        }
        best.map(|(admitted, from)| Breach { from, admitted })
    }
}

impl Phase {
    /// Move on to window `k` (closing those before it).
    fn enter(&mut self, k: i64, n: u64) {
        let Some(mut at) = self.at else {
            self.at = Some(k);
            self.first = Some(k);
            return;
        };
        while at < k {
            let burst = if self.first == Some(at) { n } else { 0 };
            // Those crossing into the next window stay here while there is room.
            let here = self.crossing.min((n + burst).saturating_sub(self.count));
            let beyond = self.count.saturating_sub(burst);
            if beyond > self.worst {
                self.worst = beyond;
                self.worst_at = at;
            }
            self.count = self.crossing - here;
            self.crossing = 0;
            at += 1;
        }
        self.at = Some(at);
    }
}

/// The fewest admitted in one window against what a fixed window would have admitted there.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shortfall {
    /// The window [at, at + W].
    pub at: f64,
    pub admitted: u64,
    /// What a fixed window would have admitted there, and the share of it owed.
    pub fixed: u64,
    pub owed: u64,
}

/// Under sustained overload: every window of W from one window after the first send admits what
/// the sends there earn (see the module's note).
pub(super) struct Persistent {
    n: u64,
    w: f64,
    /// Next window start to judge (None: before the first send).
    next: Option<f64>,
    /// The key's exchanges (sent, recv, admitted) in send order, from `next - W`.
    recs: VecDeque<(f64, f64, bool)>,
    in_flight: InFlight,
    last_sent: f64,
    /// Windows judged; the one closest to (or furthest past) its due.
    pub judged: usize,
    pub worst: Option<Shortfall>,
}

impl Persistent {
    pub fn new(n: u64, w: f64) -> Persistent {
        Persistent {
            n,
            w,
            next: None,
            recs: VecDeque::new(),
            in_flight: InFlight::default(),
            last_sent: f64::NEG_INFINITY,
            judged: 0,
            worst: None,
        }
    }

    pub fn observe(&mut self, sent: f64, recv: f64, admitted: bool) {
        if self.w <= 0.0 {
            return;
        }
        self.in_flight.observe(sent, recv);
        self.next.get_or_insert(sent + self.w);
        self.judge_before(sent, false);
        self.recs.push_back((sent, recv, admitted));
        self.last_sent = self.last_sent.max(sent);
    }

    /// Judge every window that ends before `t` (all its sends are in), or at `t` too.
    fn judge_before(&mut self, t: f64, at_too: bool) {
        let step = self.w / STEPS_PER_WINDOW;
        while let Some(a) = self.next
            && (a + self.w < t || (at_too && a + self.w <= t))
        {
            self.judge_at(a);
            self.next = Some(a + step);
            let from = a + step;
            while self
                .recs
                .front()
                .is_some_and(|r| r.0 < from - self.w && r.1 < from)
            {
                self.recs.pop_front();
            }
        }
    }

    fn judge_at(&mut self, a: f64) {
        let (n, w) = (self.n, self.w);
        let end = a + w;
        let admitted = self
            .recs
            .iter()
            .filter(|r| r.2 && r.1 >= a && r.0 <= end)
            .count() as u64;
        // A fixed window ending at B (in (a, a + W]) admits, in [a, a + W]: what is left of N
        // after its own sends before a, up to its sends from a to B, then the next window's
        // first N of the sends from B on. Swept over B: each send from a on moves from the next
        // window to this one as B passes it; each send before a leaves this window as B - W
        // passes it.
        let recs = &self.recs;
        let lo = recs.partition_point(|r| r.0 <= a - w);
        let mid = recs.partition_point(|r| r.0 < a);
        let at_a = recs.partition_point(|r| r.0 <= a);
        let hi = recs.partition_point(|r| r.0 <= end);
        let (mut own_before, mut own_after, mut next) =
            ((mid - lo) as u64, (at_a - mid) as u64, (hi - at_a) as u64);
        let earned =
            |before: u64, after: u64, next: u64| after.min(n.saturating_sub(before)) + next.min(n);
        let mut owed = earned(own_before, own_after, next);
        let (mut i, mut j) = (at_a, lo);
        loop {
            let passes_send = (i < hi && recs[i].0 < end).then(|| recs[i].0);
            let leaves = (j < mid).then(|| recs[j].0 + w);
            match (passes_send, leaves) {
                (Some(t), Some(u)) if t <= u => {
                    own_after += 1;
                    next -= 1;
                    i += 1;
                }
                (Some(_), None) => {
                    own_after += 1;
                    next -= 1;
                    i += 1;
                }
                (_, Some(_)) => {
                    own_before -= 1;
                    j += 1;
                }
                (None, None) => break,
            }
            owed = owed.min(earned(own_before, own_after, next));
        }
        self.judged += 1;
        let fixed = owed;
        let owed = fixed * OWED_SHARE.0 / OWED_SHARE.1;
        // The window closest to (or furthest past) its due.
        let margin = |admitted: u64, owed: u64| admitted as i128 - owed as i128;
        if self
            .worst
            .is_none_or(|x| margin(admitted, owed) < margin(x.admitted, x.owed))
        {
            self.worst = Some(Shortfall {
                at: a,
                admitted,
                owed,
                fixed,
            });
        }
    }

    /// The slack: rounding, and the exchanges in flight at either boundary.
    pub fn slack(&self) -> u64 {
        (0.02 * self.n as f64).ceil().max(3.0) as u64 + 2 * self.in_flight.most as u64
    }

    pub fn finish(mut self) -> Persistent {
        self.judge_before(self.last_sent, true);
        self
    }
}
