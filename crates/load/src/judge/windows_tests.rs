//! load.admitted window by window, on synthetic limiters: every legal limiter (sliding log,
//! fixed windows aligned to the clock or to the first request, token bucket, sliding counter)
//! passes under jittered sends and answers; one admitting a few more per window, one at another
//! plan's rate, and one letting rejected requests use up quota fail.

use super::windows::{Persistent, Tiling};
use linkcert_rate::windows::ResetWindows;

/// A small deterministic generator (no dependency for a test).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as f64 / f64::from(1u32 << 31)
    }
}

/// A limiter deciding at the server's instant `t`: admitted, and the Reset it names (epoch
/// seconds, the run starting at epoch 1e9 + 0.37).
trait Limiter {
    fn admit(&mut self, t: f64) -> (bool, u64);
}

const EPOCH: f64 = 1_000_000_000.37;

fn secs(t: f64) -> u64 {
    (EPOCH + t).ceil() as u64
}

/// Exact sliding log; `extra`: admits that many more per window; `log_rejected`: rejected
/// requests go in the log too (a persistent client is starved).
struct SlidingLog {
    n: usize,
    w: f64,
    extra: usize,
    log_rejected: bool,
    log: std::collections::VecDeque<f64>,
}
impl Limiter for SlidingLog {
    fn admit(&mut self, t: f64) -> (bool, u64) {
        while self.log.front().is_some_and(|&o| t - o >= self.w) {
            self.log.pop_front();
        }
        let ok = self.log.len() < self.n + self.extra;
        if ok || self.log_rejected {
            self.log.push_back(t);
        }
        (ok, secs(self.log.front().copied().unwrap_or(t) + self.w))
    }
}

/// Fixed windows aligned to the clock (`restart`: to the first request after the last one
/// expired); `extra` more per window; `carry`: rejected requests are owed to the next window.
struct Fixed {
    n: u64,
    w: f64,
    extra: u64,
    restart: bool,
    carry: bool,
    start: f64,
    count: u64,
    seen: u64,
}
impl Limiter for Fixed {
    fn admit(&mut self, t: f64) -> (bool, u64) {
        if t >= self.start + self.w {
            let owed = if self.carry {
                self.seen.saturating_sub(self.n)
            } else {
                0
            };
            self.start = if self.restart {
                t
            } else {
                ((EPOCH + t) / self.w).floor() * self.w - EPOCH
            };
            self.count = owed;
            self.seen = owed;
        }
        self.seen += 1;
        let ok = self.count < self.n + self.extra;
        if ok {
            self.count += 1;
        }
        (ok, secs(self.start + self.w))
    }
}

/// A bucket of `cap` tokens refilled at N per window; Reset: when it is full again. With a
/// capacity of N it admits up to 2N within one window (N at once, N more refilled): not a
/// limit of N per window.
struct Bucket {
    n: f64,
    w: f64,
    cap: f64,
    tokens: f64,
    at: f64,
}
impl Limiter for Bucket {
    fn admit(&mut self, t: f64) -> (bool, u64) {
        self.tokens = (self.tokens + (t - self.at) * self.n / self.w).min(self.cap);
        self.at = t;
        let ok = self.tokens >= 1.0;
        if ok {
            self.tokens -= 1.0;
        }
        (ok, secs(t + (self.cap - self.tokens) * self.w / self.n))
    }
}

/// Sliding counter: the previous fixed window weighted by how much of it is still in view.
struct Counter {
    n: f64,
    w: f64,
    index: i64,
    prev: f64,
    cur: f64,
}
impl Limiter for Counter {
    fn admit(&mut self, t: f64) -> (bool, u64) {
        let i = (t / self.w).floor() as i64;
        if i != self.index {
            self.prev = if i == self.index + 1 { self.cur } else { 0.0 };
            self.cur = 0.0;
            self.index = i;
        }
        let f = t / self.w - i as f64;
        let ok = self.prev * (1.0 - f) + self.cur < self.n;
        if ok {
            self.cur += 1.0;
        }
        (ok, secs((i + 1) as f64 * self.w))
    }
}

