//! The rule on recorded histories: every legal limiter passes, whatever the timing; each kind
//! of counter defect is found.

use super::*;

const N: u64 = 60;
const W: f64 = 6.0;
const T0: f64 = 1_700_000_000.0;

/// A limiter of `n` per `w` (N per W unless `per` says), deciding at the instant given.
#[derive(Clone)]
struct Limiter {
    n: u64,
    w: f64,
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    /// Windows aligned to multiples of W since the epoch; Reset is the window's end.
    Fixed { window: i64, used: u64 },
    /// Admissions within the last W; Reset is when the oldest ages out.
    Log(VecDeque<f64>),
    /// N tokens, N per W back; Reset is when the bucket is full again.
    Bucket { tokens: f64, at: f64 },
}

impl Limiter {
    fn fixed() -> Limiter {
        Limiter::of(Kind::Fixed { window: 0, used: 0 })
    }
    fn log() -> Limiter {
        Limiter::of(Kind::Log(VecDeque::new()))
    }
    fn bucket() -> Limiter {
        Limiter::of(Kind::Bucket {
            tokens: N as f64,
            at: 0.0,
        })
    }
    fn of(kind: Kind) -> Limiter {
        Limiter { n: N, w: W, kind }
    }
    /// The same kind of limiter, `n` per `w`, fresh.
    fn per(self, n: u64, w: f64) -> Limiter {
        let kind = match self.kind {
            Kind::Bucket { .. } => Kind::Bucket {
                tokens: n as f64,
                at: 0.0,
            },
            k => k,
        };
        Limiter { n, w, kind }
    }
    /// (admitted, Remaining, Reset) at instant `t`.
    fn decide(&mut self, t: f64) -> (bool, u64, u64) {
        let (n, w) = (self.n, self.w);
        match &mut self.kind {
            Kind::Fixed { window, used } => {
                let k = (t / w).floor() as i64;
                if k != *window {
                    (*window, *used) = (k, 0);
                }
                let ok = *used < n;
                *used += u64::from(ok);
                (ok, n - *used, ((k + 1) as f64 * w).ceil() as u64)
            }
            Kind::Log(log) => {
                while log.front().is_some_and(|x| t - x >= w) {
                    log.pop_front();
                }
                let ok = (log.len() as u64) < n;
                if ok {
                    log.push_back(t);
                }
                let oldest = log.front().copied().unwrap_or(t);
                (ok, n - log.len() as u64, (oldest + w).ceil() as u64)
            }
            Kind::Bucket { tokens, at } => {
                *tokens = (*tokens + (t - *at) * n as f64 / w).min(n as f64);
                *at = t;
                let ok = *tokens >= 1.0;
                if ok {
                    *tokens -= 1.0;
                }
                let full = t + (n as f64 - *tokens) * w / n as f64;
                (ok, tokens.floor() as u64, full.ceil() as u64)
            }
        }
    }
}

/// Requests at `(sent, latency)`: the limiter decides halfway, answers in send order.
/// Every history here holds every request of its key: `lowered` is judged too, so every
/// legal limiter below passes it as well.
fn judge_all(n: u64, w: f64, h: &[Said]) -> Judgement {
    History::new(n, w).of_every_request().judge_each(h)
}

fn run(l: &mut Limiter, sends: &[(f64, f64)]) -> Vec<Said> {
    run_skewed(l, sends, 0.0)
}

/// `run` with the target's clock `skew` seconds ahead of the client's (behind if negative):
/// the target decides, and writes Reset, by its own clock.
fn run_skewed(l: &mut Limiter, sends: &[(f64, f64)], skew: f64) -> Vec<Said> {
    sends
        .iter()
        .map(|&(sent, lat)| {
            let (ok, remaining, reset) = l.decide(sent + lat / 2.0 + skew);
            Said {
                sent,
                recv: sent + lat,
                status: if ok { 200 } else { 429 },
                remaining: Some(remaining),
                reset: Some(reset),
            }
        })
        .collect()
}

/// Back to back from `from`, `count` requests, each taking `lat`.
fn sequential(from: f64, count: usize, lat: f64) -> Vec<(f64, f64)> {
    (0..count).map(|i| (from + i as f64 * lat, lat)).collect()
}

/// `count` at once at `at`, answered over `spread` seconds.
fn at_once(at: f64, count: usize, spread: f64) -> Vec<(f64, f64)> {
    (0..count)
        .map(|i| (at, 0.002 + spread * i as f64 / count as f64))
        .collect()
}

