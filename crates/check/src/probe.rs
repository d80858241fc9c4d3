//! The runner's HTTP: every request a check makes is sent from here (what a request is and
//! how an exchange is written down: `exchange`). Bodies are read up to a
//! cap, time is bounded, transport failures become values (never panics), and each exchange
//! can be written down with secrets redacted and a one-line curl to reproduce it.
//!
//! Paced sends respect the target's own X-RateLimit-Remaining/-Reset and Retry-After, so
//! functional checks are not drowned in 429s on low plans.
//!
//! Every exchange also tells the `outage::Watch` whether an answer came back: a target that
//! goes away in the middle of a run (or turns out broken) is noticed here, and nothing more is
//! sent to it. A route that keeps failing is given up on its own: its later requests are not
//! sent, and what they would have judged is not judged, while the other routes go on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use super::exchange::{Exchange, Req, redact};
use linkcert_http::BaseUrl;
use linkcert_http::{ClientConfig, Failure, FailureKind, NotSent, Resp, describe, read_answer};
use linkcert_rate::headers as rate_headers;
pub use linkcert_report::model::ExchangeRecord;
use linkcert_run::outage::{PROBE_BUDGET, Watch};
use linkcert_spec::clock::now_epoch;

/// Largest image read from a target (GET /qr, which the spec does not bound); the rest is
/// dropped and the answer marked truncated. Other answers have the JSON cap
/// (`http::MAX_JSON_BODY`) and are refused past it.
pub const MAX_BODY: usize = linkcert_http::MAX_IMAGE_BODY;
/// 429s a paced send waits out before giving up.
const PACED_RETRIES: u32 = 3;
/// After this many transport failures in a row on one route (method and path), the route is
/// given up: its further sends fail at once, so a route that hangs or trickles cannot make a
/// run last for hours, and the other routes go on.
const GIVE_UP_ROUTE_AFTER: u64 = 3;

#[derive(Default, Clone, Copy)]
struct Pace {
    remaining: Option<u64>,
    /// UTC epoch seconds.
    reset_epoch: Option<f64>,
    retry_until: Option<Instant>,
}

tokio::task_local! {
    /// Set in the task of a family running beside the others: its requests are counted apart.
    static BESIDE: bool;
}

/// `f`, its requests counted as sent beside the others (`requests_sent_beside`).
pub fn beside<F: std::future::Future>(f: F) -> impl std::future::Future<Output = F::Output> {
    BESIDE.scope(true, f)
}

/// Requests kept in the request log at most (a run's own, about 9,000 in the main job):
/// past it, the log stops growing and says so (`Probe::take_request_log`).
const MAX_LOGGED: usize = 2_000_000;

/// One request as the wire saw it: its credentials (every Authorization header, and the query,
/// where a key may ride too), the route, and when it went and came back (UTC epoch seconds).
/// What every answer's rate-limit fields are judged against, whichever family sent it
/// (`ratelimit::every_answer`).
#[derive(Clone, Debug)]
pub struct Sent {
    pub authorization: Vec<String>,
    pub query: String,
    pub method: http::Method,
    pub path: String,
    pub said: linkcert_rate::quota::Said,
    /// Whether an answer came (else `said.recv` is when the runner let it go, not when the
    /// target decided it).
    pub answered: bool,
    /// The IETF RateLimit fields the answer carried, well formed (`ratelimit::fields`).
    pub fields: Option<Box<linkcert_rate::headers::ietf::Fields>>,
}

/// Sends requests to one target and keeps count.
pub struct Probe {
    client: reqwest::Client,
    base_url: BaseUrl,
    insecure: bool,
    /// Longest a paced send waits for quota (about one window).
    max_wait: Duration,
    pace: Mutex<HashMap<String, Pace>>,
    sent: AtomicU64,
    /// Of `sent`, those sent from a family running beside the others (`beside`).
    sent_beside: AtomicU64,
    throttled: AtomicU64,
    /// Per route (`GET /tags`): transport failures in a row, and the first of them.
    routes: Mutex<HashMap<String, (u64, String)>>,
    timeout: Duration,
    watch: Arc<Watch>,
    /// How a fresh connection asks whether the target is still there (`outage::diagnose`):
    /// it sees the target as a new client would, not a pooled connection's end.
    fresh: Option<ClientConfig>,
    /// Every request sent, and whether the log filled up.
    log: Mutex<(Vec<Sent>, bool)>,
}

