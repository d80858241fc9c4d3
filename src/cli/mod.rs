//! The command line, in one place (`load`'s arguments in `load.rs`). Subcommands hand their
//! work to the library modules.

mod catalogue;
mod generate;
mod load;
mod merge;
mod replay;

use catalogue::CatalogueArgs;
use generate::CompletionsArgs;
pub use load::LOAD_REFERENCE_WINDOW_SECS;
use load::{LoadArgs, load};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{FromArgMatches, Parser, Subcommand};

use linkcert_check::{self as check, CheckOptions};
use linkcert_http::BaseUrl;
use linkcert_report::gate::{self, FailOn, accept::WaiverFile, baseline::Baseline};
use linkcert_report::github;
use linkcert_run::Outcome;
use linkcert_run::target::{Fixture, Profile, Target, parse_key_flag};
use linkcert_server::{self as server, KeySet, RunningServer, ServeConfig, TlsMode};
use linkcert_spec::window::RateWindow;
use linkcert_spec::{Limit, Spec};

use linkcert_check::IN_PROCESS_WINDOW_SECS;

#[derive(Parser)]
#[command(
    name = "linkcert",
    about = "Certify implementations of the Link Attribution Service API",
    long_about = "Certify implementations of the Link Attribution Service API.\n\n\
        serve  runs the reference implementation (HTTPS)\n\
        check  certifies a target against the spec (no --target: the built-in reference)\n\
        load   measures throttling under load, per key and per second (goose)\n\
        catalogue  lists every check, every load rule and every clause of the spec document\n\
        completions, man  shell completions and the manual page, generated from this definition\n\n\
        Everything is driven by specs/link-attribution.openapi.yaml (compiled in)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the reference implementation of the service.
    Serve(ServeArgs),
    /// Certify a target against the spec. Exit 0: passed, 1: failures, 2: could not run,
    /// 3: incomplete (checks attempted and not judged: a fixture no key owns, a target that
    /// stopped answering; see the reason and what to do) or interrupted (SIGINT, SIGTERM).
    Check(CheckArgs),
    /// List every check and load rule (id, title, clauses, level, what it needs) and every
    /// clause of the spec document with the checks and rules that enforce it, or why none does.
    Catalogue(CatalogueArgs),
    /// Measure throttling under load (goose). Exit 0: conforms, 1: does not, 2: could not run,
    /// 3: incomplete (the target went away) or interrupted (SIGINT, SIGTERM).
    Load(LoadArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout: every subcommand and flag on one page.
    Man,
}

/// Target options shared by `check` and `load`.
#[derive(clap::Args, Clone)]
pub struct TargetArgs {
    /// Base URL of the implementation to certify. Without it, the built-in reference is
    /// started in-process (HTTPS, its development keys, a 6 s window) and certified.
    #[arg(long, value_name = "URL")]
    target: Option<String>,
    /// A key of the target and its plan (free, pro, business, advanced, enterprise). Repeat it,
    /// also for one plan: two Free keys let the runner check that limits are per key.
    #[arg(long = "key", value_name = "PLAN=KEY")]
    keys: Vec<String>,
    /// Keys from a file, one PLAN=KEY a line (`#` comments and blank lines skipped), added to
    /// any --key: thousands of keys, and none of them in the process list.
    #[arg(long = "key-file", value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// The same settings as TOML (see examples/profile.toml); flags override it.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Length in seconds of the target's standard rate-limit window (default 60), for targets
    /// run with a shortened window; analytics windows are assumed to shrink in proportion.
    /// Without --target it sets the built-in reference's window (default 6 s).
    #[arg(long, visible_alias = "window", value_name = "SECONDS", value_parser = rate_window)]
    rate_window: Option<RateWindow>,
    /// Accept the target's certificate without verifying it (self-signed targets).
    #[arg(long)]
    insecure: bool,
}

