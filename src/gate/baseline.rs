//! `--baseline PATH/report.json`: this run against an earlier one of the same target. Checks
//! are compared by id and operation, never by message text. A failure the baseline accepted
//! counts as failing there, so removing a waiver does not make it "new".

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use super::GateError;
use crate::check::model::{BaselineDiff, CheckKey, Report, Verdict};

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

/// Compare the report with the baseline and record the difference in it.
pub fn compare(report: &mut Report, base: &Baseline) {
    let now: BTreeSet<CheckKey> = report.checks.iter().map(|c| c.key()).collect();
    let with = |v: Verdict| -> BTreeSet<CheckKey> {
        report
            .checks
            .iter()
            .filter(|c| c.verdict == v)
            .map(|c| c.key())
            .collect()
    };
    let (failing, accepted_now) = (with(Verdict::Fail), with(Verdict::Accepted));
    report.baseline = Some(BaselineDiff {
        file: base.path.clone(),
        new_failures: failing.difference(&base.failing).cloned().collect(),
        fixed: base
            .failing
            .iter()
            .filter(|k| !failing.contains(k) && !accepted_now.contains(k))
            .cloned()
            .collect(),
        still_failing: failing.intersection(&base.failing).cloned().collect(),
        new_checks: now.difference(&base.checks).cloned().collect(),
        removed_checks: base.checks.difference(&now).cloned().collect(),
    });
}
