//! The rate-limit checks against the reference (no failures) and against targets that
//! throttle wrongly or lie in their headers (the right check fails).

use crate::common;

use common::broken::{Defect, Impl, broken_on, failed, run_check, side_by_side};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
            "ratelimit.counter",
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
    // Retry-After 0, while the key stays refused for a second and a half after each 429: the
    // retry at once is refused whatever the window's phase (without the hold, a 429 just before
    // a refill was followed by an admission, and the row was flaky).
    let r = failures(|| {
        let held: Arc<Mutex<HashMap<String, Instant>>> = Default::default();
        Defect::after(move |inc, a| {
            let key = inc.authorization().to_string();
            let mut held = held.lock().unwrap();
            let holding = held
                .get(&key)
                .is_some_and(|t| t.elapsed() < Duration::from_millis(1500));
            if a.status == 429 && !holding {
                held.insert(key, Instant::now());
            } else if holding && a.status != 429 {
                a.status = 429;
                a.body = br#"{"error":{"code":"rate_limit_exceeded","message":"held"}}"#.to_vec();
                a.set_header("content-type", "application/json");
                a.set_header("x-ratelimit-remaining", 0);
            }
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
            let free = inc.authorization().contains("lk_free_");
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
            let second = inc.authorization().contains("lk_free_2");
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

/// ratelimit.counter in front of counters that are not one per key for every operation, and
/// in front of limiters that answer what the key's own history does not allow.
mod counter {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use super::common::broken::{Answer, Defect, Incoming, Row, Then, run_table};

    /// The window `run_table` starts implementations with.
    const W: f64 = 6.0;
    const ONLY: &[&str] = &["ratelimit.counter"];

    fn now() -> f64 {
        linkcert::clock::now_epoch()
    }

    fn bearer(inc: &Incoming) -> Option<String> {
        let v = inc.headers.get("authorization")?.to_str().ok()?;
        Some(v.strip_prefix("Bearer ")?.to_string())
    }

    /// The spec's limit for a development key's plan (both implementations name keys so).
    fn plan_limit(key: &str) -> u64 {
        [
            ("free", 60),
            ("pro", 600),
            ("business", 1200),
            ("advanced", 3000),
        ]
        .iter()
        .find(|(p, _)| key.starts_with(&format!("lk_{p}_")))
        .map_or(100_000, |(_, n)| *n)
    }

    fn standard(path: &str) -> bool {
        matches!(path, "/tags" | "/qr" | "/partners/deactivate")
    }

    /// The last 2xx of a route, to answer in the implementation's place where a defective
    /// limiter admits what the implementation's own limiter refused.
    #[derive(Default)]
    struct Cache(HashMap<String, (Option<axum::http::HeaderValue>, Vec<u8>)>);

    impl Cache {
        fn keep_or_replay(&mut self, path: &str, ans: &mut Answer) -> bool {
            if (200..300).contains(&ans.status) {
                let ct = ans.headers.get("content-type").cloned();
                self.0.insert(path.to_string(), (ct, ans.body.clone()));
                return true;
            }
            let Some((ct, body)) = self.0.get(path) else {
                return false;
            };
            ans.status = 200;
            ans.body = body.clone();
            if let Some(ct) = ct {
                ans.headers.insert("content-type", ct.clone());
            }
            ans.headers.remove("retry-after");
            true
        }
    }

    /// A fixed window aligned to the epoch per counter the defect names, in front of the
    /// implementation: it decides and writes the rate headers.
    fn limiter(counter: fn(&str, &str) -> String) -> Defect {
        // Per counter: its window and what it admitted there.
        type Counts = HashMap<String, (i64, u64)>;
        let state: Mutex<(Counts, Cache)> = Mutex::default();
        Defect::after(move |inc, ans| {
            let Some(key) = bearer(inc).filter(|_| standard(&inc.path)) else {
                return;
            };
            let (limit, t) = (plan_limit(&key), now());
            let window = (t / W).floor() as i64;
            let end = (window + 1) as f64 * W;
            let mut st = state.lock().unwrap();
            let (counts, cache) = &mut *st;
            let c = counts
                .entry(counter(&key, &inc.path))
                .or_insert((window, 0));
            if c.0 != window {
                *c = (window, 0);
            }
            let admitted = c.1 < limit;
            c.1 += u64::from(admitted);
            let remaining = limit.saturating_sub(c.1);
            if admitted {
                cache.keep_or_replay(&format!("{key} {}", inc.path), ans);
            } else {
                ans.status = 429;
                ans.body = br#"{"error":{"code":"rate_limit_exceeded","message":"rate limited"}}"#
                    .to_vec();
                ans.set_header("content-type", "application/json");
                ans.set_header("retry-after", (end - t).ceil() as u64);
            }
            ans.set_header("x-ratelimit-limit", limit);
            ans.set_header("x-ratelimit-remaining", remaining);
            ans.set_header("x-ratelimit-reset", end.ceil() as u64);
        })
    }

    /// GET /tags and GET /qr counted apart.
    fn per_route() -> Defect {
        limiter(|key, path| format!("{key} {path}"))
    }

    /// Every key of the run counted together, each throttled at its own plan's limit: one
    /// key's 429s come from another key's traffic.
    fn one_counter_for_all_keys() -> Defect {
        limiter(|_, _| "all".into())
    }

    /// The plan's second Free key counted as its first.
    fn per_plan() -> Defect {
        Defect::before(|inc| {
            if bearer(inc).as_deref() == Some("lk_free_2") {
                inc.headers
                    .insert("authorization", "Bearer lk_free_1".parse().unwrap());
            }
        })
    }

    /// In the last third of each window (aligned to the epoch), Remaining reads as if the
    /// key had used nothing but this request.
    fn remaining_wrong_late() -> Defect {
        Defect::after(|_, ans| {
            let late = now().rem_euclid(W) > 2.0 * W / 3.0;
            if late
                && (200..300).contains(&ans.status)
                && let Some(limit) = ans.header_u64("x-ratelimit-limit")
            {
                ans.set_header("x-ratelimit-remaining", limit.saturating_sub(1));
            }
        })
    }

    /// A racy limiter: a 429 to a request whose life overlapped another of the key's (one was
    /// in flight when it came, came while it was in flight, or is in flight as it is answered)
    /// is answered 200 (the last 200 of the route), Remaining 0. Overlap over the request's
    /// whole life, not at one instant: a busy machine that spaces the burst's answers still
    /// overlaps their lives, so the defect shows however the scheduler runs them.
    fn racy() -> Defect {
        /// Per key: requests in flight, and arrivals so far.
        type Flying = HashMap<String, (u64, u64)>;
        type State = Mutex<(Flying, Cache)>;
        let state: Arc<State> = Arc::default();
        let before = state.clone();
        Defect {
            before: Some(Box::new(move |inc: &mut Incoming| {
                let Some(key) = bearer(inc) else { return };
                let mut st = before.lock().unwrap();
                let (flying, arrivals) = st.0.entry(key).or_default();
                let overlapped = *flying > 0;
                *flying += 1;
                *arrivals += 1;
                let mark = format!("{arrivals} {}", u8::from(overlapped));
                inc.headers.insert("x-test-arrival", mark.parse().unwrap());
            })),
            after: Some(Box::new(move |inc: &Incoming, ans: &mut Answer| {
                let Some(key) = bearer(inc) else { return };
                let mark = inc
                    .headers
                    .get("x-test-arrival")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("0 0")
                    .to_string();
                let (own, overlapped) = mark.split_once(' ').unwrap_or(("0", "0"));
                let own: u64 = own.parse().unwrap_or(0);
                let mut st = state.lock().unwrap();
                let (flying, cache) = &mut *st;
                let (n, arrivals) = flying.entry(key.clone()).or_default();
                let concurrent = overlapped == "1" || *n > 1 || *arrivals > own;
                *n = n.saturating_sub(1);
                let route = format!("{key} {}", inc.path);
                if ans.status != 429 || concurrent {
                    let was_429 = ans.status == 429;
                    if cache.keep_or_replay(&route, ans) && was_429 {
                        ans.set_header("x-ratelimit-remaining", 0);
                    }
                }
            })),
            hold: None,
        }
    }

    const ROWS: &[Row] = &[
        Row::new(
            "fault-free: one counter per key",
            Defect::none,
            ONLY,
            &[Then::Passes("ratelimit.counter")],
        ),
        Row::new(
            "a counter per route (GET /tags and GET /qr apart)",
            per_route,
            ONLY,
            &[Then::Fails("ratelimit.counter")],
        ),
        Row::new(
            "a counter per plan, shared by its keys",
            per_plan,
            ONLY,
            &[Then::Fails("ratelimit.counter")],
        ),
        Row::new(
            "one key's 429s caused by another key's traffic",
            one_counter_for_all_keys,
            ONLY,
            &[Then::Says("ratelimit.counter", "throttled although")],
        ),
        Row::new(
            "Remaining wrong only in the last third of the window",
            remaining_wrong_late,
            ONLY,
            &[Then::Says("ratelimit.counter", "Remaining higher")],
        ),
        Row::new(
            "a racy limiter admitting a burst at once past the quota",
            racy,
            ONLY,
            &[Then::Says("ratelimit.counter", "admitted past")],
        ),
    ];

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn counters_that_are_not_one_per_key_fail_ratelimit_counter() {
        run_table(ROWS).await;
    }
}

/// Rate-limit fields on every answer, whatever its status: an error layer that sets them
/// again (each field twice) on refusals fails `ratelimit.headers`, and a limiter of its own on
/// errors fails `ratelimit.every-answer`; no family's own trail shows either.
mod every_answer {
    use super::common::broken::{Defect, Row, Then, run_table};
    use axum::http::HeaderValue;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    fn twice_on_refusals() -> Defect {
        Defect::after(|_, ans| {
            if ans.status < 400 || ans.status == 429 {
                return;
            }
            let limit = ans
                .headers
                .get("x-ratelimit-limit")
                .cloned()
                .unwrap_or(HeaderValue::from_static("60"));
            ans.headers.append("x-ratelimit-limit", limit.clone());
            ans.headers.append("x-ratelimit-limit", limit);
        })
    }

    /// A limiter of its own on errors (brute-force protection): the fifth, tenth and fifteenth
    /// refusal of a key are answered 429 in the envelope instead, however much of its quota is
    /// left. No family's
    /// own trail holds a refusal; the whole record does.
    fn errors_throttled_apart() -> Defect {
        let refused: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
        Defect::after(move |inc, ans| {
            let Some(key) = inc
                .headers
                .get("authorization")
                .and_then(|a| a.to_str().ok())
                .map(str::to_string)
            else {
                return;
            };
            if !(400..500).contains(&ans.status) || ans.status == 429 {
                return;
            }
            let mut refused = refused.lock().unwrap();
            let n = refused.entry(key).or_default();
            *n += 1;
            // Three of them: each 429 costs the runner a paced wait.
            if n.is_multiple_of(5) && *n <= 15 {
                ans.status = 429;
                ans.body =
                    br#"{"error":{"code":"rate_limit_exceeded","message":"too many errors"}}"#
                        .to_vec();
                ans.set_header("content-type", "application/json");
                ans.set_header("retry-after", 1);
            }
        })
    }

    const ROWS: &[Row] = &[
        Row::new(
            "X-RateLimit-Limit twice on every refusal",
            twice_on_refusals,
            &["status", "ratelimit.headers"],
            &[
                Then::Fails("ratelimit.headers"),
                Then::Says("ratelimit.headers", "X-RateLimit-Limit 3 times"),
            ],
        ),
        Row::new(
            "fault-free: every answer of the run follows from its key's history",
            Defect::none,
            &["http", "plan", "ratelimit.every-answer"],
            &[Then::NothingFails, Then::Passes("ratelimit.every-answer")],
        ),
        Row::new(
            "a limiter of its own on errors: the fifth refusal 429, quota left",
            errors_throttled_apart,
            // `status`: valid and invalid requests with one key, admissions and refusals mixed.
            &["status", "ratelimit.every-answer"],
            &[
                Then::Fails("ratelimit.every-answer"),
                Then::Says("ratelimit.every-answer", "throttled although"),
            ],
        ),
    ];

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rate_fields_on_any_answer_follow_from_the_key_s_history() {
        run_table(ROWS).await;
    }
}
