//! How far away a target may be and still be judged: the built-in load suite at the real 60 s
//! window against the in-process reference behind a latency proxy that delays every chunk of
//! every answer by the delay ±10% (`tests/common/latency.rs`). A fresh reference per delay, so
//! no key's quota carries over. Several minutes per delay (the real window).
//!
//!   cargo bench --bench far                                   # 250 ms, 1 s and 2 s
//!   LINKCERT_BENCH_DELAYS_MS=500,3000 cargo bench --bench far
//!   LINKCERT_BENCH_SCENARIOS=advanced-overload cargo bench --bench far
//!   LINKCERT_BENCH_CHECK=1 LINKCERT_BENCH_DELAYS_MS=250 cargo bench --bench far  # `check`

#[path = "../tests/common/latency.rs"]
mod latency;

use std::sync::Arc;
use std::time::{Duration, Instant};

use linkcert::load::{self, LoadOptions, Scenario};
use linkcert::server::{self, ServeConfig};
use linkcert::spec::Spec;

fn list(var: &str) -> Option<Vec<String>> {
    let v = std::env::var(var).ok()?;
    Some(v.split(',').map(|s| s.trim().to_string()).collect())
}

#[tokio::main]
async fn main() {
    let delays: Vec<u64> = list("LINKCERT_BENCH_DELAYS_MS")
        .map(|v| v.iter().filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| vec![250, 1000, 2000]);
    if std::env::var("LINKCERT_BENCH_CHECK").is_ok_and(|v| v == "1") {
        return check_far(&delays).await;
    }
    let only = list("LINKCERT_BENCH_SCENARIOS");
    let spec = Arc::new(Spec::embedded().expect("the embedded spec loads"));
    let scenarios: Vec<Scenario> = Scenario::builtin()
        .expect("built-ins")
        .into_iter()
        .filter(|s| only.as_ref().is_none_or(|o| o.contains(&s.name)))
        .collect();
    println!(
        "built-in load suite at the real 60 s window, the reference behind a latency proxy (±10%)"
    );
    for ms in delays {
        let (_reference, _proxy, target) = far_reference(&spec, ms, None).await;
        let out = std::env::temp_dir().join(format!("linkcert-bench-far-{ms}"));
        let opts = LoadOptions::new(out.clone());
        let began = Instant::now();
        let report = load::run(spec.clone(), target, scenarios.clone(), &opts)
            .await
            .expect("the load run runs");
        let _ = report.write(&out);
        println!(
            "\n{ms} ms away: {} in {:.0} s (reports in {})",
            report.verdict.as_str(),
            began.elapsed().as_secs_f64(),
            out.display()
        );
        println!(
            "{:<34} {:<17} {:>14} {:>6} {:>6} {:>9} {:>9} {:>10}",
            "scenario",
            "verdict",
            "sent/sched /s",
            "late",
            "unsent",
            "p50 ms",
            "p99 ms",
            "in flight"
        );
        for s in &report.scenarios {
            let g = s.generator.as_ref();
            println!(
                "{:<34} {:<17} {:>14} {:>6} {:>6} {:>9.0} {:>9.0} {:>10}",
                s.name,
                s.verdict.as_str(),
                g.map_or(String::new(), |g| format!(
                    "{:.1}/{:.1}",
                    g.achieved_rate, g.scheduled_rate
                )),
                g.map_or(0, |g| g.late),
                g.map_or(0, |g| g.unsent),
                s.latency_ms.p50,
                s.latency_ms.p99,
                g.map_or(String::new(), |g| format!(
                    "{}/{}",
                    g.peak_in_flight, g.users
                )),
            );
        }
    }
}

/// `check` with every plan's key (the default run, fixtures of the reference) against the
/// reference at the real 60 s window behind the latency proxy: its verdict, requests and time.
async fn check_far(delays: &[u64]) {
    use linkcert::check::{self, CheckOptions};
    let spec = Arc::new(Spec::embedded().expect("the embedded spec loads"));
    println!(
        "check, every family, at the real 60 s window, the reference behind a latency proxy (±10%)"
    );
    for &ms in delays {
        // The keys `check` runs the reference with: a third per plan for the limiter.
        let keys = Some(check::IN_PROCESS_KEYS_PER_PLAN);
        let (_reference, _proxy, target) = far_reference(&spec, ms, keys).await;
        let began = Instant::now();
        // LINKCERT_BENCH_ONLY=limiter,pagination: those families only (`--only`).
        let only = std::env::var("LINKCERT_BENCH_ONLY")
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let opts = CheckOptions {
            only,
            ..CheckOptions::default()
        };
        let report = check::run(spec.clone(), target, opts)
            .await
            .expect("the check runs");
        println!(
            "{ms} ms away: {} failures, {} requests, {:.0} s",
            report.totals.fail,
            report.requests,
            began.elapsed().as_secs_f64()
        );
        for f in &report.families {
            println!(
                "  {:<11} {:>6.1} s {:>6} requests",
                f.family, f.seconds, f.requests
            );
        }
        // What failed, and what a run cut short could not judge: a far run's verdict explained.
        for c in report.checks.iter().filter(|c| {
            matches!(
                c.verdict,
                linkcert::verdict::Verdict::Fail | linkcert::verdict::Verdict::NotJudged
            )
        }) {
            let why = c
                .findings
                .first()
                .map_or(c.not_judged.clone().unwrap_or_default(), |f| {
                    format!("{}: {}", f.message, f.actual)
                });
            println!("  {:?} {} {}: {why}", c.verdict, c.id, c.operation);
        }
    }
}

/// A fresh reference at the real 60 s window (no key's quota carries over) behind the latency
/// proxy, `ms` away, and the target through it, with its development keys or
/// `keys_per_plan` of them. Both live as long as the caller keeps them.
async fn far_reference(
    spec: &Arc<Spec>,
    ms: u64,
    keys_per_plan: Option<usize>,
) -> (
    server::RunningServer,
    latency::LatencyProxy,
    linkcert::target::Target,
) {
    let mut cfg = ServeConfig::in_process();
    cfg.window = Some(linkcert::window::RateWindow::SPEC);
    cfg.keys = keys_per_plan.map(|n| server::KeySet::development_fleet(spec, n));
    let reference = server::start(spec.clone(), cfg)
        .await
        .expect("the reference starts");
    let proxy = latency::start(&reference.base_url, Duration::from_millis(ms), 0.10).await;
    let mut target = reference.target(spec);
    target.base_url = proxy.url.parse().expect("a base URL");
    (reference, proxy, target)
}
