//! How a run of `check` or `load` (or `load merge`) ended, as CI reads it, and the one map from
//! that to the process's exit code (`--help` and the README document the codes).

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No failure (accepted ones aside), and everything that ran was judged.
    Passed,
    /// At least one failure: the target contradicts the spec (for `load`: throttling does not
    /// conform, or the target is broken).
    Failed,
    /// Could not run: bad arguments, target unreachable, spec invalid, a gate file that does
    /// not parse; for `load` also nothing to run, or a generator that could not hold its
    /// schedule (client saturated).
    CannotRun,
    /// Attempted and not judged (a fixture every key answered 404 for, a target that stopped
    /// answering), or interrupted (SIGINT, SIGTERM), whatever it had judged.
    Incomplete,
}

impl Outcome {
    /// The exit code: 0, 1, 2 or 3.
    pub const fn code(self) -> u8 {
        match self {
            Outcome::Passed => 0,
            Outcome::Failed => 1,
            Outcome::CannotRun => 2,
            Outcome::Incomplete => 3,
        }
    }
}

impl From<Outcome> for std::process::ExitCode {
    fn from(o: Outcome) -> Self {
        std::process::ExitCode::from(o.code())
    }
}

/// A second signal quits at once with this code, without waiting for the reports (what shells
/// give a process ended by SIGINT: 128 + 2).
pub const EXIT_AT_ONCE: i32 = 130;

#[cfg(test)]
mod tests {
    use super::Outcome;

    #[test]
    fn each_outcome_has_its_own_code_as_documented() {
        let all = [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::CannotRun,
            Outcome::Incomplete,
        ];
        assert_eq!(all.map(Outcome::code), [0, 1, 2, 3]);
        assert_eq!(super::EXIT_AT_ONCE, 130);
    }
}
