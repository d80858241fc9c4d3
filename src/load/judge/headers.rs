//! load.retry-after, load.reset, load.remaining (what the headers mean: the rules `check`
//! judges too, from `crate::rate_headers`) and load.headers (every 2xx and 429 carries them).

use super::*;

pub(super) fn judge(j: &mut Judge, view: &KeyRun) {
    let KeyRun {
        label: lbl,
        recs,
        wall0,
        window,
        ..
    } = *view;
    // What the headers mean: the rules `check` judges with the same functions.
    let answers: Vec<Answer> = recs
        .iter()
        .filter_map(|x| {
            Some(Answer {
                sent: wall0 + x.sent,
                recv: wall0 + x.recv,
                status: x.status?,
                remaining: x.remaining.as_deref(),
                reset: x.reset.as_deref(),
                retry_after: x.retry_after.as_deref(),
            })
        })
        .collect();
    for (rule, jd) in rate_headers::judge_shared(&answers, window) {
        j.shared(&format!("load.{rule}"), lbl, &jd);
    }
    let answered_recs: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|x| x.admitted() || x.throttled())
        .collect();
    let missing = answered_recs
        .iter()
        .filter(|x| x.limit.is_none() || x.remaining.is_none() || x.reset.is_none())
        .count();
    if missing > 0 {
        j.fail(
            "load.headers",
            lbl,
            format!(
                "{missing} of {} answers lack an X-RateLimit-* header",
                answered_recs.len()
            ),
            "X-RateLimit-Limit, -Remaining and -Reset on every 2xx and 429".into(),
            format!("{missing} without"),
        );
    }
}
