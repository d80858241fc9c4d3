//! `linkcert load` (crates/load/src/): throttling under load.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::{TargetArgs, print_interrupted, print_outcome, resolve_target, timestamp};
use linkcert_run::Outcome;
use linkcert_spec::Spec;

/// The standard window the in-process reference runs with for `load`: long enough that the
/// Advanced scenario's rate stays within what the generator holds, short enough that every
/// built-in scenario runs in about a minute.
pub const LOAD_REFERENCE_WINDOW_SECS: f64 = 6.0;

#[derive(clap::Args)]
#[command(after_long_help = "\
Scenarios are TOML files (scenarios/README.md): a plan, a rate class, an operation mix, an
offered rate as a multiple of the plan's limit, a duration in windows and a shape (steady,
burst-then-steady, straddle, two-keys, retry-after, fleet). The built-in ones: --scenario above.

Every request goes through goose, at an open arrival rate: each is sent at its due time
whether or not earlier answers have come back, with up to the scenario's peak rate times
--request-timeout requests in flight (at most --max-in-flight), so a target 500 ms away is
loaded as on time as one on loopback. Each scenario reports, per key and per second, what was
offered, sent, admitted (2xx), throttled (429), the target's latency (p50/p99) and what the
client failed to send. A scenario whose generator held back more than 2% of its schedule, or
sent it over a tenth of a window late, is reported as client-saturated, not judged, with the
limit it met (the in-flight ceiling, sockets refused by this machine, or the send loop's own
lag). Without --target the built-in reference
runs in-process with a 6 s window (or --rate-window).

Scenarios on different keys run at the same time, as long as their combined peak rate stays
under --max-rate; a key's scenarios follow one another in the order given, each once the key's
quota is back (one window after its last 2xx, or the Reset of a limiter seen to be a fixed
window, or later if the target's Reset or Retry-After says so). A scenario the client could not
hold beside others runs again alone, and the report says so. The plan (who runs with whom, on
which keys, the estimated wall time) is printed first. --sequential runs one scenario at a
time.

Exit codes: 0 throttling conforms, 1 it does not, 2 could not run (or client saturated), 3
incomplete: the target stopped answering mid-run (refused, reset, or no answer within
--request-timeout); linkcert stops sending then, and load.json says when and how. A scenario
whose run overlaps the outage is not judged, even one that ended before it was noticed. A
target that answers in ways no answer may (a 2xx body past 4 MB or one that trickles, no HTTP,
headers past 64 KB) fails load.answers in words naming it; one that does so everywhere is
broken: the run stops there, exit 1 (docs/src/misbehaving.md).
Interrupted (Ctrl-C, SIGINT or SIGTERM): sending stops within about a second, no scenario
starts after it, the one cut short is not judged, every report is still written (load.json:
`interrupted`) and the exit code is 3 whatever had been judged: the run did not finish, so it
is no verdict. A second signal quits at once (exit 130), without waiting for the reports.")]
pub(super) struct LoadArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// A scenario: a built-in name, a name in ./scenarios/, or a path to a TOML file. Repeat
    /// it; without it, every built-in scenario whose plan has a key.
    #[arg(long = "scenario", value_name = "NAME|FILE", long_help = super::catalogue::scenario_help())]
    scenarios: Vec<String>,
    /// Where the reports go (default: reports/<timestamp>-load/): load.json, load.md,
    /// load.html and goose's own HTML and JSON reports per scenario.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run the scenarios one at a time, in order. By default scenarios on different keys run
    /// together, and a key's scenarios follow one another once its quota is back.
    #[arg(long)]
    sequential: bool,
    /// Scenarios run together peak at most at this many requests per second, combined (one
    /// scenario alone may exceed it).
    #[arg(long, value_name = "PER_SECOND", default_value_t = linkcert_load::DEFAULT_MAX_RATE)]
    max_rate: f64,
    /// Seconds to wait for each answer; an answer slower than this counts as none. With the
    /// peak rate it sets how many requests may be in flight.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    request_timeout: f64,
    /// The most requests in flight at once per scenario (goose users), whatever the rate and
    /// timeout ask for.
    #[arg(long, value_name = "N", default_value_t = linkcert_load::engine::DEFAULT_MAX_IN_FLIGHT)]
    max_in_flight: usize,
    /// Also write the run's figures to Prometheus while it goes: prometheus-rw=URL, the
    /// remote-write endpoint of a Prometheus started with --web.enable-remote-write-receiver
    /// (http://HOST:9090/api/v1/write). Every second: sent, admitted, throttled and failed
    /// per scenario and plan (and for its few worst keys, by label), latency percentiles, the
    /// generator's lateness and the limit, each series with the run id and shard
    /// (docs/src/prometheus.md; a Grafana dashboard in deploy/grafana/). A Prometheus that is
    /// down or slow delays no request and changes no verdict: the samples it did not take are
    /// counted in load.json and the summary.
    #[arg(long, value_name = "SINK")]
    metrics: Option<String>,
    #[command(flatten)]
    sharding: ShardArgs,
    #[command(subcommand)]
    command: Option<LoadCommand>,
}

