//! The `status` family: the reference passes both properties on every operation; broken
//! targets fail the right one; a seed replays the same cases; failures shrink to a minimal
//! request that the finding shows with its curl line.

use crate::common;

use common::broken::{
    Answer, BOTH, Defect, Impl, Incoming, Row,
    Then::{Fails, NothingFails, Passes},
    broken_on, failed, run_table,
};
use linkcert::check::cases::{self, Property};
use linkcert::check::{self, CheckOptions};
use linkcert::report::Report;
use linkcert::target::Target;

async fn run_status(target: Target, seed: u64, cases: u32) -> Report {
    let opts = CheckOptions {
        seed,
        cases,
        concurrency: 2,
        only: vec!["status".to_string()],
        ..CheckOptions::default()
    };
    check::run(common::spec(), target, opts)
        .await
        .expect("the runner runs")
}

fn query_value(inc: &Incoming, name: &str) -> Option<String> {
    url::form_urlencoded::parse(inc.query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn answer_500(ans: &mut Answer) {
    ans.status = 500;
    ans.body = br#"{"error":{"code":"internal_server_error","message":"injected"}}"#.to_vec();
    ans.set_header("content-type", "application/json");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_both_properties_on_every_operation() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let spec = common::spec();
        for seed in [1, 2, 3] {
            let r = run_status(b.target(), seed, 24).await;
            assert_eq!(
                failed(&r),
                Vec::<String>::new(),
                "seed {seed}\n{imp:?}: {}",
                r.summary()
            );
            for op in &spec.operations {
                for p in [Property::Valid, Property::Invalid] {
                    let c = r
                        .checks
                        .iter()
                        .find(|c| c.id == p.id() && c.operation == op.label());
                    if imp == Impl::Variant && op.extension {
                        // A stand-in the second implementation does not serve: skipped.
                        assert!(
                            c.and_then(|c| c.skipped.as_deref())
                                .is_some_and(|w| w.contains("does not serve it")),
                            "{} {}",
                            op.id,
                            p.id()
                        );
                        continue;
                    }
                    if p == Property::Invalid && cases::invalid(op).is_none() {
                        // Nothing to mutate (no parameters, no body): skipped, saying why.
                        assert!(
                            c.is_some_and(|c| c.skipped.is_some()),
                            "{} {}",
                            op.id,
                            p.id()
                        );
                        continue;
                    }
                    assert!(
                        c.is_some_and(|c| c.cases > 0),
                        "seed {seed}: no cases for {} on {}\n{imp:?}: {}",
                        p.id(),
                        op.label(),
                        r.summary()
                    );
                }
            }
        }
    }
}

#[test]
fn a_seed_replays_the_same_requests() {
    let spec = common::spec();
    for op in &spec.operations {
        for p in [Property::Valid, Property::Invalid] {
            let a: Vec<String> = cases::sample(op, p, 42, 8)
                .iter()
                .map(|c| c.request(op).url(&"https://t".parse().unwrap()))
                .collect();
            let b: Vec<String> = cases::sample(op, p, 42, 8)
                .iter()
                .map(|c| c.request(op).url(&"https://t".parse().unwrap()))
                .collect();
            assert_eq!(a, b, "{} {p:?}", op.id);
            if cases::cases_for(op, 8) > 1 {
                let other = cases::sample(op, p, 43, 8);
                assert_ne!(cases::sample(op, p, 42, 8), other, "{} {p:?}", op.id);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_what_should_be_rejected_fails_invalid_rejected() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            // Every clean rejection (400 or 422: the implementations differ) becomes a 200.
            Defect::after(|_, ans| {
                if ans.status == 422 || ans.status == 400 {
                    ans.status = 200;
                    ans.body = b"[]".to_vec();
                    ans.set_header("content-type", "application/json");
                }
            }),
        )
        .await;
        let r = run_status(b.target(), 7, 24).await;
        let f = failed(&r);
        assert!(
            f.contains(&"status.invalid-rejected".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_on_valid_edges_fail_valid_accepted() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                let at_max = query_value(inc, "pageSize").as_deref() == Some("100");
                let long = query_value(inc, "url").is_some_and(|u| u.chars().count() > 100);
                if at_max || long {
                    answer_500(ans);
                }
            }),
        )
        .await;
        // Enough cases that both edges are drawn (pageSize=100 is one case in about fifteen).
        let r = run_status(b.target(), 7, 48).await;
        let f = failed(&r);
        assert!(
            f.contains(&"status.valid-accepted".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
        // Both triggers are met: on GET /tags and on GET /qr.
        for op in ["GET /tags", "GET /qr"] {
            assert!(
                r.checks.iter().any(|c| c.id == "status.valid-accepted"
                    && c.operation == op
                    && c.violations > 0),
                "{op}\n{imp:?}: {}",
                r.summary()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_for_a_valid_sort_parameter_fails_valid_accepted() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if query_value(inc, "sortBy").is_some() {
                    ans.status = 404;
                    ans.body = br#"{"error":{"code":"not_found","message":"injected"}}"#.to_vec();
                    ans.set_header("content-type", "application/json");
                }
            }),
        )
        .await;
        // As many cases as the main job draws: enough that sortBy comes without a page that
        // may be past the end (for which a 404 is tolerated). Fewer sufficed until longer
        // strings and lists joined the valid cases and the draws shifted.
        let r = run_status(b.target(), 7, 64).await;
        assert!(
            failed(&r).contains(&"status.valid-accepted".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_shrinks_to_the_smallest_page_size_with_a_curl_line() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if query_value(inc, "pageSize")
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|n| n >= 50)
                {
                    answer_500(ans);
                }
            }),
        )
        .await;
        let r = run_status(b.target(), 7, 32).await;
        let check = r
            .checks
            .iter()
            .find(|c| c.id == "status.valid-accepted" && c.operation == "GET /tags")
            .expect("status.valid-accepted on GET /tags");
        assert_eq!(
            check.violations,
            1,
            "one minimal finding\n{imp:?}: {}",
            r.summary()
        );
        let x = check.findings[0]
            .exchange
            .as_ref()
            .expect("the finding carries the request");
        let url = url::Url::parse(&x.url).unwrap();
        let params: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        // Shrunk: the threshold itself, and the optional parameters that do not matter dropped.
        assert_eq!(
            params,
            vec![("pageSize".to_string(), "50".to_string())],
            "{}",
            x.url
        );
        assert_eq!(x.status, Some(500));
        assert!(
            x.curl.starts_with("curl ") && x.curl.contains("pageSize=50"),
            "{}",
            x.curl
        );
        assert!(x.curl.contains("$LINKCERT_KEY"), "{}", x.curl);
    }
}

