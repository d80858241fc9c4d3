//! load.counter: each key's admissions and headers follow from that key's own history alone,
//! across the operations the scenario mixes (one counter per key, whatever route), whatever
//! the other keys do: the rule `check`'s ratelimit.counter judges too (`linkcert_rate::quota`).

use linkcert_registry::rule_id;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use linkcert_rate::quota::{Fault, History, Said};

pub(super) struct State {
    wall0: f64,
    history: History,
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        self.history.observe(Said::read(
            self.wall0 + x.sent,
            self.wall0 + x.recv,
            x.status.unwrap_or(0),
            x.remaining.as_deref(),
            x.reset.as_deref(),
        ));
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, notes: &mut KeyNotes) {
        let verdict = self.history.finish();
        notes.quiet_refusals = (verdict.quiet_refusals, verdict.lowered_by_refusals);
        if verdict.judged == 0 {
            return;
        }
        match verdict.first {
            None => j.pass(
                rule_id!("load.counter"),
                view.label,
                format!(
                    "{} answers follow from this key's own history (one counter for every operation, refill as any limiter allows)",
                    verdict.judged
                ),
            ),
            Some(f) => {
                let what = match f.fault {
                    Fault::OverAdmitted => "more admitted than the key's own history leaves",
                    Fault::Remaining => {
                        "X-RateLimit-Remaining higher than the key's own history leaves (a counter per route, or requests not counted?)"
                    }
                    Fault::Throttled => {
                        "a 429 the key's own traffic cannot explain: another key's traffic spent its quota"
                    }
                    // Not judged here (`History::of_every_request` is not asked for).
                    Fault::Lowered => {
                        "X-RateLimit-Remaining lower than the key's own traffic explains"
                    }
                };
                j.fail(
                    rule_id!("load.counter"),
                    view.label,
                    format!(
                        "{what}: {} of {} answers (request {} of the key's, in send order)",
                        verdict.faults,
                        verdict.judged,
                        f.at + 1
                    ),
                    f.expected,
                    f.actual,
                );
            }
        }
    }
}

/// load.counter, for every key with a fixed limit.
pub(super) struct Counter;

impl Rule for Counter {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        let n = s.r.key_limit(s.key);
        (n > 0).then(|| {
            Box::new(State {
                wall0: s.wall0,
                history: History::new(n, s.r.window.as_secs_f64()),
            }) as Box<dyn KeyRule>
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::record::Record;
    use crate::scenario::Scenario;
    use linkcert_run::target::{PlanKey, Target};
    use linkcert_spec::verdict::Verdict;

    const WALL0: f64 = 1_800_000_000.0;

    /// load.counter's verdict on one Free key's run where two operations alternate, each
    /// answered from `counter(op)`: (Remaining, Reset) from the counters the target keeps.
    fn verdict(per_route: bool) -> Verdict {
        let spec = linkcert_spec::Spec::embedded().unwrap();
        let t = Target {
            base_url: linkcert_http::BaseUrl::parse("https://x").unwrap(),
            rate_window: linkcert_spec::window::RateWindow::from_secs(6.0).unwrap(),
            keys: vec![PlanKey {
                plan: "free".into(),
                key: "k".into(),
            }],
            ..Target::default()
        };
        let r = Scenario::load("retry-after-honesty")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        let slots = crate::schedule::build(&r);
        // A fixed window from t = 0 (WALL0 is a multiple of 6 s), one counter or one per op.
        let mut used = [0u64; 2];
        let records: Vec<Record> = (0..100)
            .map(|i| {
                let (op, sent) = (i % 2, 0.1 + i as f64 * 0.004);
                let c = if per_route { op } else { 0 };
                let ok = used[c] < 60;
                used[c] += u64::from(ok);
                Record {
                    sent,
                    recv: sent + 0.003,
                    status: Some(if ok { 200 } else { 429 }),
                    limit: Some("60".into()),
                    remaining: Some((60 - used[c]).to_string()),
                    reset: Some(format!("{}", WALL0 as u64 + 6)),
                    retry_after: (!ok).then(|| "6".into()),
                    ..Record::slot(0, op, sent)
                }
            })
            .collect();
        let run = crate::record::Run::of_test(WALL0);
        let result = super::super::judge(&r, &slots, &records, &run, &[("free#1".into(), 0)]);
        result
            .findings
            .iter()
            .find(|f| f.check == "load.counter")
            .map_or(Verdict::Skipped, |f| f.verdict)
    }

    #[test]
    fn one_counter_for_every_operation_passes() {
        assert_eq!(verdict(false), Verdict::Pass);
    }

    #[test]
    fn a_counter_per_route_fails() {
        assert_eq!(verdict(true), Verdict::Fail);
    }
}
