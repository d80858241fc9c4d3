//! The account a report gives of a target that went away: how the failures happened and when.

use linkcert_http::FailureKind;
use serde::Serialize;

/// How a transport failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    /// Connections refused: nothing listens any more.
    Refused,
    /// Connections accepted, then reset or closed before an answer.
    Reset,
    /// Nothing answered within the request timeout.
    Timeout,
    Other,
}

impl TransportKind {
    pub fn words(self) -> &'static str {
        match self {
            TransportKind::Refused => "connections refused",
            TransportKind::Reset => "connections reset",
            TransportKind::Timeout => "no answer within the request timeout (stalled)",
            TransportKind::Other => "requests failing",
        }
    }
}

/// A target that stopped answering in the middle of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Outage {
    pub kind: TransportKind,
    /// When the first failure of the streak came (UTC), and how far into the run.
    pub first_failure_at: String,
    pub first_failure_secs: f64,
    /// When linkcert was sure (a plain request failed too) and stopped sending.
    pub detected_secs: f64,
    pub failures_in_a_row: u64,
    pub first_error: String,
}

impl Outage {
    /// One sentence: when and how the target went away.
    pub fn sentence(&self) -> String {
        format!(
            "the target stopped answering {:.1} s into the run ({}): {} (first: {}); sure after {} failures in a row at {:.1} s, nothing sent after",
            self.first_failure_secs,
            self.first_failure_at,
            self.kind.words(),
            self.first_error,
            self.failures_in_a_row,
            self.detected_secs
        )
    }
}

impl TransportKind {
    /// How a transport failure of this kind happened, as an outage's account names it.
    pub fn of(kind: FailureKind) -> TransportKind {
        match kind {
            FailureKind::Timeout => TransportKind::Timeout,
            FailureKind::Refused => TransportKind::Refused,
            FailureKind::Reset | FailureKind::WriteFailed => TransportKind::Reset,
            _ => TransportKind::Other,
        }
    }
}
