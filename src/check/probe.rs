//! The runner's HTTP: every request a check makes goes through here. Bodies are read up to a
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

use http::Method;
use serde_json::Value;

use super::outage::Watch;
use crate::clock::now_epoch;
use crate::http::{Resp, read_capped};
use crate::rate_headers;
pub use crate::report::model::ExchangeRecord;
use crate::target::{PlanKey, Secret};

/// Largest body read from a target; the rest is dropped and the answer marked truncated.
pub const MAX_BODY: usize = 8 * 1024 * 1024;
/// What a report shows of a body.
const EXCERPT: usize = 1500;
/// 429s a paced send waits out before giving up.
const PACED_RETRIES: u32 = 3;
/// After this many transport failures in a row the target is taken to have stopped answering:
/// further sends fail at once, so a hung target cannot make a run last for hours.
const GIVE_UP_AFTER: u64 = 8;

#[derive(Clone, Debug)]
pub struct Req {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Used verbatim instead of `query` when set (to send what an encoder would not).
    pub raw_query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// Sent as `Authorization: Bearer <key>` unless `headers` sets Authorization itself.
    pub key: Option<PlanKey>,
}

impl Req {
    pub fn new(method: Method, path: &str) -> Req {
        Req {
            method,
            path: path.to_string(),
            query: Vec::new(),
            raw_query: None,
            headers: Vec::new(),
            body: None,
            key: None,
        }
    }
    pub fn get(path: &str) -> Req {
        Req::new(Method::GET, path)
    }
    pub fn post_json(path: &str, body: &Value) -> Req {
        Req::new(Method::POST, path).body("application/json", body.to_string().into_bytes())
    }
    pub fn query(mut self, k: &str, v: impl Into<String>) -> Req {
        self.query.push((k.to_string(), v.into()));
        self
    }
    pub fn header(mut self, k: &str, v: impl Into<String>) -> Req {
        self.headers.push((k.to_string(), v.into()));
        self
    }
    pub fn body(mut self, content_type: &str, bytes: Vec<u8>) -> Req {
        self.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
        self.headers
            .push(("content-type".into(), content_type.into()));
        self.body = Some(bytes);
        self
    }
    pub fn key(mut self, key: &PlanKey) -> Req {
        self.key = Some(key.clone());
        self
    }

    pub fn query_string(&self) -> String {
        if let Some(raw) = &self.raw_query {
            return raw.clone();
        }
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &self.query {
            s.append_pair(k, v);
        }
        s.finish()
    }

    pub fn url(&self, base: &str) -> String {
        let q = self.query_string();
        if q.is_empty() {
            format!("{base}{}", self.path)
        } else {
            format!("{base}{}?{q}", self.path)
        }
    }

    fn sets_authorization(&self) -> bool {
        self.headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    }

    /// The headers as sent, the key included.
    fn all_headers(&self) -> Vec<(String, String)> {
        let mut h = self.headers.clone();
        if let (Some(k), false) = (&self.key, self.sets_authorization()) {
            h.insert(0, ("authorization".into(), format!("Bearer {}", k.key)));
        }
        h
    }
}

#[derive(Clone, Debug)]
pub struct Exchange {
    pub req: Req,
    pub url: String,
    pub result: Result<Resp, String>,
    pub insecure: bool,
}

impl Exchange {
    pub fn resp(&self) -> Option<&Resp> {
        self.result.as_ref().ok()
    }
    pub fn status(&self) -> Option<u16> {
        self.resp().map(|r| r.status)
    }
    /// A 429: the target throttled this request.
    pub fn throttled(&self) -> bool {
        self.status() == Some(429)
    }

    /// The exchange as a report shows it: each key replaced by its variable (`$LINKCERT_KEY_PRO`).
    pub fn record(&self, secrets: &[Secret]) -> ExchangeRecord {
        let red = |s: &str| redact(s, secrets);
        let headers = |h: &[(String, String)]| -> Vec<(String, String)> {
            h.iter().map(|(k, v)| (k.clone(), red(v))).collect()
        };
        ExchangeRecord {
            method: self.req.method.to_string(),
            url: red(&self.url),
            request_headers: headers(&self.req.all_headers()),
            request_body: self.req.body.as_ref().map(|b| red(&excerpt(b, None))),
            status: self.status(),
            response_headers: self.resp().map(|r| headers(&r.headers)).unwrap_or_default(),
            response_body: self
                .resp()
                .map(|r| red(&excerpt(&r.body, r.media_type().as_deref())))
                .unwrap_or_default(),
            error: self.result.as_ref().err().map(|e| red(e)),
            curl: self.curl(secrets),
            png_base64: self.resp().and_then(|r| png_base64(&r.body)),
        }
    }