struct Outcome {
    breach: bool,
    reset_most: u64,
    short: u64,
    slack: u64,
    judged: usize,
}

/// `rate` x N per window for `windows` windows, sends up to 20 ms late, answers 0.5 to 5 ms
/// (one in fifty 30 ms); the server decides halfway.
fn run(l: &mut dyn Limiter, n: u64, w: f64, rate: f64, windows: f64, seed: u64) -> Outcome {
    let mut rnd = Lcg(seed);
    let gap = w / (rate * n as f64);
    let count = (windows * w / gap) as usize;
    let mut recs: Vec<(f64, f64, bool, u64)> = (0..count)
        .map(|i| {
            let sent = 3.0 + i as f64 * gap + rnd.next() * 0.02;
            let lat = if rnd.next() < 0.02 {
                0.03
            } else {
                0.0005 + rnd.next() * 0.0045
            };
            (sent, lat, false, 0)
        })
        .collect();
    recs.sort_by(|a, b| a.0.total_cmp(&b.0));
    // The server sees them in the order they arrive.
    let mut by_arrival: Vec<usize> = (0..recs.len()).collect();
    by_arrival
        .sort_by(|&a, &b| (recs[a].0 + recs[a].1 / 2.0).total_cmp(&(recs[b].0 + recs[b].1 / 2.0)));
    for i in by_arrival {
        let (ok, reset) = l.admit(recs[i].0 + recs[i].1 / 2.0);
        recs[i].2 = ok;
        recs[i].3 = reset;
    }
    let mut tiling = Tiling::new(n, w);
    let mut resets = ResetWindows::new(w);
    let mut p = Persistent::new(n, w);
    for &(sent, lat, ok, reset) in &recs {
        let recv = sent + lat;
        p.observe(sent, recv, ok);
        if ok {
            tiling.observe(sent, recv);
            resets.observe(sent, recv, reset);
        }
    }
    let breach = tiling.finish();
    let p = p.finish();
    let s = p.worst.expect("judged");
    Outcome {
        breach: breach.is_some(),
        reset_most: resets.finish().0,
        short: s.owed.saturating_sub(s.admitted),
        slack: p.slack(),
        judged: p.judged,
    }
}

fn sliding(n: u64, w: f64) -> SlidingLog {
    SlidingLog {
        n: n as usize,
        w,
        extra: 0,
        log_rejected: false,
        log: Default::default(),
    }
}

fn fixed(n: u64, w: f64) -> Fixed {
    Fixed {
        n,
        w,
        extra: 0,
        restart: false,
        carry: false,
        start: f64::NEG_INFINITY,
        count: 0,
        seen: 0,
    }
}

#[test]
fn every_legal_limiter_passes_window_by_window() {
    for (n, w, rate) in [
        (60, 2.0, 2.0),
        (60, 60.0, 2.0),
        (600, 6.0, 1.5),
        (3000, 6.0, 1.2),
    ] {
        for seed in 1..(if n > 1000 { 2 } else { 4 }) {
            let limiters: Vec<(&str, Box<dyn Limiter>)> = vec![
                ("sliding log", Box::new(sliding(n, w))),
                ("fixed, clock", Box::new(fixed(n, w))),
                (
                    "fixed, first request",
                    Box::new(Fixed {
                        restart: true,
                        ..fixed(n, w)
                    }),
                ),
                (
                    "sliding counter",
                    Box::new(Counter {
                        n: n as f64,
                        w,
                        index: -1,
                        prev: 0.0,
                        cur: 0.0,
                    }),
                ),
            ];
            for (name, mut l) in limiters {
                let o = run(l.as_mut(), n, w, rate, 3.0, seed);
                let what = format!("{name} N={n} W={w} x{rate} seed {seed}");
                assert!(!o.breach, "{what}: breach");
                if name.starts_with("fixed") {
                    // Two in flight together are not both provably in the window.
                    assert!(
                        (n - 3..=n).contains(&o.reset_most),
                        "{what}: {}",
                        o.reset_most
                    );
                } else if name == "sliding log" {
                    assert!(o.reset_most <= n, "{what}: {}", o.reset_most);
                }
                assert!(o.judged > 0, "{what}");
                assert!(
                    o.short <= o.slack,
                    "{what}: short {} > {}",
                    o.short,
                    o.slack
                );
            }
        }
    }
}

