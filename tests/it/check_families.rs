//! The runner against both implementations (no failures) and against broken servers: a table
//! of defects (`DEFECTS`), each failing the right check, for the auth, plan, envelope, schema,
//! status and transport families.

use crate::common;

use common::broken::{
    BOTH, Defect, Impl, Row,
    Then::{Fails, Says, Shows},
    broken_on, failed, run_check, run_table,
};
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

/// Every defect, what the runner runs in front of it, and what it must find, in front of both
/// implementations.
const DEFECTS: &[Row] = &[
    // Every request reaches the implementation with a valid key: no credential is ever refused.
    Row::new(
        "unknown keys let in",
        unknown_keys_let_in,
        &["auth"],
        &[Fails("auth.required")],
    ),
    // Every deactivation request runs as Advanced: lower plans are not refused.
    Row::new(
        "no plan gated",
        no_plan_gated,
        &["plan"],
        &[Fails("plan.partner-gating")],
    ),
    Row::new(
        "a wrong error code and a bad doc_url",
        wrong_code_and_doc_url,
        &["auth", "envelope"],
        &[Fails("envelope.code"), Fails("envelope.doc-url")],
    ),
    Row::new(
        "an empty message in every error",
        empty_messages,
        &["auth", "envelope"],
        &[
            Fails("envelope.message"),
            Says("envelope.message", "an empty message"),
        ],
    ),
    Row::new(
        "errors outside the envelope",
        errors_outside_the_envelope,
        &["auth", "envelope"],
        &[Fails("envelope.shape")],
    ),
    Row::new(
        "418 for 401",
        status_outside_the_spec,
        &["auth", "status.listed"],
        &[Fails("status.listed")],
    ),
    Row::new(
        "tags without their name, or as text/html",
        tags_nameless_or_html,
        &["schema", "status"],
        &[Fails("schema.response"), Fails("schema.content-type")],
    ),
    Row::new(
        "keys compared case-insensitively",
        || loose_keys(|g, k| g.eq_ignore_ascii_case(k)),
        &["auth.required"],
        &[Fails("auth.required")],
    ),
    Row::new(
        "keys compared by prefix",
        || loose_keys(|g, k| g.len() > 4 && (g.starts_with(k) || k.starts_with(g))),
        &["auth.required"],
        &[Fails("auth.required")],
    ),
    Row::new(
        "keys compared without their last character",
        || loose_keys(|g, k| g.len() == k.len() && g.get(..g.len() - 1) == k.get(..k.len() - 1)),
        &["auth.required"],
        &[Fails("auth.required")],
    ),
    Row::new(
        "the first word after Bearer kept as the key",
        first_word_after_bearer,
        &["auth.required"],
        // The finding names the trailing text.
        &[Fails("auth.required"), Shows("auth.required", "more text")],
    ),
    Row::new(
        "a 500 for logo or hideLogo on a Free key",
        paid_params_500_for_free,
        &["plan"],
        &[Fails("plan.paid-params-safe")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_the_check_that_owns_it() {
    run_table(DEFECTS).await;
}

fn unknown_keys_let_in() -> Defect {
    Defect::before(|inc| {
        inc.headers
            .insert("authorization", "Bearer lk_enterprise_1".parse().unwrap());
    })
}

fn no_plan_gated() -> Defect {
    Defect::before(|inc| {
        if inc.path == "/partners/deactivate" {
            inc.headers
                .insert("authorization", "Bearer lk_advanced_1".parse().unwrap());
        }
    })
}

fn wrong_code_and_doc_url() -> Defect {
    Defect::after(|_, ans| {
        if ans.status == 401 {
            ans.body = br#"{"error":{"code":"forbidden","message":"no","doc_url":"https://d/errors#nothing"}}"#.to_vec();
        }
    })
}

/// The envelope kept, its message emptied (a framework's default error with no text).
fn empty_messages() -> Defect {
    Defect::after(|_, ans| {
        if ans.status < 400 {
            return;
        }
        let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&ans.body) else {
            return;
        };
        if let Some(e) = v.get_mut("error").and_then(|e| e.as_object_mut()) {
            e.insert("message".into(), serde_json::Value::String(String::new()));
            ans.body = v.to_string().into_bytes();
        }
    })
}

fn errors_outside_the_envelope() -> Defect {
    Defect::after(|_, ans| {
        if ans.status >= 400 {
            ans.body = b"Bad Request".to_vec();
            ans.set_header("content-type", "text/plain");
        }
    })
}

fn status_outside_the_spec() -> Defect {
    Defect::after(|_, ans| {
        if ans.status == 401 {
            ans.status = 418;
        }
    })
}

/// Every other tag listing loses its names, the rest come as text/html.
fn tags_nameless_or_html() -> Defect {
    let n = std::sync::atomic::AtomicUsize::new(0);
    Defect::after(move |inc, ans| {
        if inc.path == "/tags" && ans.status == 200 {
            if n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .is_multiple_of(2)
            {
                let text = String::from_utf8_lossy(&ans.body).replace("\"name\":", "\"label\":");
                ans.body = text.into_bytes();
            } else {
                ans.set_header("content-type", "text/html");
            }
        }
    })
}

/// A target that keeps the first word after `Bearer` as the key: `Bearer <key> junk` gets in.
fn first_word_after_bearer() -> Defect {
    Defect::before(|inc| {
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
    })
}

/// A target that crashes when a Free key sends logo or hideLogo.
fn paid_params_500_for_free() -> Defect {
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
            ans.body = br#"{"error":{"code":"internal_server_error","message":"boom"}}"#.to_vec();
        }
    })
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
