//! `http.*`: HTTP beyond the happy path, sent on every path the spec defines.
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
//! - `http.choices`: which of the legal answers the target chose.
//!
//! Error answers also feed `status.listed` and `envelope.*`; `conformance::standard_status`
//! makes `status.listed` observe (not fail) the 405 and 413 these requests may meet.

use futures::StreamExt;
use http::Method;
use serde_json::json;

use super::Ctx;
use super::auth::minimal_request;
use super::conformance::Expect;
use super::probe::{Exchange, Req};
use crate::http::{Resp, error_code, is_envelope};
use crate::spec::Operation;
use crate::target::PlanKey;

const MIB: usize = 1024 * 1024;
/// Oversized bodies sent to deactivation; one more of `GET_BODY` goes on a GET. Bounded: these
/// few, once per run.
const OVERSIZED: [usize; 2] = [2 * MIB, 16 * MIB];
const GET_BODY: usize = 2 * MIB;
const UNKNOWN_PARTNER: &str = "pn_linkcert_http_absent";
/// How the client says the connection broke while it was still sending the body.
const WRITE_FAILED: &str = "error writing a body";
/// The fixture partnerId `http.media-type` may deactivate: the third, which `partners` leaves
/// alone (it uses the first two).
const SPARE_FIXTURE: usize = 2;
/// `application/json` with parameters, as clients send it.
const JSON_WITH_PARAMS: [&str; 2] = [
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
];

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
    if ctx.enabled("http.method") {
        methods(ctx).await;
    }
    if ctx.enabled("http.body-size") {
        body_sizes(ctx).await;
    }
    if ctx.enabled("http.media-type") {
        media_types(ctx).await;
    }
}

/// Record a judgement on `id` (choices go to `http.choices` as well).
fn record(ctx: &Ctx, id: &str, label: &str, expected: &str, j: Judged, x: &Exchange) {
    match j {
        Judged::Pass(choice) => {
            ctx.rec.pass(id, label);
            ctx.rec.observe("http.choices", label, choice, Some(x));
        }
        Judged::Observe(what) => ctx.rec.observe("http.choices", label, what, Some(x)),
        Judged::NonStrict(actual) => ctx.rec.non_strict(id, label, expected, actual, Some(x)),
        Judged::Fail(actual) => ctx.rec.violation(id, label, expected, actual, Some(x)),
        Judged::Throttled => {}
    }
}

/// What an answer was, in words.
fn answer_text(x: &Exchange) -> String {
    match x.resp() {
        None => format!("no answer ({})", x.result.clone().err().unwrap_or_default()),
        Some(r) if r.status >= 400 && !is_envelope(r) => {
            let empty = if r.body.is_empty() { ", empty" } else { "" };
            format!("{} without the error envelope{empty}", r.status)
        }
        Some(r) => match error_code(r) {
            Some(c) => format!("{} {c}", r.status),
            None => r.status.to_string(),
        },
    }
}

// --- methods -------------------------------------------------------------------------------

const METHOD_EXPECTED: &str =
    "404, or 405 with Allow naming the path's methods, in the error envelope";

/// Every path of the spec with its operations, in the spec's order.
fn paths(ctx: &Ctx) -> Vec<(String, Vec<&Operation>)> {
    let mut out: Vec<(String, Vec<&Operation>)> = Vec::new();
    for op in &ctx.spec.operations {
        match out.iter_mut().find(|(p, _)| *p == op.path) {
            Some((_, ops)) => ops.push(op),
            None => out.push((op.path.clone(), vec![op])),
        }
    }
    out
}

/// The methods a path does not define that are sent to it.
fn undefined_methods(defined: &[Method]) -> Vec<Method> {
    let mut all = vec![
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
    ];
    // HEAD stays even where GET is defined: HEAD is GET's without a body (RFC 9110 9.3.2),
    // and a target that serves it so is observed.
    all.retain(|m| !defined.contains(m));
    all
}

