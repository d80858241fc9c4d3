//! The recorder every check family writes to: cases judged, violations (at the level the
//! registry gives the check), observations and skips, per check and operation. Its results
//! are the checks of the run's report (`linkcert_report::model`). A check is named by its
//! `registry::Check`, never by an id: one the registry lacks cannot be recorded (see
//! `registry::check_id!`).
//!
//! What is recorded while the target's transport fails in a row (`outage::Watch`) is held
//! back: if the streak turns out to be an outage, it is "not judged"; otherwise it counts as
//! recorded. A check attempted and not judged (`not_judged`) is not a skip: it makes the run
//! incomplete.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::probe::Exchange;
use linkcert_registry::{Check, check_id};
use linkcert_report::model::{CheckResult, Finding};
use linkcert_run::outage::Watch;
use linkcert_run::target::Secret;
use linkcert_spec::verdict::Verdict;

/// Why a check could not run: words for the report, and whether a request it needed was never
/// sent (then it was attempted and is not judged, not skipped). No `Display`: a reason that
/// goes on must say how (`context`), so the fact is never lost in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub words: String,
    pub not_sent: bool,
}

impl Why {
    /// The reason an exchange gives: its failure (never sent, or no answer), with `words`.
    pub fn after(x: &Exchange, words: String) -> Why {
        Why {
            words,
            not_sent: x.not_sent(),
        }
    }

    /// The same reason in other words (`f` gets the words so far).
    pub fn context(self, f: impl FnOnce(&str) -> String) -> Why {
        Why {
            words: f(&self.words),
            not_sent: self.not_sent,
        }
    }
}

impl From<String> for Why {
    fn from(words: String) -> Why {
        Why {
            words,
            not_sent: false,
        }
    }
}

impl From<&str> for Why {
    fn from(words: &str) -> Why {
        Why::from(words.to_string())
    }
}

/// Findings kept per check and operation; the rest are counted.
const KEEP_FINDINGS: usize = 5;

#[derive(Default)]
struct Entry {
    cases: u64,
    violations: u64,
    worst: Option<Verdict>,
    findings: Vec<Finding>,
    observations: BTreeMap<String, u64>,
    skipped: Option<String>,
    not_judged: Option<String>,
    /// Recorded during a streak of transport failures (its number): settled in `results`.
    held: Vec<(u64, Held)>,
}

enum Held {
    Finding(Verdict, Option<Box<Finding>>),
    Skip(String),
}

impl Entry {
    fn count(&mut self, verdict: Verdict, finding: Option<Finding>) {
        self.cases += 1;
        self.violations += 1;
        self.worst = self.worst.max(Some(verdict));
        if let Some(f) = finding.filter(|_| self.findings.len() < KEEP_FINDINGS) {
            self.findings.push(f);
        }
    }
    fn skip(&mut self, why: String) {
        if self.skipped.is_none() {
            self.skipped = Some(why);
        }
    }
    fn not_judged(&mut self, why: String) {
        if self.not_judged.is_none() {
            self.not_judged = Some(why);
        }
    }
    /// What was held back: the outage's (not judged) or the target's (counted).
    fn settle(&mut self, outage: Option<(u64, &str)>) {
        for (streak, held) in std::mem::take(&mut self.held) {
            match (outage.filter(|(n, _)| *n == streak), held) {
                (Some((_, why)), _) => self.not_judged(why.to_string()),
                (None, Held::Finding(v, f)) => self.count(v, f.map(|f| *f)),
                (None, Held::Skip(why)) => self.skip(why),
            }
        }
    }
}

/// Thread-safe collector the check families write to.
pub struct Recorder {
    secrets: Vec<Secret>,
    entries: Mutex<BTreeMap<(Check, String), Entry>>,
    watch: Arc<Watch>,
}

impl Recorder {
    pub fn new(secrets: Vec<Secret>) -> Recorder {
        Recorder::watching(secrets, Arc::new(Watch::new()))
    }

    /// A recorder that holds back what comes during a streak of transport failures `watch`
    /// (the probe's) sees.
    pub fn watching(secrets: Vec<Secret>, watch: Arc<Watch>) -> Recorder {
        Recorder {
            secrets,
            entries: Mutex::new(BTreeMap::new()),
            watch,
        }
    }

    fn with<R>(&self, check: Check, op: &str, f: impl FnOnce(&mut Entry) -> R) -> R {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        f(map.entry((check, op.to_string())).or_default())
    }

