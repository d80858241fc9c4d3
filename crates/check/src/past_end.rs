//! One rule for a page past the last, for every check that may ask for one: the generated
//! cases (judged by `status`), every other request `conformance` judges (the walks, a page
//! beyond 64 bits) and `pagination.bounds` (pages known to lie past the last).
//!
//! A page number greater than 0 is valid however far past the last page it is (the spec:
//! "page: integer, greater than 0"). Past the last page a target answers 200 with no items, or
//! 404 `not_found` in the error envelope (every operation may answer 404: "Nothing matches the
//! request URI"). Which of the two is the target's choice: observed (`pagination.choices`),
//! never failed. A 200 with items past the last page, any other status, or a 404 outside the
//! envelope fails. The envelope's code is `envelope.code`'s to judge: a 404 with another code
//! fails there, once, not here too.

use serde_json::Value;

use linkcert_http::{Resp, refused_cleanly};
use linkcert_spec::Operation;

/// The status besides 200 a page past the last may get.
pub const NOT_FOUND: u16 = 404;

/// What a target answered for a page that may lie past the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PastEnd {
    /// 200 with no items.
    Empty,
    /// 404 in the error envelope (its code is `envelope.code`'s to judge, not this rule's).
    NotFound,
    /// 200 with items: right only for a page that is not past the last.
    Items(usize),
    /// A 2xx whose body is no JSON array (`schema.response` judges it).
    NotAList,
    /// Anything else.
    Other,
}

impl PastEnd {
    /// How `r` answered.
    pub fn of(r: &Resp) -> PastEnd {
        if r.is_success() {
            return match r.json() {
                Some(Value::Array(a)) if a.is_empty() => PastEnd::Empty,
                Some(Value::Array(a)) => PastEnd::Items(a.len()),
                _ => PastEnd::NotAList,
            };
        }
        if refused_cleanly(r, &[NOT_FOUND]) {
            return PastEnd::NotFound;
        }
        PastEnd::Other
    }

    /// Whether a page known to lie past the last may be answered so.
    pub fn allowed(self) -> bool {
        matches!(self, PastEnd::Empty | PastEnd::NotFound)
    }
}

/// Whether a request to `op` with this query asks for a page that may lie past the last: a
/// page number in decimal digits above the page parameter's minimum (the first page is there
/// even for an empty list).
pub fn may_lie_past_the_last(op: &Operation, query: &[(String, String)]) -> bool {
    let Some(page) = op.param_with_role("page") else {
        return false;
    };
    let first = page.bound("minimum").unwrap_or(1.0);
    query.iter().any(|(k, v)| {
        *k == page.name
            && !v.is_empty()
            && v.bytes().all(|b| b.is_ascii_digit())
            // Beyond u128 is past any last page too.
            && v.parse::<u128>().map_or(true, |n| n as f64 > first)
    })
}

/// What a page past the last must get, in a finding's words.
pub const EXPECTED: &str = "200 with no items, or 404 not_found in the error envelope";

/// The answer the spec allows besides a 2xx for a page that may lie past the last, in a
/// finding's words.
pub const ALSO: &str = "404 not_found in the error envelope, past the last page";

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, body: &str) -> Resp {
        Resp::json_answer(status, body)
    }

    #[test]
    fn any_page_number_after_the_first_may_lie_past_the_last() {
        let spec = linkcert_spec::Spec::embedded().unwrap();
        let tags = spec.operation("getTags").unwrap();
        let q = |v: &str| {
            vec![
                ("pageSize".to_string(), "5".to_string()),
                ("page".into(), v.into()),
            ]
        };
        for past in [
            "2",
            "1000",
            "2147483648",
            "99999999999999999999",
            "9".repeat(60).as_str(),
        ] {
            assert!(may_lie_past_the_last(tags, &q(past)), "{past}");
        }
        for not in ["1", "0", "-1", "abc", "1e3", "1.5", "", "+2", " 2"] {
            assert!(!may_lie_past_the_last(tags, &q(not)), "{not:?}");
        }
        assert!(!may_lie_past_the_last(tags, &[]));
        let qr = spec.operation("getQRCode").unwrap();
        assert!(!may_lie_past_the_last(qr, &q("2")));
    }

    #[test]
    fn past_the_last_page_an_empty_page_or_a_404_in_the_envelope() {
        let of = |s, b| PastEnd::of(&resp(s, b));
        assert_eq!(of(200, "[]"), PastEnd::Empty);
        let not_found = r#"{"error":{"code":"not_found","message":"m"}}"#;
        assert_eq!(of(404, not_found), PastEnd::NotFound);
        assert!(of(200, "[]").allowed() && of(404, not_found).allowed());
        // Failures: items, a 404 outside the envelope, another status. A 404 in the envelope
        // with another code is this rule's NotFound: `envelope.code` fails it, once.
        assert_eq!(of(200, r#"[{"id":"t"}]"#), PastEnd::Items(1));
        assert_eq!(of(404, "Not Found"), PastEnd::Other);
        let wrong = r#"{"error":{"code":"bad_request","message":"m"}}"#;
        assert_eq!(of(404, wrong), PastEnd::NotFound);
        let bad = r#"{"error":{"code":"bad_request","message":"page out of range"}}"#;
        assert_eq!(of(400, bad), PastEnd::Other);
        assert_eq!(of(200, "{}"), PastEnd::NotAList);
        for p in [PastEnd::Items(1), PastEnd::Other, PastEnd::NotAList] {
            assert!(!p.allowed(), "{p:?}");
        }
    }
}