async fn methods(ctx: &Ctx) {
    let mut sends = Vec::new();
    for (path, ops) in paths(ctx) {
        let Some((op, key)) = ops
            .iter()
            .find_map(|op| ctx.key_for(op).map(|k| (*op, k.clone())))
        else {
            ctx.rec.skip(
                "http.method",
                &path,
                "no key of a plan that may call an operation of this path",
            );
            continue;
        };
        let defined: Vec<Method> = ops.iter().map(|o| o.method.clone()).collect();
        for m in undefined_methods(&defined) {
            sends.push((
                path.clone(),
                op,
                defined.clone(),
                method_request(op, m, &key),
            ));
        }
    }
    let mut pending = Vec::new();
    for (path, op, defined, req) in sends {
        let probe = &ctx.probe;
        pending.push(async move { (path, op, defined, probe.send(req).await) });
    }
    let mut answers = futures::stream::iter(pending).buffered(ctx.opts.concurrency.max(1));
    while let Some((path, op, defined, x)) = answers.next().await {
        let j = judge_method(&x.req.method, &defined, &x);
        record(ctx, "http.method", &path, METHOD_EXPECTED, j, &x);
        // A HEAD answer has no body: only its status is judged elsewhere.
        if let Some(r) = x.resp().filter(|r| r.status >= 400 && r.status != 429) {
            ctx.status_listed(op, &x, r);
            if x.req.method != Method::HEAD {
                ctx.envelope(&op.label(), &x, r);
            }
        }
    }
}

/// The operation's own minimal request (its required parameters), with another method; a
/// method that carries content carries `{}`.
fn method_request(op: &Operation, m: Method, key: &PlanKey) -> Req {
    let mut req = minimal_request(op).key(key);
    req.method = m.clone();
    req.body = None;
    req.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    if matches!(m, Method::POST | Method::PUT | Method::PATCH) {
        req = req.body("application/json", b"{}".to_vec());
    }
    req
}

/// Whether an Allow value lists a method (tokens, compared ignoring case).
fn allow_lists(allow: &str, m: &Method) -> bool {
    allow
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case(m.as_str()))
}

fn judge_method(m: &Method, defined: &[Method], x: &Exchange) -> Judged {
    let Some(r) = x.resp() else {
        return Judged::Fail(answer_text(x));
    };
    let s = r.status;
    if s == 429 {
        return Judged::Throttled;
    }
    let head = *m == Method::HEAD;
    if head && s < 500 {
        let what = if r.is_success() && defined.contains(&Method::GET) {
            format!("HEAD served like GET ({s})")
        } else {
            format!("HEAD answered {s}")
        };
        return Judged::Observe(what);
    }
    if *m == Method::OPTIONS && r.is_success() {
        return Judged::Observe(match r.header("allow") {
            Some(a) => format!("OPTIONS answered {s} with Allow: {a}"),
            None => format!("OPTIONS answered {s} without Allow"),
        });
    }
    if s < 400 {
        return Judged::Fail(format!("{s} (as if {m} were an operation of the path)"));
    }
    if s >= 500 || !is_envelope(r) {
        return Judged::Fail(answer_text(x));
    }
    match s {
        404 => Judged::Pass("a method the path does not define: 404 in the envelope".into()),
        405 => {
            let Some(allow) = r.header("allow") else {
                return Judged::Fail("405 without an Allow header".into());
            };
            if let Some(missing) = defined.iter().find(|d| !allow_lists(allow, d)) {
                return Judged::Fail(format!(
                    "405 with Allow: {allow}, which leaves out {missing}"
                ));
            }
            if allow_lists(allow, m) {
                return Judged::Fail(format!("405 with Allow: {allow}, which lists {m} itself"));
            }
            Judged::Pass("a method the path does not define: 405 with Allow in the envelope".into())
        }
        _ => Judged::NonStrict(format!(
            "{}: an error in the envelope, but 404 or 405 says what is wrong",
            answer_text(x)
        )),
    }
}

// --- body sizes ----------------------------------------------------------------------------

const SIZE_EXPECTED: &str = "413, 400 or 422 in the error envelope, or the answer the same \
                             request small gets; never a 5xx or a dropped connection";

