//! The runner's HTTP: every request a check makes is sent from here (what a request is and
//! how an exchange is written down: `exchange`). Bodies are read up to a
//! cap, time is bounded, transport failures become values (never panics), and each exchange
//! can be written down with secrets redacted and a one-line curl to reproduce it.
//!
//! Paced sends respect the target's own X-RateLimit-Remaining/-Reset and Retry-After, so
//! functional checks are not drowned in 429s on low plans.
//!
//! Every exchange also tells the `outage::Watch` whether an answer came back: a target that
//! goes away in the middle of a run is noticed here, and nothing more is sent to it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use super::exchange::{Exchange, Req, redact};
use crate::clock::now_epoch;
use crate::http::{Resp, describe, read_capped};
use crate::outage::Watch;
use crate::rate_headers;
pub use crate::report::model::ExchangeRecord;

/// Largest body read from a target; the rest is dropped and the answer marked truncated.
pub const MAX_BODY: usize = 8 * 1024 * 1024;
/// 429s a paced send waits out before giving up.
const PACED_RETRIES: u32 = 3;
/// After this many transport failures in a row the target is taken to have stopped answering:
/// further sends fail at once, so a hung target cannot make a run last for hours.
const GIVE_UP_AFTER: u64 = 8;

#[derive(Default, Clone, Copy)]
struct Pace {
    remaining: Option<u64>,
    /// UTC epoch seconds.
    reset_epoch: Option<f64>,
    retry_until: Option<Instant>,
}

/// Sends requests to one target and keeps count.
pub struct Probe {
    client: reqwest::Client,
    base_url: String,
    insecure: bool,
    /// Longest a paced send waits for quota (about one window).
    max_wait: Duration,
    pace: Mutex<HashMap<String, Pace>>,
    sent: AtomicU64,
    throttled: AtomicU64,
    failures_in_a_row: AtomicU64,
    watch: Arc<Watch>,
    /// Asks whether the target is still there: keeps no idle connection, so it sees the
    /// target as a new client would (refused, reset, silent), not a pooled connection's end.
    fresh: Option<reqwest::Client>,
}

impl Probe {
    pub fn new(
        client: reqwest::Client,
        base_url: &str,
        insecure: bool,
        max_wait: Duration,
    ) -> Probe {
        Probe {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            insecure,
            max_wait,
            pace: Mutex::new(HashMap::new()),
            sent: AtomicU64::new(0),
            throttled: AtomicU64::new(0),
            failures_in_a_row: AtomicU64::new(0),
            watch: Arc::new(Watch::new()),
            fresh: None,
        }
    }

    /// The client that asks whether the target is still there (one without idle connections).
    pub fn with_fresh_client(mut self, client: reqwest::Client) -> Probe {
        self.fresh = Some(client);
        self
    }

    /// Whether the target stopped answering: too many transport failures in a row, or an
    /// outage the watch confirmed.
    pub fn gave_up(&self) -> bool {
        self.failures_in_a_row.load(Ordering::Relaxed) >= GIVE_UP_AFTER || self.watch.gone()
    }

    /// What the probe knows of the target's being there (shared with the recorder).
    pub fn watch(&self) -> Arc<Watch> {
        self.watch.clone()
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }
    pub fn requests_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
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
            tokio::time::sleep(wait).await;
        }
    }

    fn note(&self, key: &str, r: &Resp) {
        let mut map = self.pace.lock().unwrap_or_else(|p| p.into_inner());
        let p = map.entry(key.to_string()).or_default();
        let now = now_epoch();
        let back = quota_back(r, now);
        p.remaining = r.header_u64(rate_headers::REMAINING);
        // Only a Reset in the spec's unit paces; anything else is `ratelimit.reset`'s finding.
        p.reset_epoch = back.spec_reset();
        p.retry_until = if r.status == 429 {
            let wait = wait_until(back.retry, now)
                .unwrap_or_default()
                .max(Duration::from_secs(1));
            Some(Instant::now() + wait.min(self.max_wait))
        } else {
            None
        };
    }

    async fn transmit(&self, req: &Req, url: &str) -> Result<Resp, String> {
        if self.gave_up() {
            return Err(format!(
                "not sent: the target stopped answering ({GIVE_UP_AFTER} transport failures in a row)"
            ));
        }
        let result = self.transmit_once(req, url).await;
        match &result {
            Ok(_) => {
                self.failures_in_a_row.store(0, Ordering::Relaxed);
                self.watch.answered();
            }
            Err(e) => {
                self.failures_in_a_row.fetch_add(1, Ordering::Relaxed);
                if self.watch.failed(e) {
                    self.watch.confirmed(self.still_there().await);
                }
            }
        }
        result
    }

    /// After transport failures in a row: does the target answer anything at all? A plain
    /// `GET /` (not counted as a check's request); any HTTP status is an answer.
    async fn still_there(&self) -> Result<(), String> {
        let client = self.fresh.as_ref().unwrap_or(&self.client);
        crate::outage::still_there(client, &self.base_url).await
    }

    async fn transmit_once(&self, req: &Req, url: &str) -> Result<Resp, String> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        let mut b = self.client.request(req.method.clone(), url);
        for (k, v) in req.all_headers() {
            b = b.header(k, v);
        }
        if let Some(body) = &req.body {
            b = b.body(body.clone());
        }
        let started = Instant::now();
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
        let body = read_capped(&mut resp, MAX_BODY)
            .await
            .map_err(|e| format!("reading the body failed: {}", describe(&e)))?;
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
