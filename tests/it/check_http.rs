//! The `http` family (HTTP beyond the happy path) against both implementations, which make
//! opposite legal choices (404 or 405 with Allow for a method; 400 or 413 for a size; HEAD and
//! OPTIONS served or refused), and against one defect of each class in front of both.

use crate::common;

use common::broken::{BOTH, Defect, Impl, Incoming, broken_on, failed, on_both, run_check};
use linkcert::report::Report;
use linkcert::verdict::Verdict;

/// The paths the spec shapes, with their method.
const SHAPED: [(&str, &str); 3] = [
    ("/qr", "GET"),
    ("/tags", "GET"),
    ("/partners/deactivate", "POST"),
];

/// A method a shaped path does not define, other than HEAD and OPTIONS (HTTP's own).
fn undefined_method(inc: &Incoming) -> bool {
    SHAPED
        .iter()
        .any(|(p, m)| inc.path == *p && inc.method != *m)
        && !matches!(inc.method.as_str(), "HEAD" | "OPTIONS")
}

fn envelope(code: &str) -> Vec<u8> {
    format!(r#"{{"error":{{"code":"{code}","message":"injected"}}}}"#).into_bytes()
}

/// The messages of a check's findings on every operation.
fn findings(r: &Report, id: &str) -> Vec<String> {
    r.checks
        .iter()
        .filter(|c| c.id == id)
        .flat_map(|c| c.findings.iter().map(|f| f.message.clone()))
        .collect()
}

fn assert_fails(reports: &[(Impl, Report)], id: &str) {
    for (imp, r) in reports {
        assert!(
            failed(r).contains(&id.to_string()),
            "{imp:?}: {id} should fail: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_with_their_opposite_choices() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(b.target(), &["http", "status.listed", "envelope"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        let judged = |id: &str| r.checks.iter().filter(|c| c.id == id).count();
        for id in ["http.method", "http.body-size", "http.media-type"] {
            assert!(judged(id) > 0, "{imp:?}: {id} judged: {}", r.summary());
        }
        let choices = findings(&r, "http.choices").join("\n");
        let (method, size) = match imp {
            Impl::Reference => ("404 in the envelope", "refused with 400"),
            Impl::Variant => ("405 with Allow", "refused with 413"),
        };
        assert!(choices.contains(method), "{imp:?}: {choices}");
        assert!(choices.contains(size), "{imp:?}: {choices}");
        // A real deactivation sent with a charset parameter was served.
        let media = r
            .checks
            .iter()
            .find(|c| c.id == "http.media-type")
            .expect("judged");
        assert_eq!(media.cases, 3, "{imp:?}: two parameters and the fixture");
        if imp == Impl::Variant {
            // 405 and 413 are standard HTTP, outside the spec's list: observed, not failed.
            let listed = findings(&r, "status.listed").join("\n");
            assert!(listed.contains("405 with Allow"), "{listed}");
            assert!(listed.contains("413 for a body"), "{listed}");
            assert!(
                r.checks
                    .iter()
                    .any(|c| c.id == "status.listed" && c.verdict == Verdict::Informational)
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undefined_method_answered_200_fails_http_method() {
    let reports = on_both(
        6.0,
        || {
            Defect::after(|inc, ans| {
                if undefined_method(inc) {
                    ans.status = 200;
                    ans.body = b"{}".to_vec();
                    ans.headers.remove("allow");
                    ans.set_header("content-type", "application/json");
                }
            })
        },
        &["http"],
    )
    .await;
    assert_fails(&reports, "http.method");
    for (_, r) in &reports {
        assert!(findings(r, "http.method").join("\n").contains("200 (as if"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_405_fails_http_method() {
    let reports = on_both(
        6.0,
        || {
            Defect::after(|inc, ans| {
                if undefined_method(inc) {
                    let allow = SHAPED.iter().find(|(p, _)| inc.path == *p).unwrap().1;
                    ans.status = 405;
                    ans.body = Vec::new();
                    ans.headers.remove("content-type");
                    ans.set_header("allow", allow);
                }
            })
        },
        &["http"],
    )
    .await;
    assert_fails(&reports, "http.method");
    for (_, r) in &reports {
        let f = findings(r, "http.method").join("\n");
        assert!(f.contains("405 without the error envelope, empty"), "{f}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_body_answered_500_fails_http_body_size() {
    let reports = on_both(
        6.0,
        || {
            Defect::after(|inc, ans| {
                if inc.body.len() > 1 << 20 {
                    ans.status = 500;
                    ans.body = envelope("internal_server_error");
                }
            })
        },
        &["http"],
    )
    .await;
    assert_fails(&reports, "http.body-size");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_body_dropped_without_an_answer_fails_http_body_size() {
    let reports = on_both(
        6.0,
        || {
            Defect::after(|inc, ans| {
                if inc.body.len() > 1 << 20 {
                    ans.drop_connection = true;
                }
            })
        },
        &["http"],
    )
    .await;
    assert_fails(&reports, "http.body-size");
    for (_, r) in &reports {
        let f = findings(r, "http.body-size").join("\n");
        assert!(f.contains("no answer"), "{f}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charset_parameter_refused_with_400_fails_http_media_type() {
    let reports = on_both(
        6.0,
        || {
            Defect::after(|inc, ans| {
                let ct = inc
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if ct.contains(';') {
                    ans.status = 400;
                    ans.body = envelope("bad_request");
                    ans.set_header("content-type", "application/json");
                }
            })
        },
        &["http"],
    )
    .await;
    assert_fails(&reports, "http.media-type");
    for (_, r) in &reports {
        let f = findings(r, "http.media-type").join("\n");
        assert!(
            f.contains("400 bad_request for Content-Type: application/json; charset=utf-8"),
            "{f}"
        );
    }
}

/// The defects above hide from everything but `http`: with the family off, the same run passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_http_family_a_charset_refusal_goes_unseen() {
    let b = broken_on(
        Impl::Reference,
        6.0,
        Defect::after(|inc, ans| {
            let ct = inc
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if ct.contains(';') {
                ans.status = 400;
                ans.body = envelope("bad_request");
            }
        }),
    )
    .await;
    let r = run_check(b.target(), &["partners", "status"]).await;
    assert_eq!(failed(&r), Vec::<String>::new(), "{}", r.summary());
}

/// Straight to each implementation, no proxy (which reads every body whole): a refused 16 MiB
/// body gets an answer the client can read, not a connection reset under it mid-send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_get_a_readable_answer_from_both_implementations() {
    let reference = common::reference(Some(6.0)).await;
    let variant = common::variant::start(6.0).await;
    for (imp, target) in [
        (
            Impl::Reference,
            linkcert::target::Target::of_reference(&reference, &common::spec()),
        ),
        (Impl::Variant, variant.target()),
    ] {
        let r = run_check(target, &["http.body-size", "http.method"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        assert!(r.checks.iter().any(|c| c.id == "http.body-size"), "judged");
        for c in r.checks.iter().filter(|c| c.id.starts_with("http.")) {
            assert_eq!(c.verdict, Verdict::Pass, "{imp:?}: {c:?}");
        }
    }
}
