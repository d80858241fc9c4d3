//! The generator, built on goose, with an open arrival rate: every scheduled request is sent
//! at its due time whether or not earlier answers have come back (k6's constant-arrival-rate,
//! Gatling's open injection). goose sends one request per user at a time, so there are as many
//! goose users as requests may be in flight: the scenario's peak rate times the request
//! timeout, under a ceiling (`Sending::max_in_flight`). Each user loops: it takes the next
//! slot of the schedule, waits until it is due, sends it with the bare client
//! (`http::BareClient`: hyper without reqwest's layers, a quarter less CPU a request than
//! `GooseUser::request`), hands it to goose's metrics as `GooseUser::request` would
//! (`record_custom_request_duration`: goose's reports count every request, under the same
//! name) and records status, rate-limit headers, when it took the slot and the planned and
//! actual send times. Users share one client (one connection pool). The run ends when the
//! schedule is exhausted and every answer is in (each bounded by the request timeout): goose
//! runs one iteration per user, no fixed tail.
//!
//! Memory stays flat however long the run: the schedule is made slot by slot as users take
//! them, and each record goes to a `Sink` (the judge) as its answer arrives, with a watermark
//! (`settled`) below which every answer is in, so the sink can put them in send order while
//! holding only those in flight.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use goose::GooseAttack;
use goose::client::GooseClientBuilder;
use goose::config::GooseConfiguration;
use goose::goose::{
    GooseUser, Scenario as GooseScenario, Transaction, TransactionFunction, TransactionResult,
};

use super::dispatch::{Dispatch, Ticket, micros};
use super::error::LoadError;
use super::live::Live;
use super::record::{Record, Run, Sink};
use super::resolved::Resolved;
use super::scenario::Shape;
use super::schedule::{Schedule, Slot, Summary};
pub use super::sending::{DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_TIMEOUT, Sending, Timing};
use linkcert_http::{
    BareAnswer, BareClient, BaseUrl, ClientConfig, Failure, FailureKind, body_error_code,
};
use linkcert_rate::headers as rate_headers;
use linkcert_run::outage::{PROBE_BUDGET, Watch, diagnose};
use linkcert_run::target::{PlanKey, Target, TargetError};
use linkcert_spec::clock::now_epoch;

/// Error bodies read at most this far (the envelope is small).
const MAX_ERROR_BODY: usize = 64 * 1024;
/// A Retry-After longer than this is not waited out by the retry shape.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(120);

/// The sink before t = 0 (it needs the run's wall clock), then the sink.
enum SinkState<A> {
    Waiting(Box<dyn FnOnce(f64) -> A + Send>),
    Taking(A),
    Done,
}

/// Notes between two computations of the watermark.
const SETTLE_EVERY: u64 = 64;

struct Shared<A> {
    dispatch: Mutex<Dispatch>,
    answers: Mutex<SinkState<A>>,
    noted: AtomicU64,
    /// t = 0 of the schedule: the launch lead after the first user started (goose builds its
    /// users before it launches them, so the lead counts from the first launch), and the wall
    /// clock then (UTC epoch seconds).
    t0: OnceLock<(Instant, f64)>,
    lead: Duration,
    /// `Bearer <key>` per scenario key (None: the key cannot be a header value).
    auth: Vec<Option<reqwest::header::HeaderValue>>,
    /// Per operation: its URI (parsed once, not per request) and the request's name in goose's
    /// metrics.
    requests: Vec<Operation>,
    retry_shape: bool,
    retry_claimed: AtomicBool,
    /// The client every goose user sends with.
    bare: BareClient,
    /// The settings of the plain request that asks whether the target is still there.
    client: ClientConfig,
    /// Where a plain request asks whether the target is still there.
    base_url: BaseUrl,
    watch: Arc<Watch>,
    peak_in_flight: AtomicUsize,
    live: Arc<Live>,
}

/// The envelope's code of an error body: under overload nearly every answer is the same 429
/// body, so the last body parsed on this thread is remembered (parsing it was a twentieth of
/// the generator's time at its cap).
fn envelope_code(body: &[u8]) -> Option<String> {
    thread_local! {
        static LAST: std::cell::RefCell<(Vec<u8>, Option<String>)> =
            const { std::cell::RefCell::new((Vec::new(), None)) };
    }
    LAST.with_borrow_mut(|(last, code)| {
        if last.as_slice() != body {
            *code = body_error_code(body);
            last.clear();
            last.extend_from_slice(body);
        }
        code.clone()
    })
}

