//! What a request that got no answer ran into, in words, and whose side it was on.

use std::error::Error;

/// reqwest errors name their source chain; keep it, it says what broke.
pub fn describe(e: &reqwest::Error) -> String {
    let head = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    // reqwest's own message is the URL; its sources say what happened.
    with_causes(head, e.source())
}

/// `head`, then `cause` and each of its sources, as `describe` words every failure, then
/// what it says about the target (`explain`).
pub(super) fn with_causes(head: &str, cause: Option<&(dyn Error + 'static)>) -> String {
    let mut s = head.to_string();
    let mut src = cause;
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    explain(s)
}

/// Whether a failure described by `describe` (and `explain`) was an answer of sorts that broke
/// HTTP: bytes that are not HTTP or TLS, a head too large. The target is there, answering badly.
pub fn is_bad_answer(described: &str) -> bool {
    [BAD_HEAD, NOT_HTTP, NOT_TLS]
        .iter()
        .any(|w| described.contains(w))
}

const BAD_HEAD: &str = "the answer's head was larger than this client reads (about 400 KB of headers in \
         check, 64 KB in load, or more than 100 of them): the target sent too many or too \
         large headers";
const NOT_HTTP: &str = "the target sent bytes that are not HTTP (an https:// port reached with http://, or \
         the reverse?)";
const NOT_TLS: &str = "the TLS handshake met bytes that are not TLS (an http:// port reached with \
         https://?)";

/// The words of a parser or TLS failure, followed by what the target did in plain words and
/// the likely mistake. Not an outage: asking again would get the same.
pub fn explain(described: String) -> String {
    let l = described.to_ascii_lowercase();
    let what = if l.contains("message head is too large") || l.contains("too many headers") {
        BAD_HEAD
    } else if [
        "invalid http version",
        "invalid http status",
        "invalid http header",
        "invalid response",
        "http/0.9",
    ]
    .iter()
    .any(|m| l.contains(m))
    {
        NOT_HTTP
    } else if l.contains("invalidcontenttype") || l.contains("corrupt message") {
        NOT_TLS
    } else {
        return described;
    };
    format!("{described}: {what}")
}

/// Whether a failure described by `describe` was the machine sending it running out of
/// sockets, files or ports (the client's limit, not the target's answer).
pub fn is_local_refusal(described: &str) -> bool {
    const LOCAL: [&str; 8] = [
        "Too many open files",
        "os error 24",
        "Cannot assign requested address",
        "os error 99",
        "No buffer space available",
        "os error 105",
        "Too many open files in system",
        "os error 23",
    ];
    LOCAL.iter().any(|m| described.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_sockets_is_ours_and_a_refused_connection_is_not() {
        assert!(is_local_refusal(
            "could not connect: client error (Connect): tcp connect error: Too many open files (os error 24)"
        ));
        assert!(is_local_refusal(
            "could not connect: tcp connect error: Cannot assign requested address (os error 99)"
        ));
        assert!(!is_local_refusal(
            "could not connect: tcp connect error: Connection refused (os error 111)"
        ));
        assert!(!is_local_refusal("timed out: operation timed out"));
    }

    #[test]
    fn parser_failures_name_what_the_target_sent() {
        assert!(
            explain("request failed: invalid HTTP version parsed".into())
                .ends_with("not HTTP (an https:// port reached with http://, or the reverse?)")
        );
        assert!(
            explain("request failed: message head is too large".into())
                .contains("too many or too large headers")
        );
        assert_eq!(explain("timed out".into()), "timed out");
        assert!(is_bad_answer(&explain(
            "request failed: invalid HTTP version parsed".into()
        )));
        assert!(!is_bad_answer("timed out"));
    }
}
