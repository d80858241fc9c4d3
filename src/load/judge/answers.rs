//! load.answers (answers other than 2xx/429, or none, under load) and load.envelope (every 429
//! is the error envelope with the spec's code for 429).

use super::*;

pub(super) fn judge(j: &mut Judge, view: &KeyRun, other: &BTreeMap<u16, u64>, errors: u64) {
    let KeyRun {
        label: lbl, recs, ..
    } = *view;
    // Answers other than 2xx/429, and no answers: the target failing under load.
    if errors > 0 || !other.is_empty() {
        let first_err = recs
            .iter()
            .find_map(|x| x.error.clone())
            .unwrap_or_default();
        j.fail(
            "load.answers",
            lbl,
            "answers other than 2xx or 429 (or none) under load".into(),
            "2xx or 429".into(),
            format!("{other:?} by status, {errors} without an answer {first_err}"),
        );
    }
}

/// `code`: the one the spec's error table gives 429.
pub(super) fn envelope(j: &mut Judge, view: &KeyRun, code: &str) {
    let KeyRun {
        label: lbl, thr, ..
    } = *view;
    // Format rules: judged even when the generator fell short.
    let bad_envelope = thr
        .iter()
        .filter(|x| x.code.as_deref() != Some(code))
        .count();
    if bad_envelope > 0 {
        let example = thr
            .iter()
            .find(|x| x.code.as_deref() != Some(code))
            .and_then(|x| x.code.clone());
        j.fail(
            "load.envelope",
            lbl,
            format!(
                "{bad_envelope} of {} 429s are not the envelope with code {code}",
                thr.len()
            ),
            format!("{{\"error\":{{\"code\":\"{code}\",...}}}}"),
            format!("code {example:?}"),
        );
    } else if !thr.is_empty() {
        j.pass(
            "load.envelope",
            lbl,
            format!("{} 429s, each {code} in the envelope", thr.len()),
        );
    }
}
