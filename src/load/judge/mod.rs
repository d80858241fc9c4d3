//! Verdicts on one scenario's run: the generator first (a run it could not hold is "client
//! saturated", never judged as throttling), then the limiter as seen from outside.
//!
//! Rules and their slack (N: the plan's limit per window W; k: windows the key was loaded):
//! - load.generator: more than 2% of the schedule sent late (over 20 ms) or never sent:
//!   client saturated, reported as such. Verdicts follow from what was actually sent, so
//!   every rule is still judged on the real send times.
//! - load.admitted: under sustained overload, admitted (2xx) lies within
//!   [N(k-1), N(ceil(k)+1)] widened by max(2, 2% of N) per window boundary (ceil(k)+1 of
//!   them), k the windows spanned by the real sends: a span of k windows touches at most
//!   ceil(k)+1 fixed windows, so a fixed window straddled by a short burst is not failed;
//!   more: not enforced. Fewer: under-served, judged
//!   only where every whole window from the first send really carried N or more requests (a
//!   client that sent too little can make a limiter look stingy). Other shapes: the upper
//!   bound only.
//! - load.rolling-window: the most admissions provably inside one rolling window (server
//!   instants bracketed by send and receive times): at most N passes; up to 2N plus the slack
//!   is fixed-window semantics (informational: the spec names no algorithm); more fails.
//! - load.envelope: every 429 is the error envelope with the spec's code for 429.
//! - load.retry-after: every 429 has Retry-After (delay-seconds; an HTTP-date is non-strict),
//!   no longer than a window plus 2 s (longer: milliseconds?) nor than the same answer's Reset
//!   plus 2 s. Shared with `check` (`crate::rate_headers`), as are load.reset and
//!   load.remaining.
//! - load.headers: every 2xx and 429 has X-RateLimit-Limit, -Remaining and -Reset, each a
//!   non-negative integer (`rate_headers::header_fault`, as `check` judges them).
//! - load.remaining: an admitted answer says Remaining 0 before the first 429 arrives.
//! - load.reset: Reset is epoch seconds (not milliseconds, not seconds-until), between now - 2 s
//!   and now + W + 2 s, and never moves back by more than 1 s (rounding) between exchanges that
//!   did not overlap.
//! - load.isolation (two-keys): the key under its limit gets no 429.
//! - load.retry-honesty (retry-after): the first throttled request, retried exactly
//!   Retry-After later, is admitted (a burst never throttled, as across a fixed window's
//!   boundary, is noted, not judged).
//! - load.answers: answers other than 2xx/429, or none at all, fail (404 from an absent
//!   linkcert stand-in endpoint skips the scenario instead).
//! - load.behaviour: the limiter named as observed (informational), with the evidence.
//!
//! Each rule lives in the file named after it (`admitted.rs` holds load.admitted and
//! load.rolling-window, `answers.rs` load.answers and load.envelope, `headers.rs` the header
//! rules); `result.rs` is the data a judged scenario is; this file runs them per key.

use std::collections::BTreeMap;

use super::engine::{Record, Run};
use super::scenario::{Resolved, Shape};
use crate::rate_headers::{self, Answer};
use crate::verdict::Verdict;

/// A request sent later than this after its planned time is late.
pub const LATE_SECS: f64 = 0.020;
/// Late plus unsent above this share of the schedule: client saturated.
pub const SATURATION_SHARE: f64 = 0.02;

pub use result::*;

mod admitted;
mod answers;
mod behaviour;
mod headers;
mod isolation;
mod result;
mod retry_honesty;

struct Judge {
    findings: Vec<Finding>,
}

/// One key's part of a run, as each rule reads it.
#[derive(Clone, Copy)]
struct KeyRun<'a> {
    /// The key's label (plan#n).
    label: Option<&'a str>,
    /// Its records in the order they were noted; the admitted (2xx) and throttled (429) ones.
    recs: &'a [&'a Record],
    adm: &'a [&'a Record],
    thr: &'a [&'a Record],
    /// UTC epoch seconds of the run's t = 0.
    wall0: f64,
    window: std::time::Duration,
    /// The plan's limit per window.
    n: u64,
}

