//! load.answers (answers other than 2xx/429, or none, under load) and load.envelope (every 429
//! is the error envelope with code rate_limit_exceeded).

use super::*;

/// What the two rules keep of a key's answers, fed in send order: the first transport error
/// and the 429s that are not the envelope (a count and the first one's code).
#[derive(Default)]
pub(super) struct State {
    first_err: Option<String>,
    bad_envelope: u64,
    example: Option<Option<String>>,
}

impl State {
    pub fn observe(&mut self, x: &Record) {
        if self.first_err.is_none() {
            self.first_err.clone_from(&x.error);
        }
        if x.throttled() && x.code.as_deref() != Some("rate_limit_exceeded") {
            self.bad_envelope += 1;
            self.example.get_or_insert_with(|| x.code.clone());
        }
    }
}

pub(super) fn judge(j: &mut Judge, view: &KeyView, st: &State) {
    let KeyView { label: lbl, f, .. } = *view;
    let (other, errors) = (&f.other, f.errors);
    // Answers other than 2xx/429, and no answers: the target failing under load.
    if errors > 0 || !other.is_empty() {
        let first_err = st.first_err.clone().unwrap_or_default();
        j.fail(
            "load.answers",
            lbl,
            "answers other than 2xx or 429 (or none) under load".into(),
            "2xx or 429".into(),
            format!("{other:?} by status, {errors} without an answer {first_err}"),
        );
    }
}

pub(super) fn envelope(j: &mut Judge, view: &KeyView, st: &State) {
    let KeyView { label: lbl, f, .. } = *view;
    let thr = f.throttled;
    // Format rules: judged even when the generator fell short.
    let bad_envelope = st.bad_envelope;
    if bad_envelope > 0 {
        let example = st.example.clone().flatten();
        j.fail(
            "load.envelope",
            lbl,
            format!(
                "{bad_envelope} of {thr} 429s are not the envelope with code rate_limit_exceeded"
            ),
            "{\"error\":{\"code\":\"rate_limit_exceeded\",...}}".into(),
            format!("code {example:?}"),
        );
    } else if thr > 0 {
        j.pass(
            "load.envelope",
            lbl,
            format!("{thr} 429s, each rate_limit_exceeded in the envelope"),
        );
    }
}
