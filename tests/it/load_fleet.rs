//! `load` over a fleet of keys (`free-fleet`), in front of both implementations serving
//! fleets: the fault-free ones pass, and a noisy-neighbour defect (quiet keys throttled while
//! another key overloads) fails `load.isolation`, naming the keys it hit.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linkcert::load::{LoadOptions, Scenario};
use linkcert::target::PlanKey;

use crate::common::broken::{BOTH, Defect, Impl, broken_fleet};

/// Keys of the fleet: one noisy (a tenth, at least one), eleven quiet.
const KEYS: usize = 12;
const WINDOW: f64 = 6.0;

/// After any key's 429, every 2xx within this long becomes a 429: one key's overload spills
/// onto the others, as a limiter keyed per plan or per node would.
fn noisy_neighbour() -> Defect {
    let last_429: Arc<Mutex<Option<Instant>>> = Arc::default();
    Defect::after(move |_, ans| {
        let mut last = last_429.lock().unwrap();
        if ans.status == 429 {
            *last = Some(Instant::now());
        } else if ans.status == 200
            && last.is_some_and(|t| t.elapsed() < Duration::from_millis(500))
        {
            ans.status = 429;
            ans.body =
                br#"{"error":{"code":"rate_limit_exceeded","message":"slow down"}}"#.to_vec();
            ans.set_header("content-type", "application/json");
            ans.set_header("retry-after", 1);
            ans.set_header("x-ratelimit-remaining", 0);
        }
    })
}

/// free-fleet in front of `imp` (behind `defect`): the report's verdict and its
/// load.isolation finding.
async fn fleet_run(imp: Impl, defect: Defect, name: &str) -> (String, String) {
    let b = broken_fleet(imp, WINDOW, KEYS, defect).await;
    let mut target = b.target();
    target.keys = (1..=KEYS)
        .map(|i| PlanKey {
            plan: "free".into(),
            key: format!("lk_free_{i}"),
        })
        .collect();
    let out = std::env::temp_dir().join(format!(
        "linkcert-fleet-{name}-{imp:?}-{}",
        std::process::id()
    ));
    let scenario = Scenario::load("free-fleet").unwrap();
    let report = linkcert::load::run(
        crate::common::spec(),
        target,
        vec![scenario],
        &LoadOptions::new(out),
    )
    .await
    .expect("the run");
    let s = &report.scenarios[0];
    assert_eq!(s.keys.len(), KEYS, "{imp:?}: every key loaded");
    let iso = s
        .findings
        .iter()
        .find(|f| f.check == "load.isolation")
        .map(|f| format!("{} {} {}", f.verdict.as_str(), f.message, f.actual))
        // Not judged (an outage, an interrupt): why, for the assertion's message.
        .or_else(|| s.skipped.clone())
        .unwrap_or_default();
    (report.verdict.as_str().to_string(), iso)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_noisy_neighbour_fails_the_fleet_and_fault_free_fleets_pass() {
    // One run at a time: each is a load test of twelve keys, and four at once in this test's
    // two runtime threads, beside the rest of the suite on a busy machine, starved the
    // targets' own tasks until the runs saw them stall (not judged).
    let mut results = Vec::new();
    for imp in BOTH {
        results.push(fleet_run(imp, Defect::none(), "clean").await);
        results.push(fleet_run(imp, noisy_neighbour(), "noisy").await);
    }
    for (imp, pair) in BOTH.iter().zip(results.chunks(2)) {
        let ((clean, clean_iso), (noisy, noisy_iso)) = (&pair[0], &pair[1]);
        assert_eq!(clean, "pass", "{imp:?} fault-free: {clean_iso}");
        assert!(
            clean_iso.starts_with("pass 11 keys"),
            "{imp:?}: {clean_iso}"
        );
        assert_eq!(noisy, "fail", "{imp:?} noisy neighbour: {noisy_iso}");
        assert!(
            noisy_iso.starts_with("fail") && noisy_iso.contains("free#"),
            "{imp:?}: {noisy_iso}"
        );
    }
}