/// One operation of the mix, ready to send.
struct Operation {
    uri: Result<http::Uri, String>,
    name: String,
    /// Its query is one the spec forbids (`Resolved::forbidden`).
    forbidden: bool,
}

impl Operation {
    /// The URL is the base URL with the path appended, as `check` makes it (a base URL with a
    /// path of its own, `https://host/v1`, keeps it), normalised as reqwest would send it.
    fn new(base_url: &BaseUrl, path: &str, name: &str, forbidden: bool) -> Operation {
        let url = base_url.join(path);
        let uri = url::Url::parse(&url)
            .map_err(|e| e.to_string())
            .and_then(|u| http::Uri::try_from(u.as_str()).map_err(|e| e.to_string()))
            .map_err(|e| format!("{url}: {e}"));
        Operation {
            uri,
            name: name.to_string(),
            forbidden,
        }
    }
}

fn secs_since(t0: Instant, t: Instant) -> f64 {
    t.saturating_duration_since(t0).as_secs_f64()
}

/// Whether a body failure cost time (the target is then asked whether it is still there, as
/// after a timeout), rather than being a bad answer that came quickly.
async fn on_start<A: Sink>(s: Arc<Shared<A>>, _user: &mut GooseUser) -> TransactionResult {
    let _ = s.live.t0.set(s.t0());
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<A: Sink> Shared<A> {
    fn t0(&self) -> Instant {
        self.started().0
    }
    fn started(&self) -> (Instant, f64) {
        *self.t0.get_or_init(|| {
            let (at, wall) = (
                Instant::now() + self.lead,
                now_epoch() + self.lead.as_secs_f64(),
            );
            let mut answers = lock(&self.answers);
            if let SinkState::Waiting(make) = std::mem::replace(&mut *answers, SinkState::Done) {
                *answers = SinkState::Taking(make(wall));
            }
            (at, wall)
        })
    }

    /// The record of `ticket` to the sink; `then`: the same user sends again, not before
    /// this (seconds from t = 0), under the same ticket (returned).
    fn note(&self, rec: Record, ticket: Ticket, then: Option<f64>) -> Ticket {
        self.live.done.fetch_add(1, Ordering::Relaxed);
        if rec.admitted() {
            self.live.admitted.fetch_add(1, Ordering::Relaxed);
        } else if rec.throttled() {
            self.live.throttled.fetch_add(1, Ordering::Relaxed);
        }
        if let SinkState::Taking(a) = &mut *lock(&self.answers) {
            a.take(rec);
        }
        // Only once the sink has the record may its ticket go: the watermark never passes a
        // record the sink has not seen.
        let (next, settled) = {
            let mut d = lock(&self.dispatch);
            d.pending.remove(&ticket);
            let next = then.map(|t| Ticket(micros(t), ticket.1));
            if let Some(n) = next {
                d.pending.insert(n);
            }
            let every = self
                .noted
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(SETTLE_EVERY);
            // The clock is read only when the watermark is (one note in SETTLE_EVERY).
            let settled = every.then(|| d.settled(secs_since(self.t0(), Instant::now())));
            (next.unwrap_or(ticket), settled)
        };
        if let Some(t) = settled
            && let SinkState::Taking(a) = &mut *lock(&self.answers)
        {
            a.settled(t);
        }
        next
    }
}

async fn send<A: Sink>(
    s: &Shared<A>,
    user: &mut GooseUser,
    slot: Slot,
    due: f64,
    claimed: f64,
    retry: bool,
) -> Record {
    let op = &s.requests[slot.op];
    let mut rec = Record {
        retry,
        claimed,
        forbidden: op.forbidden,
        ..Record::slot(slot.key, slot.op, due)
    };
    let (Ok(uri), Some(Some(auth))) = (&op.uri, s.auth.get(slot.key)) else {
        rec.error = Some(Failure::new(
            FailureKind::Other,
            match &op.uri {
                Err(e) => format!("cannot build the request: {e}"),
                Ok(_) => "cannot build the request: the key is not a valid header value".into(),
            },
        ));
        return rec;
    };
    let t0 = s.t0();
    let sent = Instant::now();
    rec.sent = secs_since(t0, sent);
    let now = s.live.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    s.peak_in_flight.fetch_max(now, Ordering::Relaxed);
    let result = s.bare.get(uri.clone(), auth).await;
    s.live.in_flight.fetch_sub(1, Ordering::Relaxed);
    let received = Instant::now();
    rec.recv = secs_since(t0, received);
    goose_metric(user, &op.name, received - sent, &result).await;
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            rec.error = Some(s.met(e.failure()).await);
            return rec;
        }
    };
    let status = r.status();
    rec.status = Some(status);
    rec.read_rate_fields(&r.head.headers);
    if (200..300).contains(&status) {
        // Drained, not kept (so the connection is reused), under the cap of what the spec
        // allows for it: a body that never ends or trickles is no answer.
        let intake = r.intake(false);
        if let Err(e) = r.read_into(intake).await {
            rec.status = None;
            rec.error = Some(s.met(e.failure(status)).await);
            return rec;
        }
    } else {
        match r.read_capped(MAX_ERROR_BODY).await {
            Ok(body) => rec.code = envelope_code(&body.bytes),
            // A 429 whose body trickles costs a user its whole timeout: the target's, named.
            Err(e) => {
                let failure = e.failure(status);
                if failure.kind == FailureKind::Stalled {
                    rec.status = None;
                    rec.error = Some(s.failed(failure).await);
                    return rec;
                }
            }
        }
    }
    if s.watch.answered_to(sent) {
        s.ask_still_there().await;
    }
    rec
}

