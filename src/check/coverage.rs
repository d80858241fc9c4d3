//! Clause coverage of a run: which clauses of the spec document (`specs/clauses.toml`) the
//! run's checks exercised, which it could not and why, and which no check enforces.

use std::collections::BTreeSet;

use super::model::{CheckResult, ClauseNote, Coverage, Verdict};
use crate::spec::clauses::{self, Clause};

/// Coverage of the built-in clauses by these results.
pub fn of(checks: &[CheckResult]) -> Coverage {
    match clauses::clauses() {
        Ok(c) => over(&c, checks),
        // The clauses are compiled in and tested; an unreadable file only loses the table.
        Err(_) => Coverage::default(),
    }
}

/// Coverage of `clauses` by these results. A clause is exercised when one of its checks
/// judged at least one case; an enforceable clause not exercised says why (its checks' skip
/// reasons, or that they were not selected).
pub fn over(clauses: &[Clause], checks: &[CheckResult]) -> Coverage {
    let mut cov = Coverage {
        total: clauses.len(),
        ..Coverage::default()
    };
    for c in clauses {
        if c.checks.is_empty() {
            cov.unenforced.push(ClauseNote {
                clause: c.id.clone(),
                why: c.reason.clone().unwrap_or_else(|| "no check".into()),
            });
            continue;
        }
        cov.enforceable += 1;
        let results: Vec<&CheckResult> =
            checks.iter().filter(|r| c.checks.contains(&r.id)).collect();
        if results
            .iter()
            .any(|r| r.cases > 0 && r.verdict != Verdict::Skipped)
        {
            cov.exercised += 1;
            continue;
        }
        let whys: BTreeSet<String> = results.iter().filter_map(|r| r.skipped.clone()).collect();
        let why = if whys.is_empty() {
            format!("not selected in this run ({})", c.checks.join(", "))
        } else {
            whys.into_iter().collect::<Vec<_>>().join("; ")
        };
        cov.skipped.push(ClauseNote {
            clause: c.id.clone(),
            why,
        });
    }
    cov
}
