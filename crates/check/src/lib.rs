//! `linkcert check`: certify a target against the spec.
//!
//! Families of checks, one module each (a check's id starts with its module's name), declared
//! once in `families.rs`, share a `Ctx`: the spec, the target, the probe that sends, and the
//! recorder that keeps findings, which takes a check as a `registry::Check` (`check_id!`, so
//! an id the registry lacks does not compile). Every exchange also passes `conformance`
//! (status listed, envelope, schema, rate headers). A page past the last is judged by one
//! rule, `past_end.rs`, wherever it is asked for.

pub mod auth;
pub mod cases;
pub mod conformance;
pub mod exchange;
mod families;
pub mod fixtures;
pub mod http;
pub mod limiter;
pub mod long_body;
pub mod pagination;
pub mod partners;
pub mod past_end;
pub mod probe;
pub mod qr;
pub mod ratelimit;
pub mod recorder;
pub mod sequence;
pub mod service;
pub mod status;
pub mod transport;

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linkcert_registry::{self as registry, Check, Command, check_id};
use linkcert_report::Report;
use linkcert_run::target::{PlanKey, Target};
use linkcert_spec::{Operation, Spec};
use probe::{Probe, Req};
use recorder::Recorder;

/// The window `check` runs the in-process reference with (no --target), so rate-limit checks
/// finish in seconds: the main job's, and the mutation measure's (`tests/mutants`).
pub const IN_PROCESS_WINDOW_SECS: f64 = 6.0;

