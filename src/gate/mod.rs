//! What a CI pipeline gates on, beyond the findings: accepted deviations (`accept`), the
//! comparison with an earlier run (`baseline`), the exit decision (`FailOn`) and GitHub
//! Actions annotations (`github`). Each works on a finished `check::model::Report`.

pub mod accept;
pub mod baseline;
pub mod github;

use crate::check::model::Report;

#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("cannot read {path}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {problem}")]
    Invalid { path: String, problem: String },
}

/// A gate input file's text, and its path as reports name it.
fn read_text(path: &std::path::Path) -> Result<(String, String), GateError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| GateError::Io {
        path: p.clone(),
        source,
    })?;
    Ok((text, p))
}

/// Which failures make the exit code 1 (`--fail-on`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Any failure (accepted ones aside).
    #[default]
    Any,
    /// Only failures the baseline did not have.
    New,
}

/// Whether the run fails the gate. With `New` and no baseline, every failure is new.
pub fn fails(report: &Report, fail_on: FailOn) -> bool {
    match (fail_on, &report.baseline) {
        (FailOn::New, Some(b)) => !b.new_failures.is_empty(),
        _ => !report.passed(),
    }
}
