//! `--baseline PATH/report.json`: this run against an earlier one of the same target. Checks
//! are compared by id and operation, never by message text. A failure the baseline accepted
//! counts as failing there, so removing a waiver does not make it "new".

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::GateError;
use linkcert_spec::verdict::Verdict;

/// A check on an operation, as baselines compare them (never by message text).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CheckKey {
    pub id: String,
    pub operation: String,
}

/// This run against an earlier one of the same target (`--baseline`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct BaselineDiff {
    pub file: String,
    /// Failing now, not failing in the baseline.
    pub new_failures: Vec<CheckKey>,
    /// Failing in the baseline, not now.
    pub fixed: Vec<CheckKey>,
    pub still_failing: Vec<CheckKey>,
    /// Checks run now that the baseline did not have, and the reverse.
    pub new_checks: Vec<CheckKey>,
    pub removed_checks: Vec<CheckKey>,
}

impl BaselineDiff {
    /// Each kind of change with its checks, in the order reports list them.
    pub fn changes(&self) -> [(&'static str, &[CheckKey]); 5] {
        [
            ("new failure", &self.new_failures),
            ("fixed", &self.fixed),
            ("still failing", &self.still_failing),
            ("new check", &self.new_checks),
            ("removed check", &self.removed_checks),
        ]
    }
}

#[derive(Deserialize)]
struct Earlier {
    checks: Vec<EarlierCheck>,
}

#[derive(Deserialize)]
struct EarlierCheck {
    id: String,
    operation: String,
    verdict: String,
}

/// The checks of an earlier report.json, and which of them failed.
#[derive(Clone, Debug)]
pub struct Baseline {
    pub path: String,
    pub checks: BTreeSet<CheckKey>,
    pub failing: BTreeSet<CheckKey>,
}

impl Baseline {
    pub fn read(path: &Path) -> Result<Baseline, GateError> {
        let (text, p) = super::read_text(path)?;
        Baseline::parse(&text, &p)
    }

    pub fn parse(text: &str, path: &str) -> Result<Baseline, GateError> {
        let e: Earlier = serde_json::from_str(text).map_err(|e| GateError::Invalid {
            path: path.to_string(),
            problem: format!("not a linkcert report.json ({e})"),
        })?;
        let mut checks = BTreeSet::new();
        let mut failing = BTreeSet::new();
        for c in e.checks {
            let k = CheckKey {
                id: c.id,
                operation: c.operation,
            };
            if c.verdict == Verdict::Fail.as_str() || c.verdict == Verdict::Accepted.as_str() {
                failing.insert(k.clone());
            }
            checks.insert(k);
        }
        Ok(Baseline {
            path: path.to_string(),
            checks,
            failing,
        })
    }
}

/// This run's checks (each with its verdict) against the baseline. The report records the
/// answer (`Report::compare_with`).
pub fn compare(now: &[(CheckKey, Verdict)], base: &Baseline) -> BaselineDiff {
    let all: BTreeSet<CheckKey> = now.iter().map(|(k, _)| k.clone()).collect();
    let with = |v: Verdict| -> BTreeSet<CheckKey> {
        now.iter()
            .filter(|(_, x)| *x == v)
            .map(|(k, _)| k.clone())
            .collect()
    };
    let (failing, accepted_now) = (with(Verdict::Fail), with(Verdict::Accepted));
    BaselineDiff {
        file: base.path.clone(),
        new_failures: failing.difference(&base.failing).cloned().collect(),
        fixed: base
            .failing
            .iter()
            .filter(|k| !failing.contains(k) && !accepted_now.contains(k))
            .cloned()
            .collect(),
        still_failing: failing.intersection(&base.failing).cloned().collect(),
        new_checks: all.difference(&base.checks).cloned().collect(),
        removed_checks: base.checks.difference(&all).cloned().collect(),
    }
}
