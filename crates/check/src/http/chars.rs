//! `http.chars`: every string parameter and field (the QR's url, logo, fgColor, bgColor; a
//! deactivation's partnerId and tenantId) drawn from characters that mean something to the
//! layers behind an API: SQL quotes and comments, LIKE wildcards, shell substitution, URL
//! delimiters, control characters, right-to-left and combining marks, 4-byte characters, and
//! length. Each is honoured (a QR code whose payload is the url sent, byte for byte or as
//! the WHATWG URL standard serialises it, a payload escaped otherwise but decoding to the same
//! URL observed; an unknown partner's deactivation answered 404) or rejected cleanly (a 4xx the spec lists,
//! in the envelope); a 5xx or an error outside the envelope fails.

use serde_json::json;

use super::{Judged, answer_text, record};
use crate::Ctx;
use crate::auth::minimal_request;
use crate::cases::hostile_strings as hostile;
use crate::conformance::Expect;
use crate::probe::{Exchange, Req};
use linkcert_http::{is_envelope, refused_cleanly};
use linkcert_qr_read::{Rgb, inspect_png};
use linkcert_registry::check_id;
use linkcert_spec::{ErrorTable, Operation};

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
/// rejected cleanly (any 4xx the spec's error table lists, in the envelope), both hold.
fn clean(x: &Exchange, what: &str, errors: &ErrorTable) -> Judged {
    let Some(r) = x.resp() else {
        return Judged::Fail(answer_text(x));
    };
    match r.status {
        429 => Judged::Throttled,
        s if s >= 500 || (s >= 400 && !is_envelope(r)) => {
            Judged::Fail(format!("{} for {what}", answer_text(x)))
        }
        // 401 says the (valid) key was not: that is `auth`'s to judge, and no rejection of the
        // string. Any other listed 4xx is a refusal the spec allows: 403 for a paid-only
        // parameter (as `plan.paid-params-safe` allows), 404 for a logo the target fetched and
        // did not find, 400/422 for a value it will not take.
        s if s != 401 && errors.code(s).is_some() && refused_cleanly(r, &[s]) => {
            Judged::Pass(format!("{what}: rejected with {}", answer_text(x)))
        }
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
            _ => clean(&x, &what, &ctx.spec.errors),
        };
        record(
            ctx,
            id,
            &op.label(),
            "the url encoded (exactly, or as the same URL), or a clean rejection",
            j,
            &x,
        );
    }
}

/// A served QR code holds the url sent: byte for byte, or the same URL as the WHATWG URL
/// standard reads both (what a target that canonicalises the url with a URL library encodes).
fn honoured(png: &[u8], url: &str, what: &str) -> Judged {
    let inspected = inspect_png(png, Rgb([0, 0, 0]), Rgb([255, 255, 255]));
    match inspected.map(|i| i.decoded) {
        Ok(Ok(d)) if d.content == url.as_bytes() => {
            Judged::Pass(format!("{what}: encoded exactly"))
        }
        Ok(Ok(d)) => {
            let payload = String::from_utf8_lossy(&d.content);
            match same_url(url, &payload) {
                Some(Sameness::Serialised) => Judged::Pass(format!(
                    "{what}: encoded as the url's WHATWG serialisation {payload:?}"
                )),
                Some(Sameness::Decoded) => Judged::Observe(format!(
                    "{what}: encoded as {payload:?}, the url sent {url:?} with its \
                     percent-encoding changed (the same URL decoded)"
                )),
                None => Judged::Fail(format!(
                    "a QR code of {payload:?}, not of the url sent {url:?} ({what})"
                )),
            }
        }
        // Readability is the `qr` family's: here only what it says, when it says it.
        Ok(Err(e)) => Judged::Observe(format!("{what}: served, the code unread ({e})")),
        Err(e) => Judged::Fail(format!("a 200 whose body is not an image ({e}) for {what}")),
    }
}

/// How a payload that is not the url's bytes is still the url.
#[derive(Debug, PartialEq, Eq)]
enum Sameness {
    /// Both parse (WHATWG) to the same serialisation.
    Serialised,
    /// Serialised differently, but the same scheme, authority, path segments, query and
    /// fragment once each is percent-decoded: a choice of escaping, not another URL.
    Decoded,
}

/// Whether `payload` is the URL `sent` means; None when it names another (another host, other
/// path segments, query or fragment, or cut short) or does not parse.
fn same_url(sent: &str, payload: &str) -> Option<Sameness> {
    let a = url::Url::parse(sent).ok()?;
    let b = url::Url::parse(payload).ok()?;
    if a.as_str() == b.as_str() {
        return Some(Sameness::Serialised);
    }
    (url_parts(&a) == url_parts(&b)).then_some(Sameness::Decoded)
}

