//! Every check of `linkcert check` (`checks.rs`) and every rule of `linkcert load`
//! (`rules.rs`), declared once: id, title, level, what it needs, and the clauses of the spec
//! document it enforces, or why it enforces none. The clause texts are in
//! `specs/clauses.toml` (`spec::clauses`); which check or rule enforces a clause is said only
//! here. Clause coverage, counted per command, is `coverage.rs`; `linkcert catalogue` is
//! `listing.rs`. A leaf: it depends on `verdict` and `spec` only.

mod checks;
pub mod clients;
pub mod coverage;
mod handle;
pub mod listing;
mod rules;

pub use checks::CHECKS;
pub use coverage::{ClauseNote, Coverage, Judgement};
pub use handle::{Check, FAMILIES, Rule, family_of, same};
pub use listing::listing;
pub use rules::RULES;

use linkcert_spec::verdict::Verdict;

/// The command whose run judges a check or rule; clause coverage is counted per command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Check,
    Load,
}

impl Command {
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Check => "check",
            Command::Load => "load",
        }
    }

    /// What the command's units are called in reports.
    pub fn noun(self) -> &'static str {
        match self {
            Command::Check => "check",
            Command::Load => "load rule",
        }
    }
}

/// The clauses a check or rule enforces, or why it enforces none.
#[derive(Clone, Copy, Debug)]
pub enum Enforces {
    Clauses(&'static [&'static str]),
    Nothing(&'static str),
    /// A document beyond the spec, cited: what a target sends where the spec is silent must
    /// be true by that document (the IETF RateLimit fields).
    Beyond(&'static str),
}

/// The draft the RateLimit fields' check and rule enforce, and the earlier forms they read.
pub const RATELIMIT_FIELDS_DRAFT: &str = "draft-ietf-httpapi-ratelimit-headers-11 (May 2026), RateLimit-Policy and RateLimit; its -07 (a Dictionary) and -06 (separate RateLimit-Limit, -Remaining, -Reset) for those forms";

impl Enforces {
    /// The spec's clauses: none for a check of a document beyond it.
    pub fn clauses(self) -> &'static [&'static str] {
        match self {
            Enforces::Clauses(c) => c,
            Enforces::Nothing(_) | Enforces::Beyond(_) => &[],
        }
    }
}

/// A check of `linkcert check`.
#[derive(Clone, Copy, Debug)]
pub struct CheckDef {
    pub id: &'static str,
    pub title: &'static str,
    /// Where in the reference document, in words (reports print it beside the check).
    pub clause: &'static str,
    /// The verdict of a violation: Fail where the spec says so, NonStrict where it only prefers,
    /// Informational for choices the spec leaves open.
    pub level: Verdict,
    /// What the check needs of the target to run: keys of which plans, fixtures, destructive
    /// mode.
    pub needs: Needs,
    pub enforces: Enforces,
}

/// What a check needs of a run to be tried: which keys (in words: plans and counts vary
/// too much for a type to say more than a reader needs), whether it deactivates fixture
/// partners (`--partner`, `--tenant`, handed out by `check`'s fixture ledger), and whether it
/// runs only with `--allow-destructive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    pub keys: &'static str,
    pub fixtures: bool,
    pub destructive: bool,
}

impl Needs {
    pub const fn keys(keys: &'static str) -> Needs {
        Needs {
            keys,
            fixtures: false,
            destructive: false,
        }
    }
    /// It deactivates fixture partners (and so runs only with `--allow-destructive`).
    pub const fn fixtures(self) -> Needs {
        Needs {
            fixtures: true,
            destructive: true,
            ..self
        }
    }
    /// It changes the target's state: only with `--allow-destructive`.
    pub const fn destructive(self) -> Needs {
        Needs {
            destructive: true,
            ..self
        }
    }
}

impl std::fmt::Display for Needs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.keys)?;
        if self.fixtures {
            f.write_str(", fixture partners it may deactivate (--partner, --tenant)")?;
        }
        if self.destructive {
            f.write_str(", --allow-destructive")?;
        }
        Ok(())
    }
}

/// A rule of `linkcert load`.
#[derive(Clone, Copy, Debug)]
pub struct RuleDef {
    pub id: &'static str,
    pub title: &'static str,
    /// The verdict of a violation.
    pub level: Verdict,
    /// The one scenario shape it judges (`two-keys`...); None: every shape.
    pub shape: Option<&'static str>,
    pub enforces: Enforces,
}

