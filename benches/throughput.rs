//! Throughput on loopback: the reference server's GET /tags (pageSize 100) and GET /qr (600 px)
//! through every layer, against a bare axum handler returning the same bytes.
//!
//!   cargo bench --bench throughput                  # all, 5 s each
//!   LINKCERT_BENCH_SECS=10 cargo bench --bench throughput
//!
//!   LINKCERT_BENCH_ONLY="reference GET /tags" cargo bench --bench throughput   # one case
//!
//! It ends with the ratios reference/bare (http) for /analytics and /tags, the layers' cost:
//! the median of nine alternating 1 s rounds.
//!
//! The load generator shares the machine's cores with the server: compare figures as ratios
//! taken in one run, not across machines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use linkcert::server::{self, KeySet, ServeConfig, TlsMode};
use linkcert::spec::Spec;

const CONCURRENCY: usize = 32;

struct Figures {
    requests: u64,
    secs: f64,
    p50_ms: f64,
    p99_ms: f64,
}

async fn hammer(client: reqwest::Client, url: String, secs: f64) -> Figures {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let (client, url, stop, count) = (client.clone(), url.clone(), stop.clone(), count.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let r = client
                    .get(&url)
                    .header("authorization", "Bearer lk_bench")
                    .send()
                    .await;
                let ok = match r {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if ok {
                    lat.push(t.elapsed().as_secs_f64() * 1000.0);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
            lat
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap_or_default());
    }
    let secs = started.elapsed().as_secs_f64();
    lat.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    Figures {
        requests: count.load(Ordering::Relaxed),
        secs,
        p50_ms: pct(0.5),
        p99_ms: pct(0.99),
    }
}

/// A bare axum handler returning `body` with `content_type`: what the layers cost is the gap.
async fn bare(body: Vec<u8>, content_type: &'static str) -> String {
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move { ([("content-type", content_type)], body) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

fn row(name: &str, f: &Figures) {
    println!(
        "{name:<44} {:>9.0} req/s   p50 {:>6.2} ms   p99 {:>6.2} ms   ({} requests in {:.1} s)",
        f.requests as f64 / f.secs,
        f.p50_ms,
        f.p99_ms,
        f.requests,
        f.secs
    );
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::var("LINKCERT_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let spec = Arc::new(Spec::embedded().unwrap());
    let keys = KeySet::from_toml(&spec, server::UNLIMITED_KEYS).unwrap();
    let start = |tls: TlsMode| {
        let spec = spec.clone();
        let keys = keys.clone();
        async move {
            let mut cfg = ServeConfig::in_process();
            cfg.keys = Some(keys);
            cfg.tls = tls;
            server::start(spec, cfg).await.unwrap()
        }
    };
    let plain = start(TlsMode::Plain).await;
    let tls = start(TlsMode::SelfSigned).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .no_proxy()
        .tls_danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let tags = "/tags?pageSize=100";
    let qr = "/qr?url=https%3A%2F%2Fexample.com%2Fa%2Fshort%2Flink&size=600";
    let fetch = |path: &str| {
        let (client, url) = (client.clone(), format!("{}{path}", plain.base_url));
        async move {
            client
                .get(url)
                .header("authorization", "Bearer lk_bench")
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
                .to_vec()
        }
    };
    let analytics = "/analytics";
    let analytics_body = fetch(analytics).await;
    let bare_analytics = bare(analytics_body.clone(), "application/json").await;
    let tags_body = fetch(tags).await;
    let qr_body = fetch(qr).await;
    let bare_tags = bare(tags_body.clone(), "application/json").await;
    let bare_qr = bare(qr_body.clone(), "image/png").await;
    println!(
        "linkcert throughput on loopback: {CONCURRENCY} concurrent keep-alive clients (reqwest, same process), {secs} s each, {} cores",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "GET /tags body {} bytes; GET /qr body {} bytes (600x600 PNG)",
        tags_body.len(),
        qr_body.len()
    );
    let cases = [
        (
            "bare handler, same /analytics bytes (http)",
            format!("{bare_analytics}/"),
        ),
        (
            "reference GET /analytics: the layers (http)",
            format!("{}{analytics}", plain.base_url),
        ),
        (
            "bare handler, same /tags bytes (http)",
            format!("{bare_tags}/"),
        ),
        (
            "reference GET /tags pageSize=100 (http)",
            format!("{}{tags}", plain.base_url),
        ),
        (
            "reference GET /tags pageSize=100 (https)",
            format!("{}{tags}", tls.base_url),
        ),
        ("bare handler, same /qr bytes (http)", format!("{bare_qr}/")),
        (
            "reference GET /qr size=600 (http)",
            format!("{}{qr}", plain.base_url),
        ),
        (
            "reference GET /qr size=600 (https)",
            format!("{}{qr}", tls.base_url),
        ),
    ];
    // LINKCERT_BENCH_ONLY=tags runs only the cases whose name holds it (for a profiler).
    let only = std::env::var("LINKCERT_BENCH_ONLY").unwrap_or_default();
    for (name, url) in &cases {
        if name.contains(only.as_str()) {
            row(name, &hammer(client.clone(), url.clone(), secs).await);
        }
    }
    if !only.is_empty() {
        return;
    }
    // The layers' cost as one number per route: the reference's rate over the bare handler's.
    // A shared machine drifts by tens of percent within a minute, so the two are taken in
    // alternating short rounds and the median of the per-round ratios is reported.
    println!("ratio reference/bare (http), {RATIO_ROUNDS} alternating rounds of 1 s each:");
    // Positions in `cases` of each route's bare handler and reference (http).
    for (route, bare, reference) in [("/analytics", 0, 1), ("/tags pageSize=100", 2, 3)] {
        let mut ratios = Vec::new();
        for _ in 0..RATIO_ROUNDS {
            let b = hammer(client.clone(), cases[bare].1.clone(), 1.0).await;
            let r = hammer(client.clone(), cases[reference].1.clone(), 1.0).await;
            ratios.push((r.requests as f64 / r.secs) / (b.requests as f64 / b.secs).max(1.0));
        }
        ratios.sort_by(|a, b| a.total_cmp(b));
        println!(
            "  {route:<20} median {:.2}x  (range {:.2}x to {:.2}x)",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}

/// Rounds of the bare/reference comparison.
const RATIO_ROUNDS: usize = 9;