    /// The check judged a case and it held.
    pub fn pass(&self, check: Check, op: &str) {
        self.with(check, op, |e| e.cases += 1);
    }

    /// The check judged a case and it did not hold: a violation at the check's level.
    pub fn violation(
        &self,
        check: Check,
        op: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        let verdict = check.def().level;
        self.finding(check, op, verdict, expected.into(), actual.into(), exchange);
    }

    /// A deviation from what the spec prefers where it does not require it: non-strict,
    /// whatever the check's level.
    pub fn non_strict(
        &self,
        check: Check,
        op: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        self.finding(
            check,
            op,
            Verdict::NonStrict,
            expected.into(),
            actual.into(),
            exchange,
        );
    }

    /// A choice the spec leaves open: informational, whatever the check's level.
    pub fn observe(
        &self,
        check: Check,
        op: &str,
        what: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        let what = what.into();
        let first = self.with(check, op, |e| {
            e.cases += 1;
            e.worst = e.worst.max(Some(Verdict::Informational));
            let n = e.observations.entry(what.clone()).or_insert(0);
            *n += 1;
            *n == 1
        });
        // One finding per distinct observation: the same choice seen 40 times is one line.
        if first {
            let record = exchange.map(|x| x.record(&self.secrets));
            self.with(check, op, |e| {
                if e.findings.len() < KEEP_FINDINGS * 2 {
                    e.findings.push(Finding {
                        verdict: Verdict::Informational,
                        message: what,
                        expected: "any (the spec is silent)".into(),
                        actual: String::new(),
                        exchange: record,
                    });
                }
            });
        }
    }

    fn finding(
        &self,
        check: Check,
        op: &str,
        verdict: Verdict,
        expected: String,
        actual: String,
        exchange: Option<&Exchange>,
    ) {
        // A request never sent (its route given up, the target gone or broken) judges nothing.
        if let Some(f) = exchange
            .and_then(Exchange::failure)
            .filter(|f| f.was_not_sent())
        {
            self.not_judged(check, op, format!("not judged: {}", f.detail));
            return;
        }
        let streak = self.watch.open_streak();
        // Written down only while it may be kept (an exchange's record costs).
        let keep = streak.is_some() || self.with(check, op, |e| e.findings.len() < KEEP_FINDINGS);
        let finding = keep.then(|| Finding {
            verdict,
            message: self.redact(&format!(
                "{}: expected {expected}, got {actual}",
                check.def().title
            )),
            expected: self.redact(&expected),
            actual: self.redact(&actual),
            exchange: exchange.map(|x| x.record(&self.secrets)),
        });
        self.with(check, op, |e| match streak {
            Some(n) => e
                .held
                .push((n, Held::Finding(verdict, finding.map(Box::new)))),
            None => e.count(verdict, finding),
        });
    }

    /// The check could not run here, and why.
    pub fn skip(&self, check: Check, op: &str, why: impl Into<Why>) {
        let Why {
            words: why,
            not_sent,
        } = why.into();
        // Skipped for want of a request that was never sent (its route given up, the target
        // gone or broken): attempted, and not judged.
        if not_sent {
            return self.not_judged(check, op, format!("not judged: {why}"));
        }
        let streak = self.watch.open_streak();
        self.with(check, op, |e| match streak {
            Some(n) => e.held.push((n, Held::Skip(why))),
            None => e.skip(why),
        });
    }

    /// The check was attempted here and could not be judged, and why: not a skip (the user
    /// gave what it needs), so the run is incomplete.
    pub fn not_judged(&self, check: Check, op: &str, why: impl Into<String>) {
        let why = self.redact(&why.into());
        self.with(check, op, |e| e.not_judged(why));
    }

    pub fn redact(&self, s: &str) -> String {
        super::probe::redact(s, &self.secrets)
    }

    /// How many (check, operation) pairs have failed so far.
    pub fn failing(&self) -> usize {
        let map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        map.values()
            .filter(|e| e.worst == Some(Verdict::Fail))
            .count()
    }