impl Judge {
    fn add(
        &mut self,
        check: &str,
        verdict: Verdict,
        key: Option<&str>,
        msg: String,
        exp: String,
        act: String,
    ) {
        self.findings.push(Finding {
            check: check.into(),
            verdict,
            key: key.map(str::to_string),
            message: msg,
            expected: exp,
            actual: act,
        });
    }
    /// A verdict of a rule shared with `check` (`crate::rate_headers`).
    fn shared(&mut self, check: &str, key: Option<&str>, jd: &rate_headers::Judged) {
        let msg = match jd.verdict {
            Verdict::Pass => format!("{} ({} answers)", jd.expected, jd.judged),
            _ => format!("expected {}, got {}", jd.expected, jd.actual),
        };
        self.add(
            check,
            jd.verdict,
            key,
            msg,
            jd.expected.clone(),
            jd.actual.clone(),
        );
    }

    fn pass(&mut self, check: &str, key: Option<&str>, msg: String) {
        self.add(check, Verdict::Pass, key, msg, String::new(), String::new());
    }
    fn fail(&mut self, check: &str, key: Option<&str>, msg: String, exp: String, act: String) {
        self.add(check, Verdict::Fail, key, msg, exp, act);
    }
}

/// Judge one run. `labels`: per scenario key, its label and position in the target's keys.
pub fn judge(r: &Resolved, run: &Run, labels: &[(String, usize)]) -> ScenarioResult {
    let s = &r.scenario;
    let n = r.limit;
    let w = r.window.as_secs_f64();
    let mut j = Judge {
        findings: Vec::new(),
    };
    let mut result = ScenarioResult {
        limit: n,
        window_secs: w,
        goose_reports: run.goose_reports.clone(),
        ..ScenarioResult::of(s, &r.class)
    };

    // Absent stand-in endpoints: noted, not failed.
    let answered: Vec<&Record> = run.records.iter().filter(|x| x.status.is_some()).collect();
    if r.extension_only && !answered.is_empty() && answered.iter().all(|x| x.status == Some(404)) {
        result.verdict = ScenarioVerdict::Skipped;
        result.skipped = Some(format!(
            "the target has no {} endpoints (404): noted, not judged",
            r.class
        ));
        return result;
    }

    // The generator.
    let scheduled = run.slots.len() as u64;
    let primary: Vec<&Record> = run.records.iter().filter(|x| !x.retry).collect();
    let sent = primary
        .iter()
        .filter(|x| x.sent > 0.0 || x.status.is_some())
        .count() as u64;
    let late = primary
        .iter()
        .filter(|x| x.sent - x.due > LATE_SECS)
        .count() as u64;
    let unsent = scheduled.saturating_sub(primary.len() as u64);
    let span = |v: &[f64]| match (v.first(), v.last()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => 0.0,
    };
    let dues: Vec<f64> = run.slots.iter().map(|x| x.due.as_secs_f64()).collect();
    let sends: Vec<f64> = primary.iter().map(|x| x.sent).collect();
    let rate_of = |count: u64, secs: f64| if secs > 0.0 { count as f64 / secs } else { 0.0 };
    let gen_ = Generator {
        scheduled,
        sent,
        late,
        unsent,
        scheduled_rate: rate_of(scheduled.saturating_sub(1), span(&dues)),
        achieved_rate: rate_of(sent.saturating_sub(1), span(&sends)),
        peak_rate: super::schedule::peak_rate(&run.slots),
        max_late_ms: primary
            .iter()
            .map(|x| (x.sent - x.due) * 1000.0)
            .fold(0.0, f64::max),
        users: run.users,
        goose_requests: run.goose_requests,
        saturated: (late + unsent) as f64 > (SATURATION_SHARE * scheduled as f64).max(1.0),
    };
    let saturated = gen_.saturated;
    if saturated {
        j.add(
            "load.generator",
            Verdict::Fail,
            None,
            "the generator could not hold the schedule: client saturated, throttling not judged"
                .into(),
            format!("at most 2% of {scheduled} late (>20 ms) or unsent"),
            format!(
                "{late} late, {unsent} unsent; {:.1}/s sent of {:.1}/s scheduled",
                gen_.achieved_rate, gen_.scheduled_rate
            ),
        );
    } else {
        j.pass(
            "load.generator",
            None,
            format!(
                "held the schedule: {late} late, {unsent} unsent of {scheduled}; {:.1}/s sent of {:.1}/s",
                gen_.achieved_rate, gen_.scheduled_rate
            ),
        );
    }
    result.generator = Some(gen_);

    // Per-second and per-key figures.
    let seconds = (dues
        .last()
        .copied()
        .unwrap_or(0.0)
        .max(sends.last().copied().unwrap_or(0.0)))
    .floor() as u64
        + 1;
    for (key, (label, target_key)) in labels.iter().enumerate() {
        let recs: Vec<&Record> = run.records.iter().filter(|x| x.key == key).collect();
        let mut secs: Vec<Second> = (0..seconds)
            .map(|t| Second {
                t,
                key,
                ..Second::default()
            })
            .collect();
        let mut lat: Vec<Vec<f64>> = vec![Vec::new(); seconds as usize];
        for sl in run.slots.iter().filter(|x| x.key == key) {
            if let Some(b) = secs.get_mut(sl.due.as_secs_f64() as usize) {
                b.offered += 1;
            }
        }
        for x in &recs {
            let i = (x.sent.max(0.0) as usize).min(seconds as usize - 1);
            let b = &mut secs[i];
            match x.status {
                None => b.errors += 1,
                Some(_) if x.admitted() => b.admitted += 1,
                Some(429) => b.throttled += 1,
                Some(_) => b.other += 1,
            }
            b.sent += 1;
            lat[i].push((x.recv - x.due) * 1000.0);
        }
        // Late or never sent, by the second it was offered in.
        let key_slots = run.slots.iter().filter(|x| x.key == key).count();
        let key_primary: Vec<&&Record> = recs.iter().filter(|x| !x.retry).collect();
        for x in &key_primary {
            if x.sent - x.due > LATE_SECS
                && let Some(b) = secs.get_mut(x.due as usize)
            {
                b.failed_to_send += 1;
            }
        }
        let key_unsent = key_slots.saturating_sub(key_primary.len());
        if key_unsent > 0 {
            // Slots are taken in order: the unsent ones are the last of the key's schedule.
            for sl in run
                .slots
                .iter()
                .filter(|x| x.key == key)
                .rev()
                .take(key_unsent)
            {
                if let Some(b) = secs.get_mut(sl.due.as_secs_f64() as usize) {
                    b.failed_to_send += 1;
                }
            }
        }
        for (b, l) in secs.iter_mut().zip(lat) {
            b.p99_ms = percentiles(l).p99;
        }
        result.seconds.extend(secs);

        let adm: Vec<&Record> = recs.iter().copied().filter(|x| x.admitted()).collect();
        let thr: Vec<&Record> = recs.iter().copied().filter(|x| x.throttled()).collect();
        let mut other = BTreeMap::new();
        for x in &recs {
            if let Some(st) = x.status
                && !x.admitted()
                && st != 429
            {
                *other.entry(st).or_insert(0u64) += 1;
            }
        }
        let errors = recs.iter().filter(|x| x.status.is_none()).count() as u64;
        let key_sends: Vec<f64> = recs.iter().map(|x| x.sent).collect();
        let k = span(&key_sends) / w;
        let boundaries = k.ceil() + 1.0;
        let slack = boundaries * (0.02 * n as f64).ceil().max(2.0);
        let overloaded = s.shape.sustained_overload() && key == 0 && s.rate > 1.0;
        // A span of k windows touches at most ceil(k) + 1 fixed windows, each good for N: the
        // most any limiter of N per window may admit (a sliding log or bucket admits less).
        let upper = n as f64 * (k.ceil() + 1.0) + slack;
        let lower = if overloaded {
            (n as f64 * (k - 1.0) - slack).max(0.0)
        } else {
            0.0
        };
        let rolling = admitted::rolling_max(&adm, w);
        // Whether the key really was overloaded, by what was sent (not by the schedule): every
        // whole window from the first send carried at least N requests. Then under-service
        // is judged even where the generator fell behind its schedule.
        let sent_overload = overloaded && admitted::overloaded_by_sends(&key_sends, n, w);
        let first_429 = thr.first().copied();
        let stats = KeyStats {
            label: label.clone(),
            target_key: *target_key,
            scheduled: key_slots as u64,
            sent: recs.iter().filter(|x| !x.retry).count() as u64,
            admitted: adm.len() as u64,
            throttled: thr.len() as u64,
            other: other.clone(),
            errors,
            late: key_primary
                .iter()
                .filter(|x| x.sent - x.due > LATE_SECS)
                .count() as u64,
            unsent: key_unsent as u64,
            latency_ms: percentiles(
                recs.iter()
                    .filter(|x| x.status.is_some())
                    .map(|x| (x.recv - x.due) * 1000.0)
                    .collect(),
            ),
            windows_loaded: k,
            rolling_max: rolling,
            admitted_bounds: [lower, upper],
            first_throttled_at: first_429.map(|x| x.sent),
        };
        let lbl = Some(label.as_str());

        // Trace of headers (at most 600 points per key).
        let answered: Vec<&&Record> = recs
            .iter()
            .filter(|x| x.admitted() || x.throttled())
            .collect();
        let step = (answered.len() / 600).max(1);
        for x in answered.iter().step_by(step) {
            result.trace.push(TracePoint {
                t: x.recv,
                key,
                status: x.status.unwrap_or(0),
                remaining: rate_headers::parse_count(x.remaining.as_deref()),
                reset_in: x
                    .quota_back(run.wall0)
                    .spec_reset()
                    .map(|v| v - (run.wall0 + x.recv)),
            });
        }

        let view = KeyRun {
            label: lbl,
            recs: &recs,
            adm: &adm,
            thr: &thr,
            wall0: run.wall0,
            window: r.window,
            n,
        };
        answers::judge(&mut j, &view, &other, errors);
        answers::envelope(&mut j, &view, &r.throttled_code);
        headers::judge(&mut j, &view);
        let bounds = admitted::Bounds {
            lower,
            upper,
            slack,
            k,
        };
        admitted::judge(&mut j, &view, &bounds, rolling, sent_overload);
        if key == 0 {
            let rate = s.rate * n as f64 / w;
            if let Some((limiter, text)) = behaviour::name(&recs, n, w, rolling, rate) {
                result.limiter = Some(limiter);
                result.behaviour = Some(text);
            }
            if let Some(b) = &result.behaviour {
                j.add(
                    "load.behaviour",
                    Verdict::Informational,
                    lbl,
                    b.clone(),
                    String::new(),
                    String::new(),
                );
            }
        }
        if s.shape == Shape::TwoKeys && key == 1 {
            isolation::judge(&mut j, &view);
        }
        if s.shape == Shape::RetryAfter && key == 0 {
            retry_honesty::judge(&mut j, &view);
        }
        result.keys.push(stats);
    }

    result.verdict = if j
        .findings
        .iter()
        .any(|f| f.verdict == Verdict::Fail && f.check != "load.generator")
    {
        ScenarioVerdict::Fail
    } else if saturated {
        ScenarioVerdict::ClientSaturated
    } else if j.findings.iter().any(|f| f.verdict == Verdict::NonStrict) {
        ScenarioVerdict::NonStrict
    } else if j
        .findings
        .iter()
        .any(|f| f.verdict == Verdict::Informational && f.check != "load.behaviour")
    {
        ScenarioVerdict::Informational
    } else {
        ScenarioVerdict::Pass
    };
    result.findings = j.findings;
    result
}

#[cfg(test)]
mod tests;
