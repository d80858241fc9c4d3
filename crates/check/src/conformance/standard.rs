//! What HTTP and the error envelope make of any answer, whatever check asked: statuses
//! outside the spec's list that are HTTP's own for the request (`standard_status`), and
//! whether an error's message explains (`message_fault`).

use super::{Exchange, OVERSIZED_BODY, Operation, Resp};

/// Why a status outside the spec's list is still standard HTTP for this request, if it is:
/// 405 with `Allow` for a method the path does not define (RFC 9110 15.5.6), 413 for a body
/// larger than any the operation needs (RFC 9110 15.5.14), a redirect with a Location for a
/// path other than the spec's (a trailing slash, another case: RFC 9110 15.4), 304 to a
/// conditional request (RFC 9110 15.4.5). `http.method`,
/// `http.body-size`, `http.shapes` and `http.neighbours` pass the same answers.
pub fn standard_status(op: &Operation, x: &Exchange, r: &Resp) -> Option<String> {
    let conditional = ["if-none-match", "if-modified-since"]
        .iter()
        .any(|h| x.req.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(h)));
    match r.status {
        304 if conditional => Some(
            "304 Not Modified to a conditional request (standard HTTP, RFC 9110; not in the \
             spec's list)"
                .into(),
        ),
        301 | 302 | 303 | 307 | 308 if x.req.path != op.path && r.header("location").is_some() => {
            Some(format!(
                "{} to {} for the path {} (a redirect for a path off the spec's: standard HTTP, \
                 RFC 9110; not in the spec's list)",
                r.status,
                r.header("location").unwrap_or_default(),
                x.req.path
            ))
        }
        405 if x.req.method != op.method && r.header("allow").is_some() => Some(
            "405 with Allow for a method the path does not define (standard HTTP, RFC 9110; \
             not in the spec's list)"
                .into(),
        ),
        413 if x
            .req
            .body
            .as_ref()
            .is_some_and(|b| b.len() >= OVERSIZED_BODY) =>
        {
            Some(
                "413 for a body larger than any the operation needs (standard HTTP, RFC 9110; not \
             in the spec's list)"
                    .into(),
            )
        }
        _ => None,
    }
}

/// Text that shows an error's message is the program's internals, not an explanation: a
/// stack trace or a database's own error.
const INTERNALS: [&str; 9] = [
    "Traceback (most recent call last)",
    "panicked at",
    "\n    at ",
    "Exception in thread",
    "SQLSTATE",
    "syntax error at or near",
    "ORA-",
    "SQLITE_",
    "NullPointerException",
];

/// What is wrong with an error's message, if anything: (non-strict, what). `asked` is the
/// request's own text (path, query, body): a message may quote it, whatever it holds.
pub fn message_fault(code: &str, message: &str, asked: &str) -> Option<(bool, String)> {
    let m = message.trim();
    if m.is_empty() {
        return Some((false, "an empty message".into()));
    }
    if m.eq_ignore_ascii_case(code) {
        return Some((true, format!("the code again ({m:?}), no explanation")));
    }
    INTERNALS
        .iter()
        .find(|i| message.contains(*i) && !asked.contains(*i))
        .map(|i| {
            (
                true,
                format!("the program's internals ({:?} in the message)", i.trim()),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_explains_in_text_a_person_reads() {
        let f = |code, m| message_fault(code, m, "/tags");
        assert_eq!(f("not_found", "No tag with id t_9"), None);
        assert_eq!(f("bad_request", "size: expected 32..4096\nsee docs"), None);
        assert!(matches!(f("bad_request", "  "), Some((false, _))));
        assert!(matches!(f("not_found", "NOT_FOUND"), Some((true, _))));
        let trace = "thread 'main' panicked at src/db.rs:12:5";
        assert!(matches!(f("internal_server_error", trace), Some((true, _))));
        let sql = "ERROR: syntax error at or near \"'\" (SQLSTATE 42601)";
        assert!(matches!(f("internal_server_error", sql), Some((true, _))));
        // Quoting what was asked is no leak, whatever it holds.
        let echoed = "no partner x SQLSTATE y";
        assert_eq!(
            message_fault("not_found", echoed, "{\"partnerId\":\"x SQLSTATE y\"}"),
            None
        );
    }
}
