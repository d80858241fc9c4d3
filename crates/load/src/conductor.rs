//! The run as one account: which scenarios are pending, running or waiting for their keys'
//! quota, what starts next (`start_ready`), what a finished scenario becomes (done, or run
//! again alone: `finished`), and the report once nothing is left (`finish`). It sends
//! nothing itself: `load::execute` starts what it is given and hands back what ran.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use super::error::LoadError;
use super::judge::{self, ClientLimit, ScenarioResult, ScenarioVerdict};
use super::live::{Live, Progress};
use super::record::{Record, Run, Sink};
use super::report::{self, LoadReport};
use super::resolved::Resolved;
use super::scenario::{Scenario, Skip};
use super::schedule::Summary;
use super::scheduler::{Job, Mode, Plan, QuotaSeen, Running, Step, startable};
use linkcert_run::interrupt::Interrupted;
use linkcert_run::outage::Outage;
use linkcert_run::target::Target;
use linkcert_spec::Spec;

/// The scenarios made concrete for a target and laid out in time: what `run` carries out.
pub struct Prepared {
    pub plan: Plan,
    pub(super) scenarios: Vec<Scenario>,
    /// Per scenario: its resolved form, or why it cannot run here.
    pub(super) resolved: Vec<Result<Resolved, Skip>>,
    pub(super) jobs: Vec<Job>,
    pub labels: Vec<String>,
}

/// What a run's records go to as they come: the judge, and each key's quota account.
pub struct Answers {
    judging: judge::Judging,
    quota: Vec<QuotaSeen>,
    wall0: f64,
    /// The figures `--metrics` writes while the run goes.
    tap: Option<crate::metrics::Tap>,
}

impl Answers {
    /// The sink of one scenario's run, made once its schedule and t = 0 are known.
    pub fn new(r: &Resolved, schedule: &Summary, wall0: f64, keys: usize) -> Answers {
        Answers {
            judging: judge::Judging::new(r, schedule.clone(), wall0, keys),
            quota: vec![QuotaSeen::default(); keys],
            wall0,
            tap: None,
        }
    }

    /// The run is over: its `--metrics` series end (judging may take a while yet).
    pub fn end_tap(&mut self) {
        self.tap = None;
    }

    /// Also counting each answer for `--metrics`.
    pub fn with_tap(mut self, tap: Option<crate::metrics::Tap>) -> Answers {
        self.tap = tap;
        self
    }
}

impl Sink for Answers {
    fn take(&mut self, rec: Record) {
        if let Some(t) = &self.tap {
            t.observe(&rec);
        }
        if let Some(q) = self.quota.get_mut(rec.key) {
            q.observe(&rec, self.wall0);
        }
        self.judging.observe(rec);
    }
    fn settled(&mut self, t: f64) {
        self.judging.settled(t);
    }
}

/// A scenario to start now: its job, what it runs, and not before when (its keys' quota).
pub struct Launch {
    pub job: usize,
    pub resolved: Resolved,
    pub keys: usize,
    pub not_before: Instant,
    /// What the progress line reads of it while it runs.
    pub live: Arc<Live>,
    /// Its keys' labels (`free#17`), for `--metrics`.
    pub labels: Vec<String>,
}

/// How the run ended, as the sender saw it: the outage, the interrupt, the broken target.
pub struct Ending {
    pub outage: Option<Outage>,
    pub interrupted: Option<Interrupted>,
    pub broken: Option<String>,
    /// An interrupt was asked for at some point.
    pub stop_requested: bool,
}

/// The scenarios of one run and where each stands.
pub struct Conductor {
    pub plan: Plan,
    scenarios: Vec<Scenario>,
    resolved: Vec<Result<Resolved, Skip>>,
    jobs: Vec<Job>,
    labels: Vec<String>,
    mode: Mode,
    pending: Vec<usize>,
    now: Running,
    /// The jobs running now, and for each job the scenarios that ran beside it.
    active: Vec<usize>,
    beside: HashMap<usize, BTreeSet<String>>,
    /// When each key's quota is back (by the key's position in the target's keys).
    quota: HashMap<usize, Instant>,
    results: Vec<Option<ScenarioResult>>,
    /// Results of runs the client could not hold, run again alone.
    superseded: Vec<ScenarioResult>,
    /// A scenario cut short, or not started, because the run was asked to stop.
    cut_short: bool,
    started: Instant,
    progress: Progress,
}

impl Conductor {
    /// Scenarios that cannot run here are done at once (skipped, with why).
    pub fn new(spec: &Spec, prepared: Prepared, mode: Mode, progress: Progress) -> Self {
        let Prepared {
            plan,
            scenarios,
            resolved,
            jobs,
            labels,
        } = prepared;
        let mut results: Vec<Option<ScenarioResult>> = vec![None; scenarios.len()];
        for (i, (s, r)) in scenarios.iter().zip(&resolved).enumerate() {
            if let Err(why) = r {
                progress.skipped(i, &s.name, &why.to_string());
                results[i] = Some(ScenarioResult::skipped(s, &s.class(spec), why));
            }
        }
        Conductor {
            plan,
            pending: (0..jobs.len()).collect(),
            scenarios,
            resolved,
            jobs,
            labels,
            mode,
            now: Running::default(),
            active: Vec::new(),
            beside: HashMap::new(),
            quota: HashMap::new(),
            results,
            superseded: Vec::new(),
            cut_short: false,
            started: Instant::now(),
            progress,
        }
    }