#[test]
fn a_few_more_per_window_break_the_tiling_and_the_reset_count() {
    for seed in 1..6 {
        // A sliding log's admissions drift later each window (each waits for the next request
        // after one expires): over three windows, +3 can fit fixed windows at some alignment
        // that then admit no more than N; +5 cannot.
        let mut l = SlidingLog {
            extra: 5,
            ..sliding(60, 2.0)
        };
        let o = run(&mut l, 60, 2.0, 2.0, 3.0, seed);
        assert!(o.breach, "sliding log +5, seed {seed}");
        let mut l = Fixed {
            extra: 3,
            ..fixed(60, 2.0)
        };
        let o = run(&mut l, 60, 2.0, 2.0, 3.0, seed);
        assert!(o.breach, "fixed window +3, seed {seed}");
        assert_eq!(o.reset_most, 63);
    }
}

/// A bucket of N tokens refilled at N per window: its burst and its refill in the first window
/// (2N, the field's N(k+1) over k windows), N in every window after: legal, the spec names no
/// algorithm. A bucket of 2N gives 3N in the first window: too many.
#[test]
fn a_bucket_of_n_passes_and_a_bucket_of_2n_admits_too_many() {
    for seed in 1..=3 {
        let mut l = Bucket {
            n: 60.0,
            w: 2.0,
            cap: 60.0,
            tokens: 60.0,
            at: 0.0,
        };
        assert!(!run(&mut l, 60, 2.0, 2.0, 3.0, seed).breach, "seed {seed}");
        let mut l = Bucket {
            n: 60.0,
            w: 2.0,
            cap: 120.0,
            tokens: 120.0,
            at: 0.0,
        };
        assert!(run(&mut l, 60, 2.0, 2.0, 3.0, seed).breach, "seed {seed}");
    }
}

#[test]
fn another_plans_rate_fails_either_way() {
    // A Pro key (600) counted at Business's 1200, and at Free's 60.
    let o = run(&mut sliding(1200, 6.0), 600, 6.0, 1.5, 3.0, 1);
    assert!(o.breach);
    let o = run(&mut fixed(300, 6.0), 600, 6.0, 1.5, 3.0, 1);
    assert!(o.short > o.slack, "short {} slack {}", o.short, o.slack);
}

#[test]
fn rejected_requests_using_up_quota_starve_a_persistent_client() {
    let mut l = SlidingLog {
        log_rejected: true,
        ..sliding(60, 2.0)
    };
    let o = run(&mut l, 60, 2.0, 2.0, 2.1, 1);
    assert!(o.short > o.slack, "short {} slack {}", o.short, o.slack);
    let mut l = Fixed {
        carry: true,
        ..fixed(60, 2.0)
    };
    let o = run(&mut l, 60, 2.0, 1.5, 3.0, 1);
    assert!(o.short > o.slack, "short {} slack {}", o.short, o.slack);
}

#[test]
fn a_dense_burst_across_a_fixed_windows_boundary_fits_at_its_alignment() {
    // 1.5N within a quarter window, anywhere against a boundary the tried alignments miss:
    // both windows full, nothing over.
    let mut rnd = Lcg(11);
    for (n, w) in [(60u64, 2.0), (60, 60.0), (600, 6.0)] {
        for _ in 0..40 {
            let mut l = fixed(n, w);
            let start = 3.0 + rnd.next() * w;
            let count = n as usize * 3 / 2;
            let mut tiling = Tiling::new(n, w);
            for i in 0..count {
                let sent = start + i as f64 * (w / 4.0) / count as f64;
                let lat = 0.0002 + rnd.next() * 0.001;
                if l.admit(sent + lat / 2.0).0 {
                    tiling.observe(sent, sent + lat);
                }
            }
            assert!(tiling.finish().is_none(), "N={n} W={w} from {start}");
        }
    }
}

