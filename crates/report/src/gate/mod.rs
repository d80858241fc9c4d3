//! What a CI pipeline gates on, beyond the findings: accepted deviations (`accept`), the
//! comparison with an earlier run (`baseline`) and the exit decision (`FailOn`). Data and
//! pure decisions on plain data (patterns, ids, operations, verdicts, dates): the report
//! carries these types and applies the decisions to itself (`crate`), so `gate`
//! never imports `report`.

pub mod accept;
pub mod baseline;

use baseline::BaselineDiff;

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

/// `check`'s exit codes (`--help` and the README document them).
pub const EXIT_PASSED: u8 = 0;
/// The target fails checks (not waived; `--fail-on`).
pub const EXIT_FAILED: u8 = 1;
/// No failure, but checks attempted and not judged (a fixture no key owns, a target that
/// stopped answering in the middle of the run): neither a pass nor a failure. Also any run
/// interrupted (SIGINT, SIGTERM), whatever it had judged.
pub const EXIT_INCOMPLETE: u8 = 3;

/// The exit code of a `check` run: an interrupted run first (it did not finish, so CI must not
/// read what it had judged as a verdict), then failures (they are certain), then
/// incompleteness.
pub fn exit_code(
    fail_on: FailOn,
    passed: bool,
    baseline: Option<&BaselineDiff>,
    incomplete: bool,
    interrupted: bool,
) -> u8 {
    if interrupted {
        EXIT_INCOMPLETE
    } else if fails(fail_on, passed, baseline) {
        EXIT_FAILED
    } else if incomplete {
        EXIT_INCOMPLETE
    } else {
        EXIT_PASSED
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
