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
//! - load.envelope: every 429 is the error envelope with code rate_limit_exceeded.
//! - load.retry-after: every 429 has Retry-After (delay-seconds or HTTP-date), no longer than
//!   a window plus 2 s (longer: milliseconds?).
//! - load.headers: every 2xx and 429 has X-RateLimit-Limit, -Remaining and -Reset.
//! - load.remaining: an admitted answer says Remaining 0 before the first 429 arrives.
//! - load.reset: Reset is epoch seconds (not milliseconds), between now - 2 s and now + W + 2 s,
//!   and never moves back by more than 1 s (rounding) for a key.
//! - load.isolation (two-keys): the key under its limit gets no 429.
//! - load.retry-honesty (retry-after): the first throttled request, retried exactly
//!   Retry-After later, is admitted (a burst never throttled, as across a fixed window's
//!   boundary, is noted, not judged).
//! - load.answers: answers other than 2xx/429, or none at all, fail (404 from an absent
//!   linkcert stand-in endpoint skips the scenario instead).
//! - load.behaviour: the limiter named as observed (informational), with the evidence.

use std::collections::BTreeMap;

use serde::Serialize;

use super::engine::{Record, Run};
use super::scenario::{Resolved, Shape};
use crate::check::model::Verdict;
use crate::rate_headers::{self, Answer};

/// A request sent later than this after its planned time is late.
pub const LATE_SECS: f64 = 0.020;
/// Late plus unsent above this share of the schedule: client saturated.
pub const SATURATION_SHARE: f64 = 0.02;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenarioVerdict {
    Pass,
    Skipped,
    Informational,
    NonStrict,
    ClientSaturated,
    Fail,
}

impl ScenarioVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioVerdict::Pass => "pass",
            ScenarioVerdict::Skipped => "skipped",
            ScenarioVerdict::Informational => "informational",
            ScenarioVerdict::NonStrict => "non-strict",
            ScenarioVerdict::ClientSaturated => "client-saturated",
            ScenarioVerdict::Fail => "fail",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub check: String,
    pub verdict: Verdict,
    /// The key's label (plan#n), when it is about one key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub message: String,
    pub expected: String,
    pub actual: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

