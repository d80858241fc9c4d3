//! `load` in front of small broken servers before each implementation: each defect fails the
//! rule that owns it, and nothing else does.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_limiting_fails_admitted() {
    // A Free key rewritten to the Enterprise key: nothing is throttled.
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::before(|i| {
                if i.key_is("lk_free_1") {
                    i.use_key("lk_enterprise_1");
                }
            }),
        )
        .await;
        let r = run(
            b.target(),
            vec![free_overload()],
            &format!("nolimit-{imp:?}"),
        )
        .await;
        assert_fails(imp, &r, "free-overload", "load.admitted");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twice_the_limit_fails_admitted() {
    // A Free key alternated between the two Free keys: 2N per window.
    side_by_side(|imp| async move {
        let flip = std::sync::atomic::AtomicU64::new(0);
        let b = broken_on(
            imp,
            WINDOW,
            Defect::before(move |i| {
                if i.key_is("lk_free_1")
                    && !flip
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                        .is_multiple_of(2)
                {
                    i.use_key("lk_free_2");
                }
            }),
        )
        .await;
        let r = run(b.target(), vec![free_overload()], &format!("twice-{imp:?}")).await;
        assert_fails(imp, &r, "free-overload", "load.admitted");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_plan_at_the_free_rate_fails_under_served() {
    // A Pro key's requests routed to a Free key.
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            4.0,
            Defect::before(|i| {
                if i.key_is("lk_pro_1")
                {
                    i.use_key("lk_free_1");
                }
            }),
        )
        .await;
        // Pro at 1.1x for 1.5 windows of 4 s: 165 requests per second (a rate a debug build
        // holds with room to spare on a busy machine), about 1000 in all. Under-service is
        // judged from what was really sent, whether or not the schedule held.
        let s = scenario(
            "name='pro-small'\nplan='pro'\nrate=1.1\nwindows=1.5\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}",
        );
        let r = run(b.target(), vec![s], &format!("freerate-{imp:?}")).await;
        assert_fails(imp, &r, "pro-small", "load.admitted");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_shared_by_keys_fails_isolation() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::before(|i| {
                if i.key_is("lk_free_2") {
                    i.use_key("lk_free_1");
                }
            }),
        )
        .await;
        let s = Scenario::load("two-keys-isolation").expect("built-in");
        let r = run(b.target(), vec![s], &format!("shared-{imp:?}")).await;
        assert_fails(imp, &r, "two-keys-isolation", "load.isolation");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remaining_that_never_falls_fails_remaining() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                if a.headers.contains_key("x-ratelimit-remaining") {
                    a.set_header("x-ratelimit-remaining", 42);
                }
            }),
        )
        .await;
        let r = run(
            b.target(),
            vec![free_overload()],
            &format!("remaining-{imp:?}"),
        )
        .await;
        assert_fails(imp, &r, "free-overload", "load.remaining");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_in_milliseconds_fails_reset() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                if let Some(v) = a.header_u64("x-ratelimit-reset") {
                    a.set_header("x-ratelimit-reset", v * 1000);
                }
            }),
        )
        .await;
        let r = run(
            b.target(),
            vec![free_overload()],
            &format!("resetms-{imp:?}"),
        )
        .await;
        assert_fails(imp, &r, "free-overload", "load.reset");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_without_retry_after_fails_retry_after() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                a.headers.remove("retry-after");
            }),
        )
        .await;
        let r = run_until_throttled(|| b.target(), &format!("noretry-{imp:?}")).await;
        assert_fails(imp, &r, "retry-after-honesty", "load.retry-after");
        assert_fails(imp, &r, "retry-after-honesty", "load.retry-honesty");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_shorter_than_the_wait_fails_honesty() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                if let Some(v) = a.header_u64("retry-after") {
                    a.set_header("retry-after", v / 2);
                }
            }),
        )
        .await;
        let r = run_until_throttled(|| b.target(), &format!("shortretry-{imp:?}")).await;
        assert_fails(imp, &r, "retry-after-honesty", "load.retry-honesty");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_target_fails_without_panicking() {
    // Garbage headers, a non-envelope 429 body, and a 500 now and then.
    side_by_side(|imp| async move {
        let n = std::sync::atomic::AtomicU64::new(0);
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(move |_, a| {
                a.set_header("x-ratelimit-reset", "soon");
                a.set_header("retry-after", "-3");
                if a.status == 429 {
                    a.body = b"\xff\xfe not json".to_vec();
                }
                if n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    .is_multiple_of(17)
                {
                    a.status = 500;
                }
            }),
        )
        .await;
        let s = scenario(
            "name='hostile'\nplan='free'\nrate=2\nwindows=1.2\n[[operations]]\noperation='getTags'",
        );
        // Bounded once the run has its turn: the wait for one is the suite's, not the run's.
        let _turn = turns(1).await;
        let r = tokio::time::timeout(
            Duration::from_secs(30),
            run_in(
                b.target(),
                vec![s],
                &format!("hostile-{imp:?}"),
                false,
                false,
            ),
        )
        .await
        .expect("bounded in time");
        for c in [
            "load.reset",
            "load.retry-after",
            "load.envelope",
            "load.answers",
        ] {
            assert_fails(imp, &r, "hostile", c);
        }
    })
    .await;
}