impl<A: Sink> Shared<A> {
    /// What a failure tells the watch. Before an answer's head, anything but bytes that break
    /// HTTP may be the target going away; after it, only a body that stalled (it cost time):
    /// anything else comes from a target that is there, answering badly.
    async fn met(&self, failure: Failure) -> Failure {
        let may_be_gone = match failure.status {
            None => !matches!(failure.kind, FailureKind::BadAnswer(_)),
            Some(_) => failure.kind == FailureKind::Stalled,
        };
        if may_be_gone {
            self.failed(failure).await
        } else {
            self.watch.bad_answer(&failure.to_string());
            failure
        }
    }

    /// Asks the target on a fresh connection whether it is still there (`outage::diagnose`).
    async fn ask_still_there(&self) {
        let budget = PROBE_BUDGET.min(self.client.timeout);
        let d = diagnose(&self.client, &self.base_url, budget).await;
        self.watch.confirmed(&d);
    }

    /// A request failed: after a costly failure, or a streak after answers, the target is
    /// asked whether it is still there (`outage::diagnose`); the failure carries what that
    /// found. A socket this machine refused says nothing of the target.
    async fn failed(&self, failure: Failure) -> Failure {
        if failure.kind == FailureKind::LocalLimit {
            return failure;
        }
        if self.watch.failed(&failure) {
            self.ask_still_there().await;
        }
        // Asking again could not be done here: the streak is this machine's, as the failure is.
        let here = self.watch.found_here();
        let mut failure = failure.with_found(self.watch.found());
        if here {
            failure.kind = FailureKind::LocalLimit;
        }
        failure
    }
}

/// The request to goose's metrics, as `GooseUser::request` would record it: named by its
/// operation, timed to the answer's head, a success only when 2xx, and a failure named by the
/// status (or by what the request ran into).
async fn goose_metric(
    user: &mut GooseUser,
    name: &str,
    took: Duration,
    result: &Result<BareAnswer, linkcert_http::BareError>,
) {
    let (status, error) = match result {
        Ok(r) if r.head.status.is_success() => (Some(r.status()), None),
        Ok(r) => (Some(r.status()), Some(format!("{}: {name}", r.head.status))),
        Err(e) => (None, Some(format!("{e}: {name}"))),
    };
    // It fails only for an empty name or method; operations are named.
    let _ = user
        .record_custom_request_duration(
            "GET",
            name,
            took,
            error.is_none(),
            status,
            error.as_deref(),
        )
        .await;
}

