//! `linkcert load`: throttling under load. Scenarios (`scenario`) become per-key arrival
//! schedules (`schedule`) that goose users follow (`engine`); `scheduler` decides which
//! scenarios run together; what each request met is the run record (`record`), judged
//! (`judge`) and written as JSON, Markdown and HTML with SVG charts (`report`, `chart`).

pub mod chart;
mod dispatch;
pub mod engine;
pub mod error;
pub mod judge;
pub mod live;
pub mod record;
pub mod report;
pub mod scenario;
pub mod schedule;
pub mod scheduler;
pub mod sending;

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};

use engine::LiveBoard;
pub use error::LoadError;
pub use judge::{ScenarioResult, ScenarioVerdict};
pub use report::LoadReport;
use scenario::Resolved;
pub use scenario::Scenario;
use scheduler::{Job, Mode, Plan, QuotaSeen, Running, Step, startable};

use crate::spec::Spec;
use crate::target::Target;

pub struct LoadOptions {
    /// Where goose's reports go (and ours, written by the caller).
    pub out: PathBuf,
    /// Progress lines on stderr.
    pub progress: bool,
    /// One scenario at a time, in the order given (`--sequential`).
    pub sequential: bool,
    /// Scenarios run together peak at most at this many requests per second (`--max-rate`).
    pub max_rate: f64,
    /// The request timeout and the in-flight ceiling (`--request-timeout`, `--max-in-flight`).
    pub sending: engine::Sending,
}

/// The default of `--max-rate`: the highest combined rate at which scenarios running together
/// were sent on time in every round on a 2-core machine (`benches/max-rate.sh`: three
/// scenarios on three keys against an HTTPS target in its own process; at 2,000 requests/s 4
/// of 72,000 sends were over 60 ms late in three rounds, at 3,000 and 4,000 up to 165 and
/// 2,625 in a round, by up to half a second). The built-in suite at the 6 s window peaks near 1,000;
/// debug builds (the tests) use 700.
pub const DEFAULT_MAX_RATE: f64 = 2000.0;

impl LoadOptions {
    /// Reports in `out`, no progress lines, scenarios together, the defaults of the flags.
    pub fn new(out: PathBuf) -> LoadOptions {
        LoadOptions {
            out,
            progress: false,
            sequential: false,
            max_rate: DEFAULT_MAX_RATE,
            sending: engine::Sending::default(),
        }
    }
    fn mode(&self) -> Mode {
        Mode {
            sequential: self.sequential,
            max_rate: self.max_rate,
        }
    }
}

/// Labels `plan#n` of the target's keys, by position.
fn key_labels(target: &Target) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    target
        .keys
        .iter()
        .map(|k| {
            let n = seen.entry(k.plan.as_str()).or_insert(0);
            *n += 1;
            format!("{}#{}", k.plan, n)
        })
        .collect()
}

/// The scenarios made concrete for a target and laid out in time: what `run` carries out.
pub struct Prepared {
    pub plan: Plan,
    scenarios: Vec<Scenario>,
    /// Per scenario: its resolved form, or why it cannot run here.
    resolved: Vec<Result<Resolved, String>>,
    jobs: Vec<Job>,
    labels: Vec<String>,
}

