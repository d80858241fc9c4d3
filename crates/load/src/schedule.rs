//! The per-key arrival schedule: when each request is due, for which key, with which
//! operation of the mix. Made as the run goes (`Schedule`, an iterator), so a run of any
//! length holds only the slots taken and not yet answered; `Summary` is what the judge and
//! the scheduler need of a whole schedule (counts per key and second, the peak rate).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use super::resolved::Resolved;
use super::scenario::Shape;

/// One planned request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    /// Offset from the start of the run.
    pub due: Duration,
    /// Index into the scenario's keys (0, or 1 for the second key of `two-keys`).
    pub key: usize,
    /// Index into the operation mix.
    pub op: usize,
}

/// A due time, ordered (they are finite: rates and spans are validated).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Due(f64);

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Due) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Due) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// `count` evenly spaced arrivals over `[start, start + span)` for `key`.
#[derive(Clone, Debug)]
struct Segment {
    key: usize,
    start: f64,
    span: f64,
    count: u64,
    /// The next arrival's index.
    i: u64,
}

impl Segment {
    fn next_at(&self) -> Option<f64> {
        (self.i < self.count).then(|| self.start + self.span * self.i as f64 / self.count as f64)
    }
}

fn spread(out: &mut Vec<Segment>, key: usize, start: f64, span: f64, count: u64) {
    out.push(Segment {
        key,
        start,
        span,
        count,
        i: 0,
    });
}

/// Arrivals at `rate` per second over `[start, end)`.
fn steady(out: &mut Vec<Segment>, key: usize, start: f64, end: f64, rate: f64) {
    if rate <= 0.0 || end <= start {
        return;
    }
    let count = ((end - start) * rate).floor() as u64;
    spread(out, key, start, count as f64 / rate, count);
}

/// A key that comes and goes: bursts of `burst` x N over `span` x W, each followed by
/// `silence` x W, from its `share` of one burst's period (keys' bursts apart) to `end`.
fn comes_and_goes(
    out: &mut Vec<Segment>,
    key: usize,
    share: f64,
    n: f64,
    w: f64,
    end: f64,
    (burst, span, silence): (f64, f64, f64),
) {
    let period = (span + silence) * w;
    let count = (burst * n).round().max(1.0) as u64;
    let mut start = share * period;
    while start < end {
        // The last burst cut at the end of the run, its requests as dense as the others'.
        let span_here = (span * w).min(end - start);
        let here = ((count as f64) * span_here / (span * w).max(f64::MIN_POSITIVE)).floor() as u64;
        spread(out, key, start, span_here, here.min(count));
        start += period;
    }
}

/// A resolved scenario's slots in due order, made one at a time: the segments of its shape
/// merged by time (ties: the segment laid out first), each key's operations dealt by smooth
/// weighted round robin so the mix holds over any stretch of the run.
#[derive(Clone, Debug)]
pub struct Schedule {
    segments: Vec<Segment>,
    weights: Vec<i64>,
    total: i64,
    /// Round-robin state per key.
    current: Vec<Vec<i64>>,
    /// Per operation of the mix, its forbidden form's index (`Resolved::forbidden`); every
    /// `forbidden_every`-th request of a key and operation, from the middle of the first
    /// stretch, takes it (per operation, so each one's form is sent whatever the mix).
    forbidden: Vec<Option<usize>>,
    forbidden_every: u64,
    /// Requests dealt per key and operation.
    dealt: Vec<Vec<u64>>,
    /// Each segment's next arrival, earliest first (ties: the segment laid out first), so a
    /// fleet of thousands of keys costs a heap step per slot, not a scan.
    next: BinaryHeap<Reverse<(Due, usize)>>,
}

