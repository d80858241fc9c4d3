//! `http.media-type`: `application/json; charset=utf-8` is the same media type as
//! `application/json` (RFC 9110 8.3.1): a deactivation sent with it gets the answer the plain
//! request gets. With an unknown partner always; with `--allow-destructive`, also on a fixture
//! partner it claims from the ledger, which must then be deactivated (200 with its id).

use linkcert_registry::check_id;
use serde_json::json;

use super::{Judged, UNKNOWN_PARTNER, answer_text, record};
use crate::Ctx;
use crate::conformance::Expect;
use crate::fixtures::{self, Field, Tried};
use crate::probe::Req;
use crate::recorder::Why;
use linkcert_http::{Resp, error_code};
use linkcert_run::target::{Fixture, PlanKey};
use linkcert_spec::Operation;

/// The family's name in the fixture ledger.
const FAMILY: &str = "http";
/// `application/json` with parameters, as clients send it.
const JSON_WITH_PARAMS: [&str; 2] = [
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
];

/// Whether two answers are the same for a client: status, and the code of an error.
fn same_answer(a: &Resp, b: &Resp) -> bool {
    a.status == b.status && (a.status < 400 || error_code(a) == error_code(b))
}

pub async fn run(ctx: &Ctx) {
    let id = check_id!("http.media-type");
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
    if ctx.enabled(id) {
        unknown(ctx, op, &key).await;
    }
    fixture(ctx, op).await;
}

/// Deactivations of an unknown partner with a charset parameter get the plain one's answer.
async fn unknown(ctx: &Ctx, op: &Operation, key: &PlanKey) {
    let id = check_id!("http.media-type");
    let label = op.label();
    let send = |ct: &str, partner: &str, key: &PlanKey| {
        let req = Req::new(op.method.clone(), &op.path)
            .body(ct, json!({ "partnerId": partner }).to_string().into_bytes())
            .key(key);
        ctx.exchange(op, req, Expect::Any)
    };
    let (plain, _) = send("application/json", UNKNOWN_PARTNER, key).await;
    let Some(base) = plain.resp().filter(|r| r.status != 429) else {
        let why = format!(
            "the plain request got no judgeable answer: {}",
            answer_text(&plain)
        );
        ctx.rec.skip(id, &label, Why::after(&plain, why));
        return;
    };
    for ct in JSON_WITH_PARAMS {
        let (x, _) = send(ct, UNKNOWN_PARTNER, key).await;
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
}

/// `http.neighbour-auth` on the fixture: its deactivation's neighbours with a gated key;
/// whether any was served (the fixture may be spent).
async fn gated(ctx: &Ctx, op: &Operation, f: &Fixture) -> bool {
    if !ctx.enabled(check_id!("http.neighbour-auth")) {
        return false;
    }
    let req = Req::new(op.method.clone(), &op.path).body(
        "application/json",
        json!({ "partnerId": f.id }).to_string().into_bytes(),
    );
    super::neighbours::gated_on_fixture(ctx, op, &req, &f.id).await
}

/// With `--allow-destructive` and a fixture partner: a real deactivation sent as
/// `application/json; charset=utf-8` is served (200 with the partner's id). A bare fixture is
/// sent with each key that may deactivate until one does not answer 404 (the ledger's order).
/// Before it, `http.neighbour-auth` sends the deactivation's neighbours naming the fixture with
/// a key of a plan below (`neighbours::gated_on_fixture`).
async fn fixture(ctx: &Ctx, op: &Operation) {
    let id = check_id!("http.media-type");
    let label = op.label();
    let media = ctx.enabled(id);
    let not_tried = |why: String| {
        if media {
            let what = format!("a real deactivation with a charset parameter: not tried{why}");
            ctx.rec
                .observe(check_id!("http.choices"), &label, what, None);
        }
    };
    if !ctx.target.allow_destructive {
        return not_tried(" (needs --allow-destructive)".into());
    }
    let Some(f) = ctx.fixtures.claim(Field::PartnerId, FAMILY) else {
        return not_tried(format!(
            ": {}",
            ctx.fixtures.shortage(FAMILY, fixtures::HTTP)
        ));
    };
    let spent = gated(ctx, op, &f).await;
    if !media {
        return;
    }
    if spent {
        // A gated key's request was served (`http.neighbour-auth` fails it): the fixture may
        // be deactivated already, so its charset deactivation says nothing.
        let why = format!(
            "the fixture {} may have been deactivated by a gated key's request (see \
             http.neighbour-auth)",
            f.id
        );
        ctx.rec.not_judged(id, &label, why);
        return;
    }
    let ct = JSON_WITH_PARAMS[0];
    let allowed = ctx.keys_for(op);
    let tried = ctx
        .fixtures
        .deactivate(Field::PartnerId, &f, &allowed, |key| {
            let req = Req::new(op.method.clone(), &op.path)
                .body(ct, json!({ "partnerId": f.id }).to_string().into_bytes())
                .key(&key);
            async move {
                let (x, _) = ctx.exchange(op, req, Expect::Any).await;
                (x.status(), x)
            }
        })
        .await;
    let x = match tried {
        Tried::Sent(_, x) => x,
        Tried::NoKey(why) => {
            ctx.rec.skip(id, &label, why);
            return;
        }
        // A target that misreads the charset parameter may answer 404 too: not judged.
        Tried::NotOwned(why) => {
            ctx.rec.not_judged(id, &label, why);
            return;
        }
    };
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
