//! The runner against the reference (no failures) and against broken servers (the right check
//! fails), for the auth, plan, envelope and transport families.

mod common;

use common::broken::{Defect, broken, failed, run_check, target_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_passes_auth_plan_and_envelope_checks() {
    let b = broken(6.0, Defect::none()).await;
    let r = run_check(
        target_for(&b.url, &b.reference),
        &["auth", "plan", "envelope", "schema", "transport"],
    )
    .await;
    assert_eq!(failed(&r), Vec::<String>::new(), "{}", r.summary());
    // Through the plain-HTTP proxy: reported, not failed.
    assert!(
        r.checks.iter().any(|c| c.id == "transport.https"
            && c.verdict == linkcert::check::model::Verdict::NonStrict)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_lets_unknown_keys_in_fails_auth_required() {
    // Every request reaches the reference with a valid key: no credential is ever refused.
    let b = broken(
        6.0,
        Defect::before(|inc| {
            inc.headers
                .insert("authorization", "Bearer lk_enterprise_1".parse().unwrap());
        }),
    )
    .await;
    let r = run_check(target_for(&b.url, &b.reference), &["auth"]).await;
    assert!(
        failed(&r).contains(&"auth.required".to_string()),
        "{}",
        r.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_gates_no_plan_fails_plan_partner_gating() {
    // Every deactivation request runs as Advanced: lower plans are not refused.
    let b = broken(
        6.0,
        Defect::before(|inc| {
            if inc.path == "/partners/deactivate" {
                inc.headers
                    .insert("authorization", "Bearer lk_advanced_1".parse().unwrap());
            }
        }),
    )
    .await;
    let r = run_check(target_for(&b.url, &b.reference), &["plan"]).await;
    assert!(
        failed(&r).contains(&"plan.partner-gating".to_string()),
        "{}",
        r.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_error_code_fails_envelope_code_and_a_bad_doc_url_fails_doc_url() {
    let b = broken(6.0, Defect::after(|_, ans| {
        if ans.status == 401 {
            ans.body = br#"{"error":{"code":"forbidden","message":"no","doc_url":"https://d/errors#nothing"}}"#.to_vec();
        }
    })).await;
    let r = run_check(target_for(&b.url, &b.reference), &["auth", "envelope"]).await;
    let f = failed(&r);
    assert!(f.contains(&"envelope.code".to_string()), "{}", r.summary());
    assert!(
        f.contains(&"envelope.doc-url".to_string()),
        "{}",
        r.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_outside_the_envelope_fail_envelope_shape() {
    let b = broken(
        6.0,
        Defect::after(|_, ans| {
            if ans.status >= 400 {
                ans.body = b"Bad Request".to_vec();
                ans.set_header("content-type", "text/plain");
            }
        }),
    )
    .await;
    let r = run_check(target_for(&b.url, &b.reference), &["auth", "envelope"]).await;
    assert!(
        failed(&r).contains(&"envelope.shape".to_string()),
        "{}",
        r.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_outside_the_spec_fails_status_listed() {
    let b = broken(
        6.0,
        Defect::after(|_, ans| {
            if ans.status == 401 {
                ans.status = 418;
            }
        }),
    )
    .await;
    let r = run_check(target_for(&b.url, &b.reference), &["auth", "status.listed"]).await;
    assert!(
        failed(&r).contains(&"status.listed".to_string()),
        "{}",
        r.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_without_their_name_fail_schema_response_and_a_wrong_type_fails_content_type() {
    let b = broken(
        6.0,
        Defect::after(|inc, ans| {
            if inc.path == "/tags" && ans.status == 200 {
                let text = String::from_utf8_lossy(&ans.body).replace("\"name\":", "\"label\":");
                ans.body = text.into_bytes();
            }
            if inc.path == "/links" && ans.status == 200 {
                ans.set_header("content-type", "text/html");
            }
        }),
    )
    .await;
    let r = run_check(target_for(&b.url, &b.reference), &["schema", "status"]).await;
    let f = failed(&r);
    assert!(
        f.contains(&"schema.response".to_string()),
        "{}",
        r.summary()
    );
    assert!(
        f.contains(&"schema.content-type".to_string()),
        "{}",
        r.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analytics_open_to_free_keys_fails_plan_analytics_free() {
    // Free keys' analytics requests are served as Pro: Free gets analytics it should not.
    let b = broken(
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
    let r = run_check(target_for(&b.url, &b.reference), &["plan"]).await;
    assert!(
        failed(&r).contains(&"plan.analytics-free".to_string()),
        "{}",
        r.summary()
    );
}
