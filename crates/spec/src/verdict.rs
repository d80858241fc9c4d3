//! Verdict levels, shared by every judge (`check`, `load`, the rate-limit headers) and the
//! reports: a leaf that depends on nothing.

use serde::{Deserialize, Serialize};

/// Verdicts, as the Autobahn testsuite names them; ordered from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    /// Nothing ran: no key of the plan it needs, not destructive-allowed, filtered out.
    Skipped,
    /// The target made a choice the spec leaves open; recorded, never a failure.
    Informational,
    /// A deviation from what the spec prefers but does not require.
    NonStrict,
    /// Attempted and not judged: a fixture no key owns, a target that stopped answering.
    /// Neither a pass nor a failure: the run is incomplete.
    NotJudged,
    /// A failure the user accepted (a waiver with its reason): counted apart, not a failure
    /// of the run.
    Accepted,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Skipped => "skipped",
            Verdict::Informational => "informational",
            Verdict::NonStrict => "non-strict",
            Verdict::NotJudged => "not-judged",
            Verdict::Accepted => "accepted",
            Verdict::Fail => "fail",
        }
    }
}