fn percentiles(mut v: Vec<f64>) -> Percentiles {
    if v.is_empty() {
        return Percentiles::default();
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Percentiles {
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        max: v[v.len() - 1],
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct KeyStats {
    /// `plan#n`: the n-th key of the plan given (keys are never shown).
    pub label: String,
    /// Position of the key in the target's key list.
    pub target_key: usize,
    pub scheduled: u64,
    pub sent: u64,
    pub admitted: u64,
    pub throttled: u64,
    /// Answers other than 2xx and 429, by status.
    pub other: BTreeMap<u16, u64>,
    /// No answer (transport errors, timeouts).
    pub errors: u64,
    pub late: u64,
    pub unsent: u64,
    /// From the planned send time to the answer's headers (no coordinated omission), ms.
    pub latency_ms: Percentiles,
    /// Windows the key was loaded (first to last send).
    pub windows_loaded: f64,
    /// Most admissions provably within one rolling window.
    pub rolling_max: u64,
    /// [low, high] admitted must lie in (sustained overload), or [0, high].
    pub admitted_bounds: [f64; 2],
    /// Seconds from the start to the first 429 sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_throttled_at: Option<f64>,
}

/// One second of one key.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Second {
    pub t: u64,
    pub key: usize,
    pub offered: u64,
    pub sent: u64,
    pub admitted: u64,
    pub throttled: u64,
    pub other: u64,
    pub errors: u64,
    /// Offered in this second but sent late or never.
    pub failed_to_send: u64,
    pub p99_ms: f64,
}

/// One answer's rate-limit headers, for the trace chart.
#[derive(Clone, Debug, Serialize)]
pub struct TracePoint {
    pub t: f64,
    pub key: usize,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining: Option<u64>,
    /// Seconds from the answer to X-RateLimit-Reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_in: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Generator {
    pub scheduled: u64,
    pub sent: u64,
    pub late: u64,
    pub unsent: u64,
    /// Requests per second the schedule asked for, and what was sent (first to last send).
    pub scheduled_rate: f64,
    pub achieved_rate: f64,
    pub peak_rate: f64,
    /// Worst lateness of a send, ms.
    pub max_late_ms: f64,
    pub users: usize,
    pub goose_requests: u64,
    pub saturated: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    pub description: String,
    pub plan: String,
    pub class: String,
    pub shape: String,
    pub limit: u64,
    pub window_secs: f64,
    pub rate_multiple: f64,
    pub windows: f64,
    pub verdict: ScenarioVerdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<Generator>,
    pub keys: Vec<KeyStats>,
    pub seconds: Vec<Second>,
    pub trace: Vec<TracePoint>,
    pub findings: Vec<Finding>,
    pub goose_reports: Vec<String>,
}

impl ScenarioResult {
    /// A scenario that could not run at this target.
    pub fn skipped(r: &super::scenario::Scenario, class: &str, why: String) -> ScenarioResult {
        ScenarioResult {
            name: r.name.clone(),
            description: r.description.clone(),
            plan: r.plan.clone(),
            class: class.to_string(),
            shape: r.shape.as_str().into(),
            limit: 0,
            window_secs: 0.0,
            rate_multiple: r.rate,
            windows: r.windows,
            verdict: ScenarioVerdict::Skipped,
            skipped: Some(why),
            behaviour: None,
            generator: None,
            keys: Vec::new(),
            seconds: Vec::new(),
            trace: Vec::new(),
            findings: Vec::new(),
            goose_reports: Vec::new(),
        }
    }
}

struct Judge {
    findings: Vec<Finding>,
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

fn parse_u64(v: &Option<String>) -> Option<u64> {
    v.as_deref()?.trim().parse().ok()
}

/// Most admissions provably within one rolling window: for each admission i, those sent
/// after i's answer came and answered before i was sent plus W lie, at the server, within
/// [s_i, s_i + W]. `adm` is sorted by send time.
/// Every whole window of `w` seconds, counted from the first send, holds at least `n` sends.
fn overloaded_by_sends(sends: &[f64], n: u64, w: f64) -> bool {
    let (Some(first), Some(last)) = (
        sends.iter().copied().reduce(f64::min),
        sends.iter().copied().reduce(f64::max),
    ) else {
        return false;
    };
    let whole = ((last - first) / w).floor() as usize;
    if whole == 0 || w <= 0.0 {
        return false;
    }
    let mut bins = vec![0u64; whole];
    for t in sends {
        if let Some(b) = bins.get_mut(((t - first) / w) as usize) {
            *b += 1;
        }
    }
    bins.iter().all(|c| *c >= n)
}

fn rolling_max(adm: &[&Record], w: f64) -> u64 {
    let mut best = 0u64;
    for (i, a) in adm.iter().enumerate() {
        let lo = adm.partition_point(|r| r.sent < a.recv);
        let mut count = 1u64;
        for (j, b) in adm.iter().enumerate().skip(lo) {
            if b.sent > a.sent + w {
                break;
            }
            if j != i && b.recv <= a.sent + w {
                count += 1;
            }
        }
        best = best.max(count);
    }
    best
}

/// Name the limiter from how capacity comes back after the first 429.
fn behaviour(recs: &[&Record], n: u64, w: f64, rolling: u64, rate: f64) -> Option<String> {
    let first = recs.iter().position(|r| r.throttled())?;
    let after = &recs[first..];
    let readmitted: Vec<&&Record> = after.iter().filter(|r| r.admitted()).collect();
    if readmitted.is_empty() {
        return Some(format!(
            "capacity did not come back within the run (first 429 at {:.2} s)",
            recs[first].sent
        ));
    }
    // Runs of consecutive admissions after a 429.
    let mut runs = Vec::new();
    let mut cur = 0usize;
    for r in after {
        if r.admitted() {
            cur += 1;
        } else if cur > 0 {
            runs.push(cur);
            cur = 0;
        }
    }
    if cur > 0 {
        runs.push(cur);
    }
    runs.sort_unstable();
    let median = runs.get(runs.len() / 2).copied().unwrap_or(0);
    let admitted: Vec<f64> = recs
        .iter()
        .filter(|r| r.admitted())
        .map(|r| r.sent)
        .collect();
    let tol = 0.03 * w + 2.0 / rate.max(1e-9);
    let echoed = readmitted
        .iter()
        .filter(|r| {
            let t = r.sent - w;
            let i = admitted.partition_point(|x| *x < t - tol);
            admitted.get(i).is_some_and(|x| *x <= t + tol)
        })
        .count();
    let echo = echoed as f64 / readmitted.len() as f64;
    let ratio = rolling as f64 / n as f64;
    let long_runs = median as f64 >= (n as f64 / 4.0).max(3.0);
    // How X-RateLimit-Reset moves: a fixed window holds it and jumps by W; a sliding log
    // moves it with its oldest admission. Whole seconds only tell them apart for W >= 3 s.
    let mut resets: Vec<(f64, u64)> = recs
        .iter()
        .filter_map(|r| Some((r.recv, parse_u64(&r.reset)?)))
        .collect();
    resets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut steps: Vec<u64> = resets
        .windows(2)
        .filter(|p| p[1].1 > p[0].1)
        .map(|p| p[1].1 - p[0].1)
        .collect();
    steps.sort_unstable();
    let reset_step = (w >= 3.0 && steps.len() >= 3).then(|| steps[steps.len() / 2]);
    let name = if ratio > 1.05 && long_runs {
        "fixed window"
    } else if ratio > 1.05 {
        "token bucket"
    } else if let Some(step) = reset_step {
        if step as f64 >= 0.8 * w {
            "fixed window"
        } else {
            "sliding log"
        }
    } else if echo >= 0.8 {
        "sliding log"
    } else if long_runs {
        "fixed window"
    } else {
        "sliding counter"
    };
    Some(format!(
        "{name}: after the first 429 ({:.2} s) capacity came back in {} run(s) of admissions \
         (median {median}); {:.0}% of them echo an admission one window earlier; at most \
         {rolling} admitted in a rolling window (limit {n}){}",
        recs[first].sent,
        runs.len(),
        echo * 100.0,
        reset_step.map_or(String::new(), |s| format!(
            "; X-RateLimit-Reset moves in steps of {s} s (median)"
        ))
    ))
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
        name: s.name.clone(),
        description: s.description.clone(),
        plan: s.plan.clone(),
        class: r.class.clone(),
        shape: s.shape.as_str().into(),
        limit: n,
        window_secs: w,
        rate_multiple: s.rate,
        windows: s.windows,
        verdict: ScenarioVerdict::Pass,
        skipped: None,
        behaviour: None,
        generator: None,
        keys: Vec::new(),
        seconds: Vec::new(),
        trace: Vec::new(),
        findings: Vec::new(),
        goose_reports: run.goose_reports.clone(),
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
        let rolling = rolling_max(&adm, w);
        // Whether the key really was overloaded, by what was sent (not by the schedule): every
        // whole window from the first send carried at least N requests. Then under-service
        // is judged even where the generator fell behind its schedule.
        let sent_overload = overloaded && overloaded_by_sends(&key_sends, n, w);
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
                remaining: parse_u64(&x.remaining),
                reset_in: match x.reset.as_deref().map(rate_headers::reset_unit) {
                    Some(rate_headers::ResetUnit::EpochSeconds(v)) => {
                        Some(v as f64 - (run.wall0 + x.recv))
                    }
                    _ => None,
                },
            });
        }

        // Answers other than 2xx/429, and no answers: the target failing under load.
        if errors > 0 || !other.is_empty() {
            let first_err = recs
                .iter()
                .find_map(|x| x.error.clone())
                .unwrap_or_default();
            j.fail(
                "load.answers",
                lbl,
                "answers other than 2xx or 429 (or none) under load".into(),
                "2xx or 429".into(),
                format!("{other:?} by status, {errors} without an answer {first_err}"),
            );
        }

        // Format rules: judged even when the generator fell short.
        let bad_envelope = thr
            .iter()
            .filter(|x| x.code.as_deref() != Some("rate_limit_exceeded"))
            .count();
        if bad_envelope > 0 {
            let example = thr
                .iter()
                .find(|x| x.code.as_deref() != Some("rate_limit_exceeded"))
                .and_then(|x| x.code.clone());
            j.fail(
                "load.envelope",
                lbl,
                format!(
                    "{bad_envelope} of {} 429s are not the envelope with code rate_limit_exceeded",
                    thr.len()
                ),
                "{\"error\":{\"code\":\"rate_limit_exceeded\",...}}".into(),
                format!("code {example:?}"),
            );
        } else if !thr.is_empty() {
            j.pass(
                "load.envelope",
                lbl,
                format!(
                    "{} 429s, each rate_limit_exceeded in the envelope",
                    thr.len()
                ),
            );
        }
        // What the headers mean: the rules `check` judges with the same functions.
        let answers: Vec<Answer> = recs
            .iter()
            .filter_map(|x| {
                Some(Answer {
                    sent: run.wall0 + x.sent,
                    recv: run.wall0 + x.recv,
                    status: x.status?,
                    remaining: x.remaining.as_deref(),
                    reset: x.reset.as_deref(),
                    retry_after: x.retry_after.as_deref(),
                })
            })
            .collect();
        let window = r.window;
        for (id, judged) in [
            (
                "load.retry-after",
                rate_headers::judge_retry_afters(&answers, window),
            ),
            ("load.reset", rate_headers::judge_resets(&answers, window)),
            (
                "load.remaining",
                rate_headers::judge_remaining_before_429(&answers),
            ),
        ] {
            if let Some(jd) = judged {
                j.shared(id, lbl, &jd);
            }
        }
        let answered_recs: Vec<&Record> = recs
            .iter()
            .copied()
            .filter(|x| x.admitted() || x.throttled())
            .collect();
        let missing = answered_recs
            .iter()
            .filter(|x| x.limit.is_none() || x.remaining.is_none() || x.reset.is_none())
            .count();
        if missing > 0 {
            j.fail(
                "load.headers",
                lbl,
                format!(
                    "{missing} of {} answers lack an X-RateLimit-* header",
                    answered_recs.len()
                ),
                "X-RateLimit-Limit, -Remaining and -Reset on every 2xx and 429".into(),
                format!("{missing} without"),
            );
        }
        // Admitted over the windows loaded.
        let a = adm.len() as f64;
        let bounds =
            format!("[{lower:.0}, {upper:.0}] over {k:.2} windows of {n} (slack {slack:.0})");
        if a > upper {
            j.fail(
                "load.admitted",
                lbl,
                "more admitted than the limit allows: not enforced".into(),
                bounds,
                format!("{a:.0} admitted"),
            );
        } else if a < lower && !sent_overload {
            j.add(
                "load.admitted",
                Verdict::Skipped,
                lbl,
                "fewer admitted than the limit allows, but fewer than the limit were sent in some window: not judged"
                    .into(),
                bounds,
                format!("{a:.0} admitted"),
            );
        } else if a < lower {
            j.fail(
                "load.admitted",
                lbl,
                "fewer admitted than the limit allows: the plan is under-served".into(),
                bounds,
                format!("{a:.0} admitted"),
            );
        } else {
            j.pass(
                "load.admitted",
                lbl,
                format!("{a:.0} admitted, within {bounds}"),
            );
        }
        // Rolling window.
        let double = 2.0 * n as f64 + slack;
        if rolling <= n {
            j.pass(
                "load.rolling-window",
                lbl,
                format!("at most {rolling} admitted in any rolling window of {w} s (limit {n})"),
            );
        } else if rolling as f64 <= double {
            j.add("load.rolling-window", Verdict::Informational, lbl,
                "fixed-window semantics: more than the limit in a rolling window, up to twice at a boundary (the spec names no algorithm)".into(),
                format!("at most {n} (ideal), at most {double:.0} (fixed window)"), format!("{rolling}"));
        } else {
            j.fail(
                "load.rolling-window",
                lbl,
                "more than twice the limit in a rolling window".into(),
                format!("at most {double:.0}"),
                format!("{rolling}"),
            );
        }
        if key == 0 {
            let rate = s.rate * n as f64 / w;
            result.behaviour = behaviour(&recs, n, w, rolling, rate);
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
            if thr.is_empty() {
                j.pass(
                    "load.isolation",
                    lbl,
                    "the key under its limit was never throttled while the other was overloaded"
                        .into(),
                );
            } else {
                j.fail(
                    "load.isolation",
                    lbl,
                    "one key's overload throttled another key: limits must be per key".into(),
                    "no 429 for the key under its limit".into(),
                    format!("{} of {} throttled", thr.len(), recs.len()),
                );
            }
        }
        if s.shape == Shape::RetryAfter && key == 0 {
            match recs.iter().find(|x| x.retry) {
                Some(x) if x.admitted() => j.pass("load.retry-honesty", lbl,
                    format!("waited Retry-After exactly ({:.2} s after the 429) and was admitted", x.due - first_429.map_or(0.0, |f| f.recv))),
                Some(x) => j.fail("load.retry-honesty", lbl,
                    "waited exactly what Retry-After said, and was refused again: Retry-After is shorter than the real wait".into(),
                    "2xx".into(), format!("{:?} (Retry-After {:?})", x.status, first_429.and_then(|f| f.retry_after.clone()))),
                // Every request admitted: a burst that straddled a fixed window's boundary has
                // a window on each side (load.admitted and load.rolling-window judge whether
                // that was too many). Nothing to retry.
                None if thr.is_empty() => j.add("load.retry-honesty", Verdict::Informational, lbl,
                    "the burst was never throttled (it fell on both sides of a window boundary?): nothing to retry, not judged".into(),
                    "a 429 to wait out".into(), "none".into()),
                None => j.fail("load.retry-honesty", lbl,
                    "the first 429 gave no Retry-After to wait for".into(), "Retry-After".into(),
                    format!("{:?}", first_429.and_then(|f| f.retry_after.clone()))),
            }
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
mod tests {
    use super::overloaded_by_sends;

    /// A burst of 1.5N straddling a fixed window's boundary: N/2 + ... all admitted, since
    /// each side of the boundary has a window of its own. Legal: not "not enforced".
    #[test]
    fn a_burst_straddling_a_fixed_window_boundary_is_not_failed() {
        use crate::load::engine::{Record, Run};
        use crate::load::scenario::Scenario;
        use crate::target::{PlanKey, Target};
        let spec = crate::spec::Spec::embedded().unwrap();
        let t = Target {
            base_url: "https://x".into(),
            rate_window: std::time::Duration::from_secs(6),
            keys: vec![PlanKey {
                plan: "free".into(),
                key: "k".into(),
            }],
            ..Target::default()
        };
        let r = Scenario::load("retry-after-honesty")
            .unwrap()
            .resolve(&spec, &t)
            .unwrap();
        let slots = super::super::schedule::build(&r);
        let wall0 = 1_800_000_000.0;
        // The boundary falls in the middle of the burst: half before, half after.
        let mid = slots.len() / 2;
        let boundary = slots[mid].due.as_secs_f64();
        let records: Vec<Record> = slots
            .iter()
            .map(|sl| {
                let t = sl.due.as_secs_f64();
                let end = if t < boundary {
                    boundary
                } else {
                    boundary + 6.0
                };
                Record {
                    key: 0,
                    op: 0,
                    due: t,
                    sent: t,
                    recv: t + 0.001,
                    status: Some(200),
                    limit: Some("60".into()),
                    remaining: Some("1".into()),
                    reset: Some(format!("{}", (wall0 + end).ceil() as u64)),
                    retry_after: None,
                    code: None,
                    error: None,
                    retry: false,
                }
            })
            .collect();
        let run = Run {
            slots,
            records,
            wall0,
            users: 8,
            goose_requests: 0,
            goose_reports: Vec::new(),
        };
        let result = super::judge(&r, &run, &[("free#1".into(), 0)]);
        let failed: Vec<&str> = result
            .findings
            .iter()
            .filter(|f| f.verdict == crate::check::model::Verdict::Fail)
            .map(|f| f.check.as_str())
            .collect();
        assert!(!failed.contains(&"load.admitted"), "{failed:?}");
        // Twice the limit in a rolling window is fixed-window semantics: reported, not failed;
        // with no 429 there is nothing to retry.
        assert!(failed.is_empty(), "{failed:?}");
    }

    #[test]
    fn overload_is_read_from_the_real_send_times() {
        // 10 per window of 1 s for 3 windows: overloaded at N = 10, not at N = 11.
        let even: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.1).collect();
        assert!(overloaded_by_sends(&even, 10, 1.0));
        assert!(!overloaded_by_sends(&even, 11, 1.0));
        // A generator that stalled through the second window: not overloaded there.
        let stalled: Vec<f64> = (0..30)
            .map(|i| f64::from(i) * 0.1)
            .filter(|t| !(1.0..2.0).contains(t))
            .chain([2.95])
            .collect();
        assert!(!overloaded_by_sends(&stalled, 10, 1.0));
        // Late but dense: sends that all came late still overload every window.
        let late: Vec<f64> = even.iter().map(|t| t + 0.5).collect();
        assert!(overloaded_by_sends(&late, 10, 1.0));
        assert!(!overloaded_by_sends(&[], 1, 1.0));
        assert!(!overloaded_by_sends(&[0.0, 0.5], 1, 1.0));
    }
}