/// The plan's limit for a Pro key: N = 600.
const PRO: u64 = 600;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_admitted_at_another_plans_rate_fails_admitted() {
    // A Pro key counted at the Business rate (1200) while it still says 600 in its headers.
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            4.0,
            Defect {
                before: Some(Box::new(|i| {
                    if i.key_is("lk_pro_1")
                    {
                        i.use_key("lk_business_1");
                    }
                })),
                after: Some(Box::new(|_, a| {
                    if a.headers.contains_key("x-ratelimit-limit") {
                        a.set_header("x-ratelimit-limit", PRO);
                    }
                })),
                hold: None,
            },
        )
        .await;
        // 1.2x of Pro for 2.5 windows of 4 s: 180 requests per second, 1800 in all, every one
        // admitted. The totals' bounds allow four windows' worth (2448): only counting window
        // by window sees 720 in each (two whole windows: a busy machine's slow answers can
        // blur one boundary, not both).
        let s = scenario(
            "name='pro-at-business'\nplan='pro'\nrate=1.2\nwindows=2.5\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}",
        );
        let r = run(b.target(), vec![s], &format!("otherplan-{imp:?}")).await;
        assert_fails(imp, &r, "pro-at-business", "load.admitted");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_few_more_than_the_limit_per_window_fails_admitted() {
    // Each window (of the proxy's, from the first request) lets 5 requests past the limit of 60:
    // the 61st to 65th request of lk_free_1 in it go to the other Free key, admitted there. (The
    // judge's own tests show +3 found on synthetic limiters; here a busy machine's generator,
    // late by tens of milliseconds, blurs the windows by a request or two.)
    side_by_side(|imp| async move {
        let cell = std::sync::Mutex::new((None::<std::time::Instant>, 0u64));
        let b = broken_on(
            imp,
            WINDOW,
            Defect {
                before: Some(Box::new(move |i| {
                    if !i.key_is("lk_free_1") {
                        return;
                    }
                    let mut c = cell.lock().unwrap();
                    let now = std::time::Instant::now();
                    let start = *c.0.get_or_insert(now);
                    if now.duration_since(start).as_secs_f64() >= WINDOW {
                        *c = (Some(now), 0);
                    }
                    c.1 += 1;
                    if (61..=65).contains(&c.1) {
                        i.use_key("lk_free_2");
                    }
                })),
                // What the other key says of its own quota is not this key's.
                after: Some(Box::new(|i, a| {
                    if i.key_is("lk_free_2") {
                        a.set_header("x-ratelimit-remaining", 0);
                    }
                })),
                hold: None,
            },
        )
        .await;
        let r = run(b.target(), vec![free_overload()], &format!("plus3-{imp:?}")).await;
        assert_fails(imp, &r, "free-overload", "load.admitted");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_requests_using_up_quota_fail_admitted() {
    // A limiter that counts rejected requests too, each as 0.4 of one, in a sliding log of the
    // window: a client that keeps sending at 2x is admitted its 60 in the first window, then
    // about 20 per window (20 + 0.4 x 100 = 60).
    side_by_side(|imp| async move {
        let log =
            std::sync::Mutex::new(std::collections::VecDeque::<(std::time::Instant, f64)>::new());
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(move |i, a| {
                if !i.key_is("lk_free_1")
                {
                    return;
                }
                let mut l = log.lock().unwrap();
                let now = std::time::Instant::now();
                while l
                    .front()
                    .is_some_and(|e| now.duration_since(e.0).as_secs_f64() >= WINDOW)
                {
                    l.pop_front();
                }
                let used: f64 = l.iter().map(|e| e.1).sum();
                if (200..300).contains(&a.status) && used <= 59.0 {
                    l.push_back((now, 1.0));
                    return;
                }
                l.push_back((now, 0.4));
                if a.status != 429 {
                    a.status = 429;
                    a.body = br#"{"error":{"code":"rate_limit_exceeded","message":"rate limit exceeded"}}"#.to_vec();
                    a.set_header("content-type", "application/json");
                    a.set_header("x-ratelimit-remaining", 0);
                    a.set_header("retry-after", 1);
                }
            }),
        )
        .await;
        // 2x for 2.5 windows: about 60 + 20 + 10 admitted, above the totals' lower bound
        // (about 81: it allows a whole window missing); only window by window is it seen.
        let s = scenario(
            "name='persistent'\nplan='free'\nrate=2\nwindows=2.5\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}",
        );
        let r = run(b.target(), vec![s], &format!("persistent-{imp:?}")).await;
        assert_fails(imp, &r, "persistent", "load.admitted");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_of_60_on_every_plan_fails_limit() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                if a.headers.contains_key("x-ratelimit-limit") {
                    a.set_header("x-ratelimit-limit", 60);
                }
            }),
        )
        .await;
        // Under the limit (0.3x for half a window): the headers are all there is to judge.
        let s = scenario(
            "name='pro-limit'\nplan='pro'\nrate=0.3\nwindows=0.5\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}",
        );
        let r = run(b.target(), vec![s], &format!("limit60-{imp:?}")).await;
        assert_fails(imp, &r, "pro-limit", "load.limit");
    })
    .await;
}

