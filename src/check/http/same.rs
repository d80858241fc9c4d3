//! Whether an answer to a request a client dressed differently (a header, a slash, an unknown
//! parameter) is the answer the plain request got, or a clean error: what `http.client-headers`
//! and `http.shapes` judge by. "The same" is what a client reads: the status, the tags' ids and
//! names (fields beyond them are the target's), the QR's symbol, an error's code.

use super::{Judged, answer_text};
use crate::check::probe::Exchange;
use crate::http::{Resp, error_code, is_envelope};
use crate::qr::{Rgb, inspect_png};

/// What the plain answer's body is, for comparing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Body {
    /// A JSON array of tags: their ids and names, in order.
    Tags,
    /// A PNG holding a QR code: its size and the payload decoded.
    Image,
    /// Any JSON: equal as values.
    Json,
}

/// Encodings `http::body` inflates; the body of any other came as it was sent.
fn inflated(r: &Resp) -> bool {
    r.header("content-encoding").is_none_or(|e| {
        matches!(
            e.trim().to_ascii_lowercase().as_str(),
            "" | "identity" | "gzip" | "x-gzip" | "deflate"
        )
    })
}

fn tags(r: &Resp) -> Option<Vec<(String, String)>> {
    let v = r.json()?;
    v.as_array()?
        .iter()
        .map(|t| {
            let s = |k: &str| t.get(k).map(|x| x.to_string());
            Some((s("id")?, s("name")?))
        })
        .collect()
}

/// The image's size and the QR payload, when it decodes.
fn symbol(r: &Resp) -> Option<(u32, u32, Vec<u8>)> {
    let i = inspect_png(&r.body, Rgb([0, 0, 0]), Rgb([255, 255, 255])).ok()?;
    let d = i.decoded.ok()?;
    Some((i.width, i.height, d.content))
}

/// Why two successful bodies differ for a client, or None when they do not.
pub(super) fn differs(kind: Body, base: &Resp, r: &Resp) -> Option<String> {
    if base.body == r.body {
        return None;
    }
    match kind {
        Body::Tags => match (tags(base), tags(r)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(a), Some(b)) => Some(format!(
                "{} tags, not the {} of the plain request",
                b.len(),
                a.len()
            )),
            _ => Some("a body that is not an array of tags".into()),
        },
        Body::Image => match (symbol(base), symbol(r)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(_), Some((w, h, _))) => Some(format!(
                "a {w}x{h} image whose QR code differs from the plain request's"
            )),
            _ => Some("an image that is not the plain request's QR code".into()),
        },
        Body::Json => match (base.json(), r.json()) {
            (Some(a), Some(b)) if a == b => None,
            _ => Some("another body than the plain request's".into()),
        },
    }
}

/// `x` (the dressed request) against `base` (the plain one's answer): the same answer, a
/// clean error (an error in the envelope, a redirect), or a failure.
pub(super) fn judge(kind: Body, base: &Resp, x: &Exchange, dressed: &str) -> Judged {
    let Some(r) = x.resp() else {
        return Judged::Fail(answer_text(x));
    };
    let s = r.status;
    if s == 429 {
        return Judged::Throttled;
    }
    if s >= 500 || (s >= 400 && !is_envelope(r)) {
        return Judged::Fail(format!("{} for {dressed}", answer_text(x)));
    }
    if (300..400).contains(&s) {
        return match r.header("location") {
            Some(l) => Judged::Pass(format!("{dressed}: redirected ({s}) to {l}")),
            None => Judged::Fail(format!("{s} without a Location for {dressed}")),
        };
    }
    if s >= 400 {
        if s == base.status && error_code(r) == error_code(base) {
            return Judged::Pass(format!("{dressed}: the plain request's answer"));
        }
        return Judged::Pass(format!("{dressed}: refused with {}", answer_text(x)));
    }
    if s != base.status {
        return Judged::Fail(format!(
            "{s} for {dressed}, not the plain request's {}",
            base.status
        ));
    }
    if !inflated(r) {
        return Judged::Observe(format!(
            "{dressed}: answered with Content-Encoding {} (not compared)",
            r.header("content-encoding").unwrap_or_default()
        ));
    }
    match differs(kind, base, r) {
        None => Judged::Pass(format!("{dressed}: the plain request's answer")),
        Some(why) => Judged::Fail(format!("{why}, for {dressed}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{NF, fails, x};
    use super::*;
    use http::Method;

    #[test]
    fn the_same_tags_a_clean_error_or_a_redirect_hold() {
        let base = x(Method::GET, 200, &[], r#"[{"id":"t1","name":"a"}]"#);
        let base = base.resp().unwrap();
        let j = |s, h: &[(&str, &str)], b| judge(Body::Tags, base, &x(Method::GET, s, h, b), "H");
        let extra = r#"[{"id":"t1","name":"a","color":"red"}]"#;
        assert!(matches!(j(200, &[], extra), Judged::Pass(_)));
        assert!(fails(&j(200, &[], "[]")), "another list");
        assert!(fails(&j(500, &[], NF)));
        assert!(fails(&j(404, &[], "")), "an error outside the envelope");
        assert!(matches!(j(404, &[], NF), Judged::Pass(_)));
        assert!(matches!(
            j(308, &[("location", "/tags")], ""),
            Judged::Pass(_)
        ));
        assert!(fails(&j(204, &[], "")), "another success");
        assert!(matches!(
            j(200, &[("content-encoding", "br")], "xx"),
            Judged::Observe(_)
        ));
        assert_eq!(j(429, &[], NF), Judged::Throttled);
    }
}