/// Validate and resolve the scenarios and estimate the plan (`opts`: together or one at a
/// time, the rate budget, how requests are sent).
pub fn prepare(
    spec: &Spec,
    target: &Target,
    scenarios: Vec<Scenario>,
    opts: &LoadOptions,
) -> Result<Prepared, LoadError> {
    target.validate(spec)?;
    for s in &scenarios {
        s.validate(spec)?;
    }
    let labels = key_labels(target);
    let resolved: Vec<Result<Resolved, String>> =
        scenarios.iter().map(|s| s.resolve(spec, target)).collect();
    let mut steps = Vec::new();
    let mut jobs = Vec::new();
    for (i, (s, r)) in scenarios.iter().zip(&resolved).enumerate() {
        let mut step = Step {
            name: s.name.clone(),
            keys: Vec::new(),
            start: 0.0,
            end: 0.0,
            ran: None,
            skipped: None,
            rerun: None,
            reran: None,
        };
        match r {
            Ok(r) => {
                let keys: Vec<usize> = r.keys.iter().filter_map(|k| target.position(k)).collect();
                step.keys = keys
                    .iter()
                    .map(|p| labels.get(*p).cloned().unwrap_or_default())
                    .collect();
                jobs.push(Job {
                    step: i,
                    keys,
                    estimate: engine::Timing::estimate(r, &opts.sending),
                    window: r.window,
                    rate: schedule::Summary::of_scenario(r).peak_rate,
                    alone: false,
                });
            }
            Err(why) => step.skipped = Some(why.clone()),
        }
        steps.push(step);
    }
    Ok(Prepared {
        plan: Plan::estimate(steps, &jobs, opts.mode()),
        scenarios,
        resolved,
        jobs,
        labels,
    })
}

/// What a run's records go to as they come: the judge, and each key's quota account.
struct Answers {
    judging: judge::Judging,
    quota: Vec<QuotaSeen>,
    wall0: f64,
}

impl engine::Sink for Answers {
    fn take(&mut self, rec: engine::Record) {
        if let Some(q) = self.quota.get_mut(rec.key) {
            q.observe(&rec, self.wall0);
        }
        self.judging.observe(rec);
    }
    fn settled(&mut self, t: f64) {
        self.judging.settled(t);
    }
}

/// Prepare and run the scenarios (see `prepare` and `scheduler`).
pub async fn run(
    spec: Arc<Spec>,
    target: Target,
    scenarios: Vec<Scenario>,
    opts: &LoadOptions,
) -> Result<LoadReport, LoadError> {
    let prepared = prepare(&spec, &target, scenarios, opts)?;
    execute(spec, target, prepared, opts).await
}