/// A history like the check's: sequential to throttling, phases sampled over a window, a
/// burst at once at the edge, recovery.
fn check_like(start: f64, lat: f64) -> Vec<(f64, f64)> {
    let mut s = sequential(start, 40, lat);
    let mut t = start + 40.0 * lat;
    for _ in 0..12 {
        t += W / 12.0;
        s.extend(sequential(t, 2, lat));
    }
    t += 2.0 * lat + 0.01;
    s.extend(sequential(t, 30, lat));
    t += 30.0 * lat + 0.01;
    s.extend(at_once(t, 10, 0.02));
    t += 0.05;
    s.extend(sequential(t, 5, lat));
    t += W;
    s.extend(sequential(t, 70, lat));
    s
}

fn limiters() -> [Limiter; 3] {
    [Limiter::fixed(), Limiter::log(), Limiter::bucket()]
}

#[test]
fn every_legal_limiter_passes_whatever_the_phase_and_round_trip() {
    for l in limiters() {
        for phase in 0..12 {
            for lat in [0.001, 0.004, 0.03] {
                let start = T0 + phase as f64 * W / 12.0;
                let h = run(&mut l.clone(), &check_like(start, lat));
                let j = judge_all(N, W, &h);
                assert_eq!(j.faults, 0, "phase {phase} lat {lat}: {:?}", j.first);
                assert!(j.judged > 100, "{}", j.judged);
            }
        }
    }
}

#[test]
fn a_target_clock_seconds_off_the_clients_passes() {
    // A fixed window read by a clock 5 s ahead or behind: its boundaries are seconds away
    // from where the client's clock and the target's Reset would put them.
    for skew in [-5.0, 5.0] {
        for l in limiters() {
            for phase in 0..12 {
                let start = T0 + phase as f64 * W / 12.0;
                let h = run_skewed(&mut l.clone(), &check_like(start, 0.004), skew);
                let j = judge_all(N, W, &h);
                assert_eq!(j.faults, 0, "skew {skew} phase {phase}: {:?}", j.first);
            }
        }
    }
}

#[test]
fn a_burst_over_the_quota_and_a_fresh_history_pass() {
    for l in limiters() {
        let h = run(&mut l.clone(), &at_once(T0 + 0.3, 150, 0.05));
        let j = judge_all(N, W, &h);
        assert_eq!(j.faults, 0, "{:?}", j.first);
    }
}

#[test]
fn a_counter_per_route_is_found() {
    // Two routes alternate, each with its own counter.
    for l in limiters() {
        let (mut a, mut b) = (l.clone(), l.clone());
        let mut h = Vec::new();
        for (i, (sent, lat)) in sequential(T0 + 1.0, 100, 0.004).into_iter().enumerate() {
            let lim = if i % 2 == 0 { &mut a } else { &mut b };
            h.extend(run(lim, &[(sent, lat)]));
        }
        let j = judge_all(N, W, &h);
        assert!(j.faults > 0, "{j:?}");
        assert!(
            matches!(
                j.first.as_ref().map(|f| f.fault),
                Some(Fault::Remaining | Fault::OverAdmitted)
            ),
            "{:?}",
            j.first
        );
    }
}

#[test]
fn a_429_caused_by_another_keys_traffic_is_found() {
    for l in limiters() {
        let mut shared = l.clone();
        let mut h = run(&mut shared, &sequential(T0 + 1.0, 20, 0.004));
        // Another key spends the shared counter; this key's next request is throttled.
        run(&mut shared, &at_once(T0 + 1.2, 100, 0.0));
        h.extend(run(&mut shared, &[(T0 + 1.2, 0.002)]));
        let j = judge_all(N, W, &h);
        assert_eq!(
            j.first.as_ref().map(|f| f.fault),
            Some(Fault::Throttled),
            "{j:?} {:?}",
            h.last()
        );
    }
}

#[test]
fn a_racy_limiter_admitting_a_burst_past_the_quota_is_found() {
    for l in limiters() {
        let mut lim = l.clone();
        let mut h = run(&mut lim, &sequential(T0 + 1.0, 57, 0.002));
        // Ten at once with three left: all admitted, Remaining 0.
        let reset = h.last().and_then(|s| s.reset);
        h.extend(
            at_once(T0 + 1.2, 10, 0.01)
                .into_iter()
                .map(|(sent, lat)| Said {
                    sent,
                    recv: sent + lat,
                    status: 200,
                    remaining: Some(0),
                    reset,
                }),
        );
        let j = judge_all(N, W, &h);
        assert_eq!(
            j.first.as_ref().map(|f| f.fault),
            Some(Fault::OverAdmitted),
            "{j:?}"
        );
    }
}