/// A second X-RateLimit-Remaining on some answers, with another value (a cache or proxy in
/// front adding its own): the first value is right, so only reading every value finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_field_given_twice_fails_headers() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                if let Some(v) = a.header_u64("x-ratelimit-remaining")
                    && v % 7 == 3
                {
                    a.headers
                        .append("x-ratelimit-remaining", http::HeaderValue::from(v + 1));
                }
            }),
        )
        .await;
        let r = run(b.target(), vec![free_overload()], &format!("twice-{imp:?}")).await;
        assert_fails(imp, &r, "free-overload", "load.headers");
        let f = scenario_named(&r, "free-overload")
            .findings
            .iter()
            .find(|f| f.check == "load.headers")
            .map(|f| f.message.clone())
            .unwrap_or_default();
        assert!(
            f.contains("more than once (x-ratelimit-remaining: "),
            "{imp:?}: {f}"
        );
    })
    .await;
}

/// A fixed window of 60 per 4 s kept by the proxy for lk_free_1 (its requests go on to the
/// Enterprise key, which the implementation never throttles), naming each window in
/// X-RateLimit-Reset, limiting first (a refusal uses quota, as in both implementations);
/// `every` > 0: every `every`-th admission costs two.
fn proxy_fixed_window(every: u64) -> Defect {
    const W: f64 = 4.0;
    let state = std::sync::Mutex::new((None::<f64>, 0u64, 0u64));
    Defect {
        before: Some(Box::new(|i| {
            if i.key_is("lk_free_1") {
                i.use_key("lk_enterprise_1");
            }
        })),
        after: Some(Box::new(move |i, a| {
            let refusal = matches!(a.status, 400 | 422);
            if !i.key_is("lk_enterprise_1") || !((200..300).contains(&a.status) || refusal) {
                return;
            }
            let now = linkcert::clock::now_epoch();
            let mut s = state.lock().unwrap();
            let start = match s.0 {
                Some(t) if now < t + W => t,
                _ => {
                    *s = (Some(now), 0, s.2);
                    now
                }
            };
            let cost = if refusal {
                1
            } else if every > 0 && (s.2 + 1).is_multiple_of(every) {
                2
            } else {
                1
            };
            let reset = (start + W).ceil() as u64;
            a.set_header("x-ratelimit-limit", 60);
            a.set_header("x-ratelimit-reset", reset);
            if s.1 + cost <= 60 {
                s.1 += cost;
                s.2 += u64::from(!refusal);
                a.set_header("x-ratelimit-remaining", 60 - s.1);
            } else {
                a.status = 429;
                a.body =
                    br#"{"error":{"code":"rate_limit_exceeded","message":"rate limit exceeded"}}"#
                        .to_vec();
                a.set_header("content-type", "application/json");
                a.set_header("x-ratelimit-remaining", 0);
                a.set_header("retry-after", (reset as f64 - now).ceil().max(1.0) as u64);
            }
        })),
        hold: None,
    }
}

