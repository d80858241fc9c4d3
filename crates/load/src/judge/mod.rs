//! Verdicts on one scenario's run: the generator first (a run it could not hold is "client
//! saturated", never judged as throttling), then the limiter as seen from outside.
//!
//! Rules and their slack (N: the plan's limit per window W; k: windows the key was loaded):
//! - load.generator: more than 2% of the schedule held back by the in-flight ceiling (sent
//!   over 20 ms or 1% of the window late, whichever is longer), late through the send loop's
//!   own lag by more than a tenth of the window, never sent, or refused a socket by this
//!   machine: client saturated, reported as such with the limit it met
//!   (`Generator::limit_met`: the in-flight ceiling, local sockets, the send loop's lag).
//!   Shorter lag is reported, not withheld: every rule is judged on the real send times
//!   (`lateness`).
//! - load.admitted: under sustained overload, admitted (2xx) lies within
//!   [N(k-1), N(ceil(k)+1)] widened by max(2, 2% of N) per window boundary (ceil(k)+1 of
//!   them), k the windows spanned by the real sends: a span of k windows touches at most
//!   ceil(k)+1 fixed windows, so a fixed window straddled by a short burst is not failed;
//!   more: not enforced. Fewer: under-served, judged
//!   only where every whole window from the first send really carried N or more requests,
//!   each answered within the window it was sent in (a client that sent too little, or a
//!   target or link that held requests a window long and then saw them at once, can make a
//!   limiter look stingy). Other shapes: the upper
//!   bound only. Window by window (`windows.rs`), every key: at most N in each window of W at
//!   some alignment, each admission anywhere between its send and its answer; at most N naming
//!   one Reset within W (epoch seconds, W of 3 s or more, load.reset not failed); every window
//!   the target names and says began fresh (Remaining N - 1 on its first admission;
//!   `NamedWindows`), after the first, admits exactly min(N, the requests naming its Reset);
//!   under sustained overload, every window of W from one window after the first send admits 3/4 of
//!   what a fixed window would of the real sends, less max(3, 2% of N) and twice the most
//!   requests in flight at once. What a window must admit at least counts the clean refusals
//!   of forbidden requests as spent (a target may count them); what it may admit at most,
//!   admissions alone.
//! - load.limit: X-RateLimit-Limit on every 2xx, 429 and clean refusal that carries it is N (60N, the per-hour reading, is
//!   informational), as `check`'s ratelimit.limit reads it.
//! - load.rolling-window: the most admissions provably inside one rolling window (server
//!   instants bracketed by send and receive times): at most N passes; up to 2N plus the slack
//!   is fixed-window semantics (informational: the spec names no algorithm); more fails.
//! - load.envelope: every 429 is the error envelope with the spec's code for 429.
//! - load.retry-after: every 429 has Retry-After (delay-seconds; an HTTP-date is non-strict),
//!   no longer than a window plus 2 s (longer: milliseconds?) nor than the same answer's Reset
//!   plus 2 s. Shared with `check` (`linkcert_rate::headers`), as are load.reset and
//!   load.remaining.
//! - load.headers: every 2xx and 429 has X-RateLimit-Limit, -Remaining and -Reset, each a
//!   non-negative integer (`rate_headers::header_fault`, as `check` judges them).
//! - load.remaining: an admitted answer (or a clean refusal, which may have spent the last of
//!   the quota) says Remaining 0 before the first 429 arrives.
//! - load.reset: Reset is epoch seconds (not milliseconds, not seconds-until), between now - 2 s
//!   and now + W + 2 s, and never moves back by more than 1 s (rounding) between exchanges that
//!   did not overlap.
//! - load.isolation (two-keys): the key under its limit gets no 429.
//! - load.counter: each key's admissions, Remaining and 429s follow from that key's own history,
//!   across the operations mixed (one counter per key), as any legal limiter refills
//!   (`linkcert_rate::quota`, the rule `check`'s ratelimit.counter judges too).
//! - load.retry-honesty (retry-after): the first throttled request, retried exactly
//!   Retry-After later, is admitted (a burst never throttled, as across a fixed window's
//!   boundary, or a retry that got no answer, is noted, not judged).
//! - load.refusals: the requests the scenario makes forbidden (`Scenario::forbidden`) are
//!   refused cleanly (400 or 422 in the envelope), honoured or throttled; whether refusals
//!   were seen counted is said (`refusals.rs`).
//! - load.answers: answers other than 2xx/429 to requests the spec allows, or none at all,
//!   fail (404 from an absent
//!   linkcert stand-in endpoint skips the scenario instead). A socket this machine refused
//!   (`FailureKind::LocalLimit`) never reached the target: load.generator counts it.
//! - load.behaviour: the limiter named as observed (informational), with the evidence.
//!
//! Each rule lives in the file named after it (`admitted.rs` holds load.admitted and
//! load.rolling-window, `windows.rs` the window-by-window counts, `limit.rs` load.limit,
//! `answers.rs` load.answers and load.envelope, `headers.rs` the header
//! rules, `behaviour.rs` names the limiter); `measure.rs` takes the answers one at a time into
//! the figures the rules and the report read (generator, per-second buckets, per-key figures,
//! header trace); `order.rs` hands them to the rules' own small state in send order;
//! `result.rs` is the data a judged scenario is and its roll-up; `rule.rs` is what a rule is
//! (the `Rule` trait). This file registers the rules (`rules![...]`: one line each, in the
//! order of each key's findings) and runs them: the generator first, then every rule per key,
//! then the rules judged across keys (isolation).
//!
//! Memory: no rule holds the list of answers. Rule state is counts, firsts and lowests, plus
//! what one window or the answers in flight hold (rolling-window count, echoes, Reset order,
//! a persistent client's last two windows, a count per window alignment);
//! the limiter's run and Reset-step lengths are kept as histograms. What still grows with the
//! run is in `measure.rs` (the trace before sampling), and
//! `order.rs` holds answers until those sent earlier are in.