/// One goose user's whole run: slot after slot, each sent at its due time, until the schedule
/// is exhausted (goose runs this once per user).
async fn step<A: Sink>(s: Arc<Shared<A>>, user: &mut GooseUser) -> TransactionResult {
    let t0 = s.t0();
    let stop = linkcert_run::interrupt::process();
    loop {
        // The target went away, or the run was asked to stop: send nothing more (the slots
        // left are unsent).
        if s.watch.gone() || stop.requested() {
            return Ok(());
        }
        let now = secs_since(t0, Instant::now());
        let Some((slot, ticket)) = lock(&s.dispatch).take(now) else {
            return Ok(());
        };
        let claimed = secs_since(t0, Instant::now());
        let due = slot.due.as_secs_f64();
        // A stop ends the wait for the slot's time and for its answer: the request is
        // abandoned (a scenario cut short is not judged).
        let rec = tokio::select! {
            rec = async {
                tokio::time::sleep_until((t0 + slot.due).into()).await;
                send(&s, user, slot, due, claimed, false).await
            } => rec,
            () = stop.until_requested() => return Ok(()),
        };
        let retry =
            s.retry_shape && rec.throttled() && !s.retry_claimed.swap(true, Ordering::SeqCst);
        let wait = rec
            .retry_after
            .as_deref()
            .and_then(rate_headers::parse_retry_after)
            .map(|ra| ra.wait_secs(now_epoch()));
        // Exactly what Retry-After says, counted from when the 429 arrived.
        let retry_at = match (retry, wait) {
            (true, Some(wait)) => Some(
                rec.recv
                    + Duration::from_secs_f64(wait)
                        .min(MAX_RETRY_WAIT)
                        .as_secs_f64(),
            ),
            _ => None,
        };
        let ticket = s.note(rec, ticket, retry_at);
        if let Some(t) = retry_at {
            let at = t0 + Duration::from_secs_f64(t);
            let rec = tokio::select! {
                rec = async {
                    tokio::time::sleep_until(at.into()).await;
                    send(&s, user, slot, t, t, true).await
                } => rec,
                () = stop.until_requested() => return Ok(()),
            };
            s.note(rec, ticket, None);
        }
    }
}

/// One resolved scenario to run against the target through goose: `live` follows it,
/// `watch` (one for the whole load run) tells when the target went away, goose's own reports go
/// to `goose_dir`.
pub struct Attack<'a> {
    pub target: &'a Target,
    pub resolved: &'a Resolved,
    pub sending: &'a Sending,
    pub goose_dir: &'a Path,
    pub live: Arc<Live>,
    pub watch: Arc<Watch>,
}

