//! The runner against the reference (no failures) and against broken servers (the right check
//! fails), for the auth, plan, envelope and transport families.

use crate::common;

use common::broken::{BOTH, Defect, Impl, broken_on, failed, run_check};
use linkcert::verdict::Verdict;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_auth_plan_and_envelope_checks() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(
            b.target(),
            &["auth", "plan", "envelope", "schema", "transport"],
        )
        .await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        // Through the plain-HTTP proxy: reported, not failed.
        assert!(r.checks.iter().any(
            |c| c.id == "transport.https" && c.verdict == linkcert::verdict::Verdict::NonStrict
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_lets_unknown_keys_in_fails_auth_required() {
    // Every request reaches the reference with a valid key: no credential is ever refused.
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                inc.headers
                    .insert("authorization", "Bearer lk_enterprise_1".parse().unwrap());
            }),
        )
        .await;
        let r = run_check(b.target(), &["auth"]).await;
        assert!(
            failed(&r).contains(&"auth.required".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_gates_no_plan_fails_plan_partner_gating() {
    // Every deactivation request runs as Advanced: lower plans are not refused.
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                if inc.path == "/partners/deactivate" {
                    inc.headers
                        .insert("authorization", "Bearer lk_advanced_1".parse().unwrap());
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["plan"]).await;
        assert!(
            failed(&r).contains(&"plan.partner-gating".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_error_code_fails_envelope_code_and_a_bad_doc_url_fails_doc_url() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::after(|_, ans| {
        if ans.status == 401 {
            ans.body = br#"{"error":{"code":"forbidden","message":"no","doc_url":"https://d/errors#nothing"}}"#.to_vec();
        }
    })).await;
        let r = run_check(b.target(), &["auth", "envelope"]).await;
        let f = failed(&r);
        assert!(
            f.contains(&"envelope.code".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
        assert!(
            f.contains(&"envelope.doc-url".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_outside_the_envelope_fail_envelope_shape() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|_, ans| {
                if ans.status >= 400 {
                    ans.body = b"Bad Request".to_vec();
                    ans.set_header("content-type", "text/plain");
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["auth", "envelope"]).await;
        assert!(
            failed(&r).contains(&"envelope.shape".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_outside_the_spec_fails_status_listed() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|_, ans| {
                if ans.status == 401 {
                    ans.status = 418;
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["auth", "status.listed"]).await;
        assert!(
            failed(&r).contains(&"status.listed".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_without_their_name_fail_schema_response_and_a_wrong_type_fails_content_type() {
    for imp in BOTH {
        // Every other tag listing loses its names, the rest come as text/html.
        let n = std::sync::atomic::AtomicUsize::new(0);
        let b = broken_on(
            imp,
            6.0,
            Defect::after(move |inc, ans| {
                if inc.path == "/tags" && ans.status == 200 {
                    if n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                        .is_multiple_of(2)
                    {
                        let text =
                            String::from_utf8_lossy(&ans.body).replace("\"name\":", "\"label\":");
                        ans.body = text.into_bytes();
                    } else {
                        ans.set_header("content-type", "text/html");
                    }
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["schema", "status"]).await;
        let f = failed(&r);
        assert!(
            f.contains(&"schema.response".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
        assert!(
            f.contains(&"schema.content-type".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analytics_open_to_free_keys_fails_plan_analytics_free() {
    // Free keys' analytics requests are served as Pro: Free gets analytics it should not.
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                let free = inc
                    .headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("lk_free_"));
                if free && (inc.path == "/analytics" || inc.path == "/events") {
                    inc.headers
                        .insert("authorization", "Bearer lk_pro_1".parse().unwrap());
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["plan"]).await;
        if imp == Impl::Reference {
            assert!(
                failed(&r).contains(&"plan.analytics-free".to_string()),
                "{imp:?}: {}",
                r.summary()
            );
        } else {
            // The second implementation serves no analytics: nothing to open to Free, and
            // the check says so instead of failing or passing.
            let c = r
                .checks
                .iter()
                .find(|c| c.id == "plan.analytics-free")
                .unwrap();
            assert_eq!(c.verdict, Verdict::Skipped, "{}", r.summary());
            assert!(
                c.skipped
                    .as_deref()
                    .unwrap()
                    .contains("serves no operation"),
                "{:?}",
                c.skipped
            );
        }
    }
}

/// A target that compares keys loosely: `loose(given, real)` lets `given` in as `real`.
fn loose_keys(loose: fn(&str, &str) -> bool) -> Defect {
    const KEYS: [&str; 6] = [
        "lk_free_1",
        "lk_free_2",
        "lk_pro_1",
        "lk_business_1",
        "lk_advanced_1",
        "lk_enterprise_1",
    ];
    Defect::before(move |inc| {
        let given = inc
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        if let Some(given) = given
            && !KEYS.contains(&given.as_str())
            && let Some(real) = KEYS.iter().find(|k| loose(&given, k))
        {
            inc.headers
                .insert("authorization", format!("Bearer {real}").parse().unwrap());
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targets_comparing_keys_loosely_fail_auth_required() {
    let case_insensitive: fn(&str, &str) -> bool = |g, k| g.eq_ignore_ascii_case(k);
    let prefix: fn(&str, &str) -> bool =
        |g, k| g.len() > 4 && (g.starts_with(k) || k.starts_with(g));
    let ends_ignored: fn(&str, &str) -> bool =
        |g, k| g.len() == k.len() && g.get(..g.len() - 1) == k.get(..k.len() - 1);
    for (what, loose) in [
        ("case-insensitive", case_insensitive),
        ("prefix", prefix),
        ("last character ignored", ends_ignored),
    ] {
        for imp in BOTH {
            let b = broken_on(imp, 6.0, loose_keys(loose)).await;
            let r = run_check(b.target(), &["auth.required"]).await;
            assert!(
                failed(&r).contains(&"auth.required".to_string()),
                "{what}, {imp:?}: {}",
                r.summary()
            );
        }
    }
}

/// A target that keeps the first word after `Bearer` as the key: `Bearer <key> junk` gets in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_keeping_the_first_word_after_bearer_fails_auth_required() {
    for imp in BOTH {
        let first_word = Defect::before(|inc| {
            let key = inc
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .and_then(|rest| rest.split([' ', '\t', ',']).next())
                .map(str::to_string);
            if let Some(key) = key.filter(|k| !k.is_empty()) {
                inc.headers
                    .insert("authorization", format!("Bearer {key}").parse().unwrap());
            }
        });
        let b = broken_on(imp, 6.0, first_word).await;
        let r = run_check(b.target(), &["auth.required"]).await;
        assert!(
            failed(&r).contains(&"auth.required".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
        let rows: Vec<_> = r
            .checks
            .iter()
            .filter(|c| c.id == "auth.required")
            .collect();
        assert!(
            format!("{rows:?}").contains("more text"),
            "{imp:?}: the finding names the trailing text: {rows:?}"
        );
    }
}

/// A target that crashes when a Free key sends logo or hideLogo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_logo_on_a_free_key_fails_plan_paid_params_safe() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                let free = inc
                    .headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("Bearer lk_free_"));
                let paid_param = inc
                    .query
                    .split('&')
                    .any(|p| p.starts_with("logo=") || p.starts_with("hideLogo="));
                if inc.path == "/qr" && free && paid_param && ans.status != 429 {
                    ans.status = 500;
                    ans.body =
                        br#"{"error":{"code":"internal_server_error","message":"boom"}}"#.to_vec();
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["plan"]).await;
        assert!(
            failed(&r).contains(&"plan.paid-params-safe".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}
