//! `load --metrics prometheus-rw=URL`: the run's figures in Prometheus while the run goes, so
//! that throttling is seen beside the target's own metrics. Every second, per scenario: sent,
//! admitted, throttled and failed requests (counters), the few worst keys' by their label,
//! the latency percentiles of the second's answers, the generator's lateness and the limit,
//! each series with the run id and shard (`series`). Written with Prometheus's remote-write
//! protocol (`prometheus-reqwest-remote-write`: protobuf and snappy, not by hand).
//!
//! The exporter never delays a send: the run only counts into memory (`Tap`, under a lock held
//! for a few additions); a thread of its own, with its own runtime, turns the counts into
//! samples and writes them. A Prometheus that is down or slow backs the samples up to a
//! bound; past it, and whatever is left when the run ends, they are lost and counted
//! (`MetricsAccount`), and no verdict changes.

pub mod series;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_reqwest_remote_write::{
    CONTENT_TYPE, HEADER_NAME_REMOTE_WRITE_VERSION, REMOTE_WRITE_VERSION_01, TimeSeries,
    WriteRequest,
};
use serde::Serialize;

use crate::record::Record;
use crate::resolved::Resolved;
use series::{RunLabels, ScenarioSeries};

/// How often the figures are written.
pub const EVERY: Duration = Duration::from_secs(1);
/// Exports kept while Prometheus does not take them (two minutes of them): past it, the oldest
/// are lost.
const BACKLOG: usize = 120;
/// The longest one write may take, so that a slow Prometheus cannot hold the backlog forever.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the end of the run waits for the last writes.
const LAST_WRITES: Duration = Duration::from_secs(5);

/// Where `--metrics` sends the figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsSink {
    pub url: url::Url,
}

