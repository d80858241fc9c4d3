//! load.answers (answers other than 2xx/429, or none, under load) and load.envelope (every 429
//! is the error envelope with the code the spec's error table gives 429).

use linkcert_registry::rule_id;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use linkcert_http::FailureKind;
use crate::record::Record;

/// What the two rules keep of a key's answers, fed in send order: the first transport error
/// and the 429s that are not the envelope (a count and the first one's code).
pub(super) struct State {
    /// The code the spec's error table gives 429.
    code: String,
    first_err: Option<String>,
    /// Answers other than 2xx and 429 to requests the spec allows, by status (a forbidden
    /// request's are load.refusals').
    other: std::collections::BTreeMap<u16, u64>,
    bad_envelope: u64,
    example: Option<Option<String>>,
}

impl State {
    pub fn new(code: &str) -> State {
        State {
            code: code.to_string(),
            first_err: None,
            other: Default::default(),
            bad_envelope: 0,
            example: None,
        }
    }

    pub fn observe(&mut self, x: &Record) {
        // A socket this machine refused never reached the target: load.generator's.
        let theirs = x
            .error
            .as_ref()
            .filter(|e| e.kind != FailureKind::LocalLimit);
        if self.first_err.is_none()
            && let Some(e) = theirs
        {
            self.first_err = Some(crate::record::redact_error(&e.to_string()));
        }
        if let Some(st) = x.status
            && !x.forbidden
            && !x.admitted()
            && !x.throttled()
        {
            *self.other.entry(st).or_insert(0) += 1;
        }
        if x.throttled() && x.code.as_deref() != Some(self.code.as_str()) {
            self.bad_envelope += 1;
            self.example.get_or_insert_with(|| x.code.clone());
        }
    }
}

pub(super) fn judge(j: &mut Judge, view: &KeyView, st: &State) {
    let KeyView { label: lbl, f, .. } = *view;
    let (other, errors) = (&st.other, f.errors);
    // Answers other than 2xx/429, and no answers: the target failing under load.
    if errors > 0 || !other.is_empty() {
        let first_err = st
            .first_err
            .as_ref()
            .map_or(String::new(), |e| format!(" (the first: {e})"));
        j.fail(
            rule_id!("load.answers"),
            lbl,
            "answers other than 2xx or 429 (or none) under load".into(),
            "2xx or 429".into(),
            format!("{other:?} by status, {errors} without an answer{first_err}"),
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
            rule_id!("load.envelope"),
            lbl,
            format!(
                "{bad_envelope} of {thr} 429s are not the envelope with code {}",
                st.code
            ),
            format!("{{\"error\":{{\"code\":\"{}\",...}}}}", st.code),
            format!("code {example:?}"),
        );
    } else if thr > 0 {
        j.pass(
            rule_id!("load.envelope"),
            lbl,
            format!("{thr} 429s, each {} in the envelope", st.code),
        );
    }
}

/// load.answers and load.envelope, for every key.
pub(super) struct Answers;

impl Rule for Answers {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        Some(Box::new(State::new(&s.r.throttled_code)))
    }
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        State::observe(self, x);
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, _: &mut KeyNotes) {
        judge(j, view, &self);
        envelope(j, view, &self);
    }
}