/// A window the target names and says began fresh is judged exactly: a fixed window that
/// charges every 5th request twice (50 admitted of a window's 60) fails load.admitted, where
/// the three-quarter floor kept for sliding counters let it pass; the same fixed window
/// charging one each passes. In front of both implementations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_window_charging_some_requests_twice_fails_admitted() {
    side_by_side(|imp| async move {
        let s = || {
            scenario(
                "name='fixed'\nplan='free'\nrate=2\nwindows=3\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}",
            )
        };
        let clean = broken_on(imp, 4.0, proxy_fixed_window(0)).await;
        let r = run(clean.target(), vec![s()], &format!("fixed-clean-{imp:?}")).await;
        let sc = scenario_named(&r, "fixed");
        assert_eq!(r.verdict.as_str(), "pass", "{imp:?}: {:#?}", sc.findings);
        let admitted = sc
            .findings
            .iter()
            .find(|f| f.check == "load.admitted")
            .map(|f| f.message.clone())
            .unwrap_or_default();
        assert!(
            admitted.contains("windows it named and began fresh each admitted"),
            "{imp:?}: {admitted}"
        );
        let twice = broken_on(imp, 4.0, proxy_fixed_window(5)).await;
        let r = run(twice.target(), vec![s()], &format!("fixed-twice-{imp:?}")).await;
        assert_fails(imp, &r, "fixed", "load.admitted");
    })
    .await;
}