/// A window the target names and says began fresh (Remaining N - 1 on its first admission) is
/// judged exactly: it admits min(N, the requests naming it). A fixed window charging some
/// requests twice (50 of 60) is short; a sliding log whose Reset moves on with one slot back
/// (the boundary-straddle shape: 1 admitted of 60, Remaining 0) did not begin fresh and is not
/// judged so; the first window's room may have been used before the run.
#[test]
fn a_fresh_named_window_is_judged_exactly() {
    use linkcert_rate::windows::{NamedFixed, NamedWindows, Short};
    let (n, w) = (60u64, 6.0);
    // 120 requests per window of 6 s at 1,000 + 6i; the first `admit(i)` of window i are
    // admitted, saying the Remaining of a counter charged `cost(k)` for the k-th.
    let run = |admit: &dyn Fn(usize) -> u64, cost: &dyn Fn(u64) -> u64| {
        let mut nw = NamedWindows::new(w);
        for i in 0..3usize {
            let mut used = 0;
            for k in 0..120u64 {
                let sent = 6.0 * i as f64 + k as f64 * 0.05;
                let ok = k < admit(i);
                if ok {
                    used += cost(k);
                }
                nw.observe(sent, ok, 1006 + 6 * i as u64, Some(n.saturating_sub(used)));
            }
        }
        nw.finish(n)
    };
    let one = |_| 1;
    assert_eq!(
        run(&|_| 60, &one),
        NamedFixed {
            judged: 2,
            short: None,
        }
    );
    // Every 5th admission costs two: 50 fit in 60.
    let twice = run(&|_| 50, &|k| if k % 5 == 4 { 2 } else { 1 });
    let short = Short {
        reset: 1012,
        answers: 120,
        admitted: 50,
    };
    assert_eq!(
        twice,
        NamedFixed {
            judged: 2,
            short: Some(short),
        }
    );
    // The first window short: used before the run, not judged.
    assert_eq!(
        run(&|i| if i == 0 { 10 } else { 60 }, &one),
        NamedFixed {
            judged: 2,
            short: None,
        }
    );
    // A window that got fewer requests than N admits them all: its room is what came.
    let mut nw = NamedWindows::new(w);
    for (sent, reset, rem) in [(0.0, 1006, 59), (6.1, 1012, 59), (6.2, 1012, 58)] {
        nw.observe(sent, true, reset, Some(rem));
    }
    assert_eq!(
        nw.finish(n),
        NamedFixed {
            judged: 1,
            short: None,
        }
    );
    // Of two short windows the one furthest short of its room is named (40 of 60 before 50).
    let worse = run(&|i| [60, 50, 40][i], &one);
    assert_eq!(worse.short.map(|s| (s.reset, s.admitted)), Some((1018, 40)));
}

