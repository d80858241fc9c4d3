//! `http.conditional` (conditional requests built from the target's own validators): the
//! second implementation gives strong ETags and honours If-None-Match (a choice the reference
//! does not make) and passes; defects real caches and frameworks ship fail, in front of both
//! implementations (each defect gives the validators itself where the implementation does
//! not).

use std::hash::{Hash, Hasher};

use crate::common;

use common::broken::{
    Answer, BOTH, Defect, Impl, Incoming, Row,
    Then::{Fails, Says},
    broken_on, run_check, run_table,
};
use linkcert::verdict::Verdict;

const ONLY: &[&str] = &["http.conditional", "status.listed"];

fn hash_tag(body: &[u8]) -> String {
    let mut h = std::hash::DefaultHasher::new();
    body.hash(&mut h);
    format!("\"{:016x}\"", h.finish())
}

fn not_modified(ans: &mut Answer, tag: &str) {
    ans.status = 304;
    ans.body.clear();
    ans.headers.remove("content-type");
    ans.set_header("etag", tag.to_string());
}

fn is_get_200(inc: &Incoming, ans: &Answer) -> bool {
    inc.method == "GET" && ans.status == 200
}

/// A cache that answers 304 to any If-None-Match, whatever tag it names.
fn not_modified_for_any_tag() -> Defect {
    Defect::after(|inc, ans| {
        if !is_get_200(inc, ans) {
            return;
        }
        let tag = hash_tag(&ans.body);
        ans.set_header("etag", tag.clone());
        if inc.headers.contains_key("if-none-match") {
            not_modified(ans, &tag);
        }
    })
}

/// An entity tag per route, the query left out of it (a cache key without the query).
fn one_tag_per_route() -> Defect {
    Defect::after(|inc, ans| {
        if !is_get_200(inc, ans) {
            return;
        }
        let tag = hash_tag(inc.path.as_bytes());
        ans.set_header("etag", tag.clone());
        let named = inc
            .headers
            .get("if-none-match")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains(&tag));
        if named {
            not_modified(ans, &tag);
        }
    })
}

/// Last-Modified given, and If-Modified-Since compared as text ("not equal: modified"
/// inverted): any date gets 304.
fn not_modified_since_any_date() -> Defect {
    Defect::after(|inc, ans| {
        if !is_get_200(inc, ans) {
            return;
        }
        ans.set_header("last-modified", "Fri, 27 Nov 2026 12:00:00 GMT");
        if inc.headers.contains_key("if-modified-since") {
            ans.status = 304;
            ans.body.clear();
        }
    })
}

const DEFECTS: &[Row] = &[
    Row::new(
        "304 for any If-None-Match",
        not_modified_for_any_tag,
        ONLY,
        &[
            Fails("http.conditional"),
            Says("http.conditional", "an entity tag it never gave"),
        ],
    ),
    Row::new(
        "one ETag per route, the query left out",
        one_tag_per_route,
        ONLY,
        &[
            Fails("http.conditional"),
            Says("http.conditional", "on two different answers"),
        ],
    ),
    Row::new(
        "304 for If-Modified-Since at any date",
        not_modified_since_any_date,
        ONLY,
        &[
            Fails("http.conditional"),
            Says("http.conditional", "before its Last-Modified"),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_defects_fail_http_conditional_in_front_of_both() {
    run_table(DEFECTS).await;
}

/// The second implementation's ETags and 304s are judged and pass; the reference, which
/// gives no validators, has nothing judged (skipped, saying why), and neither fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validators_honoured_pass_and_none_given_is_skipped() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(
            b.target(),
            &["http.neighbours", "http.conditional", "status.listed"],
        )
        .await;
        let cond: Vec<_> = r
            .checks
            .iter()
            .filter(|c| c.id == "http.conditional")
            .collect();
        assert!(!cond.is_empty(), "{imp:?}: {}", r.summary());
        assert!(
            r.checks.iter().all(|c| c.verdict != Verdict::Fail),
            "{imp:?}: {}",
            r.summary()
        );
        let want = match imp {
            Impl::Variant => Verdict::Pass,
            Impl::Reference => Verdict::Skipped,
        };
        assert!(cond.iter().all(|c| c.verdict == want), "{imp:?}: {cond:?}");
    }
}
