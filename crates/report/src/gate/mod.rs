//! What a CI pipeline gates on, beyond the findings: accepted deviations (`accept`), the
//! comparison with an earlier run (`baseline`) and the exit decision (`FailOn`). Data and
//! pure decisions on plain data (patterns, ids, operations, verdicts, dates): the report
//! carries these types and applies the decisions to itself (`crate`), so `gate`
//! never imports `report`.

pub mod accept;
pub mod baseline;

use baseline::BaselineDiff;
use linkcert_run::Outcome;

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

/// How a `check` run ended: an interrupted run first (it did not finish, so CI must not read
/// what it had judged as a verdict), then failures (not waived; `--fail-on`: they are
/// certain), then incompleteness (checks attempted and not judged: neither a pass nor a
/// failure).
pub fn outcome(
    fail_on: FailOn,
    passed: bool,
    baseline: Option<&BaselineDiff>,
    incomplete: bool,
    interrupted: bool,
) -> Outcome {
    if interrupted {
        Outcome::Incomplete
    } else if fails(fail_on, passed, baseline) {
        Outcome::Failed
    } else if incomplete {
        Outcome::Incomplete
    } else {
        Outcome::Passed
    }
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

/// Whether a run fails the gate: `passed` when it has no failure (accepted ones aside), and
/// its comparison with the baseline. With `New` and no baseline, every failure is new.
pub fn fails(fail_on: FailOn, passed: bool, baseline: Option<&BaselineDiff>) -> bool {
    match (fail_on, baseline) {
        (FailOn::New, Some(b)) => !b.new_failures.is_empty(),
        _ => !passed,
    }
}