impl Schedule {
    pub fn new(r: &Resolved) -> Schedule {
        let s = &r.scenario;
        let n = r.limit as f64;
        let w = r.window.as_secs_f64();
        let rate = s.rate * n / w;
        let end = s.windows * w;
        let burst = (s.burst.unwrap_or(1.0) * n).round() as u64;
        let span = s.burst_span.unwrap_or(0.05) * w;
        let mut t = Vec::new();
        match s.shape {
            Shape::Steady => steady(&mut t, 0, 0.0, end, rate),
            Shape::BurstThenSteady => {
                spread(&mut t, 0, 0.0, span, burst);
                steady(&mut t, 0, span, end, rate);
            }
            Shape::Straddle => {
                // One request opens a window at 0; the bursts sit either side of its end.
                spread(&mut t, 0, 0.0, 0.0, 1);
                let gap = 0.03 * w;
                spread(&mut t, 0, w - gap - span, span, burst);
                spread(&mut t, 0, w + gap, span, burst);
                steady(&mut t, 0, w + gap + span, end, rate);
            }
            Shape::TwoKeys => {
                for key in 0..r.keys.len().max(1) {
                    steady(&mut t, key, 0.0, end, r.key_rate(key) * n / w);
                }
            }
            Shape::Fleet => {
                for key in 0..r.keys.len() {
                    let rate = r.key_rate(key) * n / w;
                    if rate <= 0.0 {
                        continue;
                    }
                    // Each key's first request at its own phase of its interval, by its place in
                    // the whole fleet: thousands of keys do not all start at 0 (a burst no
                    // in-flight ceiling holds), and a shard lays out its keys as one process.
                    let (at, size) = r.fleet_position(key);
                    let share = (at as f64 + 0.5) / size.max(1) as f64;
                    if s.comes_and_goes(at, size) {
                        comes_and_goes(&mut t, key, share, n, w, end, s.bursts());
                        continue;
                    }
                    let phase = share / rate;
                    let count = (end * rate).floor() as u64;
                    spread(&mut t, key, phase, count as f64 / rate, count);
                }
            }
            Shape::RetryAfter => spread(&mut t, 0, 0.0, span, burst),
            Shape::Plans => {
                // Each key steady at its rate of its own plan's limit, from its own phase; a
                // custom limit's key no faster than the fastest other (a rate the run can
                // send, whatever limit the key states).
                let rate_of = |key: usize| r.key_rate(key) * r.key_limit(key) as f64 / w;
                let fastest = (0..r.keys.len())
                    .filter(|k| !r.custom.contains(k))
                    .map(rate_of)
                    .fold(0.0, f64::max);
                for key in 0..r.keys.len() {
                    let rate = if r.custom.contains(&key) {
                        rate_of(key).min(fastest)
                    } else {
                        rate_of(key)
                    };
                    if rate > 0.0 {
                        let phase = (key as f64 + 0.5) / r.keys.len() as f64 / rate;
                        steady(&mut t, key, phase, end, rate);
                    }
                }
            }
        }
        let weights: Vec<i64> = s.operations.iter().map(|o| i64::from(o.weight)).collect();
        let keys = t.iter().map(|seg| seg.key + 1).max().unwrap_or(1);
        let next = t
            .iter()
            .enumerate()
            .filter_map(|(i, seg)| Some(Reverse((Due(seg.next_at()?), i))))
            .collect();
        Schedule {
            segments: t,
            total: weights.iter().sum(),
            current: vec![vec![0; weights.len()]; keys],
            weights,
            next,
            forbidden: r.forbidden.clone(),
            forbidden_every: s.forbidden_every(),
            dealt: vec![vec![0; r.forbidden.len()]; keys],
        }
    }
}

impl Iterator for Schedule {
    type Item = Slot;

    fn next(&mut self) -> Option<Slot> {
        let Reverse((Due(secs), i)) = self.next.pop()?;
        let seg = &mut self.segments[i];
        seg.i += 1;
        if let Some(at) = seg.next_at() {
            self.next.push(Reverse((Due(at), i)));
        }
        let key = seg.key;
        let cur = &mut self.current[key];
        let mut best = 0;
        for (i, w) in self.weights.iter().enumerate() {
            cur[i] += w;
            if cur[i] > cur[best] {
                best = i;
            }
        }
        if let Some(c) = cur.get_mut(best) {
            *c -= self.total;
        }
        // The forbidden request takes its operation's turn: the mix holds.
        let every = self.forbidden_every;
        let mut op = best;
        if let (Some(Some(f)), Some(dealt)) =
            (self.forbidden.get(best), self.dealt[key].get_mut(best))
        {
            if every > 0 && *dealt % every == every / 2 {
                op = *f;
            }
            *dealt += 1;
        }
        Some(Slot {
            due: Duration::from_secs_f64(secs.max(0.0)),
            key,
            op,
        })
    }
}

