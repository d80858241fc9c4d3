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
//!
//! A fleet's keys are summaries, not series: per key its figures, a small latency histogram and
//! the second under way; per second, the fleet's tally and how many keys were admitted how
//! often (`FleetSecond`), which is what its report draws. So a fleet costs per second of the
//! run, plus a fixed cost per key that does not grow with the run (about 13 KB in all measured,
//! rules included: `benches/load-memory.sh`). Only a scenario of a few keys keeps seconds,
//! lateness by due second and a header trace per key.

use std::collections::BTreeMap;

use super::histogram::Latencies;
use super::lateness::{Lateness, SATURATION_SHARE};
use super::result::{FleetSecond, Generator, KeyStats, Percentiles, Second, TracePoint};
use super::seconds::{Drawn, Observed, fleet_second, fold_fleet_past, spread_unsent, tally};
use crate::record::Record;
use crate::schedule::Summary;
use linkcert_http::{FailureKind, REJECTIONS, clean_refusal};

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
    /// A fleet's seconds, its keys together; None for a scenario of a few keys.
    fleet: Option<Vec<FleetSecond>>,
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

struct KeyMeasure {
    figures: KeyFigures,
    latencies: Latencies,
    /// What the report draws of a key of a few (none for a fleet's keys).
    drawn: Option<Box<Drawn>>,
    /// A fleet's key, in send order: the second under way and the key's admissions in it.
    open: (usize, usize),
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
    /// Forbidden requests refused cleanly (`Record::refused`): expected, not `other`.
    pub refused: u64,
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
        b: &linkcert_rate::windows::Bounds,
        rolling_max: u64,
        rate: f64,
        limit: u64,
    ) -> KeyStats {
        KeyStats {
            limit,
            label: label.to_string(),
            target_key,
            scheduled: self.scheduled,
            sent: self.sent,
            admitted: self.admitted,
            throttled: self.throttled,
            refused: self.refused,
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
    pub fleet_seconds: Vec<FleetSecond>,
    pub trace: Vec<TracePoint>,
}

impl Measure {
    /// `schedule`: the run's schedule, summed up; `keys`: how many keys the scenario loads;
    /// `wall0`: UTC epoch seconds of t = 0; `lateness`: how late a send may be
    /// (`super::lateness`).
    /// `fleet`: a fleet's keys are summed up (`FleetSecond`), not kept second by second.
    pub fn new(
        schedule: Summary,
        keys: usize,
        fleet: bool,
        wall0: f64,
        lateness: Lateness,
    ) -> Measure {
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
            keys: (0..keys).map(|_| KeyMeasure::new(fleet)).collect(),
            fleet: fleet.then(Vec::new),
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
        match (&mut k.drawn, &mut self.fleet) {
            (Some(d), _) => {
                d.count_second(x, &o);
                if x.admitted() || x.throttled() {
                    d.trace(x, wall0);
                }
            }
            (None, Some(fleet)) => k.count_fleet_second(fleet, x, &o),
            (None, None) => {}
        }
    }

    /// The run's own account of one record: answers, and the generator's sends.
    fn count_run(&mut self, x: &Record, o: &Observed) {
        if let Some(st) = x.status {
            self.answered += 1;
            self.answered_404 += u64::from(st == 404);
            // A forbidden request's refusal is expected (`Record::refused`), not the target's
            // choice for a value the scenario names.
            let clean = !x.forbidden && clean_refusal(st, x.code.is_some(), &REJECTIONS);
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
            fleet_seconds: Vec::new(),
            trace: Vec::new(),
        };
        let mut fleet = self.fleet;
        for (key, k) in self.keys.into_iter().enumerate() {
            let offered = self
                .schedule
                .per_second
                .get(key)
                .map_or(&[][..], |v| &v[..]);
            let (secs, trace, figures) = k.finish(key, seconds, offered, fleet.as_mut());
            out.seconds.extend(secs);
            out.trace.extend(trace);
            out.keys.push(figures);
        }
        if let Some(mut v) = fleet {
            fold_fleet_past(&mut v, seconds);
            out.fleet_seconds = v;
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

impl KeyMeasure {
    fn new(fleet: bool) -> KeyMeasure {
        KeyMeasure {
            figures: KeyFigures::default(),
            // A fleet's key: percentiles within about 6%, in a few KiB.
            latencies: if fleet {
                Latencies::small()
            } else {
                Latencies::new()
            },
            drawn: (!fleet).then(|| Box::new(Drawn::new())),
            open: (0, 0),
        }
    }

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
            Some(_) if x.refused() => f.refused += 1,
            Some(st) => *f.other.entry(st).or_insert(0) += 1,
        }
        if !x.retry {
            f.sent += 1;
            f.late += u64::from(o.late);
        }
        if x.status.is_some() {
            self.latencies.record(o.latency_ms);
        }
    }

    /// A fleet's key: the record in the fleet's second it was sent in (lateness in the one it
    /// was due in), and the key's admissions in that second once it moves on (records come
    /// in send order).
    fn count_fleet_second(&mut self, fleet: &mut Vec<FleetSecond>, x: &Record, o: &Observed) {
        let i = x.sent.max(0.0) as usize;
        tally(&mut fleet_second(fleet, i).n, x, o);
        if !x.retry && o.late {
            fleet_second(fleet, x.due.max(0.0) as usize)
                .n
                .failed_to_send += 1;
        }
        if x.admitted() {
            if self.open.0 != i {
                self.close_second(fleet);
                self.open.0 = i;
            }
            self.open.1 += 1;
        }
    }

    /// The second under way is over for this key: its admissions, into the fleet's count.
    fn close_second(&mut self, fleet: &mut Vec<FleetSecond>) {
        let (i, count) = std::mem::take(&mut self.open);
        // A key with none admitted yet closes second 0, which every run has.
        fleet_second(fleet, i).admitting(count);
    }

    /// The key's seconds (`seconds` of them, each with what was `offered` in it), its trace in
    /// send order, and its figures; a fleet's key puts its seconds into `fleet`.
    fn finish(
        mut self,
        key: usize,
        seconds: usize,
        offered: &[u64],
        fleet: Option<&mut Vec<FleetSecond>>,
    ) -> (Vec<Second>, Vec<TracePoint>, KeyFigures) {
        self.figures.unsent = self.figures.scheduled.saturating_sub(self.figures.sent);
        self.figures.latency_ms = self.latencies.percentiles();
        let unsent = self.figures.unsent;
        match (self.drawn.take(), fleet) {
            (Some(d), _) => {
                let (secs, trace) = d.finish(key, seconds, offered, unsent);
                (secs, trace, self.figures)
            }
            (None, Some(fleet)) => {
                self.close_second(fleet);
                for (i, n) in offered.iter().enumerate() {
                    fleet_second(fleet, i).n.offered += n;
                }
                spread_unsent(offered, unsent, |i, n| {
                    fleet_second(fleet, i).n.failed_to_send += n;
                });
                (Vec::new(), Vec::new(), self.figures)
            }
            (None, None) => (Vec::new(), Vec::new(), self.figures),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Measure;
    use crate::judge::tests::{rec, slots};

    /// A fleet's keys are summed up per second: the fleet's tally, and how many keys were admitted
    /// how often in each second (what its bands are drawn from), no second or trace per key.
    #[test]
    fn a_fleets_seconds_count_keys_not_series() {
        // Key 0: two admissions in second 0, one in second 1; key 1: one in second 0 and a 429;
        // key 2: nothing admitted (a 429 in second 1). In send order, as the judge feeds them.
        let at = |key: usize, t: f64, st: u16| crate::record::Record {
            key,
            ..rec(t, Some(st), None)
        };
        let records = [
            at(0, 0.1, 200),
            at(1, 0.2, 200),
            at(0, 0.3, 200),
            at(1, 0.6, 429),
            at(0, 1.1, 200),
            at(2, 1.2, 429),
        ];
        let mut sl = slots(&[0.1, 0.3, 1.1]);
        sl.extend([0.2, 0.6].map(|d| crate::schedule::Slot {
            due: std::time::Duration::from_secs_f64(d),
            key: 1,
            op: 0,
        }));
        sl.push(crate::schedule::Slot {
            due: std::time::Duration::from_secs_f64(1.2),
            key: 2,
            op: 0,
        });
        let mut m = Measure::new(
            crate::schedule::Summary::of(sl.iter().copied()),
            3,
            true,
            0.0,
            crate::judge::lateness(std::time::Duration::from_secs(1)),
        );
        for x in &records {
            m.observe(x);
        }
        let m = m.finish(3, 1, 6);
        assert!(m.seconds.is_empty() && m.trace.is_empty());
        let f = &m.fleet_seconds;
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].n.sent, f[0].n.admitted, f[0].n.throttled), (4, 3, 1));
        assert_eq!((f[1].n.sent, f[1].n.admitted, f[1].n.throttled), (2, 1, 1));
        assert_eq!((f[0].n.offered, f[1].n.offered), (4, 2));
        // Second 0: key 1 admitted once, key 0 twice; second 1: key 0 once.
        assert_eq!(f[0].admitting, [1, 1]);
        assert_eq!(f[1].admitting, [1]);
        // Nothing late, nothing unsent: no second counts a failure to send.
        assert!(f.iter().all(|s| s.n.failed_to_send == 0));
        assert_eq!(m.keys[0].admitted, 3);
    }

    /// A fleet's send that went out late counts, as it does for a key of a few, in the second
    /// it was due in (the chart's late/unsent line), and in the second it was sent in; a slot
    /// never sent counts in the second it was offered in.
    #[test]
    fn a_fleets_late_send_counts_where_it_was_due() {
        let mut late = rec(0.5, Some(200), None);
        (late.sent, late.recv) = (1.5, 1.501);
        // A second slot, due at 2.2 s, is never sent: unsent, where it was due.
        let mut m = Measure::new(
            crate::schedule::Summary::of(slots(&[0.5, 2.2])),
            1,
            true,
            0.0,
            crate::judge::lateness(std::time::Duration::from_secs(1)),
        );
        m.observe(&late);
        let m = m.finish(1, 1, 1);
        let f = &m.fleet_seconds;
        assert_eq!((f[0].n.failed_to_send, f[0].n.sent), (1, 0));
        assert_eq!(
            (f[1].n.failed_to_send, f[1].n.sent, f[1].n.admitted),
            (0, 1, 1)
        );
        assert_eq!(f[1].admitting, [1]);
        assert_eq!(
            (f[2].n.offered, f[2].n.failed_to_send, f[2].n.sent),
            (1, 1, 0)
        );
        assert_eq!(m.keys[0].unsent, 1);
    }
}
