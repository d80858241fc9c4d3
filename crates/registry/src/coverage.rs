//! Clause coverage of a run, counted per command: which clauses of the spec document
//! (`specs/clauses.toml`) the command's checks (or load rules) enforce, which of those the
//! run exercised, which it could not and why, and which that command does not enforce.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{Command, enforcing};
use linkcert_spec::clauses::{self, Clause};
use linkcert_spec::verdict::Verdict;

/// Which clauses of the spec document a run exercised.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    pub total: usize,
    /// Clauses some check (of the run's command) enforces.
    pub enforceable: usize,
    /// Enforceable clauses one of whose checks judged at least one case in this run.
    pub exercised: usize,
    /// Enforceable clauses not exercised, and why (their checks' skip reasons).
    pub skipped: Vec<ClauseNote>,
    /// Clauses no check (of the run's command) enforces, and why.
    pub unenforced: Vec<ClauseNote>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClauseNote {
    pub clause: String,
    pub why: String,
}

/// What coverage needs of one result of a run: a check's on an operation, or a rule's.
pub trait Judgement {
    /// The check or rule id.
    fn id(&self) -> &str;
    /// Whether it judged at least one case.
    fn judged(&self) -> bool;
    /// Why it could not run, when it did not.
    fn skipped(&self) -> Option<&str>;
}

/// Coverage of the built-in clauses by a command's results.
pub fn of<J: Judgement>(command: Command, results: &[J]) -> Coverage {
    match clauses::clauses() {
        Ok(c) => over(&c, command, results),
        // The clauses are compiled in and tested; an unreadable file only loses the table.
        Err(_) => Coverage::default(),
    }
}

/// Coverage of `clauses` by a command's results. A clause is exercised when one of its
/// checks that can fail (level Fail or NonStrict) judged at least one case: a check that only
/// observes (Informational) reports the target's choice and cannot contradict the clause, so
/// it never counts a clause as exercised. An enforceable clause not exercised says why (its
/// checks' skip reasons, that they were not selected, or that only observations touched it).
pub fn over<J: Judgement>(clauses: &[Clause], command: Command, results: &[J]) -> Coverage {
    let mut cov = Coverage {
        total: clauses.len(),
        ..Coverage::default()
    };
    for c in clauses {
        let ids = enforcing(command, &c.id);
        if ids.is_empty() {
            cov.unenforced.push(ClauseNote {
                clause: c.id.clone(),
                why: unenforced_why(c, command),
            });
            continue;
        }
        cov.enforceable += 1;
        let judging: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|id| can_fail(command, id))
            .collect();
        let mine: Vec<&J> = results
            .iter()
            .filter(|r| judging.contains(&r.id()))
            .collect();
        if mine.iter().any(|r| r.judged()) {
            cov.exercised += 1;
            continue;
        }
        cov.skipped.push(ClauseNote {
            clause: c.id.clone(),
            why: not_exercised_why(command, &ids, &judging, &mine),
        });
    }
    cov
}

/// Whether a check or rule's violations can fail: Fail or NonStrict, not Informational.
fn can_fail(command: Command, id: &str) -> bool {
    let level = match command {
        Command::Check => super::check(id).map(|d| d.level),
        Command::Load => super::rule(id).map(|d| d.level),
    };
    matches!(level, Some(Verdict::Fail | Verdict::NonStrict))
}

/// Why an enforceable clause was not exercised: only observations enforce it, or its judging
/// checks' skip reasons, or that none of them was selected.
fn not_exercised_why<J: Judgement>(
    command: Command,
    ids: &[&str],
    judging: &[&str],
    mine: &[&J],
) -> String {
    if judging.is_empty() {
        return format!(
            "only observed ({}): no check that can fail enforces it",
            ids.join(", ")
        );
    }
    let whys: BTreeSet<&str> = mine.iter().filter_map(|r| r.skipped()).collect();
    if !whys.is_empty() {
        return whys.into_iter().collect::<Vec<_>>().join("; ");
    }
    match command {
        Command::Check => format!("not selected in this run ({})", judging.join(", ")),
        Command::Load => format!("no scenario of this run judged it ({})", judging.join(", ")),
    }
}

/// Why `command` does not enforce a clause: the clause's own reason when nothing does, or the
/// other command that does.
fn unenforced_why(c: &Clause, command: Command) -> String {
    if let Some(r) = &c.reason {
        return r.clone();
    }
    let other = match command {
        Command::Check => Command::Load,
        Command::Load => Command::Check,
    };
    let by = enforcing(other, &c.id);
    if by.is_empty() {
        "no check".into()
    } else {
        format!(
            "enforced by `linkcert {}` ({})",
            other.as_str(),
            by.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct R(&'static str, bool);
    impl Judgement for R {
        fn id(&self) -> &str {
            self.0
        }
        fn judged(&self) -> bool {
            self.1
        }
        fn skipped(&self) -> Option<&str> {
            (!self.1).then_some("needs a Free key")
        }
    }

    fn clause(id: &str) -> Clause {
        Clause {
            id: id.into(),
            section: "s".into(),
            text: "t".into(),
            reason: None,
        }
    }

    fn note<'a>(cov: &'a Coverage, clause: &str) -> Option<&'a str> {
        cov.skipped
            .iter()
            .find(|n| n.clause == clause)
            .map(|n| n.why.as_str())
    }

    /// An observation-only check that judged cases does not count a clause as exercised; a
    /// check that can fail does, Fail or NonStrict.
    #[test]
    fn only_checks_that_can_fail_exercise_a_clause() {
        // qr.params.logo: plan.paid-params (Informational) and plan.paid-params-safe (Fail).
        // limits.qr-bounds: qr.choices (Informational) only.
        // errors.doc-url: envelope.doc-url-spelling (NonStrict) among others.
        let clauses = [
            clause("qr.params.logo"),
            clause("limits.qr-bounds"),
            clause("errors.doc-url"),
        ];
        let observed = [R("plan.paid-params", true), R("qr.choices", true)];
        let cov = over(&clauses, Command::Check, &observed);
        assert_eq!((cov.enforceable, cov.exercised), (3, 0));
        assert_eq!(
            note(&cov, "qr.params.logo"),
            Some("not selected in this run (qr.logo-unpaid, plan.paid-params-safe)")
        );
        assert!(
            note(&cov, "limits.qr-bounds")
                .is_some_and(|w| w.starts_with("only observed (qr.choices)"))
        );
        let judged = [
            R("plan.paid-params", true),
            R("plan.paid-params-safe", true),
            R("envelope.doc-url-spelling", true),
        ];
        let cov = over(&clauses, Command::Check, &judged);
        assert_eq!(cov.exercised, 2);
        let skipped = [
            R("plan.paid-params", true),
            R("plan.paid-params-safe", false),
        ];
        let cov = over(&clauses, Command::Check, &skipped);
        assert_eq!(note(&cov, "qr.params.logo"), Some("needs a Free key"));
        // load.behaviour observes and enforces nothing; load.admitted can fail.
        let load = over(
            &[clause("limits.exceeded")],
            Command::Load,
            &[R("load.behaviour", true), R("load.admitted", true)],
        );
        assert_eq!(load.exercised, 1);
    }
}
