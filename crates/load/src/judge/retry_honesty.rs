//! load.retry-honesty (retry-after): the first throttled request, retried exactly Retry-After
//! later, is admitted.

use linkcert_registry::rule_id;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use crate::scenario::Shape;
use linkcert_spec::verdict::Verdict;

/// Fed in send order: the first 429 (when its answer came, its Retry-After) and the retry.
#[derive(Default)]
pub(super) struct State {
    first_429: Option<(f64, Option<String>)>,
    retry: Option<(bool, Option<u16>, f64)>,
}

impl State {
    pub fn observe(&mut self, x: &Record) {
        if x.throttled() && self.first_429.is_none() {
            self.first_429 = Some((x.recv, x.retry_after.clone()));
        }
        if x.retry && self.retry.is_none() {
            self.retry = Some((x.admitted(), x.status, x.due));
        }
    }
}

pub(super) fn judge(j: &mut Judge, view: &KeyView, st: &State) {
    let lbl = view.label;
    let first_429 = st.first_429.as_ref();
    let retry_after = || first_429.and_then(|f| f.1.clone());
    match st.retry {
        Some((true, _, due)) => j.pass(rule_id!("load.retry-honesty"), lbl,
            format!("waited Retry-After exactly ({:.2} s after the 429) and was admitted", due - first_429.map_or(0.0, |f| f.0))),
        // No answer to the retry: nothing says whether it would have been admitted
        // (load.answers judges the missing answer).
        Some((false, None, _)) => j.add(rule_id!("load.retry-honesty"), Verdict::Informational, lbl,
            "the retry got no answer: whether Retry-After was honest is not known, not judged".into(),
            "2xx".into(), "no answer".into()),
        Some((false, status, _)) => j.fail(rule_id!("load.retry-honesty"), lbl,
            "waited exactly what Retry-After said, and was refused again: Retry-After is shorter than the real wait".into(),
            "2xx".into(), format!("{status:?} (Retry-After {:?})", retry_after())),
        // Every request admitted: a burst that straddled a fixed window's boundary has
        // a window on each side (load.admitted and load.rolling-window judge whether
        // that was too many). Nothing to retry.
        None if first_429.is_none() => j.add(rule_id!("load.retry-honesty"), Verdict::Informational, lbl,
            "the burst was never throttled (it fell on both sides of a window boundary?): nothing to retry, not judged".into(),
            "a 429 to wait out".into(), "none".into()),
        None => j.fail(rule_id!("load.retry-honesty"), lbl,
            "the first 429 gave no Retry-After to wait for".into(), "Retry-After".into(),
            format!("{:?}", retry_after())),
    }
}

/// load.retry-honesty, for the first key of a retry-after scenario.
pub(super) struct RetryHonesty;

impl Rule for RetryHonesty {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        (s.r.scenario.shape == Shape::RetryAfter && s.key == 0)
            .then(|| Box::new(State::default()) as Box<dyn KeyRule>)
    }
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        State::observe(self, x);
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, _: &mut KeyNotes) {
        judge(j, view, &self);
    }
}
