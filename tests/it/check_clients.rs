//! `http.clients` (the real clients' requests, `clients/`) in front of both implementations:
//! defects real services ship with what real clients add on their own (several media types
//! in Accept, an empty cookie, Expect on a large body, a coding mislabelled), each found and
//! named by the client that met it; and legal choices (compression honoured, a clean 406)
//! that pass.

use std::io::Write;

use crate::common;

use common::broken::{
    Defect, Incoming, Row,
    Then::{Fails, NothingFails, Passes, Says},
    run_table,
};

fn header<'a>(inc: &'a Incoming, name: &str) -> Option<&'a str> {
    inc.headers.get(name).and_then(|v| v.to_str().ok())
}

fn plain_text(ans: &mut common::broken::Answer, status: u16, body: &str) {
    ans.status = status;
    ans.body = body.as_bytes().to_vec();
    ans.headers.clear();
    ans.set_header("content-type", "text/plain");
}

/// Content negotiation written for one media type: an Accept listing several (axios,
/// browsers) is refused in plain text.
fn several_accepted_406() -> Defect {
    Defect::after(|inc, ans| {
        if header(inc, "accept").is_some_and(|a| a.contains(',')) {
            plain_text(ans, 406, "Not Acceptable");
        }
    })
}

/// A firewall rule that takes an empty header value for an attack (the TypeScript SDK sends
/// `cookie:` empty on every request).
fn empty_cookie_400() -> Defect {
    Defect::after(|inc, ans| {
        if header(inc, "cookie").is_some_and(|c| c.trim().is_empty()) {
            plain_text(ans, 400, "Bad Request");
        }
    })
}

/// A proxy that does not do `Expect: 100-continue` (curl sends it past 1 MiB of body).
fn expect_417() -> Defect {
    Defect::after(|inc, ans| {
        if inc.headers.contains_key("expect") {
            plain_text(ans, 417, "Expectation Failed");
        }
    })
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(body).unwrap();
    e.finish().unwrap()
}

fn accepts(inc: &Incoming, coding: &str) -> bool {
    header(inc, "accept-encoding").is_some_and(|v| v.split(',').any(|e| e.trim() == coding))
}

/// zstd asked for (Chromium), gzip sent under its name: a CDN's mislabelled cache entry.
fn zstd_mislabelled() -> Defect {
    Defect::after(|inc, ans| {
        if accepts(inc, "zstd") && ans.status == 200 {
            ans.body = gzip(&ans.body);
            ans.set_header("content-encoding", "zstd");
        }
    })
}

/// Every coding a client accepts honoured, best first (legal: RFC 9110 12.5.3).
fn codings_honoured() -> Defect {
    Defect::after(|inc, ans| {
        if ans.status != 200 {
            return;
        }
        let (body, coding) = if accepts(inc, "zstd") {
            (zstd::encode_all(&ans.body[..], 3).unwrap(), "zstd")
        } else if accepts(inc, "br") {
            let mut out = Vec::new();
            let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            e.write_all(&ans.body).unwrap();
            drop(e);
            (out, "br")
        } else if accepts(inc, "gzip") {
            (gzip(&ans.body), "gzip")
        } else {
            return;
        };
        ans.body = body;
        ans.set_header("content-encoding", coding);
    })
}

/// Strict negotiation, refused cleanly: an Accept that does not name the answer's media type
/// (nor a range holding it) gets 406 in the envelope (legal: a clean refusal).
fn strict_accept_in_the_envelope() -> Defect {
    Defect::after(|inc, ans| {
        let Some(accept) = header(inc, "accept") else {
            return;
        };
        let ct = ans
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let major = ct.split('/').next().unwrap_or("").to_string();
        let names = accept.split(',').any(|m| {
            let m = m.split(';').next().unwrap_or("").trim();
            m == "*/*" || ct.starts_with(m) || m == format!("{major}/*")
        });
        if !names && ans.status == 200 {
            ans.status = 406;
            ans.body = br#"{"error":{"code":"bad_request","message":"not acceptable"}}"#.to_vec();
            ans.set_header("content-type", "application/json");
        }
    })
}

const CLIENT_DEFECTS: &[Row] = &[
    Row::new(
        "an Accept listing several media types answered 406 in plain text",
        several_accepted_406,
        &["http.clients"],
        &[
            Fails("http.clients"),
            Says("http.clients", "406 without the error envelope"),
            Says("http.clients", "as axios 1.21.1 (Node.js"),
        ],
    ),
    Row::new(
        "an empty cookie header answered 400 in plain text",
        empty_cookie_400,
        &["http.clients"],
        &[
            Fails("http.clients"),
            Says("http.clients", "as dub 0.73.5 (TypeScript SDK"),
        ],
    ),
    Row::new(
        "Expect: 100-continue answered 417 in plain text",
        expect_417,
        &["http.clients"],
        &[
            Fails("http.clients"),
            Says(
                "http.clients",
                "as curl 7.88.1 sends a body of 1048577 bytes",
            ),
        ],
    ),
    Row::new(
        "gzip sent labelled zstd where zstd is accepted",
        zstd_mislabelled,
        &["http.clients"],
        &[
            Fails("http.clients"),
            Says("http.clients", "zstd body does not inflate"),
        ],
    ),
    // Legal choices: nothing fails.
    Row::new(
        "zstd, br or gzip honoured where accepted",
        codings_honoured,
        &["http.clients"],
        &[NothingFails, Passes("http.clients")],
    ),
    Row::new(
        "406 in the envelope for an Accept without the answer's media type",
        strict_accept_in_the_envelope,
        &["http.clients"],
        &[NothingFails, Passes("http.clients")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_defect_fails_http_clients_naming_the_client_and_legal_choices_pass() {
    run_table(CLIENT_DEFECTS).await;
}

/// The clients tried are in every report a reviewer reads: JSON, Markdown, the certificate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_and_certificate_list_the_clients_tried() {
    let b = common::broken::broken_on(common::broken::Impl::Variant, 6.0, Defect::none()).await;
    let r = common::broken::run_check(b.target(), &["http.clients"]).await;
    assert_eq!(r.clients.len(), 10, "{:?}", r.clients);
    let curl = r
        .clients
        .iter()
        .find(|c| c.starts_with("curl "))
        .expect("curl among them");
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains(r#""clients":["#), "{json}");
    assert!(r.markdown().contains("Clients sent as: "), "report.md");
    let html = r.html();
    assert!(html.contains("<dt>Clients</dt>") && html.contains(curl.as_str()));
    // A run that did not send as them lists none.
    let none = common::broken::run_check(b.target(), &["http.method"]).await;
    assert!(none.clients.is_empty(), "{:?}", none.clients);
    assert!(!none.markdown().contains("Clients sent as"));
}