#[test]
fn remaining_wrong_only_late_in_the_window_is_found() {
    // Remaining reads as the limit less one in the last third of each aligned window.
    for l in limiters() {
        let mut lim = l.clone();
        let mut sends = sequential(T0 + 0.1, 20, 0.004);
        for i in 1..=12 {
            sends.extend(sequential(T0 + 0.2 + i as f64 * W / 12.0, 2, 0.004));
        }
        let h: Vec<Said> = run(&mut lim, &sends)
            .into_iter()
            .map(|s| {
                let late = s.sent.rem_euclid(W) > 2.0 * W / 3.0;
                Said {
                    remaining: if late && s.status == 200 {
                        Some(N - 1)
                    } else {
                        s.remaining
                    },
                    ..s
                }
            })
            .collect();
        let j = judge_all(N, W, &h);
        assert_eq!(
            j.first.as_ref().map(|f| f.fault),
            Some(Fault::Remaining),
            "{j:?}"
        );
    }
}

#[test]
fn nothing_is_kept_past_a_few_windows() {
    let mut h = History::new(N, W);
    let mut lim = Limiter::log();
    for s in run(&mut lim, &sequential(T0, 20_000, 0.01)) {
        h.observe(s);
    }
    assert!(h.entries.len() < 3_000, "{}", h.entries.len());
    assert_eq!(h.finish().faults, 0);
}

#[test]
fn answers_overtaking_each_other_in_a_burst_pass() {
    // Remaining 10, then six at once: decided in send order (Remaining 9 down to 4), answered
    // in the reverse order, so the first decided comes back last.
    let said = |sent: f64, recv: f64, remaining: u64| Said {
        sent,
        recv,
        status: 200,
        remaining: Some(remaining),
        reset: Some(T0 as u64 + 5),
    };
    let mut h = vec![said(T0, T0 + 0.001, 10)];
    for i in 0..6u64 {
        h.push(said(T0 + 0.002, T0 + 0.020 - i as f64 * 0.002, 9 - i));
    }
    let j = judge_all(N, W, &h);
    assert_eq!(j.faults, 0, "{:?}", j.first);
    assert!(j.judged >= 6);
}

#[test]
fn hostile_headers_neither_panic_nor_fail_what_they_cannot_show() {
    let mut h = Vec::new();
    for (i, raw) in ["18446744073709551615", "-1", "abc", "", "1e9", "0"]
        .iter()
        .enumerate()
    {
        h.push(Said::read(
            T0 + i as f64,
            T0 + i as f64 - 5.0,
            [200, 429, 0, 503][i % 4],
            Some(raw),
            Some(raw),
        ));
    }
    let _ = judge_all(N, W, &h);
    let _ = judge_all(0, 0.0, &h);
}

#[test]
fn every_legal_limiter_of_a_sub_second_window_passes_over_spans_of_several_windows() {
    // The analytics limits scaled down (8 per 0.1 s): Reset, in whole seconds, cannot rule
    // out a boundary, and one answer is judged against another several windows earlier
    // (a quiet chain), past what the history keeps. Sends one at a time, with pauses and
    // round trips of every length a load run sees.
    let (n, w) = (8, 0.1);
    let mut seed = 0x2545_f491_u64;
    let mut next = move |below: f64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 11) as f64 / (1u64 << 53) as f64 * below
    };
    for l in limiters() {
        for round in 0..40 {
            let mut t = T0 + next(w);
            let mut sends = Vec::new();
            for _ in 0..300 {
                let lat = 0.001 + next(0.02);
                sends.push((t, lat));
                t += lat
                    + if next(1.0) < 0.1 {
                        next(3.0 * w)
                    } else {
                        next(0.002)
                    };
            }
            let h = run(&mut l.clone().per(n, w), &sends);
            let j = judge_all(n, w, &h);
            assert_eq!(j.faults, 0, "round {round}: {:?}", j.first);
            assert!(j.judged > 200, "{}", j.judged);
        }
    }
}