/// A target that fails (500) on a search term over 300 characters and on an ids list of more
/// than 60 ids: the generated valid cases reach those lengths (the spec bounds neither), and
/// the failure shrinks to the threshold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_past_a_length_fails_valid_accepted_shrunk_to_the_threshold() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                let long_search =
                    query_value(inc, "search").is_some_and(|s| s.chars().count() > 300);
                let many_ids = query_value(inc, "ids").is_some_and(|s| s.split(',').count() > 60);
                if inc.path == "/tags" && (long_search || many_ids) {
                    answer_500(ans);
                }
            }),
        )
        .await;
        let opts = CheckOptions {
            seed: 7,
            cases: 96,
            concurrency: 2,
            only: vec!["status.valid-accepted".to_string()],
            ..CheckOptions::default()
        };
        let r = check::run(common::spec(), b.target(), opts)
            .await
            .expect("the runner runs");
        let check = r
            .checks
            .iter()
            .find(|c| c.id == "status.valid-accepted" && c.operation == "GET /tags")
            .expect("status.valid-accepted on GET /tags");
        assert_eq!(check.violations, 1, "{imp:?}: {}", r.summary());
        let x = check.findings[0]
            .exchange
            .as_ref()
            .expect("the finding carries the request");
        let url = url::Url::parse(&x.url).unwrap();
        let params: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        // Shrunk to one parameter at its threshold: 301 characters, or 61 ids.
        assert_eq!(params.len(), 1, "{}", x.url);
        let (k, v) = &params[0];
        let at_threshold = match k.as_str() {
            "search" => v.chars().count() == 301,
            "ids" => v.split(',').count() == 61,
            _ => false,
        };
        assert!(at_threshold, "{imp:?}: {k} of {} ({})", v.len(), x.url);
    }
}