    /// Results in the registry's order, then operation. After an outage, every check
    /// `enabled` selects that recorded nothing is listed as not judged too.
    pub fn results(&self, enabled: impl Fn(Check) -> bool) -> Vec<CheckResult> {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let outage = self.watch.outage();
        let outage_why = outage.as_ref().map(|(_, o)| {
            format!(
                "not judged: {} ({:.1} s into the run)",
                o.kind.words(),
                o.first_failure_secs
            )
        });
        let settle_with = outage.as_ref().map(|(n, _)| *n).zip(outage_why.as_deref());
        for e in map.values_mut() {
            e.settle(settle_with);
        }
        // A broken target: the run stopped there. That is the target's failure (valid requests
        // got no HTTP answer), named; what the run never reached is not judged.
        let broken = self.watch.broken().map(|w| self.redact(&w));
        if let Some(w) = &broken {
            let e = map
                .entry((check_id!("status.valid-accepted"), "*".to_string()))
                .or_default();
            let finding = Finding {
                verdict: Verdict::Fail,
                message: format!(
                    "requests the spec makes valid are accepted: expected HTTP answers, the run stopped: {w}"
                ),
                expected: "HTTP answers".into(),
                actual: w.clone(),
                exchange: None,
            };
            // First: it is what every other finding of the run follows from.
            e.count(Verdict::Fail, None);
            e.findings.insert(0, finding);
            e.findings.truncate(KEEP_FINDINGS);
        }
        let why = outage_why.or_else(|| {
            broken.map(|w| format!("not judged: the run stopped, the target is broken: {w}"))
        });
        if let Some(why) = &why {
            for c in Check::all().filter(|c| enabled(*c)) {
                if !map.keys().any(|(k, _)| *k == c) {
                    map.entry((c, "*".to_string()))
                        .or_default()
                        .not_judged(why.clone());
                }
            }
        }
        let mut out: Vec<CheckResult> = map
            .iter()
            .map(|((check, op), e)| {
                let def = check.def();
                let verdict = match (e.worst, &e.not_judged, &e.skipped) {
                    (Some(Verdict::Fail), _, _) => Verdict::Fail,
                    (_, Some(_), _) => Verdict::NotJudged,
                    (Some(v), _, _) => v,
                    (None, _, Some(_)) if e.cases == 0 => Verdict::Skipped,
                    _ => Verdict::Pass,
                };
                CheckResult {
                    id: def.id.to_string(),
                    title: def.title.to_string(),
                    clause: def.clause.to_string(),
                    operation: op.clone(),
                    verdict,
                    cases: e.cases,
                    violations: e.violations,
                    findings: e.findings.clone(),
                    skipped: e.skipped.clone().filter(|_| e.cases == 0),
                    partly_skipped: e.skipped.clone().filter(|_| e.cases > 0),
                    accepted: None,
                    not_judged: e.not_judged.clone(),
                }
            })
            .collect();
        let order = |id: &str| Check::find(id).map(Check::rank);
        out.sort_by(|a, b| {
            order(&a.id)
                .cmp(&order(&b.id))
                .then_with(|| a.operation.cmp(&b.operation))
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What comes during a streak of transport failures is held: the target's failure when the
    /// target answers again, not judged when the streak was an outage.
    #[test]
    fn a_streak_settles_as_the_targets_failure_or_as_not_judged() {
        let id = check_id!("status.valid-accepted");
        let watch = Arc::new(Watch::new());
        let rec = Recorder::watching(Vec::new(), watch.clone());
        assert!(!watch.answered());
        watch.failed(&linkcert_http::Failure::new(
            linkcert_http::FailureKind::Reset,
            "request failed: connection reset by peer",
        ));
        rec.violation(id, "GET /a", "an answer", "could not connect", None);
        // An answer after it: the target, asked on a fresh connection, answers too.
        assert!(watch.answered());
        watch.confirmed(&linkcert_run::outage::Diagnosis::Answered);
        assert!(
            watch.failed(&linkcert_http::Failure::new(
                linkcert_http::FailureKind::Timeout,
                "timed out"
            )),
            "a timeout is asked about at once"
        );
        rec.violation(id, "GET /b", "an answer", "timed out", None);
        watch.confirmed(&linkcert_run::outage::Diagnosis::Silent { secs: 5.0 });
        rec.violation(id, "GET /c", "an answer", "not sent", None);
        let results = rec.results(|c| c == id);
        let verdict = |op: &str| results.iter().find(|r| r.operation == op).unwrap().verdict;
        assert_eq!(
            verdict("GET /a"),
            Verdict::Fail,
            "one failure among answers"
        );
        assert_eq!(verdict("GET /b"), Verdict::NotJudged);
        assert_eq!(verdict("GET /c"), Verdict::NotJudged);
        assert!(
            results
                .iter()
                .all(|r| r.violations == u64::from(r.operation == "GET /a"))
        );
    }
}