/// A run split over processes or machines by key (docs/src/sharding.md).
#[derive(clap::Args)]
struct ShardArgs {
    /// Run shard I of N (1-based): a share of the keys, the same for every shard given the
    /// same keys; a key and its scenarios stay in one shard. --out is then the run's
    /// directory: this shard writes DIR/shard-I-of-N/, and `load merge` joins them.
    /// --max-rate is per shard.
    #[arg(long, value_name = "I/N", value_parser = shard_arg, conflicts_with = "shards", requires = "start_at")]
    shard: Option<linkcert_load::shard::Shard>,
    /// N shards, this one's index read from JOB_COMPLETION_INDEX (0-based, as Kubernetes
    /// Indexed Jobs set it): a static manifest needs no arithmetic.
    #[arg(long, value_name = "N", requires = "start_at")]
    shards: Option<usize>,
    /// When every shard starts its schedule: UTC epoch seconds or RFC 3339
    /// (2026-11-26T03:00:00Z). A shard that cannot start within 2 s of it refuses: its part
    /// is incomplete (exit 3), and so is the merged run.
    #[arg(long, value_name = "TIME", value_parser = linkcert_load::shard::parse_start_at)]
    start_at: Option<f64>,
    /// The run's name, the same for every shard (`merge` refuses shards of another run).
    /// Default: derived from --start-at, the target, the scenarios and the shard count.
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
}

#[derive(clap::Subcommand)]
enum LoadCommand {
    /// Join the shards of one run into one verdict: load.json, load.md and load.html as if
    /// one process had run it all. Exit 0 pass, 1 fail, 3 incomplete (a shard missing,
    /// failed or started late), 2 shards that are not of one run.
    Merge(super::merge::MergeArgs),
}

fn shard_arg(s: &str) -> Result<linkcert_load::shard::Shard, String> {
    linkcert_load::shard::Shard::parse(s).map_err(|e| e.to_string())
}

impl ShardArgs {
    /// The shard this process runs, if any (`--shards` reads JOB_COMPLETION_INDEX).
    fn shard(&self) -> anyhow::Result<Option<linkcert_load::shard::Shard>> {
        use linkcert_load::shard::{INDEX_ENV, Shard};
        Ok(match (self.shard, self.shards) {
            (Some(s), _) => Some(s),
            (None, Some(n)) => Some(Shard::from_index(
                n,
                std::env::var(INDEX_ENV).ok().as_deref(),
            )?),
            (None, None) => None,
        })
    }
}

