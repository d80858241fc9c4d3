//! Seconds of a run: one key's (a scenario of a few keys: its buckets, lateness by due second
//! and header trace, which its charts draw) or a fleet's (its keys together). `measure.rs`
//! decides which a key keeps and feeds them.

use super::histogram::Latencies;
use super::result::{FleetSecond, Second, Tally, TracePoint};
use crate::record::Record;
use linkcert_rate::headers as rate_headers;

/// The trace keeps at most this many points per key.
const TRACE_POINTS: usize = 600;

/// Measurements under way: `observe` each answer, then `finish`.
/// One key's seconds and header trace, for its charts.
pub(super) struct Drawn {
    /// Buckets by the second a record was sent in (retries may run past the schedule:
    /// folded into the last second at `finish`), and lateness by the second it was due in.
    secs: Vec<Second>,
    lat: Vec<Latencies>,
    late_by_due: Vec<u64>,
    /// Answers with rate-limit headers, with their send times (the trace is in send order):
    /// one of every `stride` of them.
    trace: Vec<(f64, TracePoint)>,
    stride: u64,
    traced: u64,
}

pub(super) fn bucket(v: &mut Vec<Second>, lat: &mut Vec<Latencies>, key: usize, i: usize) -> usize {
    while v.len() <= i {
        v.push(Second {
            t: v.len() as u64,
            key,
            ..Second::default()
        });
        lat.push(Latencies::per_second());
    }
    i
}

/// A fleet's second `i`, there from now on.
pub(super) fn fleet_second(v: &mut Vec<FleetSecond>, i: usize) -> &mut FleetSecond {
    while v.len() <= i {
        v.push(FleetSecond {
            t: v.len() as u64,
            ..FleetSecond::default()
        });
    }
    &mut v[i]
}

/// What `observe` works out once for a record and every count reads.
pub(super) struct Observed {
    /// Sent later than the lateness allowed.
    pub late: bool,
    pub refused_here: bool,
    /// Send to the answer's headers.
    pub latency_ms: f64,
}

/// One record into a second's tally.
pub(super) fn tally(b: &mut Tally, x: &Record, o: &Observed) {
    match x.status {
        // Never reached the target: the chart's late/unsent line, once (a late send is
        // there already, by its due second).
        None if o.refused_here => b.failed_to_send += u64::from(x.retry || !o.late),
        None => b.errors += 1,
        Some(_) if x.admitted() => b.admitted += 1,
        Some(429) => b.throttled += 1,
        Some(_) if x.refused() => b.refused += 1,
        Some(_) => b.other += 1,
    }
    b.sent += 1;
}

/// Slots never sent, as late or unsent in the second they were offered in (`add(second,
/// count)`). Slots are taken in order: the unsent ones are the last of the key's schedule.
pub(super) fn spread_unsent(offered: &[u64], unsent: u64, mut add: impl FnMut(usize, u64)) {
    let mut left = unsent;
    for (i, n) in offered.iter().enumerate().rev() {
        if left == 0 {
            break;
        }
        let here = left.min(*n);
        add(i, here);
        left -= here;
    }
}

/// Exactly `seconds` of a fleet's seconds: records sent past the last second (retries) count
/// in the last one.
pub(super) fn fold_fleet_past(v: &mut Vec<FleetSecond>, seconds: usize) {
    fleet_second(v, seconds.max(1) - 1);
    while v.len() > seconds.max(1) {
        let Some(b) = v.pop() else { break };
        if let Some(last) = v.last_mut() {
            last.add(&b);
        }
    }
}

impl Drawn {
    pub(super) fn new() -> Drawn {
        Drawn {
            secs: Vec::new(),
            lat: Vec::new(),
            late_by_due: Vec::new(),
            trace: Vec::new(),
            stride: 1,
            traced: 0,
        }
    }

    /// The bucket of the second the record was sent in.
    pub(super) fn count_second(&mut self, x: &Record, o: &Observed) {
        let i = bucket(
            &mut self.secs,
            &mut self.lat,
            x.key,
            x.sent.max(0.0) as usize,
        );
        tally(&mut self.secs[i].n, x, o);
        if x.status.is_some() {
            self.lat[i].record(o.latency_ms);
        }
        if !x.retry && o.late {
            let i = x.due.max(0.0) as usize;
            if self.late_by_due.len() <= i {
                self.late_by_due.resize(i + 1, 0);
            }
            self.late_by_due[i] += 1;
        }
    }

    /// One of every `stride` answers with rate-limit headers, into the trace.
    pub(super) fn trace(&mut self, x: &Record, wall0: f64) {
        self.traced += 1;
        if !(self.traced - 1).is_multiple_of(self.stride) {
            return;
        }
        if self.trace.len() >= 2 * TRACE_POINTS {
            // Keep every other point, and from now on every other answer of those kept.
            let mut i = 0;
            self.trace.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
            if !(self.traced - 1).is_multiple_of(self.stride) {
                return;
            }
        }
        self.trace.push((
            x.sent,
            TracePoint {
                t: x.recv,
                key: x.key,
                status: x.status.unwrap_or(0),
                remaining: rate_headers::parse_count(x.remaining.as_deref()),
                reset_in: x
                    .quota_back(wall0)
                    .spec_reset()
                    .map(|v| v - (wall0 + x.recv)),
            },
        ));
    }

    /// The key's seconds and its trace in send order.
    pub(super) fn finish(
        mut self,
        key: usize,
        seconds: usize,
        offered: &[u64],
        unsent: u64,
    ) -> (Vec<Second>, Vec<TracePoint>) {
        self.fold_past(key, seconds);
        for (b, n) in self.secs.iter_mut().zip(offered) {
            b.n.offered += n;
        }
        for (i, n) in self.late_by_due.iter().enumerate() {
            if let Some(b) = self.secs.get_mut(i) {
                b.n.failed_to_send += n;
            }
        }
        let secs = &mut self.secs;
        spread_unsent(offered, unsent, |i, n| {
            if let Some(b) = secs.get_mut(i) {
                b.n.failed_to_send += n;
            }
        });
        for (b, l) in self.secs.iter_mut().zip(&self.lat) {
            let p = l.percentiles();
            (b.p50_ms, b.p99_ms) = (p.p50, p.p99);
        }
        // Trace of headers, in send order (at most TRACE_POINTS per key).
        self.trace.sort_by(|a, b| a.0.total_cmp(&b.0));
        let step = (self.trace.len() / TRACE_POINTS).max(1);
        let trace = self.trace.into_iter().step_by(step).map(|(_, p)| p);
        (self.secs, trace.collect())
    }

    /// Exactly `seconds` buckets: records sent past the last second (retries) count in the
    /// last one.
    fn fold_past(&mut self, key: usize, seconds: usize) {
        bucket(&mut self.secs, &mut self.lat, key, seconds - 1);
        while self.secs.len() > seconds {
            let (b, l) = (self.secs.pop(), self.lat.pop());
            let (Some(b), Some(l)) = (b, l) else { break };
            self.secs[seconds - 1].n.add(&b.n);
            self.lat[seconds - 1].add(&l);
        }
    }
}
