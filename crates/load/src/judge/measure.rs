//! What a run measured, taken one answer at a time (`Measure::observe`, in any order): the
//! generator's account, per-second buckets and per-key figures of each key, and the header
//! trace. No verdicts here: the rules read these figures.
//!
//! Latency is the target's: from the send to the answer's headers (lateness of the send is the
//! client's, counted apart).
//!
//! Memory: counts, buckets (one per second), latency histograms and the send span are flat in
//! the number of answers. The header trace keeps every `stride`-th 2xx or 429 of a key, the
//! stride doubling whenever 2 x 600 points are kept (then every other point is dropped).

use std::collections::BTreeMap;

use super::histogram::Latencies;
use super::lateness::{Lateness, SATURATION_SHARE};
use super::result::{Generator, KeyStats, Percentiles, Second, TracePoint};
use crate::record::Record;
use crate::schedule::Summary;
use linkcert_http::{FailureKind, REJECTIONS, clean_refusal};
use linkcert_rate::headers as rate_headers;

/// The trace keeps at most this many points per key.
const TRACE_POINTS: usize = 600;

/// Measurements under way: `observe` each answer, then `finish`.
pub(super) struct Measure {
    schedule: Summary,
    wall0: f64,
    /// How late a send may be (`super::lateness`).
    lateness: Lateness,
    /// Answered records (any status), and of them 404s and clean rejections (400 or 422 in
    /// the envelope); non-retry records, sent, late.
    answered: u64,
    answered_404: u64,
    rejected_cleanly: u64,
    primary: u64,
    sent: u64,
    late: u64,
    max_late_ms: f64,
    /// Late sends whose slot found no free user at its due time (the in-flight ceiling), and
    /// the rest (the send loop's own lag); requests this machine could not open a socket for.
    late_at_ceiling: u64,
    /// Of the rest, those later than `lateness.lag`: the send loop lagged too far.
    lagged: u64,
    local_refusals: u64,
    /// First and last send of a non-retry record.
    sends: Span,
    latency: Latencies,
    keys: Vec<KeyMeasure>,
}

/// Earliest and latest of a set of times.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Span {
    pub first: Option<f64>,
    pub last: Option<f64>,
}

impl Span {
    fn add(&mut self, t: f64) {
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
    }
    /// Last less first (0 without two distinct times).
    pub fn secs(self) -> f64 {
        match (self.first, self.last) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => 0.0,
        }
    }
}

#[derive(Default)]
struct KeyMeasure {
    /// Buckets by the second a record was sent in (retries may run past the schedule:
    /// folded into the last second at `finish`), and lateness by the second it was due in.
    secs: Vec<Second>,
    lat: Vec<Latencies>,
    late_by_due: Vec<u64>,
    figures: KeyFigures,
    latencies: Latencies,
    /// Answers with rate-limit headers, with their send times (the trace is in send order):
    /// one of every `stride` of them.
    trace: Vec<(f64, TracePoint)>,
    stride: u64,
    traced: u64,
}

/// One key's figures, as rules and the report read them.
#[derive(Clone, Debug, Default)]
pub(super) struct KeyFigures {
    pub scheduled: u64,
    /// Non-retry records; the late ones; slots never sent.
    pub sent: u64,
    pub late: u64,
    pub unsent: u64,
    /// Every record of the key (retries too), and by outcome.
    pub records: u64,
    pub admitted: u64,
    pub throttled: u64,
    pub other: BTreeMap<u16, u64>,
    /// No answer from the target (timeouts, refused or reset connections).
    pub errors: u64,
    /// No request: this machine refused the socket (files, ports): the client's, not the
    /// target's (`FailureKind::LocalLimit`).
    pub refused_locally: u64,
    /// First and last send of any record of the key.
    pub sends: Span,
    /// First and last send of a 429.
    pub throttled_sends: Span,
    /// From the send to the answer's headers, ms (answered records): the target's latency.
    pub latency_ms: Percentiles,
}

