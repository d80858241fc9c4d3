//! load.refusals: the share of each scenario's requests the spec forbids (`Record::forbidden`:
//! a required parameter left out, one past its bound) is refused cleanly (400 or 422 in the
//! error envelope), honoured (the target's choice: 2xx), or throttled; never anything else.
//! Whether a refusal uses quota is the target's choice, learned from the run and said: a
//! refusal alone in flight that lowers X-RateLimit-Remaining was counted (nothing but a charge
//! lowers it; `linkcert_rate::quota`). Either choice is held by the same bounds: what a window
//! must admit at least counts refusals as spent, what it may admit at most does not. The
//! fields a refusal carries are judged with every other answer's (load.counter: Remaining
//! follows from the key's history; load.limit, load.headers, load.reset).

use linkcert_registry::rule_id;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use linkcert_spec::verdict::Verdict;

/// A key's forbidden requests by outcome.
pub(super) struct State {
    /// Each operation's report label, by its index in the mix (`Resolved::requests`).
    labels: Vec<String>,
    sent: u64,
    refused: u64,
    accepted: u64,
    throttled: u64,
    unclean: u64,
    /// The first unclean answer: its request's label, status and envelope code.
    example: Option<(String, u16, Option<String>)>,
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        let (true, Some(status)) = (x.forbidden, x.status) else {
            return;
        };
        self.sent += 1;
        if x.refused() {
            self.refused += 1;
        } else if x.admitted() {
            self.accepted += 1;
        } else if x.throttled() {
            self.throttled += 1;
        } else {
            self.unclean += 1;
            let label = self.labels.get(x.op).cloned().unwrap_or_default();
            self.example
                .get_or_insert_with(|| (label, status, x.code.clone()));
        }
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, notes: &mut KeyNotes) {
        if self.sent == 0 {
            return;
        }
        let outcome = format!(
            "requests the spec forbids: {} sent, {} refused cleanly, {} accepted (the target's choice), {} throttled",
            self.sent, self.refused, self.accepted, self.throttled
        );
        if let Some((label, status, code)) = &self.example {
            let body = match code {
                Some(c) => format!("the envelope with code {c}"),
                None => "no error envelope".into(),
            };
            j.fail(
                rule_id!("load.refusals"),
                view.label,
                format!(
                    "{outcome}, and {} answered otherwise (the first: {label} answered {status} with {body})",
                    self.unclean
                ),
                "400 or 422 in the error envelope (or the request honoured, or throttled)".into(),
                format!("{status} with {body}"),
            );
            return;
        }
        let (quiet, lowered) = notes.quiet_refusals;
        let learned = match (quiet, lowered) {
            (0, _) => "whether a refusal is counted against the key was not seen (no refusal alone in flight)".to_string(),
            (_, 0) => format!(
                "no refusal was seen counted against the key: none of {quiet} alone in flight lowered X-RateLimit-Remaining"
            ),
            _ => format!(
                "refusals are counted against the key: {lowered} of {quiet} alone in flight lowered X-RateLimit-Remaining"
            ),
        };
        let verdict = if self.refused > 0 {
            Verdict::Pass
        } else {
            Verdict::Informational
        };
        j.add(
            rule_id!("load.refusals"),
            verdict,
            view.label,
            format!("{outcome}; {learned}"),
            String::new(),
            String::new(),
        );
    }
}

/// load.refusals, for every key.
pub(super) struct Refusals;

