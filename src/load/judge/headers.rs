//! load.retry-after, load.reset, load.remaining (what the headers mean: the rules `check`
//! judges too, from `crate::rate_headers`) and load.headers (every 2xx and 429 carries them, as
//! integers: `rate_headers::header_fault`, as `check` judges them).

use super::*;
use crate::rate_headers::HeaderFault;

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
    // Presence and integer form, judged as `check` judges them.
    let faults: Vec<HeaderFault> = answered_recs
        .iter()
        .filter_map(|x| {
            rate_headers::header_fault(&rate_headers::ON_EVERY_ANSWER, |n| x.rate_header(n))
        })
        .collect();
    if !faults.is_empty() {
        let absent = faults
            .iter()
            .filter(|f| matches!(f, HeaderFault::Absent { .. }))
            .count();
        let not_integer = faults.len() - absent;
        let example = faults.iter().find_map(|f| match f {
            HeaderFault::NotInteger { name, value } => Some(format!("{name}: {value}")),
            HeaderFault::Absent { .. } => None,
        });
        let mut what = Vec::new();
        let mut actual = Vec::new();
        if absent > 0 {
            what.push(format!("{absent} lack an X-RateLimit-* header"));
            actual.push(format!("{absent} without"));
        }
        if let Some(example) = example {
            what.push(format!(
                "{not_integer} carry one that is not an integer ({example})"
            ));
            actual.push(format!("{not_integer} not an integer"));
        }
        j.fail(
            "load.headers",
            lbl,
            format!("of {} answers, {}", answered_recs.len(), what.join(", ")),
            "X-RateLimit-Limit, -Remaining and -Reset on every 2xx and 429, each a non-negative integer".into(),
            actual.join(", "),
        );
    }
}