impl Attack<'_> {
    /// Run it. `sink` makes, from the schedule and the wall clock at t = 0, what each record
    /// goes to; it comes back with the run.
    pub async fn run<A: Sink>(
        self,
        sink: impl FnOnce(&Summary, f64) -> A + Send + 'static,
    ) -> Result<(Run, A), LoadError> {
        let r = self.resolved;
        let summary = Summary::of_scenario(r);
        let timing = Timing::of(r, &summary, self.sending);
        let users = timing.users;
        let shared = Arc::new(self.shared(&summary, &timing, sink)?);
        let name = &r.scenario.name;
        let html = self.goose_dir.join(format!("goose-{name}.html"));
        let json = self.goose_dir.join(format!("goose-{name}.json"));
        let cfg = self.goose_config(users, [&html, &json]);
        let metrics = attack(cfg, name, &shared).await?;
        let goose_requests = metrics
            .requests
            .values()
            .map(|a| (a.success_count + a.fail_count) as u64)
            .sum();
        let (t0, wall0) = shared.started();
        let SinkState::Taking(sink) =
            std::mem::replace(&mut *lock(&shared.answers), SinkState::Done)
        else {
            return Err(LoadError::Goose("the run's answers were lost".into()));
        };
        let goose_reports = [html, json]
            .into_iter()
            .filter(|p| p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        let run = Run {
            t0,
            wall0,
            users,
            peak_in_flight: shared.peak_in_flight.load(Ordering::Relaxed),
            goose_requests,
            goose_reports,
            outage: self.watch.outage().map(|(_, o)| o),
            broken: self.watch.broken(),
        };
        Ok((run, sink))
    }

    /// What every user of the run shares: the schedule, the sink, the client and keys.
    fn shared<A: Sink>(
        &self,
        summary: &Summary,
        timing: &Timing,
        sink: impl FnOnce(&Summary, f64) -> A + Send + 'static,
    ) -> Result<Shared<A>, LoadError> {
        let (r, target) = (self.resolved, self.target);
        // Idle connections kept: as many as may be in flight, so none is reopened mid-run. A
        // certificate that does not parse stops the run here, as it stops `check`.
        let client = ClientConfig {
            user_agent: Some(concat!("linkcert-load/", env!("CARGO_PKG_VERSION"))),
            ..target.client_config(self.sending.request_timeout, timing.users)
        };
        let bare = client.build_bare().map_err(TargetError::from)?;
        self.live
            .total
            .store(summary.len as usize, Ordering::Relaxed);
        let _ = self.live.span.set(timing.span);
        let summary = summary.clone();
        Ok(Shared {
            dispatch: Mutex::new(Dispatch {
                schedule: Schedule::new(r).peekable(),
                pending: BTreeSet::new(),
                tickets: 0,
            }),
            answers: Mutex::new(SinkState::Waiting(Box::new(move |wall0| {
                sink(&summary, wall0)
            }))),
            noted: AtomicU64::new(0),
            t0: OnceLock::new(),
            lead: timing.lead,
            auth: r.keys.iter().map(bearer).collect(),
            requests: r
                .requests
                .iter()
                .enumerate()
                .map(|(i, (path, name))| {
                    let forbidden = r.forbidden.contains(&Some(i));
                    Operation::new(&target.base_url, path, name, forbidden)
                })
                .collect(),
            retry_shape: r.scenario.shape == Shape::RetryAfter,
            retry_claimed: AtomicBool::new(false),
            bare,
            client,
            base_url: target.base_url.clone(),
            watch: self.watch.clone(),
            peak_in_flight: AtomicUsize::new(0),
            live: self.live.clone(),
        })
    }

    /// goose's settings: `users` users, one iteration each, its reports to `reports`.
    fn goose_config(&self, users: usize, reports: [&std::path::PathBuf; 2]) -> GooseConfiguration {
        let mut cfg = GooseConfiguration::default();
        cfg.host = Some(self.target.base_url.to_string());
        cfg.users = Some(users);
        cfg.increase_rate = Some("2000".into());
        // Each user runs the whole schedule once (`step` loops); the run ends when all are done.
        cfg.iterations = Some(1);
        cfg.no_telnet = true;
        cfg.no_print_metrics = true;
        cfg.no_error_summary = true;
        // With iterations goose never resets its metrics: every request counts.
        cfg.no_reset_metrics = false;
        cfg.quiet = 1;
        cfg.accept_invalid_certs = self.target.insecure;
        cfg.report_file = reports.iter().map(|p| p.display().to_string()).collect();
        cfg
    }
}

/// The key's Authorization value, marked sensitive (None: the key cannot be a header value).
fn bearer(key: &PlanKey) -> Option<reqwest::header::HeaderValue> {
    let mut v = reqwest::header::HeaderValue::from_str(&key.authorization()).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// goose's attack: a `connect` transaction on start, then each user's whole run (`step`).
async fn attack<A: Sink>(
    cfg: GooseConfiguration,
    name: &str,
    shared: &Arc<Shared<A>>,
) -> Result<goose::metrics::GooseMetrics, LoadError> {
    let s1 = shared.clone();
    let start: TransactionFunction = Arc::new(move |user| {
        let s = s1.clone();
        Box::pin(async move { on_start(s, user).await })
    });
    let s2 = shared.clone();
    let tx: TransactionFunction = Arc::new(move |user| {
        let s = s2.clone();
        Box::pin(async move { step(s, user).await })
    });
    let scenario = GooseScenario::new(name)
        .register_transaction(Transaction::new(start).set_name("connect").set_on_start())
        .register_transaction(Transaction::new(tx).set_name("scheduled request"));
    // goose builds one client for its users to share (they send with ours), not one per
    // user: building a client is the costly part of making a user.
    let attack = GooseAttack::initialize_with_config(cfg)
        .and_then(|a| {
            a.set_client_builder_without_cookies(GooseClientBuilder::default().without_cookies())
        })
        .map_err(goose_error)?
        .register_scenario(scenario);
    attack.execute().await.map_err(goose_error)
}

/// goose's error with what it names: an invalid option says which and why (its `Display`
/// says only "invalid option or value specified").
fn goose_error(e: goose::GooseError) -> LoadError {
    LoadError::Goose(match e {
        goose::GooseError::InvalidOption {
            option,
            value,
            detail,
        } => format!("{option} = {value:?}: {detail}"),
        other => format!("{other} ({other:?})"),
    })
}
