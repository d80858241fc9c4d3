//! The runner's own cost: `check` against the in-process reference with the rate limit out of
//! the way (one Enterprise key with a huge limit; the ratelimit family skipped).
//!
//!   cargo bench --bench runner
//!   LINKCERT_BENCH_CASES=512 cargo bench --bench runner
//!
//! Then `check` against the second implementation (`tests/variant`, an independent one) at a
//! 5 s window with three keys per plan and fixtures, two runs side by side, each with its own
//! variant.

use std::sync::Arc;
use std::time::Instant;

use linkcert::check::{self, CheckOptions};
use linkcert::server::{self, KeySet, ServeConfig};
use linkcert::spec::Spec;
use linkcert::target::{PlanKey, Target};

#[tokio::main]
async fn main() {
    let cases: u32 = std::env::var("LINKCERT_BENCH_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256);
    let spec = Arc::new(Spec::embedded().unwrap());
    let mut cfg = ServeConfig::in_process();
    cfg.keys = Some(KeySet::from_toml(&spec, server::UNLIMITED_KEYS).unwrap());
    let reference = server::start(spec.clone(), cfg).await.unwrap();
    let target = Target {
        base_url: reference.base_url.parse().unwrap(),
        keys: vec![PlanKey {
            plan: "enterprise".into(),
            key: "lk_bench".into(),
        }],
        rate_window: linkcert::window::RateWindow::SPEC,
        trust_pem: reference.self_signed_pem.clone(),
        ..Target::default()
    };
    println!(
        "linkcert runner cost against the in-process reference (HTTPS, loopback), --cases {cases}"
    );
    for (name, only) in [
        ("status (generated cases)", vec!["status".to_string()]),
        ("every family but ratelimit", vec![]),
    ] {
        let opts = CheckOptions {
            cases,
            only,
            skip: vec!["ratelimit".into()],
            ..CheckOptions::default()
        };
        let t = Instant::now();
        let report = check::run(spec.clone(), target.clone(), opts)
            .await
            .unwrap();
        let secs = t.elapsed().as_secs_f64();
        let judged: u64 = report.checks.iter().map(|c| c.cases).sum();
        println!(
            "{name:<28} {:>7} requests in {secs:>5.2} s = {:>7.0} requests/s; {judged} judgements = {:>7.0}/s; {} failures",
            report.requests,
            report.requests as f64 / secs,
            judged as f64 / secs,
            report.totals.fail
        );
    }
    variant_side_by_side().await;
}

// The tests' helper for the second implementation; the bench uses only part of it.
#[allow(dead_code)]
#[path = "../tests/common/variant.rs"]
mod variant;

/// Two `check` runs side by side, each against its own second implementation at a 5 s window
/// (three keys per plan, fixtures): the wall time of each and of both.
async fn variant_side_by_side() {
    let spec = Arc::new(Spec::embedded().unwrap());
    let one = |seed: u64| {
        let spec = spec.clone();
        async move {
            // Three keys per plan, as `check` gives the in-process reference: the third is
            // the limiter's.
            let v = variant::start_fleet(5.0, 3).await;
            let mut target = v.target();
            let plans: Vec<&str> = v.keys().map(|(plan, _)| plan).collect();
            let mut plans_once = plans.clone();
            plans_once.dedup();
            target.keys = variant::fleet_keys(&plans_once, 3);
            let began = Instant::now();
            let opts = CheckOptions {
                seed,
                ..CheckOptions::default()
            };
            let report = check::run(spec, target, opts).await.unwrap();
            (
                began.elapsed().as_secs_f64(),
                report.requests,
                report.totals.fail,
            )
        }
    };
    let began = Instant::now();
    let (a, b) = tokio::join!(one(1), one(2));
    println!(
        "check against the second implementation at a 5 s window, two side by side: {:.1} s ({} requests, {} failures) and {:.1} s ({} requests, {} failures); {:.1} s for both",
        a.0,
        a.1,
        a.2,
        b.0,
        b.1,
        b.2,
        began.elapsed().as_secs_f64()
    );
}