/// `run`, every `every`-th request a refusal (400): `counted`, the limiter decides it as any
/// other (admitted by the limiter, then refused: limiter first); else it is answered with what
/// the limiter would say, untouched (validation first). `fresh`: the refusal says the whole
/// quota is left, whatever the limiter says (a gateway answering from a counter of its own).
fn run_refusing(
    l: &mut Limiter,
    sends: &[(f64, f64)],
    every: usize,
    counted: bool,
    fresh: bool,
) -> Vec<Said> {
    sends
        .iter()
        .enumerate()
        .map(|(i, &(sent, lat))| {
            let t = sent + lat / 2.0;
            let refusal = i % every == every / 2;
            let (ok, remaining, reset) = if refusal && !counted {
                let (ok, remaining, reset) = l.clone().decide(t);
                (ok, remaining + u64::from(ok), reset)
            } else {
                l.decide(t)
            };
            let status = match (refusal, ok) {
                (false, true) => 200,
                (true, _) if !counted => 400,
                (true, true) => 400,
                (_, false) => 429,
            };
            Said {
                sent,
                recv: sent + lat,
                status,
                remaining: Some(if refusal && fresh { N - 1 } else { remaining }),
                reset: Some(reset),
            }
        })
        .collect()
}

#[test]
fn refusals_counted_or_not_pass_and_a_refusal_alone_in_flight_says_which() {
    for l in limiters() {
        for counted in [true, false] {
            let h = run_refusing(
                &mut l.clone(),
                &check_like(T0 + 0.5, 0.004),
                7,
                counted,
                false,
            );
            let j = judge_all(N, W, &h);
            assert_eq!(j.faults, 0, "counted {counted}: {:?}", j.first);
            assert!(j.quiet_refusals > 5, "{}", j.quiet_refusals);
            if counted {
                assert!(j.lowered_by_refusals > 0, "counted, never lowered");
            } else {
                assert_eq!(j.lowered_by_refusals, 0, "not counted, yet lowered");
            }
        }
    }
}

#[test]
fn a_refusal_that_says_the_whole_quota_is_left_is_found() {
    for l in limiters() {
        let h = run_refusing(&mut l.clone(), &check_like(T0 + 0.5, 0.004), 7, true, true);
        let j = judge_all(N, W, &h);
        let f = j.first.expect("found");
        assert_eq!(f.fault, Fault::Remaining);
        assert!(f.expected.contains("on a refusal (400)"), "{}", f.expected);
    }
}

/// An exchange of a hand-made history: sent at `T0 + at`, answered 5 ms later.
fn said(at: f64, status: u16, remaining: Option<u64>, reset: u64) -> Said {
    Said {
        sent: T0 + at,
        recv: T0 + at + 0.005,
        status,
        remaining,
        reset: Some(reset),
    }
}

/// A refusal's Remaining is held to the admission's bound exactly: what was left, less the
/// admissions since, plus what any limiter gives back meanwhile (N per W of the span, and one
/// for rounding) and one more; a refusal alone in flight right after an answer naming its
/// Reset is counted as lowering Remaining or not, one by one.
#[test]
fn a_refusals_remaining_is_held_to_the_bound_and_counted_alone_in_flight() {
    let reset = T0 as u64 + 20;
    // A history that began two windows before (nothing ages out of a log meanwhile), then an
    // answer saying 30 left, an admission that says nothing, and the refusal.
    // Since it: an admission sent before that answer came (it overlapped it) and a refusal
    // are not counted, the two admissions sent after it and answered before the refusal are.
    let history = |claimed: u64| {
        vec![
            said(0.0, 200, Some(59), reset - 12),
            said(12.0, 200, Some(30), reset),
            Said {
                recv: T0 + 12.012,
                ..said(12.002, 200, None, reset)
            },
            said(12.006, 404, None, reset),
            said(12.008, 200, None, reset),
            said(12.01, 200, None, reset),
            said(12.02, 400, Some(claimed), reset),
        ]
    };
    // 0.025 s from the answer saying 30 to the refusal: N per W gives back 0.25, plus one.
    // Not every request of the key: those between the first two answers are left out.
    for (claimed, faults) in [(29, 0), (30, 0), (31, 1)] {
        let j = History::judge_all(N, W, &history(claimed));
        let first = j.first.clone();
        assert_eq!(
            j.faults, faults,
            "Remaining {claimed} on the refusal: {first:?}"
        );
        assert_eq!(
            j.judged, 5,
            "the admissions with an answer before them, and the refusal"
        );
        if let Some(f) = first {
            assert_eq!((f.fault, f.at), (Fault::Remaining, 6));
            let said = "X-RateLimit-Remaining at most 30 on a refusal (400): 30 left";
            assert!(f.expected.starts_with(said), "{}", f.expected);
        }
    }
    // A refusal without Remaining says nothing of what was left.
    let h = vec![said(0.0, 200, Some(30), reset), said(0.1, 400, None, reset)];
    let j = judge_all(N, W, &h);
    assert_eq!((j.quiet_refusals, j.lowered_by_refusals), (0, 0));
    // Alone in flight, one after the other, all naming one Reset but the last.
    let h = vec![
        said(0.0, 200, Some(30), reset),
        said(0.1, 400, Some(29), reset),
        said(0.2, 400, Some(29), reset),
        said(0.3, 422, Some(28), reset),
        said(0.4, 400, Some(28), reset + 6),
    ];
    let j = judge_all(N, W, &h);
    assert_eq!(j.faults, 0, "{:?}", j.first);
    assert_eq!((j.quiet_refusals, j.lowered_by_refusals), (3, 2));
    // Two in flight at once are not alone: neither is set against the answer before.
    let h = vec![
        said(0.0, 200, Some(30), reset),
        Said {
            recv: T0 + 0.2,
            ..said(0.1, 400, Some(29), reset)
        },
        said(0.15, 400, Some(28), reset),
    ];
    let j = judge_all(N, W, &h);
    assert_eq!((j.quiet_refusals, j.lowered_by_refusals), (0, 0));
}