/// The whole schedule of a resolved scenario, sorted by due time.
pub fn build(r: &Resolved) -> Vec<Slot> {
    Schedule::new(r).collect()
}

/// What the judge and the scheduler need of a whole schedule, in memory that grows with its
/// seconds, not its slots.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub len: u64,
    pub first_due: Option<f64>,
    pub last_due: Option<f64>,
    /// Highest rate over any 100 ms, in requests per second.
    pub peak_rate: f64,
    /// Per key (index: the scenario's keys), slots by the whole second they are due in.
    pub per_second: Vec<Vec<u64>>,
}

impl Summary {
    pub fn of(slots: impl IntoIterator<Item = Slot>) -> Summary {
        let mut s = Summary::default();
        let mut recent: VecDeque<Duration> = VecDeque::new();
        let mut best = 0usize;
        for sl in slots {
            let t = sl.due.as_secs_f64();
            s.len += 1;
            s.first_due.get_or_insert(t);
            s.last_due = Some(t);
            while recent
                .front()
                .is_some_and(|f| sl.due.saturating_sub(*f) >= Duration::from_millis(100))
            {
                recent.pop_front();
            }
            recent.push_back(sl.due);
            best = best.max(recent.len());
            if s.per_second.len() <= sl.key {
                s.per_second.resize(sl.key + 1, Vec::new());
            }
            let secs = &mut s.per_second[sl.key];
            let i = t as usize;
            if secs.len() <= i {
                secs.resize(i + 1, 0);
            }
            secs[i] += 1;
        }
        s.peak_rate = best as f64 * 10.0;
        s
    }

    /// A resolved scenario's schedule, summed up (made and dropped slot by slot).
    pub fn of_scenario(r: &Resolved) -> Summary {
        Summary::of(Schedule::new(r))
    }

    /// Slots of `key`.
    pub fn scheduled(&self, key: usize) -> u64 {
        self.per_second.get(key).map_or(0, |v| v.iter().sum())
    }
}