impl RuleDef {
    /// What the rule needs of a run: a scenario of its shape, or any.
    pub fn needs(&self) -> String {
        match self.shape {
            Some(s) => format!("a scenario of shape {s}"),
            None => "any scenario".into(),
        }
    }

    /// Whether it judges scenarios of this shape.
    pub fn judges_shape(&self, shape: &str) -> bool {
        self.shape.is_none_or(|s| s == shape)
    }
}

/// A check by id.
pub fn check(id: &str) -> Option<&'static CheckDef> {
    CHECKS.iter().find(|d| d.id == id)
}

/// A load rule by id.
pub fn rule(id: &str) -> Option<&'static RuleDef> {
    RULES.iter().find(|d| d.id == id)
}

/// Whether a check or rule of that id is declared.
pub fn declared(id: &str) -> bool {
    check(id).is_some() || rule(id).is_some()
}

/// The ids of a command's checks or rules, in report order, with what they enforce.
pub fn of(command: Command) -> Vec<(&'static str, Enforces)> {
    match command {
        Command::Check => CHECKS.iter().map(|d| (d.id, d.enforces)).collect(),
        Command::Load => RULES.iter().map(|d| (d.id, d.enforces)).collect(),
    }
}

/// The checks (or rules) of a command that enforce a clause, in report order.
pub fn enforcing(command: Command, clause: &str) -> Vec<&'static str> {
    of(command)
        .into_iter()
        .filter(|(_, e)| e.clauses().contains(&clause))
        .map(|(id, _)| id)
        .collect()
}

/// The checks of a family (`pagination`, `qr`...).
pub fn family(name: &str) -> impl Iterator<Item = Check> {
    Check::all().filter(move |c| c.family() == name)
}

/// Whether `--only`/`--skip` patterns select a check: a pattern is an id, a family
/// (`pagination`), or a prefix ending in `*` (`ratelimit.re*`).
pub fn selected(id: &str, only: &[String], skip: &[String]) -> bool {
    let matches = |p: &String| pattern_matches(p, id);
    (only.is_empty() || only.iter().any(matches)) && !skip.iter().any(matches)
}

/// One pattern of `--only`, `--skip` and waivers: an id, a family or a prefix ending in `*`.
pub fn pattern_matches(pattern: &str, id: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        id.starts_with(prefix)
    } else {
        id == pattern || id.split('.').next() == Some(pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_name_their_family() {
        for (i, d) in CHECKS.iter().enumerate() {
            assert!(
                CHECKS[..i].iter().all(|e| e.id != d.id),
                "duplicate {}",
                d.id
            );
            assert!(
                d.id.contains('.') && FAMILIES.contains(&family_of(d.id)),
                "{}",
                d.id
            );
            assert!(!d.clause.is_empty());
        }
        for (i, r) in RULES.iter().enumerate() {
            assert!(
                RULES[..i].iter().all(|e| e.id != r.id),
                "duplicate {}",
                r.id
            );
            assert!(r.id.starts_with("load."), "{}", r.id);
        }
    }

    #[test]
    fn every_rule_is_found_by_its_id_and_nothing_else_is() {
        for d in RULES {
            assert_eq!(Rule::find(d.id).map(Rule::id), Some(d.id));
        }
        assert!(Rule::find("load.nothing").is_none());
        assert!(Rule::find("qr.size").is_none(), "a check is no rule");
        assert_eq!(rule_id!("load.admitted").def().level, Verdict::Fail);
    }

    #[test]
    fn only_and_skip_patterns() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(selected("pagination.walk", &s(&["pagination"]), &[]));
        assert!(!selected("qr.png", &s(&["pagination"]), &[]));
        assert!(selected("ratelimit.reset", &s(&["ratelimit.re*"]), &[]));
        assert!(!selected("ratelimit.reset", &[], &s(&["ratelimit.reset"])));
        assert!(selected("qr.png", &[], &[]));
    }

    #[test]
    fn every_clause_named_exists() {
        let clauses = linkcert_spec::clauses::clauses().unwrap();
        for command in [Command::Check, Command::Load] {
            for (id, e) in of(command) {
                for c in e.clauses() {
                    assert!(clauses.iter().any(|k| k.id == *c), "{id} names {c}");
                }
            }
        }
    }
}