/// Carry out a prepared plan: each scenario starts as soon as `scheduler::startable` lets it,
/// after its keys' quota is back (`scheduler::QuotaSeen`); results keep the scenarios' order.
pub async fn execute(
    spec: Arc<Spec>,
    target: Target,
    prepared: Prepared,
    opts: &LoadOptions,
) -> Result<LoadReport, LoadError> {
    // A target that is not there at all cannot be judged: said at once, not as a run of
    // failed requests (a streak after answers is an outage: `outage`).
    crate::target::reachable(&target.base_url).await?;
    std::fs::create_dir_all(&opts.out).map_err(|source| LoadError::Io {
        path: opts.out.display().to_string(),
        source,
    })?;
    let Prepared {
        mut plan,
        scenarios,
        resolved,
        mut jobs,
        labels,
    } = prepared;
    let started = Instant::now();
    // One watch for the run, made now: its times (an outage's) count from the run's start, as
    // the plan's spans do. Once the target is gone, nothing more starts.
    let watch = Arc::new(crate::outage::Watch::new());
    // Asked to stop (SIGINT, SIGTERM): nothing more starts, and the users stop (`engine`).
    let stop = crate::interrupt::process();
    // goose's own end of an attack too (it resets its killswitch when an attack starts: none
    // starts after the request).
    let killswitch = tokio::spawn(async move {
        stop.until_requested().await;
        goose::trigger_killswitch("linkcert was interrupted");
    });
    // The report's `started_at`: the wall clock now, not when the report is put together.
    let started_epoch = crate::clock::now_epoch_secs();
    let total = scenarios.len();
    let mut results: Vec<Option<ScenarioResult>> = vec![None; total];
    for (i, (s, r)) in scenarios.iter().zip(&resolved).enumerate() {
        if let Err(why) = r {
            if opts.progress {
                eprintln!("[{}/{total}] {}: skipped ({why})", i + 1, s.name);
            }
            results[i] = Some(ScenarioResult::skipped(s, &s.class(&spec), why.clone()));
        }
    }
    let mut pending: Vec<usize> = (0..jobs.len()).collect();
    let mut now = Running::default();
    // The jobs running now, and for each job the scenarios that ran beside it.
    let mut active: Vec<usize> = Vec::new();
    let mut superseded = Vec::new();
    let mut beside: HashMap<usize, BTreeSet<String>> = HashMap::new();
    let mut quota: HashMap<usize, Instant> = HashMap::new();
    let mut running = FuturesUnordered::new();
    // A scenario cut short, or not started, because the run was asked to stop.
    let mut cut_short = false;
    let board = Arc::new(LiveBoard::default());
    let ticker = opts.progress.then(|| {
        let board = board.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let text: String = board.line().chars().take(180).collect();
                eprint!("\r{text:<180}\r");
            }
        })
    });
    let clear_line = || {
        if opts.progress {
            eprint!("\r{:180}\r", "");
        }
    };
    loop {
        let can_start = if stop.requested() || watch.gone() {
            Vec::new()
        } else {
            startable(&pending, &jobs, &now, opts.mode())
        };
        for j in can_start {
            pending.retain(|p| *p != j);
            let job = &jobs[j];
            let Some(Ok(r)) = resolved.get(job.step) else {
                continue;
            };
            for &o in &active {
                let other = scenarios[jobs[o].step].name.clone();
                beside.entry(j).or_default().insert(other);
                beside.entry(o).or_default().insert(r.scenario.name.clone());
            }
            active.push(j);
            now.start(job);
            let not_before = job
                .keys
                .iter()
                .filter_map(|k| quota.get(k))
                .max()
                .copied()
                .unwrap_or_else(Instant::now);
            let l = board.add(&r.scenario.name);
            if opts.progress {
                clear_line();
                let wait = not_before.saturating_duration_since(Instant::now());
                eprintln!(
                    "[{}/{total}] {}: {} plan on {}, {} x {} per {:.2} s, {} for {} windows{}",
                    job.step + 1,
                    r.scenario.name,
                    r.scenario.plan,
                    plan.steps[job.step].keys.join(", "),
                    r.scenario.rate,
                    r.limit,
                    r.window.as_secs_f64(),
                    r.scenario.shape.as_str(),
                    r.scenario.windows,
                    if wait.is_zero() {
                        String::new()
                    } else {
                        format!(", after {:.1} s for its keys' quota", wait.as_secs_f64())
                    }
                );
            }
            let target = &target;
            let out = &opts.out;
            let sending = &opts.sending;
            let watch = watch.clone();
            let (rc, keys) = (r.clone(), job.keys.len());
            let sink = move |schedule: &schedule::Summary, wall0: f64| Answers {
                judging: judge::Judging::new(&rc, schedule.clone(), wall0, keys),
                quota: vec![QuotaSeen::default(); keys],
                wall0,
            };
            running.push(async move {
                // An interrupt ends the wait for the keys' quota: the scenario does not start.
                tokio::select! {
                    () = tokio::time::sleep_until(not_before.into()) => {}
                    () = stop.until_requested() => {}
                }
                let began = Instant::now();
                let run = if stop.requested() {
                    None
                } else {
                    Some(engine::run(target, r, sending, out, l, watch, sink).await)
                };
                (j, began, run)
            });
        }
        let Some((j, began, run)) = running.next().await else {
            break;
        };
        let job = jobs[j].clone();
        let step = job.step;
        active.retain(|a| *a != j);
        now.end(&job);
        let Some(Ok(r)) = resolved.get(step) else {
            continue;
        };
        board.remove(&r.scenario.name);
        // Interrupted before it started: not run (said below, with the others).
        let Some(run) = run else {
            cut_short = true;
            continue;
        };
        let (run, answers) = run?;
        // Asked to stop while it ran: its users stopped, so it is cut short.
        let interrupted = stop.interrupted();
        let span = Some((
            began.saturating_duration_since(started).as_secs_f64(),
            started.elapsed().as_secs_f64(),
        ));
        if job.alone {
            plan.steps[step].reran = span;
        } else {
            plan.steps[step].ran = span;
        }
        let ids: Vec<(String, usize)> = job
            .keys
            .iter()
            .map(|p| (labels.get(*p).cloned().unwrap_or_default(), *p))
            .collect();
        let mut result = answers.judging.finish(&run, &ids);
        // The target went away during this run, or the run was interrupted: its figures are
        // kept, nothing is judged.
        if let Some(o) = &run.outage {
            result.not_judged(o);
        } else if let Some(i) = &interrupted {
            result.interrupted(i);
        } else if let Some(words) = &run.broken {
            result.broken(words);
        }
        cut_short |= interrupted.is_some();
        for (i, k) in job.keys.iter().enumerate() {
            let limiter = if i == 0 { result.limiter } else { None };
            let seen = answers.quota.get(i).copied().unwrap_or_default();
            quota.insert(*k, seen.back(run.t0, r.window, limiter));
        }
        if opts.progress {
            clear_line();
            eprintln!("[{}/{total}] {}", step + 1, report::one_line(&result));
        }
        // Running together must not change a verdict: a scenario the client could not hold
        // (beside others, or alone in a moment this machine was busier) runs once more, alone,
        // once its keys' quota is back.
        let others = beside.remove(&j).unwrap_or_default();
        let limit = result.generator.as_ref().and_then(|g| g.client_limit());
        // Alone, with every user busy: the ceiling is a setting, not a moment; again would
        // meet it again.
        let again = match limit {
            None => false,
            Some(judge::ClientLimit::InFlightCeiling) => !others.is_empty(),
            Some(_) => true,
        };
        if again && !job.alone && !stop.requested() && !watch.gone() {
            let why = if others.is_empty() {
                "the client could not hold its schedule".to_string()
            } else {
                format!(
                    "the client could not hold its schedule beside {}",
                    others.into_iter().collect::<Vec<_>>().join(", ")
                )
            };
            if opts.progress {
                eprintln!(
                    "[{}/{total}] {}: again, alone: {why}",
                    step + 1,
                    r.scenario.name
                );
            }
            plan.steps[step].rerun = Some(why);
            jobs.push(Job { alone: true, ..job });
            pending.insert(0, jobs.len() - 1);
            superseded.push(result);
            continue;
        }
        results[step] = Some(result);
    }
    if let Some(t) = ticker {
        t.abort();
        clear_line();
    }
    killswitch.abort();
    let outage = watch.outage().map(|(_, o)| o);
    // The run was interrupted if that left a scenario cut short or not run.
    cut_short |= stop.requested() && results.iter().any(Option::is_none);
    let interrupted = stop.interrupted().filter(|_| cut_short);
    for (i, s) in scenarios.iter().enumerate() {
        if results[i].is_none() {
            let why = match (&outage, &interrupted, watch.broken()) {
                (Some(o), _, _) => format!("not run: {}", o.sentence()),
                (None, Some(i), _) => format!("not run: {}", i.sentence()),
                (None, None, Some(words)) => format!("not run: the target is broken: {words}"),
                (None, None, None) => "not run".into(),
            };
            results[i] = Some(ScenarioResult::skipped(s, &s.class(&spec), why));
        }
    }
    // Any answer lost after the outage began belongs to the outage: a scenario whose run
    // overlaps it is not judged, even one that ended before the outage was noticed.
    if let Some(o) = &outage {
        for (r, step) in results.iter_mut().zip(&plan.steps) {
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
    let mut report = LoadReport::new(&spec, &target, started_epoch);
    report.scenarios = results.into_iter().flatten().collect();
    report.superseded = superseded;
    report.outage = outage;
    report.interrupted = interrupted;
    report.run.duration_secs = started.elapsed().as_secs_f64();
    report.plan = Some(plan);
    report.finish(&labels);
    report.coverage = crate::registry::coverage::of(
        crate::registry::Command::Load,
        &report::rule_judgements(&report.scenarios),
    );
    // Nothing could run at all; an interrupted run still writes its reports.
    if report.interrupted.is_none()
        && report
            .scenarios
            .iter()
            .all(|s| s.verdict == ScenarioVerdict::Skipped)
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