impl KeyFigures {
    /// The key's line in the report: these figures and what load.admitted and
    /// load.rolling-window made of them.
    pub fn stats(
        &self,
        label: &str,
        target_key: usize,
        b: &super::bounds::Bounds,
        rolling_max: u64,
        rate: f64,
    ) -> KeyStats {
        KeyStats {
            label: label.to_string(),
            target_key,
            scheduled: self.scheduled,
            sent: self.sent,
            admitted: self.admitted,
            throttled: self.throttled,
            other: self.other.clone(),
            errors: self.errors,
            refused_locally: self.refused_locally,
            late: self.late,
            unsent: self.unsent,
            latency_ms: self.latency_ms.clone(),
            windows_loaded: b.k,
            rolling_max,
            admitted_bounds: [b.lower, b.upper],
            first_throttled_at: self.throttled_sends.first,
            rate,
        }
    }
}

/// What `finish` hands the rules and the roll-up.
pub(super) struct Measurements {
    /// Answered records (any status), and of them 404s and clean rejections.
    pub answered: u64,
    pub answered_404: u64,
    pub rejected_cleanly: u64,
    pub generator: Generator,
    /// The target's latency over every answer of the run.
    pub latency_ms: Percentiles,
    /// The same, as a mergeable histogram (`Latencies::serialize`; empty if that failed).
    pub latency_histogram: String,
    pub keys: Vec<KeyFigures>,
    pub seconds: Vec<Second>,
    pub trace: Vec<TracePoint>,
}

