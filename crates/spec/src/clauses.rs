//! The clauses of the reference document (`specs/clauses.toml`): every normative statement
//! with an id and its text quoted word for word (and, for one nothing enforces, why). Which
//! check or load rule enforces a clause is the registry's (`linkcert_registry`), as are
//! coverage and `linkcert catalogue`.

use serde::Deserialize;

use super::SpecError;

pub const CLAUSES_TOML: &str = include_str!("../../../specs/clauses.toml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clause {
    pub id: String,
    pub section: String,
    /// Quoted from the document.
    pub text: String,
    /// Why nothing enforces it.
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
