//! `http.body-size`: a few bodies larger than any sane payload are refused cleanly or served,
//! never a 5xx, a hang or a dropped connection.

use http::Method;
use linkcert_registry::check_id;
use serde_json::json;

use super::{Judged, UNKNOWN_PARTNER, answer_text, record};
use crate::Ctx;
use crate::auth::minimal_request;
use crate::conformance::Expect;
use crate::probe::{Exchange, Req};
use linkcert_http::{FailureKind, REJECTIONS, is_envelope, refused_cleanly};
use linkcert_spec::Operation;

const MIB: usize = 1024 * 1024;
/// Oversized bodies sent to deactivation; one more of `GET_BODY` goes on a GET. Bounded: these
/// few, once per run.
const OVERSIZED: [usize; 2] = [2 * MIB, 16 * MIB];
const GET_BODY: usize = 2 * MIB;
/// How the client says the connection broke while it was still sending the body.
const SIZE_EXPECTED: &str = "413, 400 or 422 in the error envelope, or the answer the same \
                             request small gets; never a 5xx or a dropped connection";

/// A JSON object `{"partnerId": ..., "linkcertPadding": "aaa…"}` of about `size` bytes.
pub(super) fn padded_body(size: usize, partner: Option<&str>) -> Vec<u8> {
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
        let err = x.failure_words();
        // Closed while the body was still being sent: perhaps after an early answer this
        // client could not read (hyper's client stops at the failed write; others read on).
        // RFC 9112 9.6 asks a server to close in stages so the answer arrives: a SHOULD.
        if x.failure()
            .is_some_and(|f| f.kind == FailureKind::WriteFailed)
        {
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
        // A body too large may also be refused as such (413).
        s if refused_cleanly(r, &[REJECTIONS[0], 413, REJECTIONS[1]]) => {
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

pub async fn run(ctx: &Ctx) {
    let id = check_id!("http.body-size");
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
        check_id!("http.body-size"),
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
#[cfg(test)]
mod tests {
    use super::super::test_support::{BAD, NF, fails, x};
    use super::*;
    use linkcert_http::Failure;

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
            result: Err(Failure::new(
                FailureKind::Reset,
                "request failed: connection closed before message completed",
            )),
            ..post(0, "")
        };
        assert!(fails(&judge_size(&dropped, MIB, true)));
        let closed_early = Exchange {
            result: Err(Failure::new(
                FailureKind::WriteFailed,
                "request failed: error writing a body to connection: Broken pipe",
            )),
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
}