use super::record::{Record, Run};
use super::resolved::Resolved;
use super::schedule::Summary;
use linkcert_registry::rule_id;
use linkcert_spec::verdict::Verdict;
use measure::Measure;
use rule::{Across, Judge, KeyNotes, KeyRule, KeyView, Setup, overloaded};

pub use lateness::{LATE_SECS, Lateness, SATURATION_SHARE, lateness};
pub use result::*;

pub mod fleet;
pub mod histogram;
mod lateness;
mod measure;
mod order;
mod result;
mod rule;
mod seconds;
mod windows;

/// Declares each rule's module and lists the rule in `RULES`: a new rule is its file and one
/// line here.
macro_rules! rules {
    ($($module:ident :: $rule:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every rule, in the order its findings are listed for each key (a rule may read what
        /// the ones before it noted: `rule::KeyNotes`).
        static RULES: &[&dyn rule::Rule] = &[$(&$module::$rule),*];
    };
}

rules![
    answers::Answers,
    headers::Headers,
    limit::Limit,
    admitted::Admitted,
    behaviour::Behaviour,
    retry_honesty::RetryHonesty,
    isolation::Isolation,
    counter::Counter,
    fields::Fields,
    refusals::Refusals,
];

/// The rules judged across keys, judged again over `s`'s keys: a fleet put back together
/// from shards (`load::merge`) is judged over every key, as one process would. Then the
/// verdict and the fleet summary follow from the merged findings and keys.
pub fn rejudge_across(s: &mut ScenarioResult) {
    if matches!(
        s.verdict,
        ScenarioVerdict::Incomplete | ScenarioVerdict::Skipped
    ) {
        return;
    }
    let Some(shape) = crate::scenario::Shape::named(&s.shape) else {
        return;
    };
    let mut j = Judge {
        findings: Vec::new(),
    };
    let across = Across {
        shape,
        keys: &s.keys,
    };
    for rule in RULES {
        rule.across(&across, &mut j);
    }
    let mut findings = std::mem::take(&mut s.findings);
    findings.retain(|f| !j.findings.iter().any(|n| n.check == f.check));
    findings.extend(j.findings);
    s.roll_up(findings);
    s.fleet = fleet::summarise(s, |i| s.keys.get(i).map_or(1.0, |k| k.rate));
}

/// Put a scenario's keys in `order` (indices into its keys), and its per-second and trace
/// figures' key indices with them.
pub fn reorder_keys(s: &mut ScenarioResult, order: &[usize]) {
    let mut new_of = vec![0; order.len()];
    for (new, old) in order.iter().enumerate() {
        new_of[*old] = new;
    }
    let keys = std::mem::take(&mut s.keys);
    let mut slots: Vec<Option<KeyStats>> = keys.into_iter().map(Some).collect();
    s.keys = order.iter().filter_map(|i| slots[*i].take()).collect();
    for sec in &mut s.seconds {
        sec.key = new_of.get(sec.key).copied().unwrap_or(sec.key);
    }
    s.seconds.sort_by_key(|sec| (sec.t, sec.key));
    for t in &mut s.trace {
        t.key = new_of.get(t.key).copied().unwrap_or(t.key);
    }
}

/// Two shards' generator accounts of one scenario as one: counts and rates add (the shards
/// sent at once), the worst lateness is the worst of either.
pub fn merge_generators(a: Generator, b: &Generator) -> Generator {
    let mut g = Generator {
        scheduled: a.scheduled + b.scheduled,
        sent: a.sent + b.sent,
        late: a.late + b.late,
        unsent: a.unsent + b.unsent,
        scheduled_rate: a.scheduled_rate + b.scheduled_rate,
        achieved_rate: a.achieved_rate + b.achieved_rate,
        peak_rate: a.peak_rate + b.peak_rate,
        max_late_ms: a.max_late_ms.max(b.max_late_ms),
        late_ms: a.late_ms.max(b.late_ms),
        lag_ms: a.lag_ms.max(b.lag_ms),
        users: a.users + b.users,
        peak_in_flight: a.peak_in_flight + b.peak_in_flight,
        late_at_ceiling: a.late_at_ceiling + b.late_at_ceiling,
        lagged: a.lagged + b.lagged,
        local_refusals: a.local_refusals + b.local_refusals,
        goose_requests: a.goose_requests + b.goose_requests,
        saturated: a.saturated || b.saturated,
        limit_met: None,
    };
    g.limit_met = g.limit_met().or(a.limit_met).or(b.limit_met.clone());
    g
}

/// A run being judged: answers go in one at a time as they come (`observe`, in any order;
/// `settled` says that every answer sent before a time is in), the verdicts come out at
/// `finish`. The engine feeds it during the run, so no list of answers is kept.
pub struct Judging {
    r: Resolved,
    measure: Measure,
    order: order::SendOrder,
    /// Per key, the state of every rule that judges it (`RULES`).
    rules: Vec<Vec<Box<dyn KeyRule>>>,
}

impl Judging {
    /// `schedule`: the run's schedule summed up; `wall0`: UTC epoch seconds of t = 0; `keys`:
    /// how many keys the scenario loads.
    pub fn new(r: &Resolved, schedule: Summary, wall0: f64, keys: usize) -> Judging {
        Judging {
            measure: Measure::new(
                schedule,
                keys,
                r.scenario.shape == crate::scenario::Shape::Fleet,
                wall0,
                lateness(r.window),
            ),
            order: order::SendOrder::default(),
            rules: (0..keys)
                .map(|key| {
                    let setup = Setup { r, key, wall0 };
                    RULES
                        .iter()
                        .filter_map(|rule| rule.for_key(&setup))
                        .collect()
                })
                .collect(),
            r: r.clone(),
        }
    }

    pub fn observe(&mut self, x: Record) {
        self.order.push(x);
    }

    /// Every answer sent before `t` is in: the rules take them, in send order.
    pub fn settled(&mut self, t: f64) {
        let ready = self.order.release(t);
        self.feed(ready);
    }

    fn feed(&mut self, ready: Vec<Record>) {
        for x in &ready {
            // In send order: a fleet's keys count their admissions second by second.
            self.measure.observe(x);
            for rule in self.rules.get_mut(x.key).into_iter().flatten() {
                rule.observe(x);
            }
        }
    }

    /// The verdicts, once every answer is in. `run`: the engine's account of the run;
    /// `labels`: per scenario key, its label and position in the target's keys.
    pub fn finish(mut self, run: &Run, labels: &[(String, usize)]) -> ScenarioResult {
        let rest = self.order.drain();
        self.feed(rest);
        let r = &self.r;
        let (s, n) = (&r.scenario, r.limit);
        let w = r.window.as_secs_f64();
        let m = self
            .measure
            .finish(run.users, run.peak_in_flight, run.goose_requests);
        let mut result = ScenarioResult {
            limit: n,
            window_secs: w,
            goose_reports: run.goose_reports.clone(),
            ..ScenarioResult::of(s, &r.class)
        };
        // Absent stand-in endpoints: noted, not failed.
        if r.extension_only && m.answered > 0 && m.answered_404 == m.answered {
            result.verdict = ScenarioVerdict::Skipped;
            result.skipped = Some(format!(
                "the target has no {} endpoints (404): noted, not judged",
                r.class
            ));
            return result;
        }
        // Requests the target rejected cleanly (400 or 422 in the envelope): its choice for a
        // value the scenario names and the spec does not guarantee (a `size` whose bounds it
        // does not show), never a throttling failure. Whether such requests use quota is the
        // target's choice too, so throttling is not judged on this run. The built-in scenarios
        // send only what every conformant target must accept: there a rejection is a failure.
        if m.rejected_cleanly > 0 && !s.is_builtin() {
            result.verdict = ScenarioVerdict::Incomplete;
            result.skipped = Some(format!(
                "not judged: the target rejected {} of {} answered requests cleanly (400 or 422 in the error envelope), its choice for values the spec does not guarantee; give the scenario's operations values the spec guarantees (defaults, or within stated bounds)",
                m.rejected_cleanly, m.answered
            ));
            return result;
        }
        let mut j = Judge {
            findings: Vec::new(),
        };
        generator(&mut j, &m.generator);
        for (key, ((label, target_key), rules)) in labels.iter().zip(self.rules).enumerate() {
            let Some(f) = m.keys.get(key) else { continue };
            let overloaded = overloaded(r, key);
            // Each key's own plan's limit (`plans`); one limit for the others.
            let n = r.key_limit(key);
            unloaded_custom(&mut j, r, key, label);
            let bounds = linkcert_rate::windows::Bounds::of(f.sends.secs(), n, w, overloaded);
            let view = KeyView {
                label: Some(label.as_str()),
                f,
                n,
                window: r.window,
                overloaded,
                bounds: &bounds,
            };
            let mut notes = KeyNotes::default();
            for rule in rules {
                rule.judge(&mut j, &view, &mut notes);
            }
            if key == 0
                && let Some((limiter, text)) = notes.limiter
            {
                result.limiter = Some(limiter);
                result.behaviour = Some(text);
            }
            result.keys.push(f.stats(
                label,
                *target_key,
                &bounds,
                notes.rolling,
                r.key_rate(key),
                n,
            ));
        }
        let across = Across {
            shape: s.shape,
            keys: &result.keys,
        };
        for rule in RULES {
            rule.across(&across, &mut j);
        }
        result.generator = Some(m.generator);
        result.latency_ms = m.latency_ms;
        result.latency_histogram = m.latency_histogram;
        result.seconds = m.seconds;
        result.fleet_seconds = m.fleet_seconds;
        result.trace = m.trace;
        result.roll_up(j.findings);
        result.fleet = fleet::summarise(&result, |i| r.key_rate(i));
        result
    }
}

/// load.limit for a key of custom limit that stated none as the run began: not loaded, and
/// said so (skipped), rather than a key that sent nothing without a word.
fn unloaded_custom(j: &mut Judge, r: &Resolved, key: usize, label: &str) {
    if r.key_limit(key) == 0 && r.custom.contains(&key) {
        j.add(
            rule_id!("load.limit"),
            Verdict::Skipped,
            Some(label),
            "its plan's limit is custom and its key states none (no X-RateLimit-Limit as the run began): not loaded".into(),
            "X-RateLimit-Limit, a whole number, on the key's answer".into(),
            "none".into(),
        );
    }
}

/// load.generator: whether it held the schedule (a run it could not hold is "client
/// saturated", never judged as throttling).
fn generator(j: &mut Judge, g: &Generator) {
    let (scheduled, late, unsent) = (g.scheduled, g.late, g.unsent);
    if g.saturated {
        j.add(
            rule_id!("load.generator"),
            Verdict::Fail,
            None,
            format!(
                "the generator could not hold the schedule: client saturated, throttling not judged; {}",
                g.limit_met.as_deref().unwrap_or("")
            ),
            format!(
                "at most 2% of {scheduled} held back at the in-flight ceiling (>{:.0} ms late), lagging (>{:.0} ms late), unsent or refused by this machine",
                g.late_ms, g.lag_ms
            ),
            format!(
                "{late} late, {unsent} unsent, {} refused locally; {:.1}/s sent of {:.1}/s scheduled",
                g.local_refusals, g.achieved_rate, g.scheduled_rate
            ),
        );
    } else {
        // Late sends that did not withhold the verdict are said, with how late.
        let lag = if late > 0 {
            format!(
                " (late: over {:.0} ms, by up to {:.0} ms; judged on the real send times)",
                g.late_ms, g.max_late_ms
            )
        } else {
            String::new()
        };
        j.pass(
            rule_id!("load.generator"),
            None,
            format!(
                "held the schedule: {late} late, {unsent} unsent of {scheduled}; {:.1}/s sent of {:.1}/s{lag}",
                g.achieved_rate, g.scheduled_rate
            ),
        );
    }
}

/// Judge a finished run's answers, given as a list (the engine feeds `Judging` as it goes;
/// `check`'s tests hold its header rules to the same answers).
pub fn judge(
    r: &Resolved,
    slots: &[super::schedule::Slot],
    records: &[Record],
    run: &Run,
    labels: &[(String, usize)],
) -> ScenarioResult {
    let schedule = Summary::of(slots.iter().copied());
    let mut judging = Judging::new(r, schedule, run.wall0, labels.len());
    let mut sorted = records.to_vec();
    sorted.sort_by(|a, b| a.sent.total_cmp(&b.sent));
    for x in sorted {
        let sent = x.sent;
        judging.observe(x);
        // Sorted by send time: all sent before this one are in.
        judging.settled(sent);
    }
    judging.finish(run, labels)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod windows_tests;
