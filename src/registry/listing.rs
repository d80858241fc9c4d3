//! `linkcert catalogue`: every check and every load rule with its clauses, level and needs;
//! then every clause of the spec document with the checks and rules that enforce it, or why
//! none does; then how many clauses each command's coverage counts.

use std::fmt::Write as _;

use super::{CHECKS, Command, Enforces, RULES, enforcing};
use crate::spec::SpecError;
use crate::spec::clauses;

fn enforces_text(e: Enforces) -> String {
    match e {
        Enforces::Clauses(c) => format!("clauses: {}", c.join(", ")),
        Enforces::Nothing(why) => format!("clauses: none ({why})"),
    }
}

pub fn listing() -> Result<String, SpecError> {
    let clauses = clauses::clauses()?;
    let mut o = format!("Checks of linkcert check ({}):\n", CHECKS.len());
    for d in CHECKS {
        let _ = writeln!(
            o,
            "  {:<28} {:<13} {}\n  {:28} {}\n  {:28} needs: {}",
            d.id,
            d.level.as_str(),
            d.title,
            "",
            enforces_text(d.enforces),
            "",
            d.needs
        );
    }
    let _ = writeln!(o, "\nRules of linkcert load ({}):", RULES.len());
    for r in RULES {
        let _ = writeln!(
            o,
            "  {:<28} {:<13} {}\n  {:28} {}\n  {:28} needs: {}",
            r.id,
            r.level.as_str(),
            r.title,
            "",
            enforces_text(r.enforces),
            "",
            r.needs()
        );
    }
    let count = |command| {
        clauses
            .iter()
            .filter(|c| !enforcing(command, &c.id).is_empty())
            .count()
    };
    let (by_check, by_load) = (count(Command::Check), count(Command::Load));
    let _ = writeln!(
        o,
        "\nClauses of the spec document ({}; {by_check} enforced by a check, {by_load} by a load rule):",
        clauses.len()
    );
    for c in &clauses {
        let (checks, rules) = (
            enforcing(Command::Check, &c.id),
            enforcing(Command::Load, &c.id),
        );
        let mut by = Vec::new();
        if !checks.is_empty() {
            by.push(format!("checks: {}", checks.join(", ")));
        }
        if !rules.is_empty() {
            by.push(format!("load rules: {}", rules.join(", ")));
        }
        let by = if by.is_empty() {
            format!(
                "not enforced: {}",
                c.reason.as_deref().unwrap_or("no reason given")
            )
        } else {
            by.join("; ")
        };
        let _ = writeln!(
            o,
            "  {:<32} [{}] \"{}\"\n  {:32} {by}",
            c.id, c.section, c.text, ""
        );
    }
    let _ = writeln!(
        o,
        "\nClause coverage, per command: a check run counts the {by_check} clauses its checks \
         enforce, a load run the {by_load} its rules enforce (of {} in the document).",
        clauses.len()
    );
    Ok(o)
}