#[derive(clap::Args)]
#[command(after_long_help = "\
Exit codes: 0 passed; 1 failures (not waived; --fail-on); 2 could not run; 3 incomplete: no
failure, but checks attempted and not judged, with why and what to do: a fixture every key
answered 404 for (bind it: --partner PLAN=ID, --tenant PLAN=ID), or a target that stopped
answering mid-run (when and how: refused, reset, timeout). report.json: `outcome`, `incomplete`.
A target that misbehaves (a body past what the spec allows, a trickle, a broken Content-Length,
bytes that are not HTTP) fails, in words naming what it did; a route that fails three times in
a row is given up and its remaining checks are not judged (docs/src/misbehaving.md).
Interrupted (Ctrl-C, SIGINT or SIGTERM): sending stops within about a second, what was cut short
or not reached is not judged, every report is still written (report.json: `interrupted`) and
the exit code is 3 whatever had been judged: the run did not finish, so it is no verdict. A
second signal quits at once (exit 130), without waiting for the reports.")]
struct CheckArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// A partnerId that exists in the target and may be deactivated (with
    /// --allow-destructive). PLAN=ID binds it to the key of that plan, whose workspace owns
    /// it; a bare ID is tried with each key whose plan may deactivate until one owns it.
    /// Each deactivation uses one up: 4 --partner and 3 --tenant run every family (http
    /// takes a partner, partners two of each, each sequence a partner and a tenant); with
    /// fewer, the report says which family went without and what to add.
    #[arg(long = "partner", value_name = "[PLAN=]ID")]
    partners: Vec<String>,
    /// A tenantId that exists in the target and may be deactivated (with
    /// --allow-destructive); PLAN=ID binds it as for --partner.
    #[arg(long = "tenant", value_name = "[PLAN=]ID")]
    tenants: Vec<String>,
    /// Run the checks that change the target's state (partner deactivation). Off: skipped,
    /// and the report says so.
    #[arg(long)]
    allow_destructive: bool,
    /// Seed of the generated cases: the same seed replays the same requests.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Generated cases per property (per operation, valid and invalid).
    #[arg(long, default_value_t = 64)]
    cases: u32,
    /// Requests in flight at once where they do not depend on each other (generated
    /// properties, credential mutations, renders, list relations), so a far target's round
    /// trips overlap. A family may run a few other checks beside such a group: at most twice
    /// this and two more in flight in all, but for the rate-limit bursts, which send at once on
    /// purpose.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Longest wait for one answer, in seconds. A target that stops answering in the middle
    /// of a run is noticed within a few of these: the run stops and is incomplete (exit 3).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    request_timeout: f64,
    /// Where the reports go (default: reports/<timestamp>/).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run only these checks: an id (qr.size), a family (pagination) or a prefix (ratelimit.re*).
    #[arg(long = "only", value_name = "PATTERN")]
    only: Vec<String>,
    /// Leave these checks out (same patterns as --only).
    #[arg(long = "skip", value_name = "PATTERN")]
    skip: Vec<String>,
    /// Accepted deviations: a TOML file of [[accept]] entries (check, operation, reason,
    /// ticket, expires). A failure an entry matches is reported as accepted, with its reason,
    /// and does not fail the run. See examples/accept-real-service.toml.
    #[arg(long, value_name = "FILE")]
    accept: Option<PathBuf>,
    /// An earlier report.json of the same target: the reports say what is new, fixed and
    /// still failing (by check id and operation).
    #[arg(long, value_name = "REPORT_JSON")]
    baseline: Option<PathBuf>,
    /// Which failures make the exit code 1: any, or only those the --baseline did not have.
    #[arg(long, value_enum, default_value_t = FailOn::Any)]
    fail_on: FailOn,
    /// CI integration: `github` writes ::error annotations and appends report.md to
    /// $GITHUB_STEP_SUMMARY (on by itself when GITHUB_ACTIONS=true).
    #[arg(long, value_enum, value_name = "SYSTEM")]
    ci: Option<Ci>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Ci {
    Github,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:8443")]
    addr: SocketAddr,
    /// Workspaces, plans and keys as TOML (docs/src/server.md). Default: the development set.
    #[arg(long, value_name = "FILE", conflicts_with = "dev_keys")]
    keys: Option<PathBuf>,
    /// The development set with N keys for each plan, lk_<plan>_1 to lk_<plan>_N (the first
    /// ones are the development keys; Free keeps at least two): for fleets of keys in `load`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    dev_keys: Option<u32>,
    /// Length of the standard rate-limit window in seconds (default: the spec's 60); the
    /// analytics window shrinks in proportion. For tests that must not wait a minute.
    #[arg(long, value_name = "SECONDS", value_parser = rate_window)]
    window: Option<RateWindow>,
    /// PEM certificate chain (with --tls-key). Default: a self-signed certificate.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        conflicts_with = "plain_http"
    )]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_cert",
        conflicts_with = "plain_http"
    )]
    tls_key: Option<PathBuf>,
    /// Serve unencrypted HTTP. The spec allows only HTTPS: for local benchmarking only.
    #[arg(long)]
    plain_http: bool,
    /// Also send the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) beside
    /// X-RateLimit-*, saying the same: `RateLimit-Policy: "standard";q=600;w=60` and
    /// `RateLimit: "standard";r=599;t=60`. Off by default: the spec names only X-RateLimit-*.
    #[arg(long)]
    ratelimit_fields: bool,
}

