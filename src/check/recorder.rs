//! The recorder every check family writes to: cases judged, violations (at the level the
//! registry gives the check), observations and skips, per check and operation. Its results
//! are the checks of the run's report (`crate::report::model`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::probe::Exchange;
use crate::registry;
use crate::report::model::{CheckResult, Finding};
use crate::target::Secret;
use crate::verdict::Verdict;

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
}

/// Thread-safe collector the check families write to.
pub struct Recorder {
    secrets: Vec<Secret>,
    entries: Mutex<BTreeMap<(String, String), Entry>>,
}

impl Recorder {
    pub fn new(secrets: Vec<Secret>) -> Recorder {
        Recorder {
            secrets,
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    fn with<R>(&self, id: &str, op: &str, f: impl FnOnce(&mut Entry) -> R) -> R {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        f(map.entry((id.to_string(), op.to_string())).or_default())
    }

    /// The check judged a case and it held.
    pub fn pass(&self, id: &str, op: &str) {
        self.with(id, op, |e| e.cases += 1);
    }

    /// The check judged a case and it did not hold: a violation at the check's level.
    pub fn violation(
        &self,
        id: &str,
        op: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        let def = registry::check(id);
        let verdict = def.map_or(Verdict::Fail, |d| d.level);
        self.finding(id, op, verdict, expected.into(), actual.into(), exchange);
    }

    /// A deviation from what the spec prefers where it does not require it: non-strict,
    /// whatever the check's level.
    pub fn non_strict(
        &self,
        id: &str,
        op: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        self.finding(
            id,
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
        id: &str,
        op: &str,
        what: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        let what = what.into();
        let first = self.with(id, op, |e| {
            e.cases += 1;
            e.worst = e.worst.max(Some(Verdict::Informational));
            let n = e.observations.entry(what.clone()).or_insert(0);
            *n += 1;
            *n == 1
        });
        // One finding per distinct observation: the same choice seen 40 times is one line.
        if first {
            let record = exchange.map(|x| x.record(&self.secrets));
            self.with(id, op, |e| {
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
        id: &str,
        op: &str,
        verdict: Verdict,
        expected: String,
        actual: String,
        exchange: Option<&Exchange>,
    ) {
        let keep = self.with(id, op, |e| {
            e.cases += 1;
            e.violations += 1;
            e.worst = e.worst.max(Some(verdict));
            e.findings.len() < KEEP_FINDINGS
        });
        if keep {
            let def = registry::check(id);
            let finding = Finding {
                verdict,
                message: self.redact(&format!(
                    "{}: expected {expected}, got {actual}",
                    def.map_or(id, |d| d.title)
                )),
                expected: self.redact(&expected),
                actual: self.redact(&actual),
                exchange: exchange.map(|x| x.record(&self.secrets)),
            };
            self.with(id, op, |e| e.findings.push(finding));
        }
    }

    /// The check could not run here, and why.
    pub fn skip(&self, id: &str, op: &str, why: impl Into<String>) {
        let why = why.into();
        self.with(id, op, |e| {
            if e.skipped.is_none() {
                e.skipped = Some(why);
            }
        });
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

    /// Results in the registry's order, then operation.
    pub fn results(&self) -> Vec<CheckResult> {
        let map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<CheckResult> = map
            .iter()
            .map(|((id, op), e)| {
                let def = registry::check(id);
                let verdict = match (e.worst, &e.skipped) {
                    (Some(v), _) => v,
                    (None, Some(_)) if e.cases == 0 => Verdict::Skipped,
                    _ => Verdict::Pass,
                };
                CheckResult {
                    id: id.clone(),
                    title: def.map_or_else(|| id.clone(), |d| d.title.to_string()),
                    clause: def.map_or_else(String::new, |d| d.clause.to_string()),
                    operation: op.clone(),
                    verdict,
                    cases: e.cases,
                    violations: e.violations,
                    findings: e.findings.clone(),
                    skipped: e.skipped.clone().filter(|_| e.cases == 0),
                    partly_skipped: e.skipped.clone().filter(|_| e.cases > 0),
                    accepted: None,
                }
            })
            .collect();
        let order = |id: &str| registry::CHECKS.iter().position(|d| d.id == id);
        out.sort_by(|a, b| {
            order(&a.id)
                .cmp(&order(&b.id))
                .then_with(|| a.operation.cmp(&b.operation))
        });
        out
    }
}