/// Fields judged by what they mean, on every answer whichever check sent it (issue 29).
const MEANING: &[Row] = &[
    Row::new(
        "no defect",
        Defect::none,
        &[
            "envelope.doc-url",
            "schema.deactivated-partner",
            "partners.deactivate",
        ],
        // The variant sends no doc_url (it is optional): envelope.doc-url judges the reference's.
        &[NothingFails, Passes("schema.deactivated-partner")],
    ),
    Row::new(
        "doc_url naming another code",
        || {
            doc_url(|code| {
                if code == "not_found" {
                    "forbidden".into()
                } else {
                    "not-found".into()
                }
            })
        },
        &["envelope.doc-url"],
        &[Fails("envelope.doc-url")],
    ),
    // The real service's spelling: only the first underscore hyphenated. It names the code.
    Row::new(
        "doc_url as the real service spells it (#rate-limit_exceeded)",
        || doc_url(|code| code.replacen('_', "-", 1)),
        &["envelope.doc-url"],
        &[Passes("envelope.doc-url")],
    ),
    Row::new(
        "a deactivation's 200 naming another partner",
        names_another_partner,
        &["schema.deactivated-partner", "partners.deactivate"],
        &[Fails("schema.deactivated-partner")],
    ),
    // The ratelimit family's bursts go to GET /tags, untouched: only the judge of every answer
    // sees the milliseconds.
    Row::new(
        "X-RateLimit-Reset in epoch milliseconds on GET /qr answers",
        reset_in_millis_on_qr,
        &["qr.png", "ratelimit.reset"],
        &[Fails("ratelimit.reset")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_are_judged_by_their_meaning() {
    run_table(MEANING).await;
}

/// Every error envelope's doc_url set to a link whose fragment is `fragment(code)`.
fn doc_url(fragment: fn(&str) -> String) -> Defect {
    Defect::after(move |_, ans| {
        let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&ans.body) else {
            return;
        };
        let Some(code) = v["error"]["code"].as_str().map(str::to_string) else {
            return;
        };
        v["error"]["doc_url"] = format!("https://docs.example/errors#{}", fragment(&code)).into();
        ans.body = v.to_string().into_bytes();
    })
}

fn names_another_partner() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/partners/deactivate" && ans.status == 200 {
            ans.body = br#"{"partnerId":"pn_somebody_else"}"#.to_vec();
        }
    })
}

fn reset_in_millis_on_qr() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/qr"
            && let Some(v) = ans.header_u64("x-ratelimit-reset")
        {
            ans.set_header("x-ratelimit-reset", v * 1000);
        }
    })
}

/// A limiter that breaks at its limit: the first 429 each key meets on GET /tags is a 500
/// instead (the reference's own sliding log, admitting one more than its limit, did exactly
/// this, and every family passed). The same request served before, now a server error.
fn breaks_at_the_limit() -> Defect {
    let keys = std::sync::Mutex::new(std::collections::HashSet::<String>::new());
    Defect::after(move |inc, ans| {
        if inc.path != "/tags" || ans.status != 429 {
            return;
        }
        let key = inc.authorization().to_string();
        if keys.lock().unwrap().insert(key) {
            ans.status = 500;
            ans.body = br#"{"error":{"code":"internal_server_error","message":"attempt to subtract with overflow"}}"#.to_vec();
        }
    })
}

const SERVER_ERRORS: &[Row] = &[
    Row::new(
        "no defect",
        Defect::none,
        &["ratelimit", "status.server-error"],
        &[NothingFails, Passes("status.server-error")],
    ),
    Row::new(
        "a 500 where the limiter's first 429 is due",
        breaks_at_the_limit,
        &["ratelimit", "status.server-error"],
        &[Fails("status.server-error")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_served_before_answered_with_a_server_error_fails() {
    run_table(SERVER_ERRORS).await;
}
