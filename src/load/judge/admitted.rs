//! load.admitted (admitted within [N(k-1), N(ceil(k)+1)] plus slack under sustained overload)
//! and load.rolling-window (at most N in a rolling window; up to 2N is fixed-window semantics).

use super::*;

/// The admitted count's bounds over the k windows the key was loaded, with their slack.
pub(super) struct Bounds {
    pub lower: f64,
    pub upper: f64,
    pub slack: f64,
    pub k: f64,
}

pub(super) fn judge(j: &mut Judge, view: &KeyRun, b: &Bounds, rolling: u64, sent_overload: bool) {
    let KeyRun {
        label: lbl,
        adm,
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
    // Admitted over the windows loaded.
    let a = adm.len() as f64;
    let bounds = format!("[{lower:.0}, {upper:.0}] over {k:.2} windows of {n} (slack {slack:.0})");
    if a > upper {
        j.fail(
            "load.admitted",
            lbl,
            "more admitted than the limit allows: not enforced".into(),
            bounds,
            format!("{a:.0} admitted"),
        );
    } else if a < lower && !sent_overload {
        j.add(
            "load.admitted",
            Verdict::Skipped,
            lbl,
            "fewer admitted than the limit allows, but fewer than the limit were sent in some window: not judged"
                .into(),
            bounds,
            format!("{a:.0} admitted"),
        );
    } else if a < lower {
        j.fail(
            "load.admitted",
            lbl,
            "fewer admitted than the limit allows: the plan is under-served".into(),
            bounds,
            format!("{a:.0} admitted"),
        );
    } else {
        j.pass(
            "load.admitted",
            lbl,
            format!("{a:.0} admitted, within {bounds}"),
        );
    }
    // Rolling window.
    let double = 2.0 * n as f64 + slack;
    if rolling <= n {
        j.pass(
            "load.rolling-window",
            lbl,
            format!("at most {rolling} admitted in any rolling window of {w} s (limit {n})"),
        );
    } else if rolling as f64 <= double {
        j.add("load.rolling-window", Verdict::Informational, lbl,
            "fixed-window semantics: more than the limit in a rolling window, up to twice at a boundary (the spec names no algorithm)".into(),
            format!("at most {n} (ideal), at most {double:.0} (fixed window)"), format!("{rolling}"));
    } else {
        j.fail(
            "load.rolling-window",
            lbl,
            "more than twice the limit in a rolling window".into(),
            format!("at most {double:.0}"),
            format!("{rolling}"),
        );
    }
}

/// Every whole window of `w` seconds, counted from the first send, holds at least `n` sends.
pub(super) fn overloaded_by_sends(sends: &[f64], n: u64, w: f64) -> bool {
    let (Some(first), Some(last)) = (
        sends.iter().copied().reduce(f64::min),
        sends.iter().copied().reduce(f64::max),
    ) else {
        return false;
    };
    let whole = ((last - first) / w).floor() as usize;
    if whole == 0 || w <= 0.0 {
        return false;
    }
    let mut bins = vec![0u64; whole];
    for t in sends {
        if let Some(b) = bins.get_mut(((t - first) / w) as usize) {
            *b += 1;
        }
    }
    bins.iter().all(|c| *c >= n)
}

/// Most admissions provably within one rolling window: for each admission i, those sent
/// after i's answer came and answered before i was sent plus W lie, at the server, within
/// [s_i, s_i + W]. `adm` is sorted by send time.
pub(super) fn rolling_max(adm: &[&Record], w: f64) -> u64 {
    let mut best = 0u64;
    for (i, a) in adm.iter().enumerate() {
        let lo = adm.partition_point(|r| r.sent < a.recv);
        let mut count = 1u64;
        for (j, b) in adm.iter().enumerate().skip(lo) {
            if b.sent > a.sent + w {
                break;
            }
            if j != i && b.recv <= a.sent + w {
                count += 1;
            }
        }
        best = best.max(count);
    }
    best
}
