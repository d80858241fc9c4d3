//! load.limit: X-RateLimit-Limit is the key's plan limit, judged on every 2xx and 429 as
//! `check`'s ratelimit.limit judges it (`rate_headers::read_limit`): the plan's figure passes,
//! the per-hour reading of a per-minute limit is an observation, any other figure fails.
//! Absent or not an integer is load.headers' finding, not this one's.

use linkcert_registry::rule_id;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use linkcert_rate::headers as rate_headers;
use linkcert_spec::verdict::Verdict;
use rate_headers::LimitReading;

pub(super) struct State {
    plan: String,
    n: u64,
    /// The class is the spec's standard one (the only one the per-hour reading applies to).
    standard: bool,
    judged: u64,
    per_hour: u64,
    wrong: u64,
    /// The first figure that is neither.
    example: Option<u64>,
}

impl State {
    pub fn new(plan: &str, n: u64, standard: bool) -> State {
        State {
            plan: plan.to_string(),
            n,
            standard,
            judged: 0,
            per_hour: 0,
            wrong: 0,
            example: None,
        }
    }

    pub fn observe(&mut self, x: &Record) {
        // A clean refusal need not carry the field; where it does, it says the plan's limit.
        if !(x.admitted() || x.throttled() || x.refused()) {
            return;
        }
        let Some(v) = rate_headers::parse_count(x.limit.as_deref()) else {
            return;
        };
        self.judged += 1;
        match rate_headers::read_limit(v, self.n, self.standard) {
            LimitReading::Plan => {}
            LimitReading::PerHour => self.per_hour += 1,
            LimitReading::Wrong => {
                self.wrong += 1;
                self.example.get_or_insert(v);
            }
        }
    }
}

pub(super) fn judge(j: &mut Judge, view: &KeyView, st: &State) {
    let (lbl, n, plan) = (view.label, st.n, &st.plan);
    if st.judged == 0 {
        return;
    }
    let expected = format!("{n}, the {plan} plan's limit per window");
    if let Some(v) = st.example {
        j.fail(
            rule_id!("load.limit"),
            lbl,
            format!(
                "X-RateLimit-Limit is not the {plan} plan's limit: {v} on {} of {} answers",
                st.wrong, st.judged
            ),
            expected,
            v.to_string(),
        );
    } else if st.per_hour > 0 {
        j.add(
            rule_id!("load.limit"),
            Verdict::Informational,
            lbl,
            format!(
                "X-RateLimit-Limit {} on {} of {} answers: the per-hour reading of {n} per minute",
                n * 60,
                st.per_hour,
                st.judged
            ),
            expected,
            (n * 60).to_string(),
        );
    } else {
        j.pass(
            rule_id!("load.limit"),
            lbl,
            format!("X-RateLimit-Limit {n} on all {} answers", st.judged),
        );
    }
}

/// load.limit, for every key.
pub(super) struct Limit;

impl Rule for Limit {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        let plan = s.r.keys.get(s.key).map_or(&s.r.scenario.plan, |k| &k.plan);
        Some(Box::new(State::new(plan, s.r.key_limit(s.key), s.r.standard)))
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
