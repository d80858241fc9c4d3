//! The per-key arrival schedule: when each request is due, for which key, with which
//! operation of the mix. Built before the run; goose users take its slots in order.

use std::time::Duration;

use super::scenario::{Resolved, Shape};

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

/// Evenly spaced arrivals: `count` of them over `[start, start + span)`.
fn spread(out: &mut Vec<(f64, usize)>, key: usize, start: f64, span: f64, count: u64) {
    for i in 0..count {
        out.push((start + span * i as f64 / count as f64, key));
    }
}

/// Arrivals at `rate` per second over `[start, end)`.
fn steady(out: &mut Vec<(f64, usize)>, key: usize, start: f64, end: f64, rate: f64) {
    if rate <= 0.0 || end <= start {
        return;
    }
    let count = ((end - start) * rate).floor() as u64;
    spread(out, key, start, count as f64 / rate, count);
}

/// The schedule of a resolved scenario, sorted by due time.
pub fn build(r: &Resolved) -> Vec<Slot> {
    let s = &r.scenario;
    let n = r.limit as f64;
    let w = r.window.as_secs_f64();
    let rate = s.rate * n / w;
    let end = s.windows * w;
    let burst = (s.burst.unwrap_or(1.0) * n).round() as u64;
    let span = s.burst_span.unwrap_or(0.05) * w;
    let mut t: Vec<(f64, usize)> = Vec::new();
    match s.shape {
        Shape::Steady => steady(&mut t, 0, 0.0, end, rate),
        Shape::BurstThenSteady => {
            spread(&mut t, 0, 0.0, span, burst);
            steady(&mut t, 0, span, end, rate);
        }
        Shape::Straddle => {
            // One request opens a window at 0; the bursts sit either side of its end.
            t.push((0.0, 0));
            let gap = 0.03 * w;
            spread(&mut t, 0, w - gap - span, span, burst);
            spread(&mut t, 0, w + gap, span, burst);
            steady(&mut t, 0, w + gap + span, end, rate);
        }
        Shape::TwoKeys => {
            steady(&mut t, 0, 0.0, end, rate);
            let other = s.other_key_rate.unwrap_or(0.5) * n / w;
            steady(&mut t, 1, 0.0, end, other);
        }
        Shape::RetryAfter => spread(&mut t, 0, 0.0, span, burst),
    }
    t.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Smooth weighted round robin per key, so the mix holds over any stretch of the run.
    let weights: Vec<i64> = s.operations.iter().map(|o| i64::from(o.weight)).collect();
    let total: i64 = weights.iter().sum();
    let mut current = vec![vec![0i64; weights.len()]; 2];
    t.into_iter()
        .map(|(secs, key)| {
            let cur = &mut current[key.min(1)];
            let mut best = 0;
            for (i, w) in weights.iter().enumerate() {
                cur[i] += w;
                if cur[i] > cur[best] {
                    best = i;
                }
            }
            cur[best] -= total;
            Slot {
                due: Duration::from_secs_f64(secs.max(0.0)),
                key,
                op: best,
            }
        })
        .collect()
}

/// Highest rate of the schedule over any 100 ms, in requests per second.
pub fn peak_rate(slots: &[Slot]) -> f64 {
    let mut best = 0usize;
    let mut lo = 0usize;
    for hi in 0..slots.len() {
        while slots[hi].due.saturating_sub(slots[lo].due) >= Duration::from_millis(100) {
            lo += 1;
        }
        best = best.max(hi - lo + 1);
    }
    best as f64 * 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::scenario::Scenario;
    use crate::spec::Spec;
    use crate::target::{PlanKey, Target};

    fn resolved(name: &str) -> Resolved {
        let spec = Spec::embedded().unwrap();
        let t = Target {
            base_url: "https://x".into(),
            rate_window: Duration::from_secs(6),
            keys: ["free", "free", "pro", "business", "advanced"]
                .iter()
                .enumerate()
                .map(|(i, p)| PlanKey {
                    plan: p.to_string(),
                    key: format!("k{i}"),
                })
                .collect(),
            ..Target::default()
        };
        Scenario::load(name).unwrap().resolve(&spec, &t).unwrap()
    }

    #[test]
    fn steady_holds_the_rate_and_the_mix() {
        let r = resolved("free-overload");
        let s = build(&r);
        // 2 x 60 per 6 s for 3 windows = 360 requests, 20 per second.
        assert_eq!(s.len(), 360);
        assert!((peak_rate(&s) - 20.0).abs() <= 10.0);
        let qr = s.iter().filter(|x| x.op == 1).count();
        assert_eq!(qr, 90, "weights 3:1");
        assert!(s.windows(2).all(|w| w[0].due <= w[1].due));
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
}
