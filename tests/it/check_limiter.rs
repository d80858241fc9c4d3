//! The `limiter` family: a plan's third key lives three windows beside the other families (a
//! burst in its first window, two idle windows, a window of the routes mixed). Both
//! implementations pass: the reference's sliding log and the second's fixed window on the
//! clock. In front of both, a limiter that keeps a key throttled after idle windows, one whose
//! fresh windows admit fewer than their room, and one whose windows admit past the limit fail
//! the check each contradicts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::common;
use common::broken::{
    Answer, Defect, Impl, Incoming, broken_fleet, failed, run_check, side_by_side,
};
use linkcert::report::Report;

/// The window: whole seconds of at least 3, so that Reset names windows.
const W: f64 = 4.0;

/// Every plan.
const PLANS: [&str; 5] = ["free", "pro", "business", "advanced", "enterprise"];
/// The small plans: a defect test's bursts stay well past the limit however busy the machine.
const SMALL: [&str; 2] = ["free", "pro"];

/// The limiter family alone, `defect` in front of `imp` serving three keys of each of `plans`.
async fn limiter_run(imp: Impl, defect: Defect, plans: &[&str]) -> Report {
    let b = broken_fleet(imp, W, 3, defect).await;
    let mut target = b.target();
    // Both accept `lk_<plan>_1` to `_3` (as `serve --dev-keys 3`); the third is the limiter's.
    target.keys = common::variant::fleet_keys(plans, 3);
    run_check(target, &["limiter"]).await
}