    /// The scenarios that may start now (none once `halted`: asked to stop, or the target
    /// gone), each with when its keys' quota is back.
    pub fn start_ready(&mut self, halted: bool) -> Vec<Launch> {
        if halted {
            return Vec::new();
        }
        let mut out = Vec::new();
        for j in startable(&self.pending, &self.jobs, &self.now, self.mode) {
            self.pending.retain(|p| *p != j);
            let job = &self.jobs[j];
            let Some(Ok(r)) = self.resolved.get(job.step) else {
                continue;
            };
            for &o in &self.active {
                let other = self.scenarios[self.jobs[o].step].name.clone();
                self.beside.entry(j).or_default().insert(other);
                self.beside
                    .entry(o)
                    .or_default()
                    .insert(r.scenario.name.clone());
            }
            self.active.push(j);
            self.now.start(job);
            let not_before = job
                .keys
                .iter()
                .filter_map(|k| self.quota.get(k))
                .max()
                .copied()
                .unwrap_or_else(Instant::now);
            let live =
                self.progress
                    .starting(job.step, r, &self.plan.steps[job.step].keys, not_before);
            out.push(Launch {
                job: j,
                resolved: r.clone(),
                keys: job.keys.len(),
                not_before,
                live,
                labels: job
                    .keys
                    .iter()
                    .map(|p| self.labels.get(*p).cloned().unwrap_or_default())
                    .collect(),
            });
        }
        out
    }

    /// A launched job came back: `ran` is None when it never started (interrupted while it
    /// waited). `again`: whether a run the client could not hold may still run once more.
    pub fn finished(
        &mut self,
        j: usize,
        began: Instant,
        ran: Option<(Run, Answers)>,
        interrupted: Option<Interrupted>,
        again: bool,
    ) {
        let job = self.jobs[j].clone();
        let step = job.step;
        self.active.retain(|a| *a != j);
        self.now.end(&job);
        let Some(Ok(r)) = self.resolved.get(step) else {
            return;
        };
        let window = r.window;
        self.progress.stopped(&r.scenario.name);
        let Some((run, answers)) = ran else {
            self.cut_short = true;
            return;
        };
        let span = Some((
            began.saturating_duration_since(self.started).as_secs_f64(),
            self.started.elapsed().as_secs_f64(),
        ));
        if job.alone {
            self.plan.steps[step].reran = span;
        } else {
            self.plan.steps[step].ran = span;
        }
        let result = self.judged(&job, &run, answers, interrupted.as_ref(), window);
        self.progress.finished(step, &report::one_line(&result));
        match self.rerun_why(j, &job, &result, again) {
            Some(why) => {
                self.progress.again(step, &self.scenarios[step].name, &why);
                self.plan.steps[step].rerun = Some(why);
                self.jobs.push(Job { alone: true, ..job });
                self.pending.insert(0, self.jobs.len() - 1);
                self.superseded.push(result);
            }
            None => self.results[step] = Some(result),
        }
    }

    /// The verdicts of one run, and when its keys' quota is back.
    fn judged(
        &mut self,
        job: &Job,
        run: &Run,
        answers: Answers,
        interrupted: Option<&Interrupted>,
        window: std::time::Duration,
    ) -> ScenarioResult {
        let ids: Vec<(String, usize)> = job
            .keys
            .iter()
            .map(|p| (self.labels.get(*p).cloned().unwrap_or_default(), *p))
            .collect();
        let mut result = answers.judging.finish(run, &ids);
        // The target went away during this run, or the run was interrupted: its figures are
        // kept, nothing is judged.
        if let Some(o) = &run.outage {
            result.not_judged(o);
        } else if let Some(i) = interrupted {
            result.interrupted(i);
        } else if let Some(words) = &run.broken {
            result.broken(words);
        }
        self.cut_short |= interrupted.is_some();
        for (i, k) in job.keys.iter().enumerate() {
            let limiter = if i == 0 { result.limiter } else { None };
            let seen = answers.quota.get(i).copied().unwrap_or_default();
            self.quota.insert(*k, seen.back(run.t0, window, limiter));
        }
        result
    }

