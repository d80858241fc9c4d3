//! `http.chars`: every string parameter and field (the QR's url, logo, fgColor, bgColor; a
//! deactivation's partnerId and tenantId) drawn from characters that mean something to the
//! layers behind an API: SQL quotes and comments, LIKE wildcards, shell substitution, URL
//! delimiters, control characters, right-to-left and combining marks, 4-byte characters, and
//! length. Each is honoured exactly (a QR code whose payload is the url sent, byte for byte;
//! an unknown partner's deactivation answered 404) or rejected cleanly (400 or 422 in the
//! envelope); a 5xx or an error outside the envelope fails.

use serde_json::json;

use super::{Judged, answer_text, record};
use crate::check::Ctx;
use crate::check::auth::minimal_request;
use crate::check::cases::hostile_strings as hostile;
use crate::check::conformance::Expect;
use crate::check::probe::{Exchange, Req};
use crate::http::is_envelope;
use crate::qr::{Rgb, inspect_png};
use crate::registry::check_id;
use crate::spec::Operation;

/// A longer one for identifiers, which the spec does not bound.
const LONG_ID: usize = 5000;

pub async fn run(ctx: &Ctx) {
    if let Some(op) = ctx.op("getQRCode") {
        qr_url(ctx, op).await;
        qr_params(ctx, op).await;
    }
    if let Some(op) = ctx.op("deactivatePartner") {
        deactivate(ctx, op).await;
    }
}

/// How an answer fares when the string was not checked for being honoured: served, or
/// rejected cleanly, both hold.
fn clean(x: &Exchange, what: &str) -> Judged {
    let Some(r) = x.resp() else {
        return Judged::Fail(answer_text(x));
    };
    match r.status {
        429 => Judged::Throttled,
        s if s >= 500 || (s >= 400 && !is_envelope(r)) => {
            Judged::Fail(format!("{} for {what}", answer_text(x)))
        }
        // 403: a plan without a paid-only parameter (logo), refused as `plan.paid-params-safe`
        // allows.
        400 | 403 | 422 => Judged::Pass(format!("{what}: rejected with {}", answer_text(x))),
        s if (200..300).contains(&s) => Judged::Pass(format!("{what}: accepted")),
        _ => Judged::Fail(format!("{} for {what}", answer_text(x))),
    }
}

/// The url, with each hostile string in its path and query: a QR code of exactly that url.
async fn qr_url(ctx: &Ctx, op: &Operation) {
    let id = check_id!("http.chars");
    let Some(key) = ctx.key_for(op).cloned() else {
        return;
    };
    for (what, s) in hostile() {
        let url = format!("https://example.com/{s}");
        let req = Req::new(op.method.clone(), &op.path)
            .query("url", url.clone())
            .key(&key);
        let (x, _) = ctx.exchange(op, req, Expect::Any).await;
        let what = format!("url with {what}");
        let j = match x.resp() {
            Some(r) if r.is_success() => honoured(&r.body, &url, &what),
            _ => clean(&x, &what),
        };
        record(
            ctx,
            id,
            &op.label(),
            "the url encoded exactly, or a clean rejection",
            j,
            &x,
        );
    }
}

/// A served QR code holds the url sent, byte for byte.
fn honoured(png: &[u8], url: &str, what: &str) -> Judged {
    let inspected = inspect_png(png, Rgb([0, 0, 0]), Rgb([255, 255, 255]));
    match inspected.map(|i| i.decoded) {
        Ok(Ok(d)) if d.content == url.as_bytes() => {
            Judged::Pass(format!("{what}: encoded exactly"))
        }
        Ok(Ok(d)) => Judged::Fail(format!(
            "a QR code of {:?}, not of the url sent {url:?} ({what})",
            String::from_utf8_lossy(&d.content)
        )),
        // Readability is the `qr` family's: here only what it says, when it says it.
        Ok(Err(e)) => Judged::Observe(format!("{what}: served, the code unread ({e})")),
        Err(e) => Judged::Fail(format!("a 200 whose body is not an image ({e}) for {what}")),
    }
}

