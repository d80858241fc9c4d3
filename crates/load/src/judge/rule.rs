//! What a load rule is. A rule is one file: a type implementing `Rule`, and one line in the
//! registry (`rules!` in `judge/mod.rs`). It judges each key on its own (`for_key`: state fed that
//! key's answers in send order, judged when the run is over), across the scenario's keys from
//! each key's own results (`across`: isolation, from each key's `KeyStats`), or both: rules
//! across keys read only what each key's results hold, so keys can be judged apart.

use std::time::Duration;

use super::measure::KeyFigures;
use super::result::{Finding, KeyStats, Limiter};
use crate::record::Record;
use crate::resolved::Resolved;
use crate::scenario::Shape;
use linkcert_rate::headers as rate_headers;
use linkcert_rate::windows::Bounds;
use linkcert_registry::Rule as RuleId;
use linkcert_spec::verdict::Verdict;

/// A load rule: its state for each key it judges, and what it judges across keys.
pub(super) trait Rule: Sync {
    /// The rule's state for one key of the scenario, or None where it does not judge that key.
    fn for_key(&self, _s: &Setup) -> Option<Box<dyn KeyRule>> {
        None
    }
    /// Judged once every key is, from each key's own results.
    fn across(&self, _s: &Across, _j: &mut Judge) {}
}

/// A rule's state for one key.
pub(super) trait KeyRule: Send {
    /// One answer of this key, in send order.
    fn observe(&mut self, x: &Record);
    /// The verdicts, once every answer is in.
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, notes: &mut KeyNotes);
}

/// What a rule's state for one key is made from.
pub(super) struct Setup<'a> {
    pub r: &'a Resolved,
    /// The key's index among the scenario's keys.
    pub key: usize,
    /// UTC epoch seconds of t = 0.
    pub wall0: f64,
}

impl Setup<'_> {
    /// The scenario keeps this key over its limit for the whole run.
    pub fn overloaded(&self) -> bool {
        overloaded(self.r, self.key)
    }
}

/// The scenario keeps its `key`-th key over its limit for the whole run. A key that comes and
/// goes is not: its silences are its own, and only what a window may hold at most (upper
/// bounds) is judged of it.
pub(super) fn overloaded(r: &Resolved, key: usize) -> bool {
    let (at, size) = r.fleet_position(key);
    r.scenario.shape.sustained_overload()
        && r.key_rate(key) > 1.0
        && !r.scenario.comes_and_goes(at, size)
}

/// What the rules judged for one key leave for the rules after them and for the key's figures.
#[derive(Default)]
pub(super) struct KeyNotes {
    /// load.reset failed: Reset cannot be trusted to name windows (headers, read by admitted).
    pub reset_failed: bool,
    /// Most admissions provably within one rolling window (admitted, read by behaviour).
    pub rolling: u64,
    /// The limiter named, with the words (behaviour, for the scenario's result).
    pub limiter: Option<(Limiter, String)>,
    /// Refusals alone in flight set against the answer before, and those that lowered
    /// Remaining (counter, read by refusals): each of these was counted.
    pub quiet_refusals: (u64, u64),
}

/// What rules judged across keys read: the scenario and each key's results.
pub(super) struct Across<'a> {
    pub shape: Shape,
    /// Each key's results (with the rate it was offered).
    pub keys: &'a [KeyStats],
}

impl Across<'_> {
    pub fn shape(&self) -> Shape {
        self.shape
    }
}

/// The findings of a run, as rules add them.
pub(super) struct Judge {
    pub findings: Vec<Finding>,
}

impl Judge {
    pub fn add(
        &mut self,
        rule: RuleId,
        verdict: Verdict,
        key: Option<&str>,
        msg: String,
        exp: String,
        act: String,
    ) {
        self.findings.push(Finding {
            check: rule.id().into(),
            verdict,
            key: key.map(str::to_string),
            message: msg,
            expected: exp,
            actual: act,
        });
    }
    /// A verdict of a rule shared with `check` (`linkcert_rate::headers`).
    pub fn shared(&mut self, rule: RuleId, key: Option<&str>, jd: &rate_headers::Judged) {
        let msg = match jd.verdict {
            Verdict::Pass => format!("{} ({} answers)", jd.expected, jd.judged),
            _ => format!("expected {}, got {}", jd.expected, jd.actual),
        };
        self.add(
            rule,
            jd.verdict,
            key,
            msg,
            jd.expected.clone(),
            jd.actual.clone(),
        );
    }

    pub fn pass(&mut self, rule: RuleId, key: Option<&str>, msg: String) {
        self.add(rule, Verdict::Pass, key, msg, String::new(), String::new());
    }
    pub fn fail(&mut self, rule: RuleId, key: Option<&str>, msg: String, exp: String, act: String) {
        self.add(rule, Verdict::Fail, key, msg, exp, act);
    }
}

/// One key's part of a run, as each rule reads it.
#[derive(Clone, Copy)]
pub(super) struct KeyView<'a> {
    /// The key's label (plan#n).
    pub label: Option<&'a str>,
    pub f: &'a KeyFigures,
    /// The plan's limit per window.
    pub n: u64,
    pub window: Duration,
    /// The scenario kept this key over its limit for the whole run.
    pub overloaded: bool,
    /// The admitted count's bounds over the windows the key was loaded.
    pub bounds: &'a Bounds,
}

#[cfg(test)]
mod tests {
    /// Which keys are judged as persistent clients over their limit: an overload scenario's key;
    /// not a fleet's quiet key, not a key that comes and goes (its silences are its own), not a
    /// custom limit's key loaded under what it states, not a burst that ends.
    #[test]
    fn overloaded_keys_are_those_kept_over_their_limit() {
        use crate::scenario::Scenario;
        let spec = linkcert_spec::Spec::embedded().unwrap();
        let plans = [
            "free",
            "free",
            "free",
            "pro",
            "business",
            "advanced",
            "enterprise",
        ];
        let t = crate::scenario::test_target(plans);
        let over = |name: &str| -> Vec<bool> {
            let r = Scenario::load(name).unwrap().resolve(&spec, &t).unwrap();
            (0..r.keys.len())
                .map(|k| super::overloaded(&r, k))
                .collect()
        };
        assert_eq!(over("free-overload"), [true]);
        assert_eq!(over("retry-after-honesty"), [false]);
        assert_eq!(over("two-keys-isolation"), [true, false]);
        // Three Free keys: the first noisy (3x), the others quiet.
        assert_eq!(over("free-fleet"), [true, false, false]);
        // The first comes and goes: over its limit on average, but not a persistent client.
        assert_eq!(over("tenants-fleet"), [false, false, false]);
        assert_eq!(over("every-plan"), [true, true, true, true, false]);
        // At its limit exactly, a key is not over it.
        let at_limit = Scenario::from_toml(
            "name='x'\nplan='free'\nrate=1\nwindows=2\n[[operations]]\noperation='getTags'",
            "t",
        )
        .unwrap()
        .resolve(&spec, &t)
        .unwrap();
        assert!(!super::overloaded(&at_limit, 0));
    }
}
