//! `http.neighbours` and `http.neighbour-auth` (the neighbours every operation's plain request
//! has, derived from the spec) in front of both implementations: a shape that skips
//! authentication, a query decoded twice, each found; legal choices (a redirect for a trailing
//! slash, the last of a repeated parameter) that pass.

use std::sync::{Arc, Mutex};

use crate::common;

use axum::http::HeaderValue;
use common::broken::{
    Defect, Incoming, Row,
    Then::{Fails, NothingFails, Passes, Says},
    run_table,
};

const ONLY: &[&str] = &["http.neighbours", "http.neighbour-auth"];

/// Authentication bound to the exact paths: a trailing slash reaches the route (the router
/// strips it) with no credential checked (sent on with a key that worked before).
fn trailing_slash_skips_auth() -> Defect {
    let good: Arc<Mutex<Option<HeaderValue>>> = Arc::default();
    let seen = good.clone();
    Defect {
        before: Some(Box::new(move |inc: &mut Incoming| {
            if inc.path.len() > 1 && inc.path.ends_with('/') {
                inc.path.pop();
                if let Some(k) = seen.lock().unwrap().clone() {
                    inc.headers.insert("authorization", k);
                }
            }
        })),
        after: Some(Box::new(move |inc, ans| {
            if ans.status == 200
                && let Some(k) = inc.headers.get("authorization")
            {
                good.lock().unwrap().get_or_insert(k.clone());
            }
        })),
        hold: None,
    }
}

/// A query decoded twice (a framework's decoding, then the handler's own): `%254C` serves as
/// `L`.
fn query_decoded_twice() -> Defect {
    Defect::before(|inc| {
        inc.query = inc.query.replace("%25", "%");
    })
}

/// Legal: a trailing slash redirected (308) to the path without it.
fn trailing_slash_redirected() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path.len() > 1 && inc.path.ends_with('/') {
            ans.status = 308;
            ans.body.clear();
            ans.headers.clear();
            let to = inc.path.trim_end_matches('/').to_string();
            ans.set_header("location", to);
        }
    })
}

/// Legal: of a parameter given twice, the last counts.
fn last_of_a_repeated_parameter() -> Defect {
    Defect::before(|inc| {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(inc.query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let mut kept: Vec<(String, String)> = Vec::new();
        for (k, v) in pairs {
            kept.retain(|(n, _)| *n != k);
            kept.push((k, v));
        }
        inc.query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(kept)
            .finish();
    })
}

const DEFECTS: &[Row] = &[
    Row::new(
        "a trailing slash reaches the route without authentication",
        trailing_slash_skips_auth,
        ONLY,
        &[
            Fails("http.neighbour-auth"),
            Says("http.neighbour-auth", "a trailing slash without a key"),
        ],
    ),
    Row::new(
        "the query decoded twice",
        query_decoded_twice,
        ONLY,
        &[
            Fails("http.neighbours"),
            Says("http.neighbours", "percent-encoded twice"),
        ],
    ),
    Row::new(
        "a trailing slash redirected 308 (legal)",
        trailing_slash_redirected,
        // The redirect is HTTP's own: `status.listed` observes it, whichever check met it.
        &["http.neighbours", "http.shapes", "status.listed"],
        &[
            NothingFails,
            Passes("http.neighbours"),
            Says("status.listed", "a redirect for a path off the spec's"),
        ],
    ),
    Row::new(
        "the last of a repeated parameter counts (legal)",
        last_of_a_repeated_parameter,
        ONLY,
        &[
            NothingFails,
            Passes("http.neighbours"),
            Passes("http.neighbour-auth"),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_neighbour_defect_fails_its_check_and_legal_choices_pass() {
    run_table(DEFECTS).await;
}