/// Windows not judged exactly: answers of one Reset sent further apart than a window and the
/// rounding, windows under 3 s or without a limit, and a sliding log's Reset moving on with one
/// slot back (it did not begin fresh).
#[test]
fn named_windows_not_fresh_or_not_one_window_are_not_judged() {
    use linkcert_rate::windows::{NamedFixed, NamedWindows};
    let (n, w) = (60u64, 6.0);
    // Answers naming one Reset sent further apart than a window and the rounding (10 s of a
    // 6 s window): not one window, not judged.
    let mut nw = NamedWindows::new(w);
    for (sent, reset, rem) in [(0.0, 1006, 59), (6.0, 1012, 59), (16.0, 1012, 58)] {
        nw.observe(sent, rem == 59, reset, Some(rem));
    }
    let none = NamedFixed {
        judged: 0,
        short: None,
    };
    assert_eq!(nw.finish(n), none);
    // Windows under 3 s (a Reset rounded to whole seconds cannot tell them apart), or no
    // limit: not judged.
    for (w, n) in [(2.0, 60), (2.99, 60), (6.0, 0)] {
        let mut nw = NamedWindows::new(w);
        for (sent, reset) in [(0.0, 1002), (2.1, 1004), (2.2, 1004)] {
            nw.observe(sent, true, reset, Some(59));
        }
        assert_eq!(nw.finish(n), none, "{w} {n}");
    }
    // From 3 s on, judged.
    let mut nw = NamedWindows::new(3.0);
    for (sent, reset) in [(0.0, 1003), (3.1, 1006), (3.2, 1006)] {
        nw.observe(sent, true, reset, Some(59));
    }
    assert_eq!(nw.finish(n).judged, 1);
    // A sliding log across a boundary: one admission at 0 and 59 of a burst at 5.5 s name
    // 1006; after it the burst at 6.2 s gets the one slot back, naming 1012 with Remaining 0.
    let mut nw = NamedWindows::new(w);
    nw.observe(0.0, true, 1006, Some(59));
    for k in 0..60u64 {
        nw.observe(
            5.5 + k as f64 * 0.001,
            k < 59,
            1006,
            Some(58u64.saturating_sub(k)),
        );
    }
    for k in 0..60u64 {
        nw.observe(6.2 + k as f64 * 0.001, k == 0, 1012, Some(0));
    }
    assert_eq!(
        nw.finish(n),
        NamedFixed {
            judged: 0,
            short: None,
        }
    );
}

/// A key admitted N times or fewer keeps its few admissions, not 400 window alignments (a
/// fleet's quiet keys, most of a fleet); the (N+1)-th admission makes the alignments, with the
/// earlier admissions placed in them, so a breach is found as if they had been kept from the
/// start.
#[test]
fn window_alignments_are_kept_only_past_the_limit() {
    let (n, w) = (60u64, 6.0);
    let mut t = Tiling::new(n, w);
    for k in 0..n {
        t.observe(6.0 + k as f64 * 0.01, 6.0 + k as f64 * 0.01 + 0.001);
    }
    assert!(!t.holds_alignments());
    // One admission at 0, then 130 spread over the next 6 s: at every alignment one window
    // after the first holds more than 60.
    let mut t = Tiling::new(n, w);
    t.observe(0.0, 0.001);
    for k in 0..130u32 {
        let at = 7.0 + f64::from(k) * 6.0 / 130.0;
        t.observe(at, at + 0.001);
        // The alignments come with the (N+1)-th admission, not before.
        assert_eq!(t.holds_alignments(), u64::from(k) + 2 > n, "{k}");
    }
    assert!(t.finish().is_some_and(|b| b.admitted > n));
}

/// A clean refusal naming a fresh window counts as admitted there (it may have used quota),
/// and as one of the requests naming it: 40 requests, 38 admitted and 2 refused, is a window
/// that admitted what it had room for; 37 and 2 is one short.
#[test]
fn a_refusal_in_a_fresh_named_window_is_room_and_spent() {
    use linkcert_rate::windows::NamedWindows;
    let (n, w) = (60u64, 6.0);
    let run = |admitted: u64| {
        let mut nw = NamedWindows::new(w);
        nw.observe(0.0, true, 1006, Some(59));
        for k in 0..40u64 {
            let sent = 6.1 + k as f64 * 0.1;
            match k {
                10 | 20 => nw.refusal(sent, 1012),
                _ if k < admitted + 2 => nw.observe(sent, true, 1012, Some(59 - k)),
                _ => nw.observe(sent, false, 1012, Some(0)),
            }
        }
        nw.finish(n)
    };
    assert_eq!(run(38).short, None);
    let short = run(37).short.expect("one short");
    assert_eq!((short.answers, short.admitted), (40, 39));
}