fn key_of(inc: &Incoming) -> String {
    inc.headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn throttle(ans: &mut Answer) {
    ans.status = 429;
    ans.body = br#"{"error":{"code":"rate_limit_exceeded","message":"rate limited"}}"#.to_vec();
    ans.set_header("content-type", "application/json");
    ans.set_header("x-ratelimit-remaining", 0);
    ans.set_header("retry-after", 1);
}

fn findings(r: &Report, id: &str) -> String {
    r.checks
        .iter()
        .filter(|c| c.id == id)
        .flat_map(|c| {
            c.findings
                .iter()
                .map(|f| format!("{} | {}", f.message, f.actual))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_the_limiter_over_time_on_every_plan() {
    let runs =
        side_by_side(|imp| async move { (imp, limiter_run(imp, Defect::none(), &PLANS).await) })
            .await;
    for (imp, r) in runs {
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        for id in ["limiter.windows", "limiter.fresh", "limiter.over-time"] {
            let plans: Vec<&str> = r
                .checks
                .iter()
                .filter(|c| c.id == id && c.cases > 0)
                .map(|c| c.operation.as_str())
                .collect();
            // Every plan with a standard limit, its own key each.
            for plan in ["free", "pro", "business", "advanced"] {
                let rows: Vec<_> = r.checks.iter().filter(|c| c.id == id).collect();
                assert!(
                    plans.iter().any(|p| p.contains(plan)),
                    "{imp:?} {id} {plan}: {rows:?}"
                );
            }
        }
        // The analytics class has a limiter of its own: the reference's stand-in operations
        // are driven on each plan with analytics; the second implementation serves none.
        let analytics: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| c.id == "limiter.fresh" && c.operation.contains("analytics"))
            .map(|c| c.operation.as_str())
            .collect();
        if imp == Impl::Reference {
            for plan in ["pro", "business", "advanced"] {
                assert!(
                    analytics.iter().any(|l| l.contains(plan)),
                    "{plan}: {analytics:?}"
                );
            }
        } else {
            assert!(analytics.is_empty(), "{analytics:?}");
            let skips = r
                .checks
                .iter()
                .filter(|c| c.id == "limiter.over-time" && c.operation.contains("analytics"))
                .count();
            assert!(skips > 0, "the refused class is said: {}", r.summary());
        }
        let model = findings(&r, "limiter.model");
        if imp == Impl::Variant {
            // Its fixed window on the clock is learned as such.
            assert!(
                model.contains("named windows aligned to the clock"),
                "{model}"
            );
        } else {
            assert!(model.contains("the run's limiter"), "{model}");
        }
    }
}

/// `defect` in front of both implementations (the small plans' keys): `id` fails, and its
/// findings say each of `says`.
async fn fails_in_front_of_both(defect: fn() -> Defect, id: &str, says: &[&str]) {
    let runs =
        side_by_side(|imp| async move { (imp, limiter_run(imp, defect(), &SMALL).await) }).await;
    judge_failed(runs, id, says);
}

fn judge_failed(runs: Vec<(Impl, Report)>, id: &str, says: &[&str]) {
    for (imp, r) in runs {
        let rows: Vec<_> = r
            .checks
            .iter()
            .filter(|c| c.id.starts_with("limiter"))
            .collect();
        assert!(failed(&r).iter().any(|f| f == id), "{imp:?}: {rows:?}");
        let f = findings(&r, id);
        assert!(says.iter().all(|t| f.contains(t)), "{imp:?}: {f}");
    }
}

/// A count per key and named window (the X-RateLimit-Reset it names).
type PerWindow = HashMap<(String, String), u64>;
/// The latest 2xx body per path and query.
type Bodies = HashMap<String, Vec<u8>>;

/// Once a key is throttled, it stays throttled: nothing gives its quota back.
fn sticky_throttle() -> Defect {
    sticky(|_| true)
}

/// Once a key is throttled in a class `stuck` takes, it stays throttled in it.
fn sticky(stuck: fn(&Incoming) -> bool) -> Defect {
    let throttled: Arc<Mutex<HashMap<String, bool>>> = Default::default();
    Defect::after(move |inc, ans| {
        if !stuck(inc) {
            return;
        }
        let mut t = throttled.lock().unwrap();
        let key = key_of(inc);
        if ans.status == 429 {
            t.insert(key, true);
        } else if t.get(&key).copied().unwrap_or(false) && (200..300).contains(&ans.status) {
            throttle(ans);
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_kept_throttled_after_idle_windows_fails_limiter_fresh() {
    fails_in_front_of_both(
        sticky_throttle,
        "limiter.fresh",
        &["had sent nothing for", "429"],
    )
    .await;
}

/// Each window the target names admits five fewer than the limit (some requests charged
/// twice, say), while its first admission says the whole quota was there.
fn short_windows() -> Defect {
    let counts: Arc<Mutex<PerWindow>> = Default::default();
    Defect::after(move |inc, ans| {
        let (Some(n), Some(reset)) = (
            ans.header_u64("x-ratelimit-limit"),
            ans.headers
                .get("x-ratelimit-reset")
                .and_then(|v| v.to_str().ok())
                .map(String::from),
        ) else {
            return;
        };
        if !(200..300).contains(&ans.status) {
            return;
        }
        let mut c = counts.lock().unwrap();
        let seen = c.entry((key_of(inc), reset)).or_insert(0);
        *seen += 1;
        if *seen + 5 > n {
            throttle(ans);
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_window_admitting_fewer_than_its_room_fails_limiter_windows() {
    fails_in_front_of_both(
        short_windows,
        "limiter.windows",
        &["began with the whole quota"],
    )
    .await;
}

/// The first three 429s of each named window are admitted after all: the window admits its
/// limit and three more.
fn three_past_the_limit() -> Defect {
    let state: Arc<Mutex<(PerWindow, Bodies)>> = Default::default();
    Defect::after(move |inc, ans| {
        let mut s = state.lock().unwrap();
        let (passed, bodies) = &mut *s;
        let target = format!("{}?{}", inc.path, inc.query);
        if (200..300).contains(&ans.status) {
            bodies.insert(target, ans.body.clone());
            return;
        }
        let Some(reset) = ans
            .headers
            .get("x-ratelimit-reset")
            .and_then(|v| v.to_str().ok())
        else {
            return;
        };
        let n = passed.entry((key_of(inc), reset.to_string())).or_insert(0);
        if ans.status == 429
            && *n < 3
            && let Some(body) = bodies.get(&target)
        {
            *n += 1;
            ans.status = 200;
            ans.body = body.clone();
            ans.headers.remove("retry-after");
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_admitting_past_the_limit_fails_limiter_windows() {
    fails_in_front_of_both(
        three_past_the_limit,
        "limiter.windows",
        &["admitted naming it"],
    )
    .await;
}

/// Which rate class a request is in, by path: the analytics class's own window is the
/// standard one's sixtieth (a second a minute).
fn class_window(inc: &Incoming) -> f64 {
    if inc.path.starts_with("/analytics") || inc.path.starts_with("/events") {
        W / 60.0
    } else {
        W
    }
}

/// One sliding log per class for every key at once: a key is throttled when the keys
/// together used its limit (a counter shared by keys: the spec's limits are "per key").
fn shared_by_keys() -> Defect {
    let logs: Arc<Mutex<HashMap<u64, std::collections::VecDeque<std::time::Instant>>>> =
        Default::default();
    Defect::after(move |inc, ans| {
        let Some(n) = ans.header_u64("x-ratelimit-limit") else {
            return;
        };
        if !(200..300).contains(&ans.status) {
            return;
        }
        let w = std::time::Duration::from_secs_f64(class_window(inc));
        let mut logs = logs.lock().unwrap();
        let log = logs.entry(w.as_millis() as u64).or_default();
        let now = std::time::Instant::now();
        while log.front().is_some_and(|t| now.duration_since(*t) >= w) {
            log.pop_front();
        }
        if log.len() as u64 >= n {
            throttle(ans);
        } else {
            log.push_back(now);
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limiter_shared_by_keys_fails_limiter_over_time() {
    fails_in_front_of_both(
        shared_by_keys,
        "limiter.over-time",
        &["throttled although the key's own traffic had not spent its quota"],
    )
    .await;
}

/// Once an analytics request is throttled, every later one is: the analytics class never gives
/// its quota back, the standard class does.
fn sticky_analytics() -> Defect {
    sticky(|inc| class_window(inc) < W)
}

/// Each class is judged by its own limiter: a stuck analytics limiter fails on the analytics
/// windows only. In front of the reference alone: the second implementation serves no
/// analytics operation (the spec shows none; GET /analytics is the reference's stand-in).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_analytics_limiter_that_never_gives_back_fails_limiter_fresh_on_its_class() {
    let r = limiter_run(Impl::Reference, sticky_analytics(), &["pro"]).await;
    let failing: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| c.verdict == linkcert::verdict::Verdict::Fail)
        .map(|c| c.operation.as_str())
        .collect();
    assert!(
        failing.contains(&"the pro key's analytics windows"),
        "{}",
        r.summary()
    );
    assert!(
        !failing.contains(&"the pro key's windows"),
        "the standard class is not the defect's: {}",
        r.summary()
    );
    let f = findings(&r, "limiter.fresh");
    assert!(
        f.contains("had sent nothing for") && f.contains("429"),
        "{f}"
    );
}

/// A limiter before authentication: every request refused for its credential is charged to
/// one counter that every key's X-RateLimit-Remaining reports (a counter per client address,
/// say), so a key's Remaining falls for requests that were not its own.
fn charged_before_auth() -> Defect {
    let refused: Arc<Mutex<u64>> = Default::default();
    Defect::after(move |_, ans| {
        let mut r = refused.lock().unwrap();
        if ans.status == 401 {
            *r += 1;
        } else if (200..300).contains(&ans.status)
            && let Some(left) = ans.header_u64("x-ratelimit-remaining")
        {
            ans.set_header("x-ratelimit-remaining", left.saturating_sub(*r));
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_charged_for_requests_refused_for_their_credential_fails_limiter_over_time() {
    fails_in_front_of_both(
        charged_before_auth,
        "limiter.over-time",
        &["lower than the key's own requests explain"],
    )
    .await;
}
