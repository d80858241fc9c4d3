//! load.behaviour: the limiter named from how capacity comes back after the first 429
//! (informational: the spec names no algorithm).

use super::*;

/// Name the limiter from how capacity comes back after the first 429.
pub(super) fn name(
    recs: &[&Record],
    n: u64,
    w: f64,
    rolling: u64,
    rate: f64,
) -> Option<(Limiter, String)> {
    let first = recs.iter().position(|r| r.throttled())?;
    let after = &recs[first..];
    let readmitted: Vec<&&Record> = after.iter().filter(|r| r.admitted()).collect();
    if readmitted.is_empty() {
        return Some((
            Limiter::NotBack,
            format!(
                "{} (first 429 at {:.2} s)",
                Limiter::NotBack.as_str(),
                recs[first].sent
            ),
        ));
    }
    // Runs of consecutive admissions after a 429.
    let mut runs = Vec::new();
    let mut cur = 0usize;
    for r in after {
        if r.admitted() {
            cur += 1;
        } else if cur > 0 {
            runs.push(cur);
            cur = 0;
        }
    }
    if cur > 0 {
        runs.push(cur);
    }
    runs.sort_unstable();
    let median = runs.get(runs.len() / 2).copied().unwrap_or(0);
    let admitted: Vec<f64> = recs
        .iter()
        .filter(|r| r.admitted())
        .map(|r| r.sent)
        .collect();
    let tol = 0.03 * w + 2.0 / rate.max(1e-9);
    let echoed = readmitted
        .iter()
        .filter(|r| {
            let t = r.sent - w;
            let i = admitted.partition_point(|x| *x < t - tol);
            admitted.get(i).is_some_and(|x| *x <= t + tol)
        })
        .count();
    let echo = echoed as f64 / readmitted.len() as f64;
    let ratio = rolling as f64 / n as f64;
    let long_runs = median as f64 >= (n as f64 / 4.0).max(3.0);
    // How X-RateLimit-Reset moves: a fixed window holds it and jumps by W; a sliding log
    // moves it with its oldest admission. Whole seconds only tell them apart for W >= 3 s.
    let mut resets: Vec<(f64, u64)> = recs
        .iter()
        .filter_map(|r| Some((r.recv, rate_headers::parse_count(r.reset.as_deref())?)))
        .collect();
    resets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut steps: Vec<u64> = resets
        .windows(2)
        .filter(|p| p[1].1 > p[0].1)
        .map(|p| p[1].1 - p[0].1)
        .collect();
    steps.sort_unstable();
    let reset_step = (w >= 3.0 && steps.len() >= 3).then(|| steps[steps.len() / 2]);
    let limiter = if ratio > 1.05 && long_runs {
        Limiter::FixedWindow
    } else if ratio > 1.05 {
        Limiter::TokenBucket
    } else if let Some(step) = reset_step {
        if step as f64 >= 0.8 * w {
            Limiter::FixedWindow
        } else {
            Limiter::SlidingLog
        }
    } else if echo >= 0.8 {
        Limiter::SlidingLog
    } else if long_runs {
        Limiter::FixedWindow
    } else {
        Limiter::SlidingCounter
    };
    let name = limiter.as_str();
    let text = format!(
        "{name}: after the first 429 ({:.2} s) capacity came back in {} run(s) of admissions \
         (median {median}); {:.0}% of them echo an admission one window earlier; at most \
         {rolling} admitted in a rolling window (limit {n}){}",
        recs[first].sent,
        runs.len(),
        echo * 100.0,
        reset_step.map_or(String::new(), |s| format!(
            "; X-RateLimit-Reset moves in steps of {s} s (median)"
        ))
    );
    Some((limiter, text))
}
