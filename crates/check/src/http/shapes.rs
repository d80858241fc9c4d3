//! `http.shapes`: requests real clients make beyond the spec's exact shapes (a trailing or
//! doubled slash, a percent-encoded path, a parameter empty, repeated or unknown, a body on a
//! GET, unknown fields in a deactivation) get the answer of the request they mean, or a clean
//! error in the envelope: never a 5xx, an error outside the envelope, or another 2xx.
//! (`application/json; charset=utf-8` is `http.media-type`'s; a 2 MiB body on GET is
//! `http.body-size`'s.)

use serde_json::json;

use super::same::{self, Body};
use super::{UNKNOWN_PARTNER, answer_text, record};
use crate::Ctx;
use crate::auth::minimal_request;
use crate::conformance::Expect;
use crate::probe::{Exchange, Req};
use crate::recorder::Why;
use linkcert_registry::check_id;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

/// The shapes of one operation, for a key that may call it.
type Shapes = fn(&Operation, &PlanKey) -> Vec<Shape>;

/// One request off the spec's shape, and the request it means.
struct Shape {
    what: &'static str,
    dressed: Req,
    meant: Req,
}

fn with_path(mut r: Req, path: &str) -> Req {
    r.path = path.to_string();
    r
}

/// GET /tags off its shape. The parameters are the real service's names (`sortOrder`); a
/// target that calls them otherwise meets unknown parameters, which it may refuse cleanly.
fn tag_shapes(op: &Operation, key: &PlanKey) -> Vec<Shape> {
    let plain = minimal_request(op).key(key);
    let sorted = plain.clone().query("sortOrder", "asc");
    vec![
        Shape {
            what: "a trailing slash (/tags/)",
            dressed: with_path(plain.clone(), &format!("{}/", op.path)),
            meant: plain.clone(),
        },
        Shape {
            what: "a doubled slash (//tags)",
            dressed: with_path(plain.clone(), &format!("/{}", op.path)),
            meant: plain.clone(),
        },
        Shape {
            what: "a percent-encoded path (/%74ags)",
            dressed: with_path(plain.clone(), &percent_first(&op.path)),
            meant: plain.clone(),
        },
        Shape {
            what: "a parameter with an empty value (sortOrder=)",
            dressed: plain.clone().query("sortOrder", ""),
            meant: plain.clone(),
        },
        Shape {
            what: "a parameter given twice (sortOrder=asc&sortOrder=asc)",
            dressed: sorted.clone().query("sortOrder", "asc"),
            meant: sorted,
        },
        Shape {
            what: "an unknown parameter the real service has (includeLinksCount=true)",
            dressed: plain.clone().query("includeLinksCount", "true"),
            meant: plain.clone(),
        },
        Shape {
            what: "a JSON body on GET",
            dressed: plain.clone().body("application/json", b"{}".to_vec()),
            meant: plain,
        },
    ]
}

/// The path with its first letter percent-encoded (`/tags` as `/%74ags`): the same URI
/// (RFC 3986 6.2.2.2), which a target may serve or refuse cleanly.
fn percent_first(path: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for c in path.chars() {
        if !done && c.is_ascii_alphabetic() {
            out.push_str(&format!("%{:02X}", c as u32));
            done = true;
        } else {
            out.push(c);
        }
    }
    out
}

fn qr_shapes(op: &Operation, key: &PlanKey) -> Vec<Shape> {
    let plain = minimal_request(op).key(key);
    vec![
        Shape {
            what: "a trailing slash (/qr/)",
            dressed: with_path(plain.clone(), &format!("{}/", op.path)),
            meant: plain.clone(),
        },
        Shape {
            what: "an unknown parameter (utm_source=linkcert)",
            dressed: plain.clone().query("utm_source", "linkcert"),
            meant: plain,
        },
    ]
}

fn deactivate_shapes(op: &Operation, key: &PlanKey) -> Vec<Shape> {
    let req = |v: serde_json::Value| {
        Req::new(op.method.clone(), &op.path)
            .body("application/json", v.to_string().into_bytes())
            .key(key)
    };
    vec![Shape {
        what: "unknown fields beside partnerId",
        dressed: req(json!({"partnerId": UNKNOWN_PARTNER, "reason": "linkcert", "notify": false})),
        meant: req(json!({ "partnerId": UNKNOWN_PARTNER })),
    }]
}

pub async fn run(ctx: &Ctx) {
    let routes: [(&str, Body, Shapes); 3] = [
        ("getTags", Body::Tags { whole: false }, tag_shapes),
        ("getQRCode", Body::Image, qr_shapes),
        ("deactivatePartner", Body::Json, deactivate_shapes),
    ];
    for (op_id, body, shapes) in routes {
        let Some((op, key)) = ctx
            .op(op_id)
            .and_then(|op| ctx.key_for(op).map(|k| (op, k.clone())))
        else {
            continue;
        };
        judge_shapes(ctx, op, body, shapes(op, &key)).await;
    }
}

async fn judge_shapes(ctx: &Ctx, op: &Operation, body: Body, shapes: Vec<Shape>) {
    let id = check_id!("http.shapes");
    let label = op.label();
    // Every tag, to know whether a meant answer held them all (`service::holds`).
    let all = match (body, ctx.key_for(op)) {
        (Body::Tags { .. }, Some(key)) => ctx.service.tags(ctx, op, key).await,
        _ => None,
    };
    // The meant requests' answers, each asked once.
    let mut meant: Vec<(String, Exchange)> = Vec::new();
    for s in shapes {
        let key = format!("{} {:?}", s.meant.url(ctx.probe.base_url()), s.meant.body);
        let at = match meant.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                let (x, _) = ctx.exchange(op, s.meant.clone(), Expect::Any).await;
                meant.push((key, x));
                meant.len() - 1
            }
        };
        let plain = &meant[at].1;
        let Some(base) = plain.resp().filter(|r| r.status != 429 && r.status < 500) else {
            let why = format!(
                "{}: the request it means got {}",
                s.what,
                answer_text(plain)
            );
            ctx.rec.skip(id, &label, Why::after(plain, why));
            continue;
        };
        let (x, _) = ctx.exchange(op, s.dressed, Expect::Any).await;
        let kind = match body {
            Body::Tags { .. } => Body::Tags {
                whole: crate::service::holds(base, all.as_ref()),
            },
            other => other,
        };
        let j = same::judge(kind, base, &x, s.what);
        let expected = format!(
            "{}: the answer of the request it means ({}), or a clean error in the envelope",
            s.what,
            answer_text(plain)
        );
        record(ctx, id, &label, &expected, j, &x);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_letter_is_encoded() {
        assert_eq!(super::percent_first("/tags"), "/%74ags");
        assert_eq!(
            super::percent_first("/partners/deactivate"),
            "/%70artners/deactivate"
        );
    }
}