/// One key of every plan at once (Free, Pro, and Enterprise at half the limit it states): a
/// counter Enterprise shares with Pro (its requests counted on Pro's key) throttles the key
/// under its limit while Pro is overloaded, and load.isolation names it; fault-free, each key
/// is judged against its own plan's limit and passes. One plan at a time cannot see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_enterprise_shares_with_another_plan_fails_isolation() {
    side_by_side(|imp| async move {
        let s = || {
            scenario(
                "name='plans-small'\nplan='every'\nshape='plans'\nrate=1.25\nother_key_rate=0.5\nwindows=1.5\n[[operations]]\noperation='getTags'\nquery={pageSize='1'}",
            )
        };
        let keys = |mut t: Target| {
            let kept = ["lk_free_1", "lk_pro_1", "lk_enterprise_1"];
            t.keys.retain(|k| kept.contains(&k.key.as_str()));
            t
        };
        let clean = broken_on(imp, 4.0, Defect::none()).await;
        let r = run(keys(clean.target()), vec![s()], &format!("plans-clean-{imp:?}")).await;
        let sc = scenario_named(&r, "plans-small");
        assert_eq!(r.verdict.as_str(), "pass", "{imp:?}: {:#?}", sc.findings);
        let limits: Vec<(String, u64)> = sc.keys.iter().map(|k| (k.label.clone(), k.limit)).collect();
        assert_eq!(limits.len(), 3, "{imp:?}: {limits:?}");
        assert_eq!((limits[0].1, limits[1].1), (60, 600), "{imp:?}: each plan's own limit");
        assert!(limits[2].1 > 0, "{imp:?}: Enterprise's stated limit read: {limits:?}");
        let shared = broken_on(
            imp,
            4.0,
            Defect::before(|i| {
                if i.key_is("lk_enterprise_1")
                {
                    i.use_key("lk_pro_1");
                }
            }),
        )
        .await;
        let r = run(keys(shared.target()), vec![s()], &format!("plans-shared-{imp:?}")).await;
        assert_fails(imp, &r, "plans-small", "load.isolation");
        // An Enterprise key that states no limit is not loaded, and its report says why.
        let silent = broken_on(
            imp,
            4.0,
            Defect::after(|i, a| {
                if i.key_is("lk_enterprise_1") {
                    a.headers.remove("x-ratelimit-limit");
                }
            }),
        )
        .await;
        let r = run(keys(silent.target()), vec![s()], &format!("plans-silent-{imp:?}")).await;
        let sc = scenario_named(&r, "plans-small");
        let ent = sc.keys.iter().find(|k| k.label.starts_with("enterprise"));
        assert_eq!(ent.map(|k| (k.sent, k.limit)), Some((0, 0)), "{imp:?}");
        let said = sc.findings.iter().find(|f| {
            f.check == "load.limit" && f.key.as_deref().is_some_and(|k| k.starts_with("enterprise"))
        });
        assert!(
            said.is_some_and(|f| f.verdict == Verdict::Skipped && f.message.contains("states none")),
            "{imp:?}: {said:?}"
        );
    })
    .await;
}

/// A gateway that answers the requests the spec forbids from a counter of its own: each
/// refusal says the whole quota is left (59 of 60) whatever the key has spent. Their fields
/// follow from the key's history like any other answer's: load.counter fails, in front of
/// both implementations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_that_says_the_whole_quota_is_left_fails_counter() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|i, a| {
                if i.key_is("lk_free_1") && matches!(a.status, 400 | 422) {
                    a.set_header("x-ratelimit-remaining", 59);
                }
            }),
        )
        .await;
        let r = run(
            b.target(),
            vec![free_overload()],
            &format!("fresh-refusal-{imp:?}"),
        )
        .await;
        assert_fails(imp, &r, "free-overload", "load.counter");
        let counter = finding(&r, "free-overload", "load.counter");
        assert!(counter.contains("on a refusal (4"), "{imp:?}: {counter}");
    })
    .await;
}

/// A gateway's own page for the requests the spec forbids (400 in HTML, not the error
/// envelope): load.refusals fails, naming the request and what came back; load.answers,
/// which judges the requests the spec allows, does not. In front of both implementations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_outside_the_envelope_fails_refusals() {
    side_by_side(|imp| async move {
        let b = broken_on(
            imp,
            WINDOW,
            Defect::after(|_, a| {
                if matches!(a.status, 400 | 422) {
                    a.status = 400;
                    a.body = b"<html><body>Bad Request</body></html>".to_vec();
                    a.set_header("content-type", "text/html");
                }
            }),
        )
        .await;
        let r = run(
            b.target(),
            vec![free_overload()],
            &format!("html-refusal-{imp:?}"),
        )
        .await;
        assert_fails(imp, &r, "free-overload", "load.refusals");
        assert!(
            !r.failed_checks("free-overload")
                .iter()
                .any(|c| c == "load.answers"),
            "{imp:?}: {}",
            r.summary()
        );
        let refusals = finding(&r, "free-overload", "load.refusals");
        assert!(
            refusals.contains("answered 400 with no error envelope"),
            "{imp:?}: {refusals}"
        );
    })
    .await;
}
