//! `http.clients`: every operation of the service, sent as each real client sends it (its
//! headers exactly, what it adds for a body and, from its threshold, for a large one), gets
//! the answer of the plain request, or a clean error in the envelope (`same.rs` says what
//! "the same" is). The clients are data (`linkcert_registry::clients`, the files under
//! `clients/`): read from each client's own source and captured on the wire.
//!
//! The runner sends Host, Authorization (the run's key) and Content-Length itself. Header
//! names go out in lower case (HTTP/2 requires it, and our HTTP/1 client writes them so): a
//! target must read them without regard to case (RFC 9110 5.1).

use super::plain::{plain, service_ops};
use super::same::{self, Body};
use super::{UNKNOWN_PARTNER, answer_text, record, size::padded_body};
use crate::Ctx;
use crate::conformance::Expect;
use crate::probe::Req;
use crate::recorder::Why;
use linkcert_registry::check_id;
use linkcert_registry::clients::{Profile, profiles};

/// `plain` as this client sends it: its headers in place of any of the same name (its
/// image ones to an operation answering an image), the body's ones when there is a body,
/// the large body's from its threshold.
pub fn dress(p: &Profile, plain: &Req, image: bool) -> Req {
    let body_len = plain.body.as_ref().map(|b| b.len());
    let mut add: Vec<&(String, String)> = p
        .headers
        .iter()
        .map(
            |h| match p.image.iter().find(|i| i.0.eq_ignore_ascii_case(&h.0)) {
                Some(i) if image => i,
                _ => h,
            },
        )
        .collect();
    if body_len.is_some() {
        add.extend(&p.body);
    }
    if let (Some(from), Some(len)) = (p.large_from, body_len)
        && len >= from
    {
        add.extend(&p.large);
    }
    let mut req = plain.clone();
    req.headers
        .retain(|(k, _)| !add.iter().any(|(n, _)| n.eq_ignore_ascii_case(k)));
    for (k, v) in add {
        req = req.header(k, v.clone());
    }
    req
}

pub(super) async fn run(ctx: &Ctx) {
    let id = check_id!("http.clients");
    let ops = service_ops(&ctx.spec);
    let per_op = ops.into_iter().map(|op| async move {
        let label = op.label();
        let Some(key) = ctx.key_for(op).cloned() else {
            ctx.rec
                .skip(id, &label, format!("no key whose plan may call {label}"));
            return;
        };
        let (plain, mut kind) = plain(op, &key);
        let image = kind == Body::Image;
        let (x, _) = ctx.exchange(op, plain.clone(), Expect::Any).await;
        let Some(base) = x.resp().filter(|r| r.status < 500 && r.status != 429) else {
            let why = format!("the plain request got {}", answer_text(&x));
            ctx.rec.skip(id, &label, Why::after(&x, why));
            return;
        };
        if let Body::Tags { .. } = kind
            && base.is_success()
        {
            kind = Body::Tags {
                whole: ctx.service.holds_all(ctx, op, &key, base).await,
            };
        }
        let expected = format!(
            "the plain request's answer ({}), or a clean error in the envelope",
            answer_text(&x)
        );
        let mut sends: Vec<(String, Req)> = Vec::new();
        for p in profiles().iter().filter(|p| p.sends(op.method.as_str())) {
            sends.push((format!("as {} sends it", p.client), dress(p, &plain, image)));
            // What the client adds for a large body, on a body that large (the same partner).
            if let (Some(from), Some(_)) = (p.large_from, &plain.body) {
                let mut big = plain.clone();
                big.body = Some(padded_body(from, Some(UNKNOWN_PARTNER)).into());
                let what = format!("as {} sends a body of {from} bytes", p.client);
                sends.push((what, dress(p, &big, image)));
            }
        }
        let (whats, reqs): (Vec<String>, Vec<Req>) = sends.into_iter().unzip();
        let sends = reqs.into_iter().map(|r| (op, r, Expect::Any)).collect();
        // Each judged as it comes and dropped: a hostile target's bodies are large.
        ctx.exchange_each(sends, |i, dx, _| {
            if let Some(what) = whats.get(i) {
                record(
                    ctx,
                    id,
                    &label,
                    &expected,
                    same::judge(kind, base, &dx, what),
                    &dx,
                );
            }
        })
        .await;
    });
    // One operation after another: each sends `--concurrency` at a time already.
    for one in per_op {
        one.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_replaces_headers_of_its_names_and_adds_the_large_body_s_from_its_threshold() {
        let p = Profile::from_toml(
            r#"
name = "t"
client = "t 1"
source = "a test's own profile, written by hand"
methods = ["GET", "POST"]
headers = [["Accept", "*/*"], ["User-Agent", "t/1"]]
image = [["Accept", "image/png"]]
body = [["Content-Type", "application/json"]]
large_from = 10
large = [["Expect", "100-continue"]]
"#,
            "t",
        )
        .unwrap();
        let names = |r: &Req| -> Vec<String> { r.headers.iter().map(|h| h.0.clone()).collect() };
        let get = Req::get("/tags").header("accept", "application/json");
        assert_eq!(names(&dress(&p, &get, false)), ["Accept", "User-Agent"]);
        assert_eq!(dress(&p, &get, false).headers[0].1, "*/*");
        assert_eq!(dress(&p, &get, true).headers[0].1, "image/png");
        let small =
            Req::new(http::Method::POST, "/p").body("application/json; x=1", b"{}".to_vec());
        let d = dress(&p, &small, false);
        assert_eq!(names(&d), ["Accept", "User-Agent", "Content-Type"]);
        assert_eq!(d.headers[2].1, "application/json");
        let big = Req::new(http::Method::POST, "/p").body("application/json", vec![b' '; 10]);
        assert_eq!(
            names(&dress(&p, &big, false)),
            ["Accept", "User-Agent", "Content-Type", "Expect"]
        );
    }
}