impl Rule for Refusals {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        Some(Box::new(State {
            labels: s.r.requests.iter().map(|(_, l)| l.clone()).collect(),
            sent: 0,
            refused: 0,
            accepted: 0,
            throttled: 0,
            unclean: 0,
            example: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::record::Record;
    use crate::scenario::Scenario;
    use linkcert_spec::verdict::Verdict;

    const WALL0: f64 = 1_800_000_000.0;

    /// free-overload on one Free key at the 6 s window, and its schedule.
    fn free_overload() -> (crate::resolved::Resolved, Vec<crate::schedule::Slot>) {
        let spec = linkcert_spec::Spec::embedded().unwrap();
        let t = crate::scenario::test_target(["free"]);
        let r = Scenario::load("free-overload")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        let slots = crate::schedule::build(&r);
        (r, slots)
    }

    /// free-overload on one Free key (6 s window) answered by a fixed window aligned to
    /// WALL0, limiter first: each refusal of a forbidden request is counted when `counts(i)`
    /// says so for the i-th refusal, and answered `refusal` (status, envelope code). Every
    /// rule's verdict.
    fn verdicts(
        counts: &dyn Fn(u64) -> bool,
        refusal: (u16, Option<&str>),
    ) -> Vec<(String, Verdict, String)> {
        let (r, slots) = free_overload();
        let (mut window, mut used, mut refusals) = (0u64, 0u64, 0u64);
        let records: Vec<Record> = slots
            .iter()
            .map(|sl| {
                let sent = sl.due.as_secs_f64();
                let k = (sent / 6.0).floor() as u64;
                if k != window {
                    (window, used) = (k, 0);
                }
                let forbidden = r.forbidden.contains(&Some(sl.op));
                let charge = if forbidden {
                    refusals += 1;
                    counts(refusals)
                } else {
                    true
                };
                let ok = used < 60;
                used += u64::from(ok && charge);
                let (status, code) = match (ok, forbidden) {
                    (true, false) => (200, None),
                    (_, true) if ok || !charge => refusal,
                    _ => (429, Some("rate_limit_exceeded")),
                };
                Record {
                    sent,
                    recv: sent + 0.001,
                    status: Some(status),
                    limit: Some("60".into()),
                    remaining: Some((60 - used).to_string()),
                    reset: Some(format!("{}", WALL0 as u64 + 6 * (k + 1))),
                    retry_after: (status == 429)
                        .then(|| format!("{}", (6.0 * (k + 1) as f64 - sent).ceil())),
                    code: code.map(str::to_string),
                    forbidden,
                    ..Record::slot(0, sl.op, sent)
                }
            })
            .collect();
        let run = crate::record::Run::of_test(WALL0);
        let result = super::super::judge(&r, &slots, &records, &run, &[("free#1".into(), 0)]);
        result
            .findings
            .into_iter()
            .map(|f| (f.check, f.verdict, f.message))
            .collect()
    }

    /// The last of a window's quota spent by a refusal: that refusal says Remaining 0, and
    /// the admissions before it never did. Remaining reached 0 before the first 429.
    #[test]
    fn the_last_of_the_quota_spent_by_a_refusal_is_remaining_zero() {
        let (r, slots) = free_overload();
        let records: Vec<Record> = slots
            .iter()
            .enumerate()
            .take(80)
            .map(|(i, sl)| {
                let sent = sl.due.as_secs_f64();
                let (status, code) = match i {
                    0..59 => (200, None),
                    59 => (400, Some("bad_request".to_string())),
                    _ => (429, Some("rate_limit_exceeded".to_string())),
                };
                Record {
                    sent,
                    recv: sent + 0.001,
                    status: Some(status),
                    limit: Some("60".into()),
                    remaining: Some(59u64.saturating_sub(i as u64).to_string()),
                    reset: Some(format!("{}", WALL0 as u64 + 6)),
                    retry_after: (status == 429).then(|| format!("{}", (6.0 - sent).ceil())),
                    code,
                    forbidden: i == 59,
                    ..Record::slot(0, sl.op, sent)
                }
            })
            .collect();
        let run = crate::record::Run::of_test(WALL0);
        let result = super::super::judge(&r, &slots, &records, &run, &[("free#1".into(), 0)]);
        let remaining = result.findings.iter().find(|f| f.check == "load.remaining");
        assert_eq!(remaining.map(|f| f.verdict), Some(Verdict::Pass), "{remaining:?}");
    }

    fn of<'a>(v: &'a [(String, Verdict, String)], rule: &str) -> &'a (String, Verdict, String) {
        v.iter().find(|f| f.0 == rule).unwrap()
    }

    /// Counting refusals or not is the target's choice: either passes every rule, and the
    /// run says which it saw; a forbidden request answered other than cleanly fails
    /// load.refusals (load.answers judges the others).
    #[test]
    fn refusals_counted_or_not_pass_and_say_so_and_unclean_ones_fail() {
        let clean = (400, Some("bad_request"));
        for (counts, learned) in [
            (true, "refusals are counted against the key: 2 of 2 alone in flight"),
            (false, "no refusal was seen counted against the key: none of 3"),
        ] {
            let v = verdicts(&|_| counts, clean);
            let failed: Vec<_> = v.iter().filter(|f| f.1 == Verdict::Fail).collect();
            assert!(failed.is_empty(), "counts {counts}: {failed:#?}");
            let r = of(&v, "load.refusals");
            assert_eq!(r.1, Verdict::Pass, "{r:?}");
            assert!(r.2.contains(learned), "{}", r.2);
            assert!(r.2.starts_with("requests the spec forbids: 7 sent, "), "{}", r.2);
        }
        for (refusal, body) in [
            ((500, Some("internal_server_error")), "500 with the envelope"),
            ((400, None), "400 with no error envelope"),
        ] {
            let v = verdicts(&|_| true, refusal);
            let r = of(&v, "load.refusals");
            assert_eq!(r.1, Verdict::Fail, "{r:?}");
            let first = "(the first: free GET /tags (pageSize above its maximum 100) answered";
            assert!(r.2.contains(&format!("{first} {body}")), "{}", r.2);
            let answers = v.iter().find(|f| f.0 == "load.answers");
            assert!(answers.is_none_or(|f| f.1 != Verdict::Fail), "{answers:?}");
        }
    }
}
