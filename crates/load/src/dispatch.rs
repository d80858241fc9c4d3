//! Handing out the schedule's slots to goose users, and the watermark: the send time below
//! which every record has been handed to the sink (so the judge can put answers in send order
//! while holding only those in flight).

use std::collections::BTreeSet;

use super::schedule::{Schedule, Slot};

/// Slots not yet taken, and those taken whose records the sink has not yet taken.
pub(super) struct Dispatch {
    pub schedule: std::iter::Peekable<Schedule>,
    /// (µs from t = 0 before which it cannot be sent, ticket number), per slot taken and not
    /// yet noted: the lowest bounds the send times still to come.
    pub pending: BTreeSet<Ticket>,
    pub tickets: u64,
}

/// A slot taken: no record sent before `.0` µs is still to come from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Ticket(pub u64, pub u64);

pub(super) fn micros(secs: f64) -> u64 {
    (secs.max(0.0) * 1e6) as u64
}

impl Dispatch {
    /// The next slot, taken at `now` (seconds from t = 0): it is sent at its due time or now,
    /// whichever is later (behind schedule, due times say nothing of send times).
    pub fn take(&mut self, now: f64) -> Option<(Slot, Ticket)> {
        let slot = self.schedule.next()?;
        let t = Ticket(micros(slot.due.as_secs_f64().max(now)), self.tickets);
        self.tickets += 1;
        self.pending.insert(t);
        Some((slot, t))
    }
    /// Seconds from t = 0 before which every record has been noted, at `now`.
    pub fn settled(&mut self, now: f64) -> f64 {
        let taken = self.pending.first().map(|t| t.0);
        let next = self
            .schedule
            .peek()
            .map(|s| micros(s.due.as_secs_f64().max(now)));
        match (taken, next) {
            (Some(a), Some(b)) => a.min(b) as f64 / 1e6,
            (Some(a), None) | (None, Some(a)) => a as f64 / 1e6,
            (None, None) => f64::INFINITY,
        }
    }
}
