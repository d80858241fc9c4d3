//! Clause coverage of a run, counted per command: which clauses of the spec document
//! (`specs/clauses.toml`) the command's checks (or load rules) enforce, which of those the
//! run exercised, which it could not and why, and which that command does not enforce.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{Command, enforcing};
use crate::spec::clauses::{self, Clause};

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
/// checks judged at least one case; an enforceable clause not exercised says why (its
/// checks' skip reasons, or that they were not selected).
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
        let mine: Vec<&J> = results.iter().filter(|r| ids.contains(&r.id())).collect();
        if mine.iter().any(|r| r.judged()) {
            cov.exercised += 1;
            continue;
        }
        let whys: BTreeSet<&str> = mine.iter().filter_map(|r| r.skipped()).collect();
        let why = if whys.is_empty() {
            match command {
                Command::Check => format!("not selected in this run ({})", ids.join(", ")),
                Command::Load => format!("no scenario of this run judged it ({})", ids.join(", ")),
            }
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