pub(super) async fn load(args: LoadArgs) -> anyhow::Result<ExitCode> {
    use linkcert_load::{self as load, LoadOptions, Scenario};
    if let Some(LoadCommand::Merge(m)) = args.command {
        return super::merge::merge(m);
    }
    // Before anything else, and before any goose attack: goose's own Ctrl-C handler then
    // finds ours and stands aside, so it never decides a verdict.
    linkcert_run::interrupt::install().context("handling SIGINT and SIGTERM")?;
    // Parsed here, not by clap, whose error would echo the value (a URL's credentials).
    let sink = args
        .metrics
        .as_deref()
        .map(load::metrics::MetricsSink::parse);
    let sink = sink.transpose().map_err(anyhow::Error::msg)?;
    let spec = Arc::new(Spec::embedded().context("loading the built-in spec")?);
    let scenarios = if args.scenarios.is_empty() {
        Scenario::default_run()?
    } else {
        args.scenarios
            .iter()
            .map(|s| Scenario::load(s))
            .collect::<Result<Vec<_>, _>>()?
    };
    let (target, _reference) =
        resolve_target(&spec, &args.target, LOAD_REFERENCE_WINDOW_SECS, None).await?;
    let shard = args.sharding.shard()?;
    let run_out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(format!("{}-load", timestamp())));
    let out = match shard {
        Some(sh) => run_out.join(sh.dir_name()),
        None => run_out,
    };
    eprintln!(
        "linkcert load: {} (standard window {} s), {} scenario(s), reports in {}",
        target.base_url,
        target.rate_window.secs(),
        scenarios.len(),
        out.display()
    );
    check_numbers(&args)?;
    let opts = LoadOptions {
        progress: load::live::progress_wanted(),
        sequential: args.sequential,
        max_rate: args.max_rate,
        sending: load::engine::Sending {
            request_timeout: Duration::from_secs_f64(args.request_timeout),
            max_in_flight: args.max_in_flight,
        },
        shard,
        start_at: args.sharding.start_at,
        ..LoadOptions::new(out.clone())
    };
    let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let prepared = load::prepare(&spec, &target, scenarios, &opts)?;
    eprint!("{}", prepared.plan);
    let meta = match shard {
        Some(sh) => Some(
            super::merge::shard_meta(&target, sh, &args.sharding.run_id, opts.start_at, names)
                .await,
        ),
        None => None,
    };
    let mut opts = opts;
    if let Some(sink) = &sink {
        // The shards of one run share its id; a run in one process names itself.
        let run_id = meta.as_ref().map(|m| m.run_id.clone());
        let run_id = run_id.or_else(|| args.sharding.run_id.clone());
        opts.metrics = Some(start_metrics(sink, run_id, shard)?);
    }
    let labels = prepared.labels.clone();
    let report = match load::execute(spec, target, prepared, &opts).await {
        Err(load::LoadError::LateStart { late_secs }) if meta.is_some() => {
            let why = load::LoadError::LateStart { late_secs }.to_string();
            return super::merge::refused_shard(meta, labels, &out, &why);
        }
        other => other?,
    };
    if let Some(m) = meta {
        super::merge::write_shard(m, &report, labels, &out)?;
    }
    let written = report
        .write(&out)
        .with_context(|| format!("writing the reports to {}", out.display()))?;
    print_outcome(&report.summary(), &written);
    if report.interrupted.is_some() {
        print_interrupted("load", report.interrupted.as_ref(), &out);
        return Ok(Outcome::Incomplete.into());
    }
    Ok(exit_code(&report))
}

/// `--metrics`: the exporter writing to `sink`, every series labelled with the run and shard.
fn start_metrics(
    sink: &linkcert_load::metrics::MetricsSink,
    run_id: Option<String>,
    shard: Option<linkcert_load::shard::Shard>,
) -> anyhow::Result<Arc<linkcert_load::metrics::Exporter>> {
    use linkcert_load::metrics::{Exporter, series::RunLabels};
    let run = RunLabels {
        run_id: run_id.unwrap_or_else(|| format!("run-{}", timestamp())),
        shard: shard.map_or_else(|| "1/1".to_string(), |s| s.label()),
    };
    eprintln!(
        "linkcert load: writing the figures to {} every second (run_id {}, shard {})",
        sink.shown(),
        run.run_id,
        run.shard
    );
    let exporter = Exporter::start(sink, run).context("starting the metrics exporter's thread")?;
    Ok(Arc::new(exporter))
}

/// The numbers clap cannot check alone.
fn check_numbers(args: &LoadArgs) -> anyhow::Result<()> {
    if !(args.request_timeout.is_finite() && args.request_timeout > 0.0) {
        anyhow::bail!(
            "--request-timeout must be a positive number of seconds, got {}",
            args.request_timeout
        );
    }
    if !(args.max_rate.is_finite() && args.max_rate > 0.0) {
        anyhow::bail!(
            "--max-rate must be a positive number of requests per second, got {}",
            args.max_rate
        );
    }
    if args.max_in_flight == 0 {
        anyhow::bail!("--max-in-flight must be at least 1");
    }
    Ok(())
}

/// The exit code of a finished run (`LoadReport::outcome`), and what to do when it is no verdict.
fn exit_code(report: &linkcert_load::LoadReport) -> ExitCode {
    use linkcert_load::ScenarioVerdict as V;
    match report.verdict {
        V::Incomplete => {
            eprintln!(
                "linkcert load: incomplete: {}",
                report
                    .outage
                    .as_ref()
                    .map_or("a scenario was not judged".into(), |o| o.sentence())
            );
            eprintln!("check that the target is up and reachable, then run again");
        }
        V::ClientSaturated => eprintln!(
            "linkcert load: the generator could not hold the schedule (client saturated): throttling not judged"
        ),
        _ => {}
    }
    report.outcome().into()
}