pub fn main() -> ExitCode {
    // Built by hand rather than `Cli::parse()`: the version is read from the compiled-in spec.
    let cli = match Cli::from_arg_matches(&generate::command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // Generated text needs no runtime; a closed stdout (`| head`) is not an error worth a panic.
    let printed = match &cli.command {
        Command::Completions(args) => Some(generate::completions(args, &mut std::io::stdout())),
        Command::Man => Some(generate::man(&mut std::io::stdout())),
        _ => None,
    };
    if let Some(result) = printed {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("linkcert: writing to stdout: {e}");
                Outcome::CannotRun.into()
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("linkcert: cannot start the async runtime: {e}");
            return Outcome::CannotRun.into();
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::Check(args) => check(args).await,
            Command::Load(args) => load(args).await,
            Command::Catalogue(args) => catalogue::catalogue(&args),
            Command::Completions(_) | Command::Man => Ok(ExitCode::SUCCESS),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("linkcert: {e:#}");
            Outcome::CannotRun.into()
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let spec = Arc::new(Spec::embedded().context("loading the built-in spec")?);
    let keys = match (&args.keys, args.dev_keys) {
        (Some(path), _) => Some(KeySet::from_file(&spec, path)?),
        (None, Some(n)) => Some(KeySet::development_fleet(&spec, n as usize)),
        (None, None) => None,
    };
    let tls = match (args.tls_cert, args.tls_key, args.plain_http) {
        (_, _, true) => TlsMode::Plain,
        (Some(cert), Some(key), _) => TlsMode::Files { cert, key },
        _ => TlsMode::SelfSigned,
    };
    let config = ServeConfig {
        addr: args.addr,
        keys,
        window: args.window,
        tls,
        ratelimit_fields: args.ratelimit_fields,
    };
    let running = server::start(spec.clone(), config).await?;
    println!("listening {}", running.base_url);
    print_keys(&running, args.keys.is_none());
    if let Some(n) = args.dev_keys {
        println!("  ({n} keys per plan: lk_<plan>_1 to lk_<plan>_{n})");
    }
    if let Some(pem) = &running.self_signed_pem {
        let path = std::env::temp_dir().join(format!("linkcert-{}.pem", running.addr.port()));
        std::fs::write(&path, pem).with_context(|| format!("writing {}", path.display()))?;
        println!(
            "certificate: self-signed, written to {p}\n  trust it: curl --cacert {p} ..., or linkcert check --insecure",
            p = path.display()
        );
    }
    println!("ready; Ctrl-C stops");
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    running.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// A duration as people write it: `60 s`, `0.5 s`.
fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn print_keys(running: &server::RunningServer, development: bool) {
    let keys = running.keys();
    println!(
        "keys ({}):",
        if development {
            "development set"
        } else {
            "from --keys"
        }
    );
    for (i, w) in keys.workspaces.iter().enumerate() {
        let windows = running.windows();
        let limits: Vec<String> = w
            .limits
            .iter()
            .map(
                |(class, limit)| match windows.iter().find(|(c, _)| c == class) {
                    Some((_, d)) if *limit != Limit::Unavailable => {
                        format!("{class} {limit} per {}", secs(*d))
                    }
                    _ => format!("{class} {limit}"),
                },
            )
            .collect();
        // A fleet's keys are summed up, not listed: thousands of lines say nothing.
        let shown = match w.keys.as_slice() {
            [first, _, _, _, .., last] => format!("{first} … {last} ({})", w.keys.len()),
            all => all.join(", "),
        };
        println!(
            "  {:<10} workspace {:<14} keys {}  limits: {}",
            w.plan,
            w.name,
            shown,
            limits.join(", ")
        );
        if let Some(data) = running.workspace_data(i) {
            let pairs: Vec<String> = data
                .partners
                .iter()
                .take(3)
                .map(|p| format!("{}/{}", p.partner_id, p.tenant_id))
                .collect();
            println!(
                "             partners (partnerId/tenantId): {}",
                pairs.join(" ")
            );
        }
    }
}

/// `--rate-window` and `serve --window`: a window, or clap's error naming the flag.
fn rate_window(s: &str) -> Result<RateWindow, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    RateWindow::from_secs(secs).map_err(|e| e.to_string())
}

/// The target `check` and `load` aim at: from flags and profile, or the in-process reference
/// (returned too, so it lives as long as the run), with its development keys, or
/// `keys_per_plan` of them (`check`: a third for the limiter).
pub async fn resolve_target(
    spec: &Arc<Spec>,
    args: &TargetArgs,
    window_for_reference: f64,
    keys_per_plan: Option<usize>,
) -> anyhow::Result<(Target, Option<RunningServer>)> {
    let profile = match &args.profile {
        Some(p) => Profile::from_file(p)?,
        None => Profile::default(),
    };
    let mut keys = Vec::new();
    for k in &args.keys {
        keys.push(parse_key_flag(k)?);
    }
    if let Some(path) = &args.key_file {
        let plans: Vec<&str> = spec.plans.iter().map(|p| p.name.as_str()).collect();
        keys.extend(linkcert_run::target::read_key_file(path, &plans)?);
    }
    if keys.is_empty() {
        keys = profile.plan_keys();
    }
    let base = args.target.clone().or(profile.base_url.clone());
    let from_profile = profile
        .rate_window_secs
        .map(RateWindow::from_secs)
        .transpose()
        .context("the profile's rate_window_secs")?;
    let window = args.rate_window.or(from_profile);
    let plans: Vec<&str> = spec.plans.iter().map(|p| p.name.as_str()).collect();
    let fixtures = |ids: &[String]| -> Vec<Fixture> {
        ids.iter().map(|s| Fixture::parse(s, &plans)).collect()
    };
    let mut target = Target {
        base_url: BaseUrl::default(),
        keys,
        rate_window: window.unwrap_or_default(),
        partner_ids: fixtures(&profile.fixtures.partner_ids),
        tenant_ids: fixtures(&profile.fixtures.tenant_ids),
        allow_destructive: profile.allow_destructive.unwrap_or(false),
        insecure: args.insecure,
        trust_pem: None,
    };
    let Some(base) = base else {
        // The built-in reference, with a short window; its own keys unless --key says others.
        let mut cfg = ServeConfig::in_process();
        cfg.keys = keys_per_plan.map(|n| KeySet::development_fleet(spec, n));
        cfg.window = Some(window.unwrap_or(RateWindow::from_secs(window_for_reference)?));
        let running = server::start(spec.clone(), cfg).await?;
        let mut own = running.target(spec);
        if !target.keys.is_empty() {
            own.keys = target.keys;
            running.lend_fixtures(&mut own, spec);
        }
        own.insecure = target.insecure;
        return Ok((own, Some(running)));
    };
    target.base_url = BaseUrl::parse(&base)?;
    Ok((target, None))
}

async fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    // Before anything else, and before any goose attack could install goose's own.
    linkcert_run::interrupt::install().context("handling SIGINT and SIGTERM")?;
    let spec = Arc::new(Spec::embedded().context("loading the built-in spec")?);
    let (mut target, reference) = resolve_target(
        &spec,
        &args.target,
        IN_PROCESS_WINDOW_SECS,
        Some(check::IN_PROCESS_KEYS_PER_PLAN),
    )
    .await?;
    let plans: Vec<&str> = spec.plans.iter().map(|p| p.name.as_str()).collect();
    let parse = |s: &String| Fixture::parse(s, &plans);
    target.partner_ids.extend(args.partners.iter().map(parse));
    target.tenant_ids.extend(args.tenants.iter().map(parse));
    target.allow_destructive |= args.allow_destructive;
    let replay = replay::command(&args, &target, reference.is_some());
    if !(args.request_timeout.is_finite() && args.request_timeout > 0.0) {
        anyhow::bail!(
            "--request-timeout must be a positive number of seconds, got {}",
            args.request_timeout
        );
    }
    // Every field is set today; the update keeps options added later at their defaults.
    #[allow(clippy::needless_update)]
    let opts = CheckOptions {
        request_timeout: Duration::from_secs_f64(args.request_timeout),
        seed: args.seed,
        cases: args.cases.max(1),
        concurrency: args.concurrency.max(1),
        only: args.only.clone(),
        skip: args.skip.clone(),
        progress: true,
        ..CheckOptions::default()
    };
    eprintln!(
        "linkcert check: {} (spec {} {}), plans: {}, seed {}",
        target.base_url,
        spec.title,
        spec.version,
        target.plans().join(", "),
        opts.seed
    );
    // Read the gate's inputs before the run, so a mistake in them costs nothing.
    let accept = args.accept.clone().or(profile_accept(&args.target)?);
    let waivers = accept
        .as_deref()
        .map(WaiverFile::read)
        .transpose()
        .context("reading the accepted deviations (--accept)")?;
    let baseline = args
        .baseline
        .as_deref()
        .map(Baseline::read)
        .transpose()
        .context("reading the baseline (--baseline)")?;
    if args.fail_on == FailOn::New && baseline.is_none() {
        anyhow::bail!("--fail-on new needs --baseline PATH/report.json (the run to compare with)");
    }
    let mut report = check::run(spec, target, opts).await?;
    report.replay = replay;
    if let Some(w) = &waivers {
        report.apply_waivers(w, &gate::accept::today());
    }
    if let Some(b) = &baseline {
        report.compare_with(b);
    }
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("reports").join(timestamp()));
    let written = report
        .write(&out)
        .with_context(|| format!("writing the reports to {}", out.display()))?;
    print_outcome(&report.summary(), &written);
    print_interrupted("check", report.interrupted.as_ref(), &out);
    if args.ci == Some(Ci::Github) || github::detected() {
        print!("{}", github::annotations(&report));
        github::append_summary(&report.markdown()).context("appending to $GITHUB_STEP_SUMMARY")?;
    }
    Ok(report.outcome(args.fail_on).into())
}

