//! The rate-limit checks against the reference (no failures) and against targets that
//! throttle wrongly or lie in their headers (the right check fails).

use crate::common;

use common::broken::{Defect, Impl, broken_on, failed, run_check, side_by_side};

const WINDOW: f64 = 4.0;

/// Failed check ids and the summary, for `defect()` in front of each implementation.
async fn failures(defect: impl Fn() -> Defect) -> Vec<(Vec<String>, String)> {
    let defect = &defect;
    side_by_side(|imp| async move {
        let b = broken_on(imp, WINDOW, defect()).await;
        let r = run_check(b.target(), &["ratelimit"]).await;
        (failed(&r), format!("{imp:?}: {}", r.summary()))
    })
    .await
}

fn assert_fails(results: &[(Vec<String>, String)], id: &str) {
    for (failed, summary) in results {
        assert!(
            failed.iter().any(|f| f == id),
            "{id} should fail:\n{summary}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_throttle_as_the_spec_says() {
    side_by_side(|imp| async move {
        let b = broken_on(imp, WINDOW, Defect::none()).await;
        let r = run_check(b.target(), &["ratelimit"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        for id in [
            "ratelimit.throttles",
            "ratelimit.retry-after",
            "ratelimit.per-key",
            "ratelimit.recovers",
            "ratelimit.remaining",
            "ratelimit.reset",
        ] {
            assert!(
                r.checks.iter().any(|c| c.id == id && c.cases > 0),
                "{id} judged nothing:\n{imp:?}: {}",
                r.summary()
            );
        }
        // Analytics exist in the reference only (a stand-in the second implementation lacks).
        let analytics = r
            .checks
            .iter()
            .any(|c| c.id == "ratelimit.analytics" && c.cases > 0);
        assert_eq!(analytics, imp == Impl::Reference, "{}", r.summary());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_in_milliseconds_fails_ratelimit_reset() {
    let r = failures(|| {
        Defect::after(|_, a| {
            if let Some(v) = a.header_u64("x-ratelimit-reset") {
                a.set_header("x-ratelimit-reset", v * 1000);
            }
        })
    })
    .await;
    assert_fails(&r, "ratelimit.reset");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remaining_that_never_falls_fails_ratelimit_remaining() {
    let r = failures(|| {
        Defect::after(|_, a| {
            if a.headers.contains_key("x-ratelimit-remaining") {
                a.set_header("x-ratelimit-remaining", 42);
            }
        })
    })
    .await;
    assert_fails(&r, "ratelimit.remaining");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_without_retry_after_fails_ratelimit_retry_after() {
    let r = failures(|| {
        Defect::after(|_, a| {
            a.headers.remove("retry-after");
        })
    })
    .await;
    assert_fails(&r, "ratelimit.retry-after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_shorter_than_the_wait_fails_recovery() {
    let r = failures(|| {
        Defect::after(|_, a| {
            if a.status == 429 {
                a.set_header("retry-after", 0);
            }
        })
    })
    .await;
    assert_fails(&r, "ratelimit.recovers");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_limiting_fails_ratelimit_throttles() {
    // Every Free request is served as Enterprise: nothing is ever throttled at 60.
    let r = failures(|| {
        Defect::before(|inc| {
            let free = inc
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("lk_free_"));
            if free {
                inc.headers
                    .insert("authorization", "Bearer lk_enterprise_1".parse().unwrap());
            }
        })
    })
    .await;
    assert_fails(&r, "ratelimit.throttles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_shared_by_keys_fails_ratelimit_per_key() {
    let r = failures(|| {
        Defect::before(|inc| {
            let second = inc
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("lk_free_2"));
            if second {
                inc.headers
                    .insert("authorization", "Bearer lk_free_1".parse().unwrap());
            }
        })
    })
    .await;
    assert_fails(&r, "ratelimit.per-key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_plan_announced_at_the_free_rate_fails_ratelimit_limit() {
    let r = failures(|| {
        Defect::after(|_, a| {
            if a.headers.contains_key("x-ratelimit-limit") {
                a.set_header("x-ratelimit-limit", 60);
            }
        })
    })
    .await;
    assert_fails(&r, "ratelimit.limit");
}