/// A JSON object `{"partnerId": ..., "linkcertPadding": "aaa…"}` of about `size` bytes.
fn padded_body(size: usize, partner: Option<&str>) -> Vec<u8> {
    let head = match partner {
        Some(p) => format!(r#"{{"partnerId":{},"linkcertPadding":""#, json!(p)),
        None => r#"{"linkcertPadding":""#.to_string(),
    };
    let mut b = Vec::with_capacity(size + head.len() + 2);
    b.extend_from_slice(head.as_bytes());
    b.resize(head.len() + size, b'a');
    b.extend_from_slice(b"\"}");
    b
}

fn mib(bytes: usize) -> String {
    format!("{} MiB", bytes / MIB)
}

/// `served_ok`: whether a 2xx is a correct answer to the request (a GET that may ignore its
/// body), or pretends (a deactivation of a partner that does not exist).
fn judge_size(x: &Exchange, size: usize, served_ok: bool) -> Judged {
    let Some(r) = x.resp() else {
        let err = x.result.clone().err().unwrap_or_default();
        // Closed while the body was still being sent: perhaps after an early answer this
        // client could not read (hyper's client stops at the failed write; others read on).
        // RFC 9112 9.6 asks a server to close in stages so the answer arrives: a SHOULD.
        if err.contains(WRITE_FAILED) {
            return Judged::NonStrict(format!(
                "the connection closed before the whole body was sent, with no answer this \
                 client could read ({err}); a server that refuses early should keep reading \
                 (lingering close, RFC 9112 9.6) so clients see its answer"
            ));
        }
        return Judged::Fail(answer_text(x));
    };
    let what = mib(size);
    match r.status {
        429 => Judged::Throttled,
        s @ (400 | 413 | 422) if is_envelope(r) => {
            Judged::Pass(format!("a body of {what}: refused with {s}"))
        }
        s if r.is_success() && served_ok => {
            Judged::Pass(format!("a body of {what} on a GET: ignored, {s}"))
        }
        s if r.is_success() => {
            Judged::Fail(format!("{s} (accepted, for a partner that does not exist)"))
        }
        401..=499 if is_envelope(r) => Judged::Pass(format!(
            "a body of {what}: read and served ({})",
            answer_text(x)
        )),
        _ => Judged::Fail(answer_text(x)),
    }
}

async fn body_sizes(ctx: &Ctx) {
    let id = "http.body-size";
    let deactivate = ctx
        .op("deactivatePartner")
        .and_then(|op| ctx.key_for(op).map(|k| (op, k.clone())));
    match deactivate {
        Some((op, key)) => {
            let ct = op
                .body
                .as_ref()
                .map_or("application/json", |b| b.content_type.as_str());
            for size in OVERSIZED {
                let req = Req::new(op.method.clone(), &op.path)
                    .body(ct, padded_body(size, Some(UNKNOWN_PARTNER)))
                    .key(&key);
                let x = ctx.probe.send(req).await;
                sized(ctx, op, &x, size, false);
            }
        }
        None => ctx.rec.skip(
            id,
            "POST /partners/deactivate",
            "no deactivation operation, or no key of a plan that may call it",
        ),
    }
    // The tag list (cheapest to serve) where there is one, else the first GET with a key.
    let get = ctx
        .op("getTags")
        .into_iter()
        .chain(&ctx.spec.operations)
        .filter(|op| op.method == Method::GET && op.body.is_none())
        .find_map(|op| ctx.key_for(op).map(|k| (op, k.clone())));
    if let Some((op, key)) = get {
        let req = minimal_request(op)
            .key(&key)
            .body("application/json", padded_body(GET_BODY, None));
        let x = ctx.probe.send(req).await;
        sized(ctx, op, &x, GET_BODY, true);
    }
}

/// Judge one oversized request, and pass its answer through the cross-cutting checks.
fn sized(ctx: &Ctx, op: &Operation, x: &Exchange, size: usize, served_ok: bool) {
    let label = op.label();
    record(
        ctx,
        "http.body-size",
        &label,
        SIZE_EXPECTED,
        judge_size(x, size, served_ok),
        x,
    );
    // `judge` would fail a missing answer on status.valid-accepted: that is this check's.
    if x.resp().is_some() {
        ctx.judge(op, x, Expect::Any);
    }
}

// --- media types ---------------------------------------------------------------------------

/// Whether two answers are the same for a client: status, and the code of an error.
fn same_answer(a: &Resp, b: &Resp) -> bool {
    a.status == b.status && (a.status < 400 || error_code(a) == error_code(b))
}

async fn media_types(ctx: &Ctx) {
    let id = "http.media-type";
    let Some((op, key)) = ctx
        .op("deactivatePartner")
        .and_then(|op| ctx.key_for(op).map(|k| (op, k.clone())))
    else {
        ctx.rec.skip(
            id,
            "POST /partners/deactivate",
            "no deactivation operation, or no key of a plan that may call it",
        );
        return;
    };
    let label = op.label();
    let send = |ct: &str, partner: &str, key: &PlanKey| {
        let req = Req::new(op.method.clone(), &op.path)
            .body(ct, json!({ "partnerId": partner }).to_string().into_bytes())
            .key(key);
        ctx.exchange(op, req, Expect::Any)
    };
    let (plain, _) = send("application/json", UNKNOWN_PARTNER, &key).await;
    let Some(base) = plain.resp().filter(|r| r.status != 429) else {
        ctx.rec.skip(
            id,
            &label,
            format!(
                "the plain request got no judgeable answer: {}",
                answer_text(&plain)
            ),
        );
        return;
    };
    for ct in JSON_WITH_PARAMS {
        let (x, _) = send(ct, UNKNOWN_PARTNER, &key).await;
        let j = match x.resp() {
            Some(r) if r.status == 429 => Judged::Throttled,
            Some(r) if same_answer(base, r) => Judged::Pass(format!(
                "Content-Type: {ct} served as application/json ({})",
                answer_text(&x)
            )),
            _ => Judged::Fail(format!("{} for Content-Type: {ct}", answer_text(&x))),
        };
        let expected = format!(
            "the answer application/json gets ({}): the same media type",
            answer_text(&plain)
        );
        record(ctx, id, &label, &expected, j, &x);
    }
    fixture(ctx, op).await;
}

/// With `--allow-destructive` and a spare fixture bound to a plan: a real deactivation sent
/// as `application/json; charset=utf-8` is served (200 with the partner's id).
async fn fixture(ctx: &Ctx, op: &Operation) {
    let id = "http.media-type";
    let label = op.label();
    if !ctx.target.allow_destructive {
        ctx.rec.observe(
            "http.choices",
            &label,
            "a real deactivation with a charset parameter: not tried (needs --allow-destructive)",
            None,
        );
        return;
    }
    let spare = ctx.target.partner_ids.get(SPARE_FIXTURE);
    let key = spare.and_then(|f| {
        let plan = f.plan.as_ref()?;
        ctx.keys_for(op)
            .into_iter()
            .find(|k| k.plan == *plan)
            .cloned()
    });
    let (Some(f), Some(key)) = (spare, key) else {
        ctx.rec.observe(
            "http.choices",
            &label,
            "a real deactivation with a charset parameter: not tried (needs a third --partner \
             PLAN=ID bound to a key that may deactivate)",
            None,
        );
        return;
    };
    let ct = JSON_WITH_PARAMS[0];
    let req = Req::new(op.method.clone(), &op.path)
        .body(ct, json!({ "partnerId": f.id }).to_string().into_bytes())
        .key(&key);
    let (x, _) = ctx.exchange(op, req, Expect::Any).await;
    let answered = x
        .resp()
        .and_then(Resp::json)
        .and_then(|v| v.get("partnerId")?.as_str().map(str::to_string));
    let expected = format!(
        "200 with {{\"partnerId\": {:?}}} (a fixture: it exists)",
        f.id
    );
    match x.resp().map(|r| r.status) {
        Some(429) => {}
        Some(404 | 409) => ctx.rec.skip(
            id,
            &label,
            format!(
                "the fixture {} was not active ({}): was it deactivated earlier?",
                f.id,
                answer_text(&x)
            ),
        ),
        Some(200) if answered.as_deref() == Some(f.id.as_str()) => {
            ctx.rec.pass(id, &label);
        }
        _ => ctx.rec.violation(
            id,
            &label,
            expected,
            format!("{} for Content-Type: {ct}", answer_text(&x)),
            Some(&x),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(method: Method, status: u16, headers: &[(&str, &str)], body: &str) -> Exchange {
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

    const NF: &str = r#"{"error":{"code":"not_found","message":"m"}}"#;
    const BAD: &str = r#"{"error":{"code":"bad_request","message":"m"}}"#;

    fn fails(j: &Judged) -> bool {
        matches!(j, Judged::Fail(_))
    }

    #[test]
    fn undefined_methods_get_404_or_405_with_allow_in_the_envelope() {
        let get = [Method::GET];
        let d = |status, h: &[(&str, &str)], body| {
            judge_method(&Method::DELETE, &get, &x(Method::DELETE, status, h, body))
        };
        assert!(matches!(d(404, &[], NF), Judged::Pass(_)));
        assert!(matches!(
            d(405, &[("allow", "GET, HEAD")], NF),
            Judged::Pass(_)
        ));
        assert!(fails(&d(405, &[("allow", "GET")], "")), "an empty 405");
        assert!(fails(&d(405, &[], NF)), "no Allow");
        assert!(
            fails(&d(405, &[("allow", "POST")], NF)),
            "Allow leaves out GET"
        );
        assert!(fails(&d(405, &[("allow", "GET, DELETE")], NF)));
        assert!(fails(&d(200, &[], "{}")), "pretends to have deleted");
        assert!(fails(&d(404, &[], "")), "an empty 404");
        assert!(fails(&d(500, &[], NF)));
        assert!(matches!(d(400, &[], BAD), Judged::NonStrict(_)));
        assert_eq!(d(429, &[], NF), Judged::Throttled);
        let none = Exchange {
            result: Err("connection reset".into()),
            ..x(Method::DELETE, 0, &[], "")
        };
        assert!(fails(&judge_method(&Method::DELETE, &get, &none)));
    }

    #[test]
    fn head_and_options_are_http_s_own_and_only_observed() {
        let get = [Method::GET];
        let j = |m: Method, s, h: &[(&str, &str)]| judge_method(&m, &get, &x(m.clone(), s, h, ""));
        assert!(matches!(j(Method::HEAD, 200, &[]), Judged::Observe(_)));
        assert!(matches!(j(Method::HEAD, 405, &[]), Judged::Observe(_)));
        assert!(fails(&j(Method::HEAD, 500, &[])));
        assert!(matches!(
            j(Method::OPTIONS, 204, &[("allow", "GET")]),
            Judged::Observe(_)
        ));
        assert!(fails(&j(Method::OPTIONS, 404, &[])), "an empty 404");
    }

    #[test]
    fn oversized_bodies_are_refused_cleanly_or_served() {
        let post = |s, body| x(Method::POST, s, &[], body);
        assert!(matches!(
            judge_size(&post(413, BAD), MIB, false),
            Judged::Pass(_)
        ));
        assert!(matches!(
            judge_size(&post(400, BAD), MIB, false),
            Judged::Pass(_)
        ));
        assert!(matches!(
            judge_size(&post(404, NF), MIB, false),
            Judged::Pass(_)
        ));
        assert!(fails(&judge_size(&post(413, "too big"), MIB, false)));
        assert!(fails(&judge_size(&post(500, BAD), MIB, false)));
        assert!(fails(&judge_size(&post(200, "{}"), MIB, false)));
        assert!(matches!(
            judge_size(&post(200, "[]"), MIB, true),
            Judged::Pass(_)
        ));
        let dropped = Exchange {
            result: Err("request failed: connection closed before message completed".into()),
            ..post(0, "")
        };
        assert!(fails(&judge_size(&dropped, MIB, true)));
        let closed_early = Exchange {
            result: Err("request failed: error writing a body to connection: Broken pipe".into()),
            ..post(0, "")
        };
        assert!(matches!(
            judge_size(&closed_early, MIB, true),
            Judged::NonStrict(_)
        ));
        let b = padded_body(MIB, Some("p\"1"));
        assert!(b.len() > MIB);
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["partnerId"], "p\"1");
    }

    #[test]
    fn allow_tokens_ignore_case_and_spaces() {
        assert!(allow_lists("get, HEAD", &Method::GET));
        assert!(!allow_lists("GETS", &Method::GET));
        assert_eq!(
            undefined_methods(&[Method::GET]),
            [
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
                Method::HEAD,
                Method::OPTIONS
            ]
        );
    }
}
