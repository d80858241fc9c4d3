//! load.retry-honesty (retry-after): the first throttled request, retried exactly Retry-After
//! later, is admitted.

use super::*;

pub(super) fn judge(j: &mut Judge, view: &KeyRun) {
    let KeyRun {
        label: lbl,
        recs,
        thr,
        ..
    } = *view;
    let first_429 = thr.first().copied();
    match recs.iter().find(|x| x.retry) {
        Some(x) if x.admitted() => j.pass("load.retry-honesty", lbl,
            format!("waited Retry-After exactly ({:.2} s after the 429) and was admitted", x.due - first_429.map_or(0.0, |f| f.recv))),
        Some(x) => j.fail("load.retry-honesty", lbl,
            "waited exactly what Retry-After said, and was refused again: Retry-After is shorter than the real wait".into(),
            "2xx".into(), format!("{:?} (Retry-After {:?})", x.status, first_429.and_then(|f| f.retry_after.clone()))),
        // Every request admitted: a burst that straddled a fixed window's boundary has
        // a window on each side (load.admitted and load.rolling-window judge whether
        // that was too many). Nothing to retry.
        None if thr.is_empty() => j.add("load.retry-honesty", Verdict::Informational, lbl,
            "the burst was never throttled (it fell on both sides of a window boundary?): nothing to retry, not judged".into(),
            "a 429 to wait out".into(), "none".into()),
        None => j.fail("load.retry-honesty", lbl,
            "the first 429 gave no Retry-After to wait for".into(), "Retry-After".into(),
            format!("{:?}", first_429.and_then(|f| f.retry_after.clone()))),
    }
}
