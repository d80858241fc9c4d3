//! The clauses of the reference document (`specs/clauses.toml`): every normative statement
//! with an id, its text quoted word for word, and the catalogue checks that enforce it (or
//! why none does). Coverage (`check::coverage`) and `linkcert catalogue` read it.

use serde::Deserialize;

use super::SpecError;

pub const CLAUSES_TOML: &str = include_str!("../../specs/clauses.toml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clause {
    pub id: String,
    pub section: String,
    /// Quoted from the document.
    pub text: String,
    /// Catalogue check ids that enforce it.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Why no check enforces it.
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    clause: Vec<Clause>,
}

/// The built-in clauses, in document order.
pub fn clauses() -> Result<Vec<Clause>, SpecError> {
    let f: File = toml::from_str(CLAUSES_TOML)
        .map_err(|e| SpecError::Invalid(format!("specs/clauses.toml: {e}")))?;
    Ok(f.clause)
}

/// The clause ids a check enforces.
pub fn of_check<'a>(clauses: &'a [Clause], check: &str) -> Vec<&'a str> {
    clauses
        .iter()
        .filter(|c| c.checks.iter().any(|k| k == check))
        .map(|c| c.id.as_str())
        .collect()
}