/// Highest rate of the schedule over any 100 ms, in requests per second.
pub fn peak_rate(slots: &[Slot]) -> f64 {
    Summary::of(slots.iter().copied()).peak_rate
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::Scenario;
    use crate::scenario::test_target as target;
    use linkcert_spec::Spec;

    fn resolved(name: &str) -> Resolved {
        let spec = Spec::embedded().unwrap();
        let t = target(["free", "free", "pro", "business", "advanced"]);
        Scenario::load(name).unwrap().resolve(&spec, &t).unwrap()
    }

    #[test]
    fn steady_holds_the_rate_and_the_mix() {
        let r = resolved("free-overload");
        let s = build(&r);
        // 2 x 60 per 6 s for 3 windows = 360 requests, 20 per second.
        assert_eq!(s.len(), 360);
        assert!((peak_rate(&s) - 20.0).abs() <= 10.0);
        // Each operation's forbidden form takes one in 50 of its turns, from its 26th.
        let ops = |op: usize| s.iter().filter(|x| x.op == op).count();
        assert_eq!(r.forbidden, [Some(2), Some(3)]);
        assert_eq!((ops(0) + ops(2), ops(1) + ops(3)), (270, 90), "weights 3:1");
        assert_eq!((ops(2), ops(3)), (5, 2), "forbidden: 1 in 50");
        let first = s.iter().position(|x| x.op == 2).unwrap();
        assert_eq!(s[..first].iter().filter(|x| x.op == 0).count(), 25);
        assert!(s.windows(2).all(|w| w[0].due <= w[1].due));
    }

    /// A scenario that asks for no forbidden requests gets none, whatever its mix.
    #[test]
    fn a_forbidden_share_of_zero_sends_none() {
        let spec = Spec::embedded().unwrap();
        let t = target(["free"]);
        let toml = "name='x'\nplan='free'\nrate=2\nwindows=3\nforbidden=0\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}";
        let r = Scenario::from_toml(toml, "t")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        assert_eq!(r.forbidden, [Some(1)], "the form exists");
        let s = build(&r);
        assert_eq!(s.len(), 360);
        assert!(s.iter().all(|x| x.op == 0));
    }

    #[test]
    fn shapes_lay_out_their_bursts() {
        let r = resolved("boundary-straddle");
        let s = build(&r);
        let w = 6.0;
        let before = s
            .iter()
            .filter(|x| (0.8 * w..w).contains(&x.due.as_secs_f64()))
            .count();
        let after = s
            .iter()
            .filter(|x| (w..1.2 * w).contains(&x.due.as_secs_f64()))
            .count();
        assert_eq!((before, after), (60, 60));
        let two = build(&resolved("two-keys-isolation"));
        assert_eq!(
            two.iter().filter(|x| x.key == 1).count(),
            45,
            "0.5 x 60 x 1.5"
        );
        assert_eq!(two.iter().filter(|x| x.key == 0).count(), 270);
        let retry = build(&resolved("retry-after-honesty"));
        assert_eq!(retry.len(), 90);
    }

    #[test]
    fn the_schedule_is_made_slot_by_slot_and_summed_up_flat() {
        for sc in crate::scenario::Scenario::builtin().unwrap() {
            let r = resolved(&sc.name);
            let s = build(&r);
            assert!(s.windows(2).all(|w| w[0].due <= w[1].due), "{}", sc.name);
            let sum = Summary::of(s.iter().copied());
            assert_eq!(sum.len, s.len() as u64);
            assert_eq!(sum.peak_rate, peak_rate_of_list(&s), "{}", sc.name);
            for key in 0..2 {
                let of_key = s.iter().filter(|x| x.key == key).count() as u64;
                assert_eq!(sum.scheduled(key), of_key, "{} key {key}", sc.name);
                for (sec, n) in sum.per_second.get(key).into_iter().flatten().enumerate() {
                    let here = s
                        .iter()
                        .filter(|x| x.key == key && x.due.as_secs_f64() as usize == sec)
                        .count() as u64;
                    assert_eq!(*n, here, "{} key {key} second {sec}", sc.name);
                }
            }
            assert_eq!(sum.first_due, s.first().map(|x| x.due.as_secs_f64()));
            assert_eq!(sum.last_due, s.last().map(|x| x.due.as_secs_f64()));
        }
    }

    #[test]
    fn a_fleet_loads_every_key_at_its_own_rate() {
        let spec = Spec::embedded().unwrap();
        let t = target((0..40).map(|i| if i % 2 == 0 { "free" } else { "pro" }));
        let r = Scenario::load("free-fleet")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        assert_eq!(r.keys.len(), 20, "every Free key, no other");
        let noisy: Vec<usize> = (0..20).filter(|k| r.scenario.noisy_key(*k, 20)).collect();
        assert_eq!(noisy, [0, 10], "a tenth, spread, the first among them");
        let s = build(&r);
        assert!(s.windows(2).all(|w| w[0].due <= w[1].due));
        for key in 0..20 {
            let n = s.iter().filter(|x| x.key == key).count();
            // 1.5 windows of 60: 3x is 270, 0.5x is 45.
            assert_eq!(n, if noisy.contains(&key) { 270 } else { 45 }, "key {key}");
        }
        // Keys start at their own phase: no burst of every key at 0 (the average is
        // 2 x 30 + 18 x 5 = 150 per second; all at 0 it is 240).
        assert!(peak_rate(&s) <= 200.0, "peak {}", peak_rate(&s));
        // At least one noisy key, however few keys.
        assert!(r.scenario.noisy_key(0, 1) && r.scenario.noisy_key(0, 3));
        assert!(!r.scenario.noisy_key(1, 3) && !r.scenario.noisy_key(2, 3));
    }

    /// Every plan at once: the first key of each plan in rank order, each steady at its rate
    /// of its own plan's limit; Enterprise (custom) at 0.5 of its limit (until its key states
    /// one, the highest fixed), no faster than the fastest other.
    #[test]
    fn every_plan_loads_each_key_at_its_own_plans_limit() {
        let spec = Spec::embedded().unwrap();
        let plans = ["enterprise", "free", "pro", "business", "advanced", "free"];
        let t = target(plans);
        let mut r = Scenario::load("every-plan")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        let keys: Vec<&str> = r.keys.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(
            keys,
            ["k1", "k2", "k3", "k4", "k0"],
            "one key per plan, by rank"
        );
        assert_eq!(r.limits, [60, 600, 1200, 3000, 3000]);
        assert_eq!(r.custom, [4]);
        assert_eq!((r.key_rate(0), r.key_rate(4)), (1.25, 0.5));
        // Its key states 100,000: still no faster than Advanced (1.25 x 3,000 per 6 s).
        r.limits[4] = 100_000;
        let s = build(&r);
        let count = |k: usize| s.iter().filter(|x| x.key == k).count() as f64;
        // 2.25 windows: each fixed plan about 1.25 x 2.25 x its limit.
        for (k, n) in [(0, 60.0), (1, 600.0), (2, 1200.0), (3, 3000.0)] {
            assert!(
                (count(k) - 2.8125 * n).abs() <= 2.0,
                "key {k}: {}",
                count(k)
            );
        }
        assert_eq!(
            count(4),
            count(3),
            "Enterprise as fast as Advanced, no faster"
        );
    }

    /// Tenants that come and go: each noisy key's requests fall in bursts of 0.75N within
    /// 5% of a window, a silence of 0.4 of a window after each, the keys' bursts apart; the
    /// quiet keys are steady.
    #[test]
    fn tenants_come_and_go_in_bursts_and_silences() {
        let spec = Spec::embedded().unwrap();
        let t = target(["free"; 20]);
        let r = Scenario::load("tenants-fleet")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        let s = build(&r);
        let w = 6.0;
        for key in [0usize, 10] {
            let at: Vec<f64> = s
                .iter()
                .filter(|x| x.key == key)
                .map(|x| x.due.as_secs_f64())
                .collect();
            // Bursts: runs of sends closer than the silence.
            let mut bursts: Vec<Vec<f64>> = Vec::new();
            for t in &at {
                match bursts.last_mut() {
                    Some(b) if t - b[b.len() - 1] < 0.3 * w => b.push(*t),
                    _ => bursts.push(vec![*t]),
                }
            }
            // Two windows of a 0.45-window period: 4 or 5 bursts, each of 45 within 0.3 s.
            assert!(
                (4..=5).contains(&bursts.len()),
                "key {key}: {}",
                bursts.len()
            );
            for b in &bursts[..bursts.len() - 1] {
                assert_eq!(b.len(), 45, "key {key}");
                assert!(b[b.len() - 1] - b[0] < 0.05 * w, "key {key}");
            }
            for pair in bursts.windows(2) {
                let gap = pair[1][0] - pair[0][pair[0].len() - 1];
                assert!(gap > 0.39 * w && gap < w, "key {key}: silence {gap}");
            }
        }
        // Keys 0 and 10 burst apart (each at its share of the period).
        let first = |k: usize| s.iter().find(|x| x.key == k).map(|x| x.due.as_secs_f64());
        assert!(first(10).unwrap() - first(0).unwrap() > 1.0);
        // A quiet key: steady at 0.5x (5 a second at 60 per 6 s) for 2 windows: 60.
        assert_eq!(s.iter().filter(|x| x.key == 1).count(), 60);
        assert!(r.scenario.comes_and_goes(0, 20) && !r.scenario.comes_and_goes(1, 20));
    }

    /// The peak over any 100 ms, counted the plain way.
    fn peak_rate_of_list(s: &[Slot]) -> f64 {
        let most = (0..s.len())
            .map(|i| {
                s[i..]
                    .iter()
                    .take_while(|x| x.due - s[i].due < Duration::from_millis(100))
                    .count()
            })
            .max()
            .unwrap_or(0);
        most as f64 * 10.0
    }
}