    /// One line of shell that sends the same request; the key is its variable
    /// (`$LINKCERT_KEY_PRO`), so the reader sees which key reproduces it.
    pub fn curl(&self, secrets: &[Secret]) -> String {
        let mut parts = vec!["curl -sS -i".to_string()];
        if self.insecure {
            parts.push("-k".into());
        }
        if self.req.method != Method::GET {
            parts.push(format!("-X {}", self.req.method));
        }
        parts.push(shell_quote(&redact(&self.url, secrets)));
        for (k, v) in self.req.all_headers() {
            let line = format!("{k}: {v}");
            let red = redact(&line, secrets);
            if red != line {
                // Double quotes so the shell expands the key's variable.
                parts.push(format!("-H \"{}\"", red.replace('"', "\\\"")));
            } else {
                parts.push(format!("-H {}", shell_quote(&line)));
            }
        }
        if let Some(b) = &self.req.body {
            let data = match std::str::from_utf8(b) {
                Ok(s) => shell_quote(&redact(s, secrets)),
                Err(_) => ansi_c_quote(b),
            };
            parts.push(format!("--data-binary {data}"));
        }
        parts.join(" ")
    }
}

/// PNG images kept whole in a finding up to this size; larger ones are only summarised.
const MAX_KEPT_PNG: usize = 512 * 1024;

/// The body as base64 when it is a PNG (by its signature, whatever the content type says).
fn png_base64(body: &[u8]) -> Option<String> {
    use base64::Engine;
    (body.starts_with(b"\x89PNG\r\n\x1a\n") && body.len() <= MAX_KEPT_PNG)
        .then(|| base64::engine::general_purpose::STANDARD.encode(body))
}

/// Replace every secret with `$` and its variable; longer secrets first, so a key that
/// contains another is never half-replaced.
pub fn redact(s: &str, secrets: &[Secret]) -> String {
    let mut ordered: Vec<&Secret> = secrets.iter().filter(|k| !k.value.is_empty()).collect();
    ordered.sort_by_key(|k| std::cmp::Reverse(k.value.len()));
    let mut out = s.to_string();
    for k in ordered {
        if out.contains(k.value.as_str()) {
            out = out.replace(k.value.as_str(), &format!("${}", k.var));
        }
    }
    out
}

fn excerpt(body: &[u8], media: Option<&str>) -> String {
    if media.is_some_and(|m| m.starts_with("image/")) {
        return format!("<{} bytes of {}>", body.len(), media.unwrap_or("binary"));
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(EXCERPT * 4)]);
    let mut s: String = text.chars().take(EXCERPT).collect();
    if s.len() < text.len() || body.len() > EXCERPT * 4 {
        s.push_str(&format!("… ({} bytes in all)", body.len()));
    }
    s
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn ansi_c_quote(b: &[u8]) -> String {
    let mut s = String::from("$'");
    for &c in b {
        match c {
            b'\\' | b'\'' => s.push_str(&format!("\\{}", c as char)),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('\'');
    s
}

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
        let url = format!("{}/", self.base_url);
        let client = self.fresh.as_ref().unwrap_or(&self.client);
        let mut r = client.get(&url).send().await.map_err(describe)?;
        read_capped(&mut r, 64 * 1024)
            .await
            .map(drop)
            .map_err(describe)
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
        let mut resp = b.send().await.map_err(describe)?;
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
            .map_err(|e| format!("reading the body failed: {}", describe(e)))?;
        Ok(Resp {
            status,
            headers,
            body: body.bytes,
            truncated: body.truncated,
            elapsed: started.elapsed(),
        })
    }
}

/// reqwest errors name their source chain; keep it, it says what broke.
fn describe(e: reqwest::Error) -> String {
    use std::error::Error;
    let mut s = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_lines_reproduce_without_showing_the_key() {
        let key = PlanKey {
            plan: "pro".into(),
            key: "lk_secret".into(),
        };
        let req = Req::post_json(
            "/partners/deactivate",
            &serde_json::json!({"partnerId": "it's"}),
        )
        .key(&key);
        let x = Exchange {
            url: req.url("https://h"),
            req,
            result: Err("x".into()),
            insecure: true,
        };
        let secrets = [
            Secret {
                value: "lk_secret".into(),
                var: "LINKCERT_KEY_PRO".into(),
            },
            Secret {
                value: "lk_secret_2".into(),
                var: "LINKCERT_KEY_PRO_2".into(),
            },
        ];
        let c = x.curl(&secrets);
        assert!(!c.contains("lk_secret"), "{c}");
        assert!(
            c.contains("-H \"authorization: Bearer $LINKCERT_KEY_PRO\""),
            "{c}"
        );
        assert_eq!(
            redact("lk_secret_2 lk_secret", &secrets),
            "$LINKCERT_KEY_PRO_2 $LINKCERT_KEY_PRO"
        );
        assert!(c.contains("-X POST") && c.contains(" -k "), "{c}");
        assert!(
            c.contains(r#"--data-binary '{"partnerId":"it'\''s"}'"#),
            "{c}"
        );
        let rec = x.record(&secrets);
        assert!(!serde_json::to_string(&rec).unwrap().contains("lk_secret"));
    }

    #[test]
    fn excerpts_are_bounded_and_images_summarised() {
        assert_eq!(
            excerpt(b"\x89PNG", Some("image/png")),
            "<4 bytes of image/png>"
        );
        let long = vec![b'a'; 100_000];
        assert!(excerpt(&long, None).len() < 2000);
        assert_eq!(ansi_c_quote(&[0xff, b'a', b'\'']), "$'\\xffa\\''");
    }
}