/// logo, fgColor and bgColor with hostile strings: accepted or rejected cleanly (what a
/// colour that is not hex means, the spec does not say).
async fn qr_params(ctx: &Ctx, op: &Operation) {
    let id = check_id!("http.chars");
    let Some(key) = ctx.key_for(op).cloned() else {
        return;
    };
    let strings = hostile();
    let names: Vec<&str> = ["logo", "fgColor", "bgColor"]
        .into_iter()
        .filter(|n| op.params.iter().any(|p| p.name == *n))
        .collect();
    // Each parameter meets every string over a few runs; one run sends each string once.
    for (i, (what, s)) in strings.iter().enumerate() {
        let Some(name) = names.get((i + ctx.opts.seed as usize) % names.len().max(1)) else {
            return;
        };
        let value = match *name {
            "logo" => format!("https://example.com/logo.png?{s}"),
            _ => format!("#000{s}"),
        };
        let req = minimal_request(op).query(name, value).key(&key);
        let (x, _) = ctx.exchange(op, req, Expect::Any).await;
        let what = format!("{name} with {what}");
        let j = clean(&x, &what);
        record(
            ctx,
            id,
            &op.label(),
            "accepted, or a clean rejection",
            j,
            &x,
        );
    }
}

/// partnerId and tenantId with hostile strings: no partner has them, so 404, or a clean
/// rejection; a 200 deactivated a partner nobody named.
async fn deactivate(ctx: &Ctx, op: &Operation) {
    let id = check_id!("http.chars");
    let Some(key) = ctx.key_for(op).cloned() else {
        ctx.rec
            .skip(id, &op.label(), "no key of a plan that may deactivate");
        return;
    };
    let mut strings = hostile();
    strings.push(("an identifier of 5000 characters", "9'".repeat(LONG_ID / 2)));
    for field in ["partnerId", "tenantId"] {
        for (what, s) in &strings {
            let value = format!("pn_linkcert_absent_{s}");
            let req = Req::new(op.method.clone(), &op.path)
                .body(
                    "application/json",
                    json!({ field: value }).to_string().into_bytes(),
                )
                .key(&key);
            let (x, _) = ctx.exchange(op, req, Expect::Any).await;
            let what = format!("{field} with {what}");
            let j = match x.resp() {
                // Its code is `envelope.code`'s to judge.
                Some(r) if r.status == 404 && is_envelope(r) => {
                    Judged::Pass(format!("{what}: {}", answer_text(&x)))
                }
                Some(r) if r.is_success() => Judged::Fail(format!(
                    "{} for {what}: a partner nobody has was deactivated",
                    r.status
                )),
                _ => clean(&x, &what),
            };
            let expected = "404 not_found (no such partner), or a clean rejection";
            record(ctx, id, &op.label(), expected, j, &x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{BAD, fails, x};
    use super::*;
    use http::Method;

    #[test]
    fn hostile_strings_carry_no_nul_and_stay_bounded() {
        for (what, s) in hostile() {
            assert!(!s.contains('\0'), "{what}");
            assert!(s.len() < 1000, "{what}");
        }
    }

    #[test]
    fn served_or_rejected_cleanly_holds_and_a_5xx_fails() {
        assert!(matches!(
            clean(&x(Method::GET, 200, &[], ""), "w"),
            Judged::Pass(_)
        ));
        assert!(matches!(
            clean(&x(Method::GET, 422, &[], BAD), "w"),
            Judged::Pass(_)
        ));
        assert!(fails(&clean(&x(Method::GET, 500, &[], BAD), "w")));
        assert!(fails(&clean(
            &x(Method::GET, 400, &[], "syntax error at or near"),
            "w"
        )));
        assert!(fails(&clean(&x(Method::GET, 302, &[], ""), "w")));
        assert!(fails(&honoured(b"not a png", "u", "w")));
    }
}
