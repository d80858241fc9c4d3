//! Whether an answer to a request a client dressed differently (a header, a slash, an unknown
//! parameter) is the answer the plain request got, or a clean error: what `http.client-headers`
//! and `http.shapes` judge by. "The same" is what a client reads: the status, the tags' ids and
//! names (fields beyond them are the target's) as a set, the QR's symbol, an error's code.
//!
//! Tags are compared as a set: the order of a list asked for without a sort is not shown (a
//! map or a query without ORDER BY answers in any order). Which tags make up the page is judged
//! only when the plain answer held the whole list (`service::holds`): a page of a longer,
//! unordered list may hold other tags each time, so then only their number is.

use super::{Judged, answer_text};
use crate::probe::Exchange;
use crate::service::tags_of;
use linkcert_http::{Resp, error_code, is_envelope};
use linkcert_qr_read::{Rgb, inspect_png};

/// What the plain answer's body is, for comparing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Body {
    /// A JSON array of tags: their ids and names, as a set; `whole` when the plain answer held
    /// every tag (then which tags is judged, else only how many).
    Tags { whole: bool },
    /// A PNG holding a QR code: its size and the payload decoded.
    Image,
    /// Any JSON: equal as values.
    Json,
}

/// Whether `http::body` decoded the body; that of another coding came as it was sent.
fn inflated(r: &Resp) -> bool {
    linkcert_http::decodes(r.header("content-encoding"))
}

/// How two successful bodies compare for a client.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Diff {
    Same,
    /// Not judged: the words say why.
    Unjudged(String),
    /// Another answer: the words say how.
    Other(String),
}

/// The image's size and the QR payload, when it decodes.
fn symbol(r: &Resp) -> Option<(u32, u32, Vec<u8>)> {
    let i = inspect_png(&r.body, Rgb([0, 0, 0]), Rgb([255, 255, 255])).ok()?;
    let d = i.decoded.ok()?;
    Some((i.width, i.height, d.content))
}

/// How two successful bodies compare for a client.
pub(super) fn differs(kind: Body, base: &Resp, r: &Resp) -> Diff {
    if base.body == r.body {
        return Diff::Same;
    }
    match kind {
        Body::Tags { whole } => match (tags_of(base), tags_of(r)) {
            (Some(a), Some(b)) if a == b => Diff::Same,
            (Some(a), Some(b)) if a.len() != b.len() => Diff::Other(format!(
                "{} tags, not the {} of the plain request",
                b.len(),
                a.len()
            )),
            (Some(_), Some(_)) if whole => {
                Diff::Other("other tags than the plain request's (the whole list)".into())
            }
            (Some(a), Some(_)) => Diff::Unjudged(format!(
                "{} tags as the plain request, others of a longer list (a page of an \
                 unsorted list: which tags, not shown)",
                a.len()
            )),
            _ => Diff::Other("a body that is not an array of tags".into()),
        },
        Body::Image => match (symbol(base), symbol(r)) {
            (Some(a), Some(b)) if a == b => Diff::Same,
            (Some(_), Some((w, h, _))) => Diff::Other(format!(
                "a {w}x{h} image whose QR code differs from the plain request's"
            )),
            _ => Diff::Other("an image that is not the plain request's QR code".into()),
        },
        Body::Json => match (base.json(), r.json()) {
            (Some(a), Some(b)) if a == b => Diff::Same,
            _ => Diff::Other("another body than the plain request's".into()),
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
        Diff::Same => Judged::Pass(format!("{dressed}: the plain request's answer")),
        Diff::Unjudged(why) => Judged::Observe(format!("{dressed}: {why}")),
        Diff::Other(why) => Judged::Fail(format!("{why}, for {dressed}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{NF, fails, x};
    use super::*;
    use crate::service::holds;
    use http::Method;

    #[test]
    fn the_same_tags_a_clean_error_or_a_redirect_hold() {
        let base = x(Method::GET, 200, &[], r#"[{"id":"t1","name":"a"}]"#);
        let base = base.resp().unwrap();
        let tags = Body::Tags { whole: true };
        let j = |s, h: &[(&str, &str)], b| judge(tags, base, &x(Method::GET, s, h, b), "H");
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
            j(200, &[("content-encoding", "compress")], "xx"),
            Judged::Observe(_)
        ));
        assert_eq!(j(429, &[], NF), Judged::Throttled);
    }

    #[test]
    fn tags_are_a_set_and_a_page_s_members_are_judged_only_on_the_whole_list() {
        let two = r#"[{"id":"t1","name":"a"},{"id":"t2","name":"b"}]"#;
        let base = x(Method::GET, 200, &[], two);
        let base = base.resp().unwrap();
        let j = |whole, b| {
            judge(
                Body::Tags { whole },
                base,
                &x(Method::GET, 200, &[], b),
                "H",
            )
        };
        let shuffled = r#"[{"id":"t2","name":"b"},{"id":"t1","name":"a"}]"#;
        let other = r#"[{"id":"t2","name":"b"},{"id":"t3","name":"c"}]"#;
        assert!(matches!(j(true, shuffled), Judged::Pass(_)));
        assert!(matches!(j(false, shuffled), Judged::Pass(_)));
        assert!(fails(&j(true, other)), "other tags than the whole list");
        assert!(
            matches!(j(false, other), Judged::Observe(_)),
            "another page"
        );
        assert!(fails(&j(false, r#"[{"id":"t1","name":"a"}]"#)), "fewer");
        let all = tags_of(base);
        assert!(holds(base, all.as_ref()));
        assert!(!holds(base, None));
    }
}