fn bucket(v: &mut Vec<Second>, lat: &mut Vec<Latencies>, key: usize, i: usize) -> usize {
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

impl Measure {
    /// `schedule`: the run's schedule, summed up; `keys`: how many keys the scenario loads;
    /// `wall0`: UTC epoch seconds of t = 0; `lateness`: how late a send may be
    /// (`super::lateness`).
    pub fn new(schedule: Summary, keys: usize, wall0: f64, lateness: Lateness) -> Measure {
        let mut m = Measure {
            wall0,
            lateness,
            answered: 0,
            answered_404: 0,
            rejected_cleanly: 0,
            primary: 0,
            sent: 0,
            late: 0,
            max_late_ms: 0.0,
            late_at_ceiling: 0,
            lagged: 0,
            local_refusals: 0,
            sends: Span::default(),
            latency: Latencies::new(),
            keys: (0..keys)
                .map(|_| KeyMeasure {
                    stride: 1,
                    ..KeyMeasure::default()
                })
                .collect(),
            schedule,
        };
        for (key, k) in m.keys.iter_mut().enumerate() {
            k.figures.scheduled = m.schedule.scheduled(key);
        }
        m
    }

    /// Take one answer (or one request that got none).
    pub fn observe(&mut self, x: &Record) {
        let o = Observed {
            late: x.sent - x.due > self.lateness.late,
            // Never reached the target: this machine's limit (load.generator's), not an answer.
            refused_here: x
                .error
                .as_ref()
                .is_some_and(|e| e.kind == FailureKind::LocalLimit),
            latency_ms: (x.recv - x.sent) * 1000.0,
        };
        self.count_run(x, &o);
        let wall0 = self.wall0;
        let Some(k) = self.keys.get_mut(x.key) else {
            return;
        };
        if x.status.is_some() {
            self.latency.record(o.latency_ms);
        }
        k.count(x, &o);
        k.count_second(x, &o);
        if x.admitted() || x.throttled() {
            k.trace(x, wall0);
        }
    }

    /// The run's own account of one record: answers, and the generator's sends.
    fn count_run(&mut self, x: &Record, o: &Observed) {
        if let Some(st) = x.status {
            self.answered += 1;
            self.answered_404 += u64::from(st == 404);
            let clean = clean_refusal(st, x.code.is_some(), &REJECTIONS);
            self.rejected_cleanly += u64::from(clean);
        }
        if x.retry {
            return;
        }
        self.primary += 1;
        self.sent += u64::from(x.sent > 0.0 || x.status.is_some());
        self.late += u64::from(o.late);
        // Taken after it was due: every user was busy (half the lateness allowed).
        let held = o.late && x.claimed - x.due > self.lateness.late / 2.0;
        self.late_at_ceiling += u64::from(held);
        self.lagged += u64::from(!held && x.sent - x.due > self.lateness.lag);
        self.local_refusals += u64::from(o.refused_here);
        self.max_late_ms = self.max_late_ms.max((x.sent - x.due) * 1000.0);
        self.sends.add(x.sent);
    }

    /// The figures, once every answer is in. `users` (the in-flight ceiling), `peak_in_flight`
    /// and `goose_requests`: the engine's and goose's account.
    pub fn finish(self, users: usize, peak_in_flight: usize, goose_requests: u64) -> Measurements {
        let generator = self.generator(users, peak_in_flight, goose_requests);
        // Seconds of the run: through the last planned or sent (non-retry) request.
        let last_due = self.schedule.last_due.unwrap_or(0.0);
        let seconds = (last_due.max(self.sends.last.unwrap_or(0.0))).floor() as usize + 1;
        let mut out = Measurements {
            answered: self.answered,
            answered_404: self.answered_404,
            rejected_cleanly: self.rejected_cleanly,
            generator,
            latency_ms: self.latency.percentiles(),
            latency_histogram: self.latency.serialize().unwrap_or_default(),
            keys: Vec::new(),
            seconds: Vec::new(),
            trace: Vec::new(),
        };
        for (key, k) in self.keys.into_iter().enumerate() {
            let offered = self
                .schedule
                .per_second
                .get(key)
                .map_or(&[][..], |v| &v[..]);
            let (secs, trace, figures) = k.finish(key, seconds, offered);
            out.seconds.extend(secs);
            out.trace.extend(trace);
            out.keys.push(figures);
        }
        out
    }

    /// The generator's account of the run: what it was asked, what it did, and whether it held.
    fn generator(&self, users: usize, peak_in_flight: usize, goose_requests: u64) -> Generator {
        let scheduled = self.schedule.len;
        let unsent = scheduled.saturating_sub(self.primary);
        let rate_of = |count: u64, secs: f64| if secs > 0.0 { count as f64 / secs } else { 0.0 };
        let dues = Span {
            first: self.schedule.first_due,
            last: self.schedule.last_due,
        };
        let generator = Generator {
            scheduled,
            sent: self.sent,
            late: self.late,
            unsent,
            scheduled_rate: rate_of(scheduled.saturating_sub(1), dues.secs()),
            achieved_rate: rate_of(self.sent.saturating_sub(1), self.sends.secs()),
            peak_rate: self.schedule.peak_rate,
            max_late_ms: self.max_late_ms,
            late_ms: self.lateness.late * 1000.0,
            lag_ms: self.lateness.lag * 1000.0,
            users,
            peak_in_flight,
            late_at_ceiling: self.late_at_ceiling,
            lagged: self.lagged,
            local_refusals: self.local_refusals,
            goose_requests,
            saturated: (self.late_at_ceiling + self.lagged + unsent + self.local_refusals) as f64
                > (SATURATION_SHARE * scheduled as f64).max(1.0),
            limit_met: None,
        };
        Generator {
            limit_met: generator.limit_met(),
            ..generator
        }
    }
}

/// What `observe` works out once for a record and every count reads.
struct Observed {
    /// Sent later than the lateness allowed.
    late: bool,
    refused_here: bool,
    /// Send to the answer's headers.
    latency_ms: f64,
}

impl KeyMeasure {
    /// The key's figures: the record by outcome, and its send.
    fn count(&mut self, x: &Record, o: &Observed) {
        let f = &mut self.figures;
        f.records += 1;
        f.sends.add(x.sent);
        match x.status {
            None if o.refused_here => f.refused_locally += 1,
            None => f.errors += 1,
            Some(_) if x.admitted() => f.admitted += 1,
            Some(429) => {
                f.throttled += 1;
                f.throttled_sends.add(x.sent);
            }
            Some(st) => *f.other.entry(st).or_insert(0) += 1,
        }
        if !x.retry {
            f.sent += 1;
            f.late += u64::from(o.late);
            if o.late {
                let i = x.due.max(0.0) as usize;
                if self.late_by_due.len() <= i {
                    self.late_by_due.resize(i + 1, 0);
                }
                self.late_by_due[i] += 1;
            }
        }
        if x.status.is_some() {
            self.latencies.record(o.latency_ms);
        }
    }

    /// The bucket of the second the record was sent in.
    fn count_second(&mut self, x: &Record, o: &Observed) {
        let i = bucket(
            &mut self.secs,
            &mut self.lat,
            x.key,
            x.sent.max(0.0) as usize,
        );
        let b = &mut self.secs[i];
        match x.status {
            // Never reached the target: the chart's late/unsent line, once (a late send is
            // there already, by its due second).
            None if o.refused_here => b.failed_to_send += u64::from(x.retry || !o.late),
            None => b.errors += 1,
            Some(_) if x.admitted() => b.admitted += 1,
            Some(429) => b.throttled += 1,
            Some(_) => b.other += 1,
        }
        b.sent += 1;
        if x.status.is_some() {
            self.lat[i].record(o.latency_ms);
        }
    }

    /// One of every `stride` answers with rate-limit headers, into the trace.
    fn trace(&mut self, x: &Record, wall0: f64) {
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

    /// The key's seconds (`seconds` of them, each with what was `offered` in it), its trace in
    /// send order, and its figures.
    fn finish(
        mut self,
        key: usize,
        seconds: usize,
        offered: &[u64],
    ) -> (Vec<Second>, Vec<TracePoint>, KeyFigures) {
        self.fold_past(key, seconds);
        for (b, n) in self.secs.iter_mut().zip(offered) {
            b.offered += n;
        }
        for (i, n) in self.late_by_due.iter().enumerate() {
            if let Some(b) = self.secs.get_mut(i) {
                b.failed_to_send += n;
            }
        }
        self.figures.unsent = self.figures.scheduled.saturating_sub(self.figures.sent);
        self.count_unsent(offered);
        for (b, l) in self.secs.iter_mut().zip(&self.lat) {
            let p = l.percentiles();
            (b.p50_ms, b.p99_ms) = (p.p50, p.p99);
        }
        self.figures.latency_ms = self.latencies.percentiles();
        // Trace of headers, in send order (at most TRACE_POINTS per key).
        self.trace.sort_by(|a, b| a.0.total_cmp(&b.0));
        let step = (self.trace.len() / TRACE_POINTS).max(1);
        let trace = self.trace.into_iter().step_by(step).map(|(_, p)| p);
        (self.secs, trace.collect(), self.figures)
    }

    /// Exactly `seconds` buckets: records sent past the last second (retries) count in the
    /// last one.
    fn fold_past(&mut self, key: usize, seconds: usize) {
        bucket(&mut self.secs, &mut self.lat, key, seconds - 1);
        while self.secs.len() > seconds {
            let (b, l) = (self.secs.pop(), self.lat.pop());
            let (Some(b), Some(l)) = (b, l) else { break };
            let last = &mut self.secs[seconds - 1];
            last.errors += b.errors;
            last.admitted += b.admitted;
            last.throttled += b.throttled;
            last.other += b.other;
            last.sent += b.sent;
            self.lat[seconds - 1].add(&l);
        }
    }

    /// Slots never sent, as late or unsent in the second they were offered in. Slots are
    /// taken in order: the unsent ones are the last of the key's schedule.
    fn count_unsent(&mut self, offered: &[u64]) {
        let mut left = self.figures.unsent;
        for (i, n) in offered.iter().enumerate().rev() {
            if left == 0 {
                break;
            }
            let here = left.min(*n);
            if let Some(b) = self.secs.get_mut(i) {
                b.failed_to_send += here;
            }
            left -= here;
        }
    }
}
