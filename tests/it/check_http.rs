//! The `http` family (HTTP beyond the happy path) against both implementations, which make
//! opposite legal choices (404 or 405 with Allow for a method; 400 or 413 for a size; HEAD and
//! OPTIONS served or refused), and against a table of defects (`DEFECTS`), one of each class, in
//! front of both.

use crate::common;

use common::broken::{
    BOTH, Defect, Impl, Incoming, Row,
    Then::{Fails, NothingFails, Passes, Says},
    broken_on, failed, run_check, run_table,
};
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_with_their_opposite_choices() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(b.target(), &["http", "status.listed", "envelope"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        let judged = |id: &str| r.checks.iter().filter(|c| c.id == id).count();
        for id in [
            "http.method",
            "http.body-size",
            "http.media-type",
            "http.client-headers",
            "http.clients",
            "http.neighbours",
            "http.neighbour-auth",
            "http.forwarded-limit",
            "http.shapes",
            "http.chars",
        ] {
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

/// Every defect, what the runner runs in front of it, and what it must find, in front of both
/// implementations.
const DEFECTS: &[Row] = &[
    Row::new(
        "an undefined method answered 200",
        undefined_method_200,
        &["http"],
        &[Fails("http.method"), Says("http.method", "200 (as if")],
    ),
    Row::new(
        "an empty 405",
        empty_405,
        &["http"],
        &[
            Fails("http.method"),
            Says("http.method", "405 without the error envelope, empty"),
        ],
    ),
    Row::new(
        "a huge body answered 500",
        huge_body_500,
        &["http"],
        &[Fails("http.body-size")],
    ),
    Row::new(
        "a huge body dropped without an answer",
        huge_body_dropped,
        &["http"],
        &[Fails("http.body-size"), Says("http.body-size", "no answer")],
    ),
    Row::new(
        "a charset parameter refused with 400",
        charset_refused,
        &["http"],
        &[
            Fails("http.media-type"),
            Says(
                "http.media-type",
                "400 bad_request for Content-Type: application/json; charset=utf-8",
            ),
        ],
    ),
    // The defects above hide from everything but `http`: with the family off, the same run
    // passes.
    Row::new(
        "a charset parameter refused with 400, the http family off",
        charset_refused_keeping_the_type,
        &["partners", "status"],
        &[NothingFails, Passes("status.valid-accepted")],
    )
    .on(&[Impl::Reference]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_the_check_that_owns_it() {
    run_table(DEFECTS).await;
}

fn undefined_method_200() -> Defect {
    Defect::after(|inc, ans| {
        if undefined_method(inc) {
            ans.status = 200;
            ans.body = b"{}".to_vec();
            ans.headers.remove("allow");
            ans.set_header("content-type", "application/json");
        }
    })
}

fn empty_405() -> Defect {
    Defect::after(|inc, ans| {
        if undefined_method(inc) {
            let allow = SHAPED.iter().find(|(p, _)| inc.path == *p).unwrap().1;
            ans.status = 405;
            ans.body = Vec::new();
            ans.headers.remove("content-type");
            ans.set_header("allow", allow);
        }
    })
}

fn huge_body_500() -> Defect {
    Defect::after(|inc, ans| {
        if inc.body.len() > 1 << 20 {
            ans.status = 500;
            ans.body = envelope("internal_server_error");
        }
    })
}

fn huge_body_dropped() -> Defect {
    Defect::after(|inc, ans| {
        if inc.body.len() > 1 << 20 {
            ans.drop_connection = true;
        }
    })
}

fn charset(inc: &Incoming) -> bool {
    inc.headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .contains(';')
}

fn charset_refused() -> Defect {
    Defect::after(|inc, ans| {
        if charset(inc) {
            ans.status = 400;
            ans.body = envelope("bad_request");
            ans.set_header("content-type", "application/json");
        }
    })
}

/// As `charset_refused`, the answer's content type left as it was.
fn charset_refused_keeping_the_type() -> Defect {
    Defect::after(|inc, ans| {
        if charset(inc) {
            ans.status = 400;
            ans.body = envelope("bad_request");
        }
    })
}

/// Straight to each implementation, no proxy (which reads every body whole): a refused 16 MiB
/// body gets an answer the client can read, not a connection reset under it mid-send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_get_a_readable_answer_from_both_implementations() {
    let reference = common::reference(Some(6.0)).await;
    let variant = common::variant::start(6.0).await;
    for (imp, target) in [
        (Impl::Reference, reference.target(&common::spec())),
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

/// The surface around the spec (issue 29): headers real clients send, shapes off the spec's,
/// hostile characters. Each defect fails the check that owns it; the fault-free
/// implementations pass all of them (`both_implementations_pass_with_their_opposite_choices`).
const SURFACE_DEFECTS: &[Row] = &[
    Row::new(
        "X-Forwarded-For resets the key's counter",
        forwarded_resets_the_counter,
        &["http.forwarded-limit"],
        &[
            Fails("http.forwarded-limit"),
            Says(
                "http.forwarded-limit",
                "x-forwarded-for: 203.0.113.20 got more remaining",
            ),
        ],
    ),
    Row::new(
        "Accept-Encoding: gzip answered with an empty list",
        gzip_empties_the_list,
        &["http.client-headers"],
        &[
            Fails("http.client-headers"),
            Says("http.client-headers", "accept-encoding: gzip"),
        ],
    ),
    Row::new(
        "a trailing slash answered 500",
        trailing_slash_500,
        &["http.shapes"],
        &[
            Fails("http.shapes"),
            Says("http.shapes", "a trailing slash"),
        ],
    ),
    Row::new(
        "a quote in a partnerId answered 500 with a raw SQL error",
        quote_raw_sql_error,
        &["http.chars"],
        &[
            Fails("http.chars"),
            Says("http.chars", "partnerId with SQL quotes"),
        ],
    ),
    Row::new(
        "a url's fragment and percent-escapes encoded wrongly in the QR code",
        url_mangled,
        &["http.chars"],
        &[
            Fails("http.chars"),
            Says("http.chars", "not of the url sent"),
        ],
    ),
    // Legal choices the surface checks must let pass.
    Row::new(
        "GET /tags answered in another order each time (no ORDER BY)",
        tags_shuffled,
        &["http.client-headers", "http.shapes"],
        &[
            NothingFails,
            Passes("http.client-headers"),
            Passes("http.shapes"),
        ],
    ),
    Row::new(
        "Accept-Encoding honoured with br where asked for",
        br_where_asked,
        &["http.client-headers", "schema.response"],
        &[NothingFails, Passes("http.client-headers")],
    ),
    Row::new(
        "a url canonicalised as the WHATWG URL standard does",
        url_canonicalised,
        &["http.chars"],
        &[NothingFails, Passes("http.chars")],
    ),
    Row::new(
        "a logo answered 404 not_found (fetched and not found)",
        logo_not_found,
        &["http.chars", "http.choices"],
        &[
            NothingFails,
            Passes("http.chars"),
            Says("http.choices", "rejected with 404 not_found"),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_surface_defect_fails_the_check_that_owns_it() {
    run_table(SURFACE_DEFECTS).await;
}

/// The limiter keyed on the forwarded address: each forwarded request on a fresh counter.
fn forwarded_resets_the_counter() -> Defect {
    Defect::after(|inc, ans| {
        if inc.headers.contains_key("x-forwarded-for")
            && let Some(limit) = ans.header_u64("x-ratelimit-limit")
        {
            ans.set_header("x-ratelimit-remaining", limit.saturating_sub(1));
        }
    })
}

fn gzip_empties_the_list() -> Defect {
    Defect::after(|inc, ans| {
        let gzip = inc
            .headers
            .get("accept-encoding")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("gzip"));
        if gzip && inc.path == "/tags" && ans.status == 200 {
            ans.body = b"[]".to_vec();
        }
    })
}

fn trailing_slash_500() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path.len() > 1 && inc.path.ends_with('/') {
            ans.status = 500;
            ans.body = envelope("internal_server_error");
            ans.set_header("content-type", "application/json");
        }
    })
}

fn quote_raw_sql_error() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/partners/deactivate" && inc.body.contains(&b'\'') {
            ans.status = 500;
            ans.body = b"ERROR: syntax error at or near \"'\" (SQLSTATE 42601)".to_vec();
            ans.set_header("content-type", "text/plain");
        }
    })
}

/// The url read as a URL would be by a careless layer: cut at `#` (a fragment), its
/// percent-escapes decoded once more.
fn url_mangled() -> Defect {
    Defect::before(|inc| {
        if inc.path != "/qr" {
            return;
        }
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(inc.query.as_bytes())
            .map(|(k, v)| {
                let v = if k == "url" {
                    let cut = v.split('#').next().unwrap_or_default();
                    percent_encoding::percent_decode_str(cut)
                        .decode_utf8_lossy()
                        .into_owned()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        inc.query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
    })
}

/// The tags of every GET /tags answer rotated by one more place than the answer before: the
/// same tags, in an order the spec does not show.
fn tags_shuffled() -> Defect {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let turn = AtomicUsize::new(0);
    Defect::after(move |inc, ans| {
        if inc.path != "/tags" || ans.status != 200 {
            return;
        }
        let Ok(serde_json::Value::Array(mut tags)) = serde_json::from_slice(&ans.body) else {
            return;
        };
        if !tags.is_empty() {
            let by = turn.fetch_add(1, Ordering::Relaxed) % tags.len();
            tags.rotate_left(by);
        }
        ans.body = serde_json::to_vec(&tags).unwrap();
        ans.headers.remove("content-length");
    })
}

/// A target that answers br to a client that offers it (the body is not really brotli: the
/// check must not offer br, since it cannot read it).
fn br_where_asked() -> Defect {
    Defect::after(|inc, ans| {
        let br = inc
            .headers
            .get("accept-encoding")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|e| e.trim() == "br"));
        if br && ans.status == 200 {
            let mut out = Vec::new();
            let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            std::io::Write::write_all(&mut e, &ans.body).unwrap();
            drop(e);
            ans.body = out;
            ans.set_header("content-encoding", "br");
        }
    })
}

/// The url parsed and serialised as the WHATWG URL standard does (spaces to %20, a backslash
/// to /, a control character dropped or escaped) before the QR code is drawn.
fn url_canonicalised() -> Defect {
    Defect::before(|inc| {
        if inc.path != "/qr" {
            return;
        }
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(inc.query.as_bytes())
            .map(|(k, v)| {
                let v = match (k.as_ref(), url::Url::parse(&v)) {
                    ("url", Ok(u)) => u.to_string(),
                    _ => v.into_owned(),
                };
                (k.into_owned(), v)
            })
            .collect();
        inc.query = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
    })
}

/// A logo the target fetched and did not find: 404 not_found in the envelope.
fn logo_not_found() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/qr" && inc.query.contains("logo=") {
            ans.status = 404;
            ans.body = envelope("not_found");
            ans.set_header("content-type", "application/json");
            ans.headers.remove("content-length");
        }
    })
}
