//! `linkcert load`: throttling under load. Scenarios (`scenario`) become per-key arrival
//! schedules (`schedule`) that goose users follow (`engine`); `scheduler` decides which
//! scenarios run together; what each request met is the run record (`record`), judged
//! (`judge`) and written as JSON, Markdown and HTML with SVG charts (`report`, `chart`).

pub mod chart;
mod conductor;
mod dispatch;
pub mod engine;
pub mod error;
pub mod judge;
pub mod live;
pub mod merge;
pub mod metrics;
pub mod record;
pub mod report;
pub mod resolved;
pub mod scenario;
pub mod schedule;
pub mod scheduler;
pub mod sending;
pub mod shard;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};

pub use conductor::Prepared;
use conductor::{Answers, Conductor, Ending, Launch};
pub use error::LoadError;
pub use judge::{Finding, ScenarioResult, ScenarioVerdict};
use live::Progress;
pub use report::LoadReport;
use resolved::Resolved;
pub use scenario::Scenario;
use scenario::Skip;
use scheduler::{Job, Mode, Plan, Step};

use linkcert_run::target::Target;
use linkcert_spec::Spec;

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
    /// This process's share of the keys (`--shard`, `--shards`).
    pub shard: Option<shard::Shard>,
    /// When the run starts, UTC epoch seconds (`--start-at`): every shard at once.
    pub start_at: Option<f64>,
    /// Where the figures go while the run goes (`--metrics`), if anywhere.
    pub metrics: Option<Arc<metrics::Exporter>>,
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
            shard: None,
            start_at: None,
            metrics: None,
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
    target.identities().iter().map(|id| id.label()).collect()
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
    let mut resolved: Vec<Result<Resolved, Skip>> = scenarios
        .iter()
        .map(|s| s.resolve(spec, target).map_err(Skip::Cannot))
        .collect();
    if let Some(sh) = opts.shard {
        shard::take_share(target, &mut resolved, sh);
    }
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
            Err(why) => step.skipped = Some(why.to_string()),
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
/// The `conductor` keeps the account; this sends.
pub async fn execute(
    spec: Arc<Spec>,
    target: Target,
    prepared: Prepared,
    opts: &LoadOptions,
) -> Result<LoadReport, LoadError> {
    // A target that is not there at all cannot be judged: said at once, not as a run of
    // failed requests (a streak after answers is an outage: `outage`).
    linkcert_run::reach::reachable(&target).await?;
    // The target's clock, once: its Reset and Retry-After are judged against ours allowing
    // for it, as `check` does.
    let offset = target.clock_offset().await;
    let mut prepared = prepared;
    for r in prepared.resolved.iter_mut().flatten() {
        r.clock_offset = offset;
        // A custom limit (`plans`' Enterprise key): as its key states it, once, before the run.
        // A key that states none is not loaded (its rate stays 0); its load.limit says so.
        for key in r.custom.clone() {
            let (Some(k), Some((path, _))) = (r.keys.get(key), r.requests.first()) else {
                continue;
            };
            let stated = target.stated_limit(&k.key, path).await;
            if let Some(slot) = r.limits.get_mut(key) {
                *slot = stated.unwrap_or(0);
            }
        }
    }
    std::fs::create_dir_all(&opts.out).map_err(|source| LoadError::Io {
        path: opts.out.display().to_string(),
        source,
    })?;
    let late = match opts.start_at {
        Some(at) => Some(start_together(at).await?),
        None => None,
    };
    let total = prepared.scenarios.len();
    let progress = Progress::new(opts.progress, total);
    let mut conductor = Conductor::new(&spec, prepared, opts.mode(), progress);
    // One watch for the run, made now: its times (an outage's) count from the run's start, as
    // the plan's spans do. Once the target is gone, nothing more starts.
    let watch = Arc::new(linkcert_run::outage::Watch::new());
    // Asked to stop (SIGINT, SIGTERM): nothing more starts, and the users stop (`engine`).
    let stop = linkcert_run::interrupt::process();
    // goose's own end of an attack too (it resets its killswitch when an attack starts: none
    // starts after the request).
    // Ended with the run, however it ends (an error included).
    let _killswitch = AbortOnDrop(tokio::spawn(async move {
        stop.until_requested().await;
        goose::trigger_killswitch("linkcert was interrupted");
    }));
    // The report's `started_at`: the wall clock now, not when the report is put together.
    let started_epoch = linkcert_spec::clock::now_epoch_secs();
    let mut running = FuturesUnordered::new();
    loop {
        for launch in conductor.start_ready(stop.requested() || watch.gone()) {
            running.push(launch_one(&target, opts, watch.clone(), launch));
        }
        let Some((j, began, ran)) = running.next().await else {
            break;
        };
        let again = !stop.requested() && !watch.gone();
        conductor.finished(j, began, ran.transpose()?, stop.interrupted(), again);
    }
    let ending = Ending {
        outage: watch.outage().map(|(_, o)| o),
        interrupted: stop.interrupted(),
        broken: watch.broken(),
        stop_requested: stop.requested(),
    };
    let mut report = conductor.finish(&spec, &target, started_epoch, ending)?;
    report.start_late_secs = late;
    // The last figures written (a few seconds at most), off the runtime's workers.
    if let Some(m) = opts.metrics.clone() {
        report.metrics = tokio::task::spawn_blocking(move || m.finish()).await.ok();
    }
    Ok(report)
}

/// Wait for the agreed start (`--start-at`) and say how late it began, or refuse: a shard that starts more than
/// `START_TOLERANCE_SECS` late would load the target at another time than the others.
async fn start_together(at: f64) -> Result<f64, LoadError> {
    let now = linkcert_spec::clock::now_epoch();
    if now < at {
        let stop = linkcert_run::interrupt::process();
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_secs_f64(at - now)) => {}
            () = stop.until_requested() => {}
        }
    }
    let late = linkcert_spec::clock::now_epoch() - at;
    if late > shard::START_TOLERANCE_SECS {
        return Err(LoadError::LateStart { late_secs: late });
    }
    Ok(late)
}

/// A task that ends when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One scenario, once its keys' quota is back: its job, when it began, and its run (None when
/// an interrupt came first).
async fn launch_one(
    target: &Target,
    opts: &LoadOptions,
    watch: Arc<linkcert_run::outage::Watch>,
    launch: Launch,
) -> (
    usize,
    Instant,
    Option<Result<(record::Run, Answers), LoadError>>,
) {
    let stop = linkcert_run::interrupt::process();
    let Launch {
        job,
        resolved,
        keys,
        not_before,
        live,
        labels,
    } = launch;
    // An interrupt ends the wait for the keys' quota: the scenario does not start.
    tokio::select! {
        () = tokio::time::sleep_until(not_before.into()) => {}
        () = stop.until_requested() => {}
    }
    let began = Instant::now();
    if stop.requested() {
        return (job, began, None);
    }
    let rc = resolved.clone();
    let tap = opts.metrics.as_ref().map(|m| m.tap(&resolved, labels));
    let sink = move |schedule: &schedule::Summary, wall0: f64| {
        Answers::new(&rc, schedule, wall0, keys).with_tap(tap)
    };
    let attack = engine::Attack {
        target,
        resolved: &resolved,
        sending: &opts.sending,
        goose_dir: &opts.out,
        live,
        watch,
    };
    let ran = attack.run(sink).await.map(|(run, mut answers)| {
        answers.end_tap();
        (run, answers)
    });
    (job, began, Some(ran))
}