/// A URL's parts, each percent-decoded: path segments apart (an encoded `/` is not a
/// separator), the query by its `&`-separated pieces.
fn url_parts(u: &url::Url) -> Vec<Vec<Vec<u8>>> {
    let dec = |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
    let list = |it: Option<Vec<&str>>| match it {
        Some(v) => v.into_iter().map(dec).collect(),
        None => vec![b"<none>".to_vec()],
    };
    vec![
        vec![u.scheme().as_bytes().to_vec(), dec(u.username())],
        list(u.password().map(|p| vec![p])),
        list(u.host_str().map(|h| vec![h])),
        vec![
            u.port_or_known_default()
                .unwrap_or(0)
                .to_be_bytes()
                .to_vec(),
        ],
        list(u.path_segments().map(Iterator::collect)),
        list(u.query().map(|q| q.split('&').collect())),
        list(u.fragment().map(|f| vec![f])),
    ]
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
        let j = clean(&x, &what, &ctx.spec.errors);
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
                Some(r) if refused_cleanly(r, &[404]) => {
                    Judged::Pass(format!("{what}: {}", answer_text(&x)))
                }
                Some(r) if r.is_success() => Judged::Fail(format!(
                    "{} for {what}: a partner nobody has was deactivated",
                    r.status
                )),
                _ => clean(&x, &what, &ctx.spec.errors),
            };
            let expected = "404 not_found (no such partner), or a clean rejection";
            record(ctx, id, &op.label(), expected, j, &x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{BAD, NF, fails, x};
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
            clean(&x(Method::GET, 200, &[], ""), "w", &errors()),
            Judged::Pass(_)
        ));
        assert!(matches!(
            clean(&x(Method::GET, 422, &[], BAD), "w", &errors()),
            Judged::Pass(_)
        ));
        assert!(fails(&clean(
            &x(Method::GET, 500, &[], BAD),
            "w",
            &errors()
        )));
        assert!(fails(&clean(
            &x(Method::GET, 400, &[], "syntax error at or near"),
            "w",
            &errors()
        )));
        assert!(fails(&clean(&x(Method::GET, 302, &[], ""), "w", &errors())));
        assert!(fails(&honoured(b"not a png", "u", "w")));
        assert!(matches!(
            clean(&x(Method::GET, 404, &[], NF), "w", &errors()),
            Judged::Pass(_)
        ));
        assert!(fails(&clean(&x(Method::GET, 404, &[], ""), "w", &errors())));
        assert!(fails(&clean(
            &x(Method::GET, 401, &[], BAD),
            "w",
            &errors()
        )));
        assert!(fails(&clean(
            &x(Method::GET, 418, &[], BAD),
            "w",
            &errors()
        )));
    }

    fn errors() -> ErrorTable {
        let codes = [
            (400, "bad_request"),
            (401, "unauthorized"),
            (403, "forbidden"),
            (404, "not_found"),
            (422, "unprocessable_entity"),
        ];
        ErrorTable {
            docs: String::new(),
            codes: codes.iter().map(|(s, c)| (*s, c.to_string())).collect(),
        }
    }

    #[test]
    fn a_canonicalised_url_holds_and_another_url_fails() {
        let s = |a: &str, b: &str| same_url(a, b);
        let sent = "https://example.com/a#frag?x=1+2&y=a b/../c";
        let whatwg = "https://example.com/a#frag?x=1+2&y=a%20b/../c";
        assert_eq!(s(sent, whatwg), Some(Sameness::Serialised));
        assert_eq!(
            s("https://example.com/a\\b", "https://example.com/a/b"),
            Some(Sameness::Serialised)
        );
        assert_eq!(
            s(
                "https://example.com/it's%20x",
                "https://example.com/it%27s%20x"
            ),
            Some(Sameness::Decoded)
        );
        assert_eq!(
            s("https://example.com/%41", "https://example.com/A"),
            Some(Sameness::Decoded)
        );
        // Cut at the fragment, a segment split, another host, a query piece split: another URL.
        assert_eq!(s(sent, "https://example.com/a"), None);
        assert_eq!(
            s("https://example.com/a%2Fb", "https://example.com/a/b"),
            None
        );
        assert_eq!(
            s("https://example.com/%2541", "https://example.com/%41"),
            None
        );
        assert_eq!(s("https://example.com/a", "https://example.org/a"), None);
        assert_eq!(
            s("https://example.com/?a=%26b", "https://example.com/?a=&b"),
            None
        );
        assert_eq!(s("https://example.com/a", "not a url"), None);
    }
}