/// The keys of each plan `check` runs the in-process reference with: the last of each is the
/// `limiter` family's (`limiter::own_keys`), the others shared by the other families.
pub const IN_PROCESS_KEYS_PER_PLAN: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Unreachable(#[from] linkcert_run::reach::Unreachable),
    #[error(transparent)]
    Target(#[from] linkcert_run::target::TargetError),
    #[error("no key given: pass --key PLAN=KEY (or [keys] in --profile)")]
    NoKeys,
}

#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub seed: u64,
    /// Generated cases per property.
    pub cases: u32,
    pub concurrency: usize,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// Draw a live progress line (on a terminal).
    pub progress: bool,
    /// Longest wait for one answer.
    pub request_timeout: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            seed: 1,
            cases: 64,
            concurrency: 4,
            only: Vec::new(),
            skip: Vec::new(),
            progress: false,
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// What every check family works with.
pub struct Ctx {
    pub spec: Arc<Spec>,
    pub target: Target,
    pub probe: Probe,
    pub rec: Recorder,
    pub opts: CheckOptions,
    /// The partners the run may deactivate, and which family took which.
    pub fixtures: fixtures::Ledger,
    /// The service as the run learned it (each workspace's tag list).
    pub service: service::Service,
    schemas: Mutex<conformance::SchemaCache>,
    progress: Progress,
    /// The keys the `limiter` family runs on beside the others (taken out of `target.keys`),
    /// and every key as given, in order, for the report.
    pub limiter_keys: Vec<PlanKey>,
    all_keys: Vec<PlanKey>,
}

impl Ctx {
    /// Whether `--only`/`--skip` let a check run.
    pub fn enabled(&self, check: Check) -> bool {
        self.selects(check.id())
    }

    /// Whether `--only`/`--skip` select the check of that id.
    fn selects(&self, id: &str) -> bool {
        registry::selected(id, &self.opts.only, &self.opts.skip)
    }

    /// Whether any check of a family (`pagination`, `qr`...) may run.
    pub fn family_enabled(&self, family: &str) -> bool {
        registry::family(family).any(|c| self.enabled(c))
    }

    /// An operation of the spec by id (the spec is ours: a missing one is a bug here).
    pub fn op(&self, id: &str) -> Option<&Operation> {
        self.spec.operation(id)
    }

    /// The key functional checks use: the strongest plan's, so they meet the fewest 429s.
    pub fn main_key(&self) -> Option<&PlanKey> {
        self.target.strongest_key(&self.spec)
    }

    /// A key whose plan may call `op` (minimum plan and rate class), strongest first.
    pub fn key_for(&self, op: &Operation) -> Option<&PlanKey> {
        self.keys_for(op).into_iter().next()
    }

    /// Every key whose plan may call `op`, strongest plan first, in the order given within a
    /// plan.
    pub fn keys_for(&self, op: &Operation) -> Vec<&PlanKey> {
        let mut keys: Vec<&PlanKey> = self
            .target
            .keys
            .iter()
            .filter(|k| {
                self.spec.plan(&k.plan).is_some_and(|p| {
                    self.spec.plan_allows(p, op)
                        && p.limit(&op.rate_class) != linkcert_spec::Limit::Unavailable
                })
            })
            .collect();
        keys.sort_by_key(|k| std::cmp::Reverse(self.spec.plan(&k.plan).map_or(0, |p| p.rank)));
        keys
    }

    /// Send (paced) and run the cross-cutting checks.
    pub async fn exchange(
        &self,
        op: &Operation,
        req: Req,
        expect: conformance::Expect,
    ) -> (probe::Exchange, conformance::Outcome) {
        let x = self.probe.send(req).await;
        let o = self.judged(op, &x, expect);
        (x, o)
    }

    /// The cross-cutting checks on an answer, and the progress line told.
    fn judged(
        &self,
        op: &Operation,
        x: &probe::Exchange,
        expect: conformance::Expect,
    ) -> conformance::Outcome {
        let o = self.judge(op, x, expect);
        self.progress.tick(&self.probe, &self.rec);
        o
    }

    /// Exchanges that do not depend on each other, `opts.concurrency` in flight at a time, so
    /// a far target's round trips overlap. Answers are judged as `exchange` judges them, in the
    /// order of `sends` (what is recorded does not depend on which answer came first), handed
    /// to `each` with their place in `sends`, and dropped: no more answers are held at once
    /// than are in flight (a hostile target's bodies are large).
    pub async fn exchange_each(
        &self,
        sends: Vec<(&Operation, Req, conformance::Expect)>,
        mut each: impl FnMut(usize, probe::Exchange, conformance::Outcome),
    ) {
        use futures::stream::{self, StreamExt};
        let mut judging = Vec::with_capacity(sends.len());
        // The futures made first: a closure inside the stream would not be `Send` for every
        // lifetime the family entry points need.
        let pending: Vec<_> = sends
            .into_iter()
            .map(|(op, req, expect)| {
                judging.push((op, expect));
                self.probe.send(req)
            })
            .collect();
        let mut answers = stream::iter(pending).buffered(self.opts.concurrency.max(1));
        let mut i = 0;
        while let Some(x) = answers.next().await {
            let Some(&(op, expect)) = judging.get(i) else {
                break;
            };
            let o = self.judged(op, &x, expect);
            each(i, x, o);
            i += 1;
        }
    }

    /// Skip every check of a family, saying why.
    pub fn skip_family(&self, family: &str, why: &str) {
        for c in registry::family(family) {
            self.rec.skip(c, "*", why);
        }
    }
}

/// Run every enabled family against the target and build the report.
pub async fn run(
    spec: Arc<Spec>,
    target: Target,
    opts: CheckOptions,
) -> Result<Report, CheckError> {
    let started = linkcert_spec::clock::now_epoch_secs();
    let clock = Instant::now();
    let mut ctx = prepare(spec.clone(), target, opts).await?;
    let stop = linkcert_run::interrupt::process();
    tokio::select! {
        spec = served_only(&ctx) => ctx.spec = Arc::new(spec),
        () = stop.until_requested() => {}
    }
    let ctx = Arc::new(ctx);
    let ran = families::run_families(&ctx, stop).await;
    // Over the whole record, once every family is done (or stopped).
    ratelimit::every_answer::judge(&ctx);
    ctx.progress.finish();
    let mut results = ctx.rec.results(|c| ctx.enabled(c));
    results.retain(|r| ctx.selects(&r.id));
    let interrupted = stop.interrupted().filter(|_| ran.cut_short);
    if let Some(i) = &interrupted {
        families::not_judged_after(i, &mut results, &ran.finished, |c| ctx.enabled(c));
    }
    let coverage = registry::coverage::of(Command::Check, &results);
    let given = Target {
        keys: ctx.all_keys.clone(),
        ..ctx.target.clone()
    };
    let mut report = Report::new(
        &spec,
        &given,
        ctx.opts.seed,
        started,
        clock.elapsed(),
        ctx.probe.requests_sent(),
        ctx.probe.throttled_met(),
        results,
        coverage,
    );
    report.interrupted = interrupted;
    report.families = ran.times;
    // The clients `http.clients` sent as, when it judged anything.
    if report
        .checks
        .iter()
        .any(|c| c.id == "http.clients" && c.cases > 0)
    {
        report.clients = linkcert_registry::clients::tried();
    }
    report.settle(ctx.probe.watch().outage().map(|(_, o)| o));
    Ok(report)
}

/// The run's context, once the target is valid, has keys and accepts connections.
async fn prepare(spec: Arc<Spec>, target: Target, opts: CheckOptions) -> Result<Ctx, CheckError> {
    target.validate(&spec)?;
    if target.keys.is_empty() {
        return Err(CheckError::NoKeys);
    }
    let client = target.client(opts.request_timeout, opts.concurrency.max(1) * 2)?;
    let max_wait = target.rate_window.duration() + Duration::from_secs(2);
    let probe = Probe::new(
        client,
        &target.base_url,
        target.insecure,
        max_wait,
        opts.request_timeout,
    )
    .with_fresh_client(target.client_config(opts.request_timeout, 0));
    // Reachability first: nothing accepting connections, or a certificate the client does not
    // trust, cannot be certified (exit 2). A target that accepts and then misbehaves (garbage,
    // resets, silence) is certified, and fails.
    linkcert_run::reach::reachable(&target).await?;
    let rec = Recorder::watching(target.secrets(), probe.watch());
    let all_keys = target.keys.clone();
    let mut target = target;
    let limiter_selected =
        registry::family("limiter").any(|c| registry::selected(c.id(), &opts.only, &opts.skip));
    let limiter_keys = if limiter_selected {
        limiter::own_keys(&target.keys)
    } else {
        Vec::new()
    };
    target.keys.retain(|k| !limiter_keys.contains(k));
    Ok(Ctx {
        rec,
        limiter_keys,
        all_keys,
        progress: Progress::new(opts.progress),
        fixtures: fixtures::Ledger::new(&target, |turn| {
            let selected = |id: &str| registry::selected(id, &opts.only, &opts.skip);
            // A family's checks that deactivate fixtures (the registry's needs), selected.
            let deactivates =
                |f: &str| registry::family(f).any(|c| c.def().needs.fixtures && selected(c.id()));
            match turn {
                fixtures::Turn::PartnersById => deactivates("partners"),
                // Its real deactivation is one part of a check that runs without fixtures.
                fixtures::Turn::Http => {
                    selected("http.media-type") || selected("http.neighbour-auth")
                }
                fixtures::Turn::FirstSequence => deactivates("sequence"),
                fixtures::Turn::PartnersBoth => selected("partners.choices"),
            }
        }),
        service: Default::default(),
        spec,
        probe,
        opts,
        target,
        schemas: Mutex::new(Default::default()),
    })
}

/// Checks that judge every operation of the spec one by one: where a stand-in is not served,
/// each says so.
const PER_OPERATION: [Check; 4] = [
    check_id!("auth.required"),
    check_id!("auth.accepted"),
    check_id!("status.valid-accepted"),
    check_id!("status.invalid-rejected"),
];

/// The spec less linkcert's stand-in operations (`x-linkcert-extension`) the target does not
/// serve. Decided once per run: a key that may call the stand-in meets 404 on its path. The
/// spec does not shape those operations, so a target without them is right; every check
/// that would have judged them is skipped with the reason, never failed.
async fn served_only(ctx: &Ctx) -> Spec {
    let mut spec = (*ctx.spec).clone();
    let mut kept = Vec::new();
    for op in std::mem::take(&mut spec.operations) {
        let key = ctx.key_for(&op).cloned();
        if let (true, Some(key)) = (op.extension, key) {
            let x = ctx.probe.send(auth::minimal_request(&op).key(&key)).await;
            if x.status() == Some(404) {
                let why = format!(
                    "{} is linkcert's stand-in, not an operation the spec shapes, and the target \
                     does not serve it (404 for the {} key)",
                    op.label(),
                    key.plan
                );
                for id in PER_OPERATION {
                    ctx.rec.skip(id, &op.label(), why.clone());
                }
                continue;
            }
        }
        kept.push(op);
    }
    spec.operations = kept;
    spec
}

/// The live progress line: only on a terminal, on stderr, overwritten in place.
struct Progress {
    on: bool,
    state: Mutex<(String, Instant)>,
}

impl Progress {
    fn new(on: bool) -> Progress {
        Progress {
            on: on && std::io::stderr().is_terminal(),
            state: Mutex::new((String::new(), Instant::now())),
        }
    }
    fn family(&self, name: &str) {
        if let Ok(mut s) = self.state.lock() {
            s.0 = name.to_string();
        }
        self.draw(None);
    }
    fn tick(&self, probe: &Probe, rec: &Recorder) {
        if self.on {
            self.draw(Some((probe, rec)));
        }
    }
    fn draw(&self, counts: Option<(&Probe, &Recorder)>) {
        if !self.on {
            return;
        }
        let Ok(mut s) = self.state.lock() else { return };
        // At most ten redraws a second.
        if counts.is_some() && s.1.elapsed() < Duration::from_millis(100) {
            return;
        }
        s.1 = Instant::now();
        let tail = counts.map_or(String::new(), |(p, r)| {
            format!(
                "  {} requests  {} failing checks",
                p.requests_sent(),
                r.failing()
            )
        });
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2Kchecking {:<11}{tail}", s.0);
        let _ = err.flush();
    }
    fn finish(&self) {
        if self.on {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkcert_report::model::CheckResult;
    use linkcert_run::interrupt::{Interrupted, Signal};
    use linkcert_spec::verdict::Verdict;

    fn result(id: &str, verdict: Verdict, cases: u64) -> CheckResult {
        CheckResult {
            id: id.into(),
            title: id.into(),
            clause: String::new(),
            operation: "GET /tags".into(),
            verdict,
            cases,
            violations: u64::from(verdict == Verdict::Fail),
            findings: Vec::new(),
            skipped: None,
            partly_skipped: None,
            accepted: None,
            not_judged: None,
        }
    }

    /// After an interrupt only families that ran to their end are judged, and never the
    /// checks every exchange feeds; a failure seen in a family cut short is not kept.
    #[test]
    fn an_interrupt_leaves_only_finished_families_judged() {
        let i = Interrupted {
            signal: Signal::Int,
            at: "2026-11-23T15:10:37Z".into(),
            after_secs: 3.0,
        };
        let mut results = vec![
            result("auth.required", Verdict::Pass, 12),
            result("status.listed", Verdict::Pass, 40),
            result("qr.size", Verdict::Fail, 3),
            result("pagination.walk", Verdict::Skipped, 0),
        ];
        families::not_judged_after(&i, &mut results, &["auth", "status"], |c| {
            c.family() != "partners"
        });
        let verdict = |id: &str| {
            let r = results.iter().find(|r| r.id == id).unwrap();
            (r.verdict, r.cases, r.violations)
        };
        assert_eq!(verdict("auth.required"), (Verdict::Pass, 12, 0));
        assert_eq!(verdict("status.listed"), (Verdict::NotJudged, 0, 0));
        assert_eq!(verdict("qr.size"), (Verdict::NotJudged, 0, 0));
        assert_eq!(verdict("pagination.walk").0, Verdict::Skipped);
        // Enabled and never reached: listed, not judged; not enabled: not listed.
        assert_eq!(verdict("ratelimit.recovers").0, Verdict::NotJudged);
        assert!(!results.iter().any(|r| r.id.starts_with("partners.")));
        assert!(results.iter().all(|r| {
            r.verdict != Verdict::NotJudged
                || r.not_judged
                    .as_deref()
                    .is_some_and(|w| w.contains("interrupted by SIGINT"))
        }));
    }
}