impl MetricsSink {
    /// `prometheus-rw=URL`: Prometheus's remote-write endpoint (`/api/v1/write`).
    /// The value is never echoed in an error: a URL may carry credentials.
    pub fn parse(s: &str) -> Result<MetricsSink, String> {
        let Some(url) = s.strip_prefix("prometheus-rw=") else {
            return Err("--metrics: expected prometheus-rw=URL, the remote-write endpoint of a Prometheus started with --web.enable-remote-write-receiver (http://localhost:9090/api/v1/write)".into());
        };
        let url = url::Url::parse(url).map_err(|e| format!("--metrics: not a URL ({e})"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err("--metrics: the URL must be http or https".into());
        }
        Ok(MetricsSink { url })
    }

    /// The URL as reports show it: without the credentials or query it may carry.
    pub fn shown(&self) -> String {
        let mut u = self.url.clone();
        let _ = u.set_username("");
        let _ = u.set_password(None);
        u.set_query(None);
        u.to_string()
    }
}

/// What the exporter did, for the report: written, and lost (never sent, or refused).
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct MetricsAccount {
    /// The endpoint, without credentials.
    pub url: String,
    pub run_id: String,
    pub shard: String,
    pub samples_written: u64,
    pub samples_lost: u64,
    /// Why the first lost samples were lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

impl MetricsAccount {
    /// One line for the summary.
    pub fn line(&self) -> String {
        let lost = match (&self.first_error, self.samples_lost) {
            (_, 0) => "none lost".to_string(),
            (Some(e), n) => format!("{n} lost ({e})"),
            (None, n) => format!("{n} lost"),
        };
        format!(
            "metrics: {} samples written to {} (run_id {}, shard {}), {lost}",
            self.samples_written, self.url, self.run_id, self.shard
        )
    }
}

/// The summary's line on the metrics written, if any were asked for (with its newline).
pub fn summary(account: Option<&MetricsAccount>) -> String {
    account.map_or(String::new(), |m| m.line() + "\n")
}

struct Shared {
    scenarios: Mutex<Vec<ScenarioSeries>>,
    stop: AtomicBool,
    account: Mutex<MetricsAccount>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The exporter of one run: a thread writing the figures every `EVERY` until `finish`.
pub struct Exporter {
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Exporter {
    /// Starts writing to `sink`, every series labelled with `run`.
    pub fn start(sink: &MetricsSink, run: RunLabels) -> Result<Exporter, std::io::Error> {
        let shared = Arc::new(Shared {
            scenarios: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            account: Mutex::new(MetricsAccount {
                url: sink.shown(),
                run_id: run.run_id.clone(),
                shard: run.shard.clone(),
                ..MetricsAccount::default()
            }),
        });
        let (s, url) = (shared.clone(), sink.url.clone());
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || writer(&s, url, &run))?;
        Ok(Exporter {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Where one scenario's run counts its answers; `labels`: its keys' labels (`free#17`).
    /// A scenario run again (alone, after its generator saturated) counts on in its series:
    /// one series per label set, its counters never going back.
    pub fn tap(&self, r: &Resolved, labels: Vec<String>) -> Tap {
        let mut all = lock(&self.shared.scenarios);
        let at = match all.iter().position(|s| s.name == r.scenario.name) {
            Some(at) => {
                all[at].again();
                at
            }
            None => {
                let window = r.window.as_secs_f64();
                let limits: u64 = (0..r.keys.len()).map(|k| r.key_limit(k)).sum();
                let (name, plan) = (&r.scenario.name, &r.scenario.plan);
                all.push(ScenarioSeries::new(
                    name,
                    plan,
                    limits as f64 / window,
                    labels,
                ));
                all.len() - 1
            }
        };
        Tap {
            shared: self.shared.clone(),
            at,
        }
    }

    /// The last figures written (or counted lost), the thread ended: what it did.
    pub fn finish(&self) -> MetricsAccount {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        lock(&self.shared.account).clone()
    }
}

/// One scenario's place in the exporter's counts.
pub struct Tap {
    shared: Arc<Shared>,
    at: usize,
}

impl Tap {
    pub fn observe(&self, rec: &Record) {
        if let Some(s) = lock(&self.shared.scenarios).get_mut(self.at) {
            s.observe(rec);
        }
    }
}

/// The scenario's run is over once its answers' sink is dropped.
impl Drop for Tap {
    fn drop(&mut self) {
        if let Some(s) = lock(&self.shared.scenarios).get_mut(self.at) {
            s.done = true;
        }
    }
}

/// The thread: an export every `EVERY`, written in order; a backlog while Prometheus does not
/// take them; at the end, one last export and a few seconds for the backlog.
fn writer(shared: &Shared, url: url::Url, run: &RunLabels) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            lock(&shared.account).first_error = Some(format!("no runtime for the exporter: {e}"));
            return;
        }
    };
    // The one place clients are configured (`linkcert_http`); two idle connections at most.
    let mut config = linkcert_http::ClientConfig::new(WRITE_TIMEOUT, 2);
    config.user_agent = Some(concat!("linkcert/", env!("CARGO_PKG_VERSION")));
    config.plain_http = url.scheme() == "http";
    let client = match config.build() {
        Ok(c) => c,
        Err(e) => {
            lock(&shared.account).first_error = Some(format!("no HTTP client: {e}"));
            return;
        }
    };
    let mut backlog: VecDeque<Vec<TimeSeries>> = VecDeque::new();
    let mut next = Instant::now() + EVERY;
    // Each series' samples in time order, one per millisecond at most (Prometheus refuses a
    // sample at or before the last), whatever the wall clock does.
    let mut at_ms = 0i64;
    loop {
        let last = shared.stop.load(Ordering::Relaxed);
        if !last {
            std::thread::sleep(
                next.saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(100)),
            );
            if Instant::now() < next {
                continue;
            }
            // Ticks missed while a write waited are skipped, not caught up on.
            next = (next + EVERY).max(Instant::now());
        }
        at_ms = ((linkcert_spec::clock::now_epoch() * 1000.0) as i64).max(at_ms + 1);
        let batch = series::export(run, &mut lock(&shared.scenarios), at_ms);
        if !batch.is_empty() {
            backlog.push_back(batch);
        }
        while backlog.len() > BACKLOG {
            if let Some(old) = backlog.pop_front() {
                lost(shared, old.len(), "Prometheus took nothing for two minutes");
            }
        }
        // In order, until one is not taken: the rest wait for the next round (or, at the
        // end, are lost). The last round has `LAST_WRITES` in all.
        let deadline = Instant::now() + if last { LAST_WRITES } else { EVERY };
        while let Some(batch) = backlog.front() {
            if Instant::now() >= deadline {
                break;
            }
            match rt.block_on(write(&client, &url, batch.clone())) {
                Ok(()) => {
                    let n = batch.len() as u64;
                    lock(&shared.account).samples_written += n;
                    backlog.pop_front();
                }
                // Refused for what it holds: sent again, it would be refused again.
                Err(Write::Refused(e)) => {
                    let n = backlog.pop_front().map_or(0, |b| b.len());
                    lost(shared, n, &e);
                }
                Err(Write::NotTaken(e)) => {
                    lock(&shared.account).first_error.get_or_insert(e);
                    break;
                }
            }
        }
        if last {
            for b in backlog.drain(..) {
                lost(shared, b.len(), "the run ended before Prometheus took them");
            }
            return;
        }
    }
}

fn lost(shared: &Shared, n: usize, why: &str) {
    let mut a = lock(&shared.account);
    a.samples_lost += n as u64;
    a.first_error.get_or_insert_with(|| why.to_string());
}

/// Why a write did not go through, in words.
enum Write {
    /// Prometheus answered 4xx (but 429): the samples themselves were refused.
    Refused(String),
    /// No answer, a 5xx or a 429: worth sending again.
    NotTaken(String),
}

/// One remote write.
async fn write(
    client: &reqwest::Client,
    url: &url::Url,
    batch: Vec<TimeSeries>,
) -> Result<(), Write> {
    let body = WriteRequest { timeseries: batch }
        .sorted()
        .encode_compressed()
        .map_err(|e| Write::Refused(format!("snappy: {e}")))?;
    let resp = client
        .post(url.clone())
        .header(reqwest::header::CONTENT_TYPE, CONTENT_TYPE)
        .header(reqwest::header::CONTENT_ENCODING, "snappy")
        .header(HEADER_NAME_REMOTE_WRITE_VERSION, REMOTE_WRITE_VERSION_01)
        .body(body)
        .send()
        .await
        .map_err(|e| Write::NotTaken(linkcert_http::describe(&e).to_string()))?;
    let status = resp.status();
    if status.is_success() {
        return Ok(());
    }
    let text = resp.text().await.unwrap_or_default();
    let words = format!(
        "HTTP {status}: {}",
        text.chars().take(200).collect::<String>().trim()
    );
    Err(match status.as_u16() {
        429 | 500.. => Write::NotTaken(words),
        _ => Write::Refused(words),
    })
}