/// Charges of requests not the key's that add up over answers are found, though each step
/// alone stays within the tolerance; a Remaining of u64::MAX after an admission neither
/// panics nor fails as lowered.
#[test]
fn charges_adding_up_over_quiet_answers_are_found_and_hostile_values_pass() {
    let reset = T0 as u64 + 20;
    // Every 0.05 s one request of the key and two charged that are not: 3 a step, where
    // any limiter of 60 per 6 s gives back 0.5.
    let h: Vec<Said> = (0..12)
        .map(|i| said(i as f64 * 0.05, 200, Some(59 - 3 * i), reset))
        .collect();
    let j = judge_all(N, W, &h);
    assert_eq!(j.first.map(|f| f.fault), Some(Fault::Lowered));
    // The key's own requests only: one a step.
    let h: Vec<Said> = (0..12)
        .map(|i| said(i as f64 * 0.05, 200, Some(59 - i), reset))
        .collect();
    assert_eq!(judge_all(N, W, &h).faults, 0);
    let h = vec![
        said(0.0, 200, Some(u64::MAX), reset),
        said(0.1, 200, Some(u64::MAX), reset),
        said(0.2, 200, Some(0), reset),
        said(0.3, 200, Some(u64::MAX - 1), reset),
    ];
    let _ = judge_all(N, W, &h);
}

/// A Remaining lower than the key's own requests explain is found, on a key whose every
/// request is in the history; one within them, or one request's reading, is not; and a
/// history that may lack requests is not judged so.
#[test]
fn a_remaining_lowered_by_requests_not_the_keys_is_found_on_a_whole_history() {
    let reset = T0 as u64 + 20;
    // 49 left, then one request alone: 48 is the key's own; 45 within what an answer may
    // have said too many (N per W over 0.105 s, and two); 44 and lower charged for requests
    // the key never sent.
    let h = |then: u64| {
        vec![
            said(0.0, 200, Some(50), reset),
            said(0.1, 200, Some(49), reset),
            said(0.2, 200, Some(then), reset),
        ]
    };
    for (then, faults) in [(48, 0), (46, 0), (45, 0), (44, 1), (40, 1)] {
        let j = judge_all(N, W, &h(then));
        assert_eq!(j.faults, faults, "Remaining {then}: {:?}", j.first);
        if let Some(f) = j.first {
            assert_eq!((f.fault, f.at), (Fault::Lowered, 2));
        }
        assert_eq!(History::judge_all(N, W, &h(then)).faults, 0);
    }
    // Requests of the key in flight explain as much as they are: five at once, then 43.
    let mut h = vec![said(0.0, 200, Some(50), reset)];
    h.extend((0..5).map(|i| said(0.1 + i as f64 * 0.001, 200, None, reset)));
    // 50 - 5 - 1 = 44 the key's own; 41 within the tolerance (1.06 and two).
    for (then, faults) in [(41, 0), (40, 1)] {
        let mut h = h.clone();
        h.push(said(0.101, 200, Some(then), reset));
        assert_eq!(judge_all(N, W, &h).faults, faults, "{then}");
    }
}
