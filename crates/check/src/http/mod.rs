//! `http.*`: HTTP beyond the happy path, sent on every path the spec defines. One file per
//! check: `method.rs`, `size.rs`, `media.rs`; `http.choices` is fed by all three.
//!
//! - `http.method`: every standard method a path does not define (GET, POST, PUT, PATCH,
//!   DELETE, and HEAD and OPTIONS) gets an error in the envelope: 404, or 405 with `Allow`
//!   naming the path's methods. An empty body, a non-envelope error, a 2xx that pretends to
//!   have done something or a 5xx fails. HEAD served like GET (no body can be an envelope) and
//!   OPTIONS answered 2xx are HTTP's own: observed, never failed.
//! - `http.body-size`: a few bodies larger than any sane payload (`OVERSIZED`: 2 and 16 MiB to
//!   deactivation naming an unknown partner, 2 MiB on a GET) are refused cleanly (413, 400 or
//!   422 in the envelope) or served as the small request would be; a 5xx, a hang or a dropped
//!   connection fails.
//! - `http.media-type`: `application/json; charset=utf-8` is the same media type as
//!   `application/json` (RFC 9110 8.3.1): served as without the parameter, never a 400/415.
//!   With an unknown partner always; with `--allow-destructive`, also on a spare fixture.
//! - `http.clients` (`clients.rs`): every operation sent as each real client sends it (the
//!   profiles in `crates/check/clients/`) gets the plain request's answer or a clean error.
//! - `http.neighbours` and `http.neighbour-auth` (`neighbours/`): the neighbours of every
//!   operation's plain request, derived from the spec (path, each parameter's forms, the
//!   media type), get the meant answer or a clean error; one served to the run's key is
//!   refused without a key, with a key never issued and with a key of a plan below.
//! - `http.conditional` (`conditional.rs`): conditional requests built from the target's
//!   own ETag and Last-Modified, on the plain request and the neighbours' other values.
//! - `http.client-headers` and `http.forwarded-limit` (`headers.rs`): single headers clients
//!   and proxies add do not change the answer; X-Forwarded-For gives a key no counter of its
//!   own.
//! - `http.shapes` (`shapes.rs`): a trailing or doubled slash, an encoded path, parameters
//!   empty, repeated or unknown, a body on GET, unknown body fields: the meant answer or a
//!   clean error (`same.rs` compares answers).
//! - `http.chars` (`chars.rs`): strings hostile to storage, URL and shell layers, honoured
//!   exactly or rejected cleanly.
//! - `http.choices`: which of the legal answers the target chose.
//!
//! Error answers also feed `status.listed` and `envelope.*`; `conformance::standard_status`
//! makes `status.listed` observe (not fail) the 405 and 413 these requests may meet.

mod chars;
pub mod clients;
mod conditional;
mod headers;
mod media;
mod method;
mod neighbours;
mod plain;
mod same;
mod shapes;
mod size;

use super::Ctx;
use super::probe::Exchange;
use linkcert_http::{error_code, is_envelope};
use linkcert_registry::{Check, check_id};

/// A partner no target has: what the oversized and media-type requests name, so they change
/// nothing.
const UNKNOWN_PARTNER: &str = "pn_linkcert_http_absent";

/// How one answer fares against one check.
#[derive(Debug, PartialEq, Eq)]
enum Judged {
    /// Held; the words say which legal choice the target made.
    Pass(String),
    /// Legal, HTTP's own: an observation.
    Observe(String),
    /// The error is in the envelope, but its status names the problem wrongly.
    NonStrict(String),
    Fail(String),
    /// 429 even after waiting: says nothing either way.
    Throttled,
}

pub async fn run(ctx: &Ctx) {
    let on = |id| ctx.enabled(id);
    // First, alone: their choices (404 or 405, 400 or 413) lead `http.choices`, whose findings
    // are kept in the order they come.
    if on(check_id!("http.method")) {
        method::run(ctx).await;
    }
    if on(check_id!("http.body-size")) {
        size::run(ctx).await;
    }
    // Independent of each other: side by side, so a far target's round trips overlap.
    tokio::join!(
        async {
            if on(check_id!("http.client-headers")) {
                headers::client_headers(ctx).await;
            }
            if on(check_id!("http.clients")) {
                clients::run(ctx).await;
            }
            if on(check_id!("http.neighbours"))
                || on(check_id!("http.neighbour-auth"))
                || on(check_id!("http.conditional"))
            {
                neighbours::run(ctx).await;
            }
            // After the neighbours: its fixture's gated neighbours are theirs too.
            if on(check_id!("http.media-type")) || on(check_id!("http.neighbour-auth")) {
                media::run(ctx).await;
            }
        },
        async {
            if on(check_id!("http.shapes")) {
                shapes::run(ctx).await;
            }
        },
        async {
            if on(check_id!("http.chars")) {
                chars::run(ctx).await;
            }
        },
    );
    // Alone: it reads one key's Remaining request by request, which no other traffic may move.
    if on(check_id!("http.forwarded-limit")) {
        headers::forwarded_limit(ctx).await;
    }
}

/// Record a judgement on `id` (choices go to `http.choices` as well).
fn record(ctx: &Ctx, id: Check, label: &str, expected: &str, j: Judged, x: &Exchange) {
    match j {
        Judged::Pass(choice) => {
            ctx.rec.pass(id, label);
            ctx.rec
                .observe(check_id!("http.choices"), label, choice, Some(x));
        }
        Judged::Observe(what) => ctx
            .rec
            .observe(check_id!("http.choices"), label, what, Some(x)),
        Judged::NonStrict(actual) => ctx.rec.non_strict(id, label, expected, actual, Some(x)),
        Judged::Fail(actual) => ctx.rec.violation(id, label, expected, actual, Some(x)),
        Judged::Throttled => {}
    }
}

/// What an answer was, in words.
fn answer_text(x: &Exchange) -> String {
    match x.resp() {
        None => format!("no answer ({})", x.failure_words()),
        Some(r) if r.status >= 400 && !is_envelope(r) => r.without_envelope(),
        Some(r) => match error_code(r) {
            Some(c) => format!("{} {c}", r.status),
            None => r.status.to_string(),
        },
    }
}

#[cfg(test)]
mod test_support {
    use http::Method;

    use super::Judged;
    use crate::probe::{Exchange, Req};
    use linkcert_http::Resp;

    pub const NF: &str = r#"{"error":{"code":"not_found","message":"m"}}"#;
    pub const BAD: &str = r#"{"error":{"code":"bad_request","message":"m"}}"#;

    /// An exchange that got this answer.
    pub fn x(method: Method, status: u16, headers: &[(&str, &str)], body: &str) -> Exchange {
        let mut req = Req::get("/tags");
        req.method = method;
        Exchange {
            url: "https://h/tags".into(),
            req,
            result: Ok(Resp {
                status,
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: body.as_bytes().to_vec(),
                truncated: false,
                elapsed: Default::default(),
            }),
            insecure: false,
        }
    }

    pub fn fails(j: &Judged) -> bool {
        matches!(j, Judged::Fail(_))
    }
}
