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

/// A rule in front of authentication that rewrites the path (`shape`: whether it did) and
/// sends the request on with a key that was served before.
fn sent_on_with_a_served_key(
    shape: impl Fn(&mut Incoming) -> bool + Send + Sync + 'static,
) -> Defect {
    let good: Arc<Mutex<Option<HeaderValue>>> = Arc::default();
    let seen = good.clone();
    Defect {
        before: Some(Box::new(move |inc: &mut Incoming| {
            if shape(inc)
                && let Some(k) = seen.lock().unwrap().clone()
            {
                inc.headers.insert("authorization", k);
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

/// Authentication bound to the exact paths: a trailing slash reaches the route (the router
/// strips it) with no credential checked.
fn trailing_slash_skips_auth() -> Defect {
    sent_on_with_a_served_key(|inc| {
        let slash = inc.path.len() > 1 && inc.path.ends_with('/');
        if slash {
            inc.path.pop();
        }
        slash
    })
}

/// Whether an Authorization header holds a key of a plan below Advanced (both implementations
/// name their keys by plan: `lk_free_1`).
fn gated_key(auth: &HeaderValue) -> bool {
    let a = auth.to_str().unwrap_or("");
    ["free", "pro", "business"]
        .iter()
        .any(|p| a.starts_with(&format!("Bearer lk_{p}_")))
}

/// The plan gate bound to the exact path: a deactivation at a path the router normalises (a
/// trailing or doubled slash) reaches the handler as if sent with a key of a plan above. The
/// proxy cannot know which workspace owns the fixture (the reference's strongest, the second
/// implementation's Advanced), so it sends such requests on with each plan above in turn.
/// Neighbours naming unknown ids cannot show it; naming a fixture with a gated key, it is
/// served.
fn gate_only_on_exact_path() -> Defect {
    let turn = Arc::new(Mutex::new(0usize));
    Defect::before(move |inc: &mut Incoming| {
        let normalised = inc.path.replace("//", "/");
        let normalised = normalised.trim_end_matches('/');
        let gated = inc.headers.get("authorization").is_some_and(gated_key);
        if normalised == "/partners/deactivate" && normalised != inc.path && gated {
            inc.path = normalised.to_string();
            let mut t = turn.lock().unwrap();
            let key = ["Bearer lk_advanced_1", "Bearer lk_enterprise_1"][*t % 2];
            *t += 1;
            inc.headers
                .insert("authorization", HeaderValue::from_static(key));
        }
    })
}

/// A rule serving `*.json` from the route without it, put before authentication: a request
/// with a key gets the target's own 404 for the suffix; one without a key is served.
fn suffix_served_to_no_key() -> Defect {
    sent_on_with_a_served_key(|inc| {
        let keyless = inc.path.ends_with(".json") && !inc.headers.contains_key("authorization");
        if keyless {
            inc.path.truncate(inc.path.len() - ".json".len());
        }
        keyless
    })
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

/// Legal: a public page (a catch-all, as single-page hosting serves) for every path off the
/// spec's asked without a key; with a key, the target's own answer.
fn public_page_off_the_paths() -> Defect {
    const PATHS: [&str; 6] = [
        "/qr",
        "/tags",
        "/links",
        "/analytics",
        "/events",
        "/partners/deactivate",
    ];
    Defect::after(|inc, ans| {
        if !PATHS.contains(&inc.path.as_str()) && !inc.headers.contains_key("authorization") {
            ans.status = 200;
            ans.body = b"<!doctype html><title>Links</title><p>Sign in".to_vec();
            ans.headers.clear();
            ans.set_header("content-type", "text/html");
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

/// Whether a JSON object's text names a field twice (the body's own text, not a parse: a
/// parse keeps one of them).
fn names_a_field_twice(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    let names: Vec<&str> = text
        .split('"')
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[1].starts_with(':'))
        .map(|w| w[0])
        .collect();
    names
        .iter()
        .enumerate()
        .any(|(i, n)| names[..i].contains(n))
}

fn answer_with(ans: &mut common::broken::Answer, status: u16, code: &str) {
    ans.status = status;
    ans.body = format!(r#"{{"error":{{"code":"{code}","message":"{code}"}}}}"#).into_bytes();
    ans.set_header("content-type", "application/json");
}

/// A body field's value pasted into a query: a quote breaks it, and the handler answers 500.
fn a_quote_in_a_body_field_breaks_the_handler() -> Defect {
    Defect::after(|inc, ans| {
        if inc.method == "POST" && inc.body.contains(&b'\'') {
            answer_with(ans, 500, "internal_server_error");
        }
    })
}

/// A query parameter's value pasted into an SQL string: a quote breaks it, and the handler
/// answers 500.
fn a_quote_in_a_query_parameter_breaks_the_handler() -> Defect {
    Defect::after(|inc, ans| {
        if inc.query.contains("%27") || inc.query.contains('\'') {
            answer_with(ans, 500, "internal_server_error");
        }
    })
}

/// A body naming a field twice crashes the parser: 500.
fn a_field_twice_crashes_the_parser() -> Defect {
    Defect::after(|inc, ans| {
        if names_a_field_twice(&inc.body) {
            answer_with(ans, 500, "internal_server_error");
        }
    })
}

/// Legal: a body naming a field twice refused (400 in the envelope), as strict parsers do.
fn a_field_twice_refused() -> Defect {
    Defect::after(|inc, ans| {
        if names_a_field_twice(&inc.body) {
            answer_with(ans, 400, "bad_request");
        }
    })
}

const DEFECTS: &[Row] = &[
    Row::new(
        "a quote in a body field breaks the handler (500)",
        a_quote_in_a_body_field_breaks_the_handler,
        ONLY,
        &[
            Fails("http.neighbours"),
            Says("http.neighbours", "with SQL quotes and a comment appended"),
        ],
    ),
    Row::new(
        "a quote in a query parameter breaks the handler (500)",
        a_quote_in_a_query_parameter_breaks_the_handler,
        ONLY,
        &[
            Fails("http.neighbours"),
            Says("http.neighbours", "with SQL quotes and a comment appended"),
        ],
    ),
    Row::new(
        "a body naming a field twice crashes the parser (500)",
        a_field_twice_crashes_the_parser,
        ONLY,
        &[
            Fails("http.neighbours"),
            Says("http.neighbours", "given twice"),
        ],
    ),
    Row::new(
        "a body naming a field twice refused with 400 (legal)",
        a_field_twice_refused,
        ONLY,
        &[NothingFails, Passes("http.neighbours")],
    ),
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
        "the plan gate only on the exact path: a gated key deactivates at a normalised path",
        gate_only_on_exact_path,
        // The fixture is http's (its real deactivation is `http.media-type`'s).
        &["http.neighbours", "http.neighbour-auth", "http.media-type"],
        &[
            Fails("http.neighbour-auth"),
            Says("http.neighbour-auth", "slash with a free key"),
            Says("http.neighbour-auth", "naming the fixture partner"),
        ],
    ),
    Row::new(
        "a suffix the run's key gets 404 for is served without a key",
        suffix_served_to_no_key,
        ONLY,
        &[
            Fails("http.neighbour-auth"),
            Says(
                "http.neighbour-auth",
                "a suffix (.json) without a key, which the run's key got 404",
            ),
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
        // The redirect is HTTP's own: `status.listed` observes it, whichever check met it;
        // sent without a key too, it serves nothing.
        &[
            "http.neighbours",
            "http.neighbour-auth",
            "http.shapes",
            "status.listed",
        ],
        &[
            NothingFails,
            Passes("http.neighbours"),
            Says("status.listed", "a redirect for a path off the spec's"),
        ],
    ),
    Row::new(
        "a public page for every path off the spec's without a key (legal)",
        public_page_off_the_paths,
        &["http.neighbour-auth"],
        &[NothingFails, Passes("http.neighbour-auth")],
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
