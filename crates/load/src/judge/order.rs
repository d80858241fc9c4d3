//! Answers back in send order. They complete out of order, while the rules judge what was sent
//! and when (Reset never moving back, Remaining before the first 429, runs after it): records
//! wait here until every record sent before them is in.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::record::Record;

/// Records not yet released, earliest send first (ties: the order they came in).
#[derive(Default)]
pub(super) struct SendOrder {
    queue: BinaryHeap<Queued>,
    fed: u64,
}

struct Queued {
    fed: u64,
    rec: Record,
}

impl Queued {
    fn key(&self) -> (OrdF64, u64) {
        (OrdF64(self.rec.sent), self.fed)
    }
}

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

impl SendOrder {
    pub fn push(&mut self, rec: Record) {
        self.queue.push(Queued { fed: self.fed, rec });
        self.fed += 1;
    }
    /// The records sent before `t`, in send order, once every record sent before `t` is in.
    pub fn release(&mut self, t: f64) -> Vec<Record> {
        let mut out = Vec::new();
        while self.queue.peek().is_some_and(|q| q.rec.sent < t) {
            out.extend(self.queue.pop().map(|q| q.rec));
        }
        out
    }
    /// Every record left, in send order.
    pub fn drain(&mut self) -> Vec<Record> {
        self.release(f64::INFINITY)
    }
}

/// A time that orders (`total_cmp`), for heaps of records' times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct OrdF64(pub f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}