/// The profile's `accept = "FILE"`, relative to the profile's own folder.
fn profile_accept(args: &TargetArgs) -> anyhow::Result<Option<PathBuf>> {
    let Some(p) = &args.profile else {
        return Ok(None);
    };
    let profile = Profile::from_file(p)?;
    Ok(profile.accept.map(|a| {
        let a = PathBuf::from(a);
        match p.parent() {
            Some(dir) if a.is_relative() => dir.join(a),
            _ => a,
        }
    }))
}

/// The summary table, then where the reports went.
fn print_outcome(summary: &str, written: &[PathBuf]) {
    print!("{summary}");
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    println!("reports: {}", files.join(", "));
}

/// An interrupted run, on stderr: it is no verdict, and where what it did is.
fn print_interrupted(
    command: &str,
    interrupted: Option<&linkcert_run::interrupt::Interrupted>,
    out: &std::path::Path,
) {
    if let Some(i) = interrupted {
        eprintln!(
            "linkcert {command}: {}: the run did not finish, so it is no verdict (exit {}); the reports of what ran are in {}",
            i.sentence(),
            Outcome::Incomplete.code(),
            out.display()
        );
    }
}

/// `YYYYMMDD-HHMMSS` (UTC), for report folders.
fn timestamp() -> String {
    let secs = linkcert_spec::clock::now_epoch_secs();
    let t = linkcert_spec::clock::rfc3339(secs);
    t.replace(['-', ':'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string()
}