impl Probe {
    /// `timeout`: the budget of one answer, body included (the client's own timeout).
    pub fn new(
        client: reqwest::Client,
        base_url: &BaseUrl,
        insecure: bool,
        max_wait: Duration,
        timeout: Duration,
    ) -> Probe {
        Probe {
            client,
            base_url: base_url.clone(),
            insecure,
            max_wait,
            pace: Mutex::new(HashMap::new()),
            sent: AtomicU64::new(0),
            sent_beside: AtomicU64::new(0),
            throttled: AtomicU64::new(0),
            routes: Mutex::new(HashMap::new()),
            timeout,
            watch: Arc::new(Watch::new()),
            fresh: None,
            log: Mutex::new((Vec::new(), false)),
        }
    }

    /// The settings of the fresh connection that asks whether the target is still there.
    pub fn with_fresh_client(mut self, config: ClientConfig) -> Probe {
        self.fresh = Some(config);
        self
    }

    /// Whether the target stopped answering, or is broken: nothing more is sent.
    pub fn gave_up(&self) -> bool {
        self.watch.gone()
    }

    /// What the probe knows of the target's being there (shared with the recorder).
    pub fn watch(&self) -> Arc<Watch> {
        self.watch.clone()
    }

    pub fn base_url(&self) -> &BaseUrl {
        &self.base_url
    }
    /// Requests sent from within `beside`: the families running beside the others.
    pub fn requests_sent_beside(&self) -> u64 {
        self.sent_beside.load(Ordering::Relaxed)
    }
    pub fn requests_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
    /// Every request sent, in the order answers came, and whether the log filled up (then it
    /// holds the first `MAX_LOGGED`); taken, once the families are done.
    pub fn take_request_log(&self) -> (Vec<Sent>, bool) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        (std::mem::take(&mut log.0), log.1)
    }

    fn log_sent(&self, req: &Req, sent: f64, answer: Option<&Resp>) {
        let authorization = req
            .all_headers()
            .into_iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            .map(|(_, v)| v)
            .collect();
        let h = |name| answer.and_then(|r| r.header(name));
        let said = linkcert_rate::quota::Said::read(
            sent,
            now_epoch(),
            answer.map_or(0, |r| r.status),
            h(rate_headers::REMAINING),
            h(rate_headers::RESET),
        );
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.0.len() >= MAX_LOGGED {
            log.1 = true;
            return;
        }
        log.0.push(Sent {
            authorization,
            query: req.query_string(),
            method: req.method.clone(),
            path: req.path.clone(),
            said,
            answered: answer.is_some(),
            fields: answer
                .and_then(|r| {
                    let pairs = r.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()));
                    linkcert_rate::headers::ietf::read_pairs(pairs)
                        .ok()
                        .flatten()
                })
                .map(Box::new),
        });
    }

    /// 429s met by paced sends (waited out and retried).
    pub fn throttled_met(&self) -> u64 {
        self.throttled.load(Ordering::Relaxed)
    }

    /// Send once, as is: no pacing, no retry. For checks that measure throttling.
    pub async fn send_raw(&self, req: Req) -> Exchange {
        let url = req.url(&self.base_url);
        let result = self.transmit(&req, &url).await;
        if let (Some(k), Ok(r)) = (&req.key, &result) {
            self.note(&k.key, r);
        }
        Exchange {
            req,
            url,
            result,
            insecure: self.insecure,
        }
    }

    /// Send, waiting first if the key has no quota left, and waiting out a 429 (a few times).
    pub async fn send(&self, req: Req) -> Exchange {
        let mut tries = 0;
        loop {
            if let Some(k) = &req.key {
                self.wait_for_quota(&k.key).await;
            }
            let x = self.send_raw(req.clone()).await;
            if !x.throttled() || tries >= PACED_RETRIES {
                return x;
            }
            self.throttled.fetch_add(1, Ordering::Relaxed);
            tries += 1;
            if req.key.is_none() {
                // Unauthenticated 429: back off by Retry-After if given.
                let now = now_epoch();
                let wait = x
                    .resp()
                    .and_then(|r| wait_until(quota_back(r, now).retry, now))
                    .unwrap_or(Duration::from_secs(1));
                tokio::time::sleep(wait.min(self.max_wait)).await;
            }
        }
    }

    async fn wait_for_quota(&self, key: &str) {
        let pace = {
            let map = self.pace.lock().unwrap_or_else(|p| p.into_inner());
            map.get(key).copied().unwrap_or_default()
        };
        let now = Instant::now();
        let mut wait = pace
            .retry_until
            .map_or(Duration::ZERO, |t| t.saturating_duration_since(now));
        if pace.remaining == Some(0)
            && let Some(reset) = pace.reset_epoch
        {
            let until = Duration::try_from_secs_f64(reset - now_epoch()).unwrap_or_default();
            wait = wait.max(until);
        }
        // A target with nonsense headers (milliseconds, far future) costs at most one window.
        let wait = wait.min(self.max_wait);
        if !wait.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = linkcert_run::interrupt::process().until_requested() => {}
            }
        }
    }

    fn note(&self, key: &str, r: &Resp) {
        let mut map = self.pace.lock().unwrap_or_else(|p| p.into_inner());
        let p = map.entry(key.to_string()).or_default();
        let now = now_epoch();
        let back = quota_back(r, now);
        // Answers overlap and arrive in any order: within one window (the same Reset) a late
        // answer's higher Remaining is older news, and a 429's wait still stands after a
        // late admission.
        let remaining = r.header_u64(rate_headers::REMAINING);
        let reset = back.spec_reset();
        p.remaining = match (p.remaining, remaining) {
            (Some(old), Some(new)) if reset.is_some() && reset == p.reset_epoch => {
                Some(old.min(new))
            }
            _ => remaining,
        };
        // Only a Reset in the spec's unit paces; anything else is `ratelimit.reset`'s finding.
        p.reset_epoch = reset;
        p.retry_until = if r.status == 429 {
            let wait = wait_until(back.retry, now)
                .unwrap_or_default()
                .max(Duration::from_secs(1));
            Some(Instant::now() + wait.min(self.max_wait))
        } else {
            p.retry_until.filter(|t| *t > Instant::now())
        };
    }

    async fn transmit(&self, req: &Req, url: &str) -> Result<Resp, Failure> {
        let route = format!("{} {}", req.method, req.path);
        if let Some(why) = self.given_up(&route) {
            return Err(why);
        }
        let sent = Instant::now();
        let result = self.transmit_once(req, url).await;
        match result {
            Ok(r) => {
                self.route_answered(&route);
                if self.watch.answered_to(sent) {
                    let d = self.still_there().await;
                    self.watch.confirmed(&d);
                }
                Ok(r)
            }
            Err(e) if matches!(e.kind, FailureKind::BadAnswer(_)) => {
                // The target is there, answering in bytes HTTP does not allow.
                self.watch.bad_answer(&e.to_string());
                self.route_failed(&route, &e);
                Err(e)
            }
            Err(e) => {
                // Asked at once after a costly failure; the failures of the same streak wait
                // for what it found and carry its words.
                let found = if self.watch.failed(&e) {
                    let d = self.still_there().await;
                    self.watch.confirmed(&d);
                    self.watch.found()
                } else if self.watch.confirming() {
                    self.watch.found_after_confirming().await
                } else {
                    self.watch.found()
                };
                let e = e.with_found(found);
                self.route_failed(&route, &e);
                Err(e)
            }
        }
    }

    /// Why nothing more is sent on `route` (or to the target), if so.
    fn given_up(&self, route: &str) -> Option<Failure> {
        // Asked to stop: checks running on threads of their own (which a family's `select!`
        // cannot drop) end at their next send.
        if linkcert_run::interrupt::process().requested() {
            return Some(Failure::not_sent(
                NotSent::Interrupted,
                "the run was asked to stop",
            ));
        }
        if let Some(words) = self.watch.broken() {
            return Some(Failure::not_sent(
                NotSent::TargetBroken,
                format!("the target is broken ({words})"),
            ));
        }
        if self.watch.gone() {
            return Some(Failure::not_sent(
                NotSent::TargetGone,
                "the target stopped answering",
            ));
        }
        let map = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(route) {
            Some((n, first)) if *n >= GIVE_UP_ROUTE_AFTER => Some(Failure::not_sent(
                NotSent::RouteGivenUp,
                format!("{route} was given up after {n} failures in a row (first: {first})"),
            )),
            _ => None,
        }
    }

    fn route_answered(&self, route: &str) {
        let mut map = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = map.get_mut(route)
            && r.0 < GIVE_UP_ROUTE_AFTER
        {
            r.0 = 0;
        }
    }

    fn route_failed(&self, route: &str, error: &Failure) {
        let mut map = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let r = map.entry(route.to_string()).or_insert((0, String::new()));
        if r.0 == 0 {
            r.1 = error.to_string();
        }
        r.0 += 1;
    }

    /// After a costly failure, or transport failures in a row: what does a fresh connection
    /// to the target get (`outage::diagnose`)? Not counted as a check's request.
    async fn still_there(&self) -> linkcert_run::outage::Diagnosis {
        let cfg = self
            .fresh
            .clone()
            .unwrap_or_else(|| ClientConfig::new(self.timeout, 0));
        linkcert_run::outage::diagnose(&cfg, &self.base_url, PROBE_BUDGET.min(self.timeout)).await
    }

    /// One request on the wire, kept in the request log however it ends: answered, failed,
    /// or dropped unanswered (a family that let it go still had it charged).
    async fn transmit_once(&self, req: &Req, url: &str) -> Result<Resp, Failure> {
        struct Unanswered<'a> {
            probe: &'a Probe,
            req: &'a Req,
            sent: f64,
            done: bool,
        }
        impl Drop for Unanswered<'_> {
            fn drop(&mut self) {
                if !self.done {
                    self.probe.log_sent(self.req, self.sent, None);
                }
            }
        }
        let mut guard = Unanswered {
            probe: self,
            req,
            sent: now_epoch(),
            done: false,
        };
        let answer = self.on_the_wire(req, url).await;
        guard.done = true;
        self.log_sent(req, guard.sent, answer.as_ref().ok());
        answer
    }

    async fn on_the_wire(&self, req: &Req, url: &str) -> Result<Resp, Failure> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        if BESIDE.try_with(|b| *b).unwrap_or(false) {
            self.sent_beside.fetch_add(1, Ordering::Relaxed);
        }
        let mut b = self.client.request(req.method.clone(), url);
        for (k, v) in req.all_headers() {
            b = b.header(k, v);
        }
        if let Some(body) = &req.body {
            b = b.body(body.clone());
        }
        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(started) + self.timeout;
        let mut resp = b.send().await.map_err(|e| describe(&e))?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = read_answer(&mut resp, self.timeout, deadline)
            .await
            .map_err(|e| e.failure(status))?;
        Ok(Resp {
            status,
            headers,
            body: body.bytes,
            truncated: body.truncated,
            elapsed: started.elapsed(),
        })
    }
}

/// What an answer received `now` (UTC epoch seconds) says about when quota is back.
fn quota_back(r: &Resp, now: f64) -> rate_headers::QuotaBack {
    rate_headers::quota_back(
        r.status,
        r.header(rate_headers::RESET),
        r.header(rate_headers::RETRY_AFTER),
        now,
    )
}

/// From `now` until `at` (both UTC epoch seconds); never negative.
fn wait_until(at: Option<f64>, now: f64) -> Option<Duration> {
    Duration::try_from_secs_f64((at? - now).max(0.0)).ok()
}