    /// Running together must not change a verdict: a scenario the client could not hold
    /// (beside others, or alone in a moment this machine was busier) runs once more, alone,
    /// once its keys' quota is back. Why, when it does.
    fn rerun_why(
        &mut self,
        j: usize,
        job: &Job,
        result: &ScenarioResult,
        again: bool,
    ) -> Option<String> {
        let others = self.beside.remove(&j).unwrap_or_default();
        let limit = result.generator.as_ref().and_then(|g| g.client_limit());
        // Alone, with every user busy: the ceiling is a setting, not a moment; again would
        // meet it again.
        let worth = match limit {
            None => false,
            Some(ClientLimit::InFlightCeiling) => !others.is_empty(),
            Some(_) => true,
        };
        if !worth || job.alone || !again {
            return None;
        }
        Some(if others.is_empty() {
            "the client could not hold its schedule".to_string()
        } else {
            format!(
                "the client could not hold its schedule beside {}",
                others.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// The report, once nothing is left to run. `started_epoch`: the wall clock when the run
    /// began.
    pub fn finish(
        mut self,
        spec: &Spec,
        target: &Target,
        started_epoch: u64,
        ending: Ending,
    ) -> Result<LoadReport, LoadError> {
        self.progress.done();
        // The run was interrupted if that left a scenario cut short or not run.
        let cut_short =
            self.cut_short || (ending.stop_requested && self.results.iter().any(Option::is_none));
        let interrupted = ending.interrupted.filter(|_| cut_short);
        for (i, s) in self.scenarios.iter().enumerate() {
            if self.results[i].is_none() {
                let why = match (&ending.outage, &interrupted, &ending.broken) {
                    (Some(o), _, _) => format!("not run: {}", o.sentence()),
                    (None, Some(i), _) => format!("not run: {}", i.sentence()),
                    (None, None, Some(words)) => format!("not run: the target is broken: {words}"),
                    (None, None, None) => "not run".into(),
                };
                self.results[i] = Some(ScenarioResult::skipped(
                    s,
                    &s.class(spec),
                    &Skip::Cannot(why),
                ));
            }
        }
        if let Some(o) = &ending.outage {
            outage_takes_back(&mut self.results, &self.plan.steps, o);
        }
        let mut report = LoadReport::new(spec, target, started_epoch);
        report.scenarios = self.results.into_iter().flatten().collect();
        report.superseded = self.superseded;
        report.outage = ending.outage;
        report.interrupted = interrupted;
        report.run.duration_secs = self.started.elapsed().as_secs_f64();
        report.plan = Some(self.plan);
        report.finish(&self.labels);
        report.coverage = linkcert_registry::coverage::of(
            linkcert_registry::Command::Load,
            &report::rule_judgements(&report.scenarios),
        );
        // Nothing could run at all; an interrupted run still writes its reports, and so does
        // a shard whose scenarios all run in other shards.
        if report.interrupted.is_none()
            && report
                .scenarios
                .iter()
                .all(|s| s.verdict == ScenarioVerdict::Skipped)
            && !report.scenarios.iter().all(|s| s.elsewhere)
        {
            let why: Vec<String> = report
                .scenarios
                .iter()
                .map(|s| format!("{}: {}", s.name, s.skipped.clone().unwrap_or_default()))
                .collect();
            return Err(LoadError::NothingToRun(why.join("; ")));
        }
        Ok(report)
    }
}

/// Any answer lost after the outage began belongs to the outage: a scenario whose run
/// overlaps it is not judged, even one that ended before the outage was noticed.
fn outage_takes_back(results: &mut [Option<ScenarioResult>], steps: &[Step], o: &Outage) {
    for (r, step) in results.iter_mut().zip(steps) {
        let Some(r) = r else { continue };
        let judged = !matches!(
            r.verdict,
            ScenarioVerdict::Skipped | ScenarioVerdict::Incomplete
        );
        if judged && overlaps_outage(step, o.first_failure_secs) {
            r.not_judged(o);
        }
    }
}

/// Whether a scenario's run (its rerun's, when it ran again) reached the outage that began
/// `first_failure_secs` into the run: then an answer it lost may be the outage's, not the
/// target's failure. One that ended before the first failure keeps its verdict.
fn overlaps_outage(step: &Step, first_failure_secs: f64) -> bool {
    step.reran
        .or(step.ran)
        .is_some_and(|(_, end)| end >= first_failure_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(ran: Option<(f64, f64)>, reran: Option<(f64, f64)>) -> Step {
        Step {
            name: "s".into(),
            keys: Vec::new(),
            start: 0.0,
            end: 0.0,
            ran,
            skipped: None,
            rerun: None,
            reran,
        }
    }

    #[test]
    fn a_scenario_overlapping_the_outage_is_its_own_whichever_ended_first() {
        let first_failure = 20.0;
        // Ended before the first failure: its verdict stands.
        assert!(!overlaps_outage(
            &step(Some((0.0, 19.9)), None),
            first_failure
        ));
        // Ended after it began (before it was noticed, or cut short by it): the outage's.
        assert!(overlaps_outage(
            &step(Some((0.0, 20.5)), None),
            first_failure
        ));
        assert!(overlaps_outage(
            &step(Some((21.0, 24.0)), None),
            first_failure
        ));
        assert!(overlaps_outage(
            &step(Some((5.0, 20.0)), None),
            first_failure
        ));
        // Ran again alone: the rerun's span is the one its verdict comes from.
        assert!(overlaps_outage(
            &step(Some((0.0, 10.0)), Some((12.0, 22.0))),
            first_failure
        ));
        assert!(!overlaps_outage(
            &step(Some((0.0, 5.0)), Some((6.0, 12.0))),
            first_failure
        ));
        // Never ran: nothing of it to take back.
        assert!(!overlaps_outage(&step(None, None), first_failure));
    }
}
