//! What a request that got no answer ran into: classified once, where the client sees the
//! failure (`describe` for reqwest's, `BareError::failure` for the generator's, a body's
//! `BodyError`), and carried as data (`Failure`) to whoever decides: the outage watch, the
//! recorder, the judges. Only `Display` words it, so rewording a message changes no verdict.

use std::error::Error;
use std::fmt;

/// A request without an answer (or whose answer broke off), as data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// The answer's status, when its head came and its body then failed.
    pub status: Option<u16>,
    /// The client's own account (its error and that error's sources), for people.
    pub detail: String,
    /// What asking the target again found (the outage watch's words), for people.
    pub found: Option<String>,
}

/// What kind of failure: every decision about a failure is made on this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// Never sent: the run was asked to stop, the target is gone or broken, or its route was
    /// given up (`NotSent`). Judges nothing.
    NotSent(NotSent),
    /// This machine ran out of sockets, files or ports: the client's limit, nothing the
    /// target did.
    LocalLimit,
    /// An answer of sorts that broke HTTP: the target is there, answering badly.
    BadAnswer(BadAnswer),
    /// Nothing within the time allowed.
    Timeout,
    /// The connection closed while this request's body was still being sent.
    WriteFailed,
    /// Nothing listens: the connection was refused.
    Refused,
    /// Connected, then reset, closed or aborted before an answer.
    Reset,
    /// Answered, then the body stalled: it trickled, stopped arriving, or fell silent short
    /// of its Content-Length. Costs time, like a timeout.
    Stalled,
    /// Answered, then the body broke what every answer must be: longer than the spec allows,
    /// or a compressed body that does not inflate.
    BadBody,
    /// Anything else the client ran into.
    Other,
}

/// Why a request was not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotSent {
    /// The run was asked to stop (SIGINT, SIGTERM).
    Interrupted,
    /// The target turned out broken; nothing more is sent to it.
    TargetBroken,
    /// The target stopped answering.
    TargetGone,
    /// Its route (method and path) failed too often in a row and was given up.
    RouteGivenUp,
}

/// How an answer broke HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BadAnswer {
    /// More or larger headers than this client reads.
    HeadTooLarge,
    /// Bytes that are not HTTP.
    NotHttp,
    /// A TLS handshake that met bytes that are not TLS.
    NotTls,
}

impl FailureKind {
    /// A failure that cost time (a timeout, a stalled body): the target is asked at once
    /// whether it is still there, rather than after a streak.
    pub fn costly(self) -> bool {
        matches!(self, FailureKind::Timeout | FailureKind::Stalled)
    }
}

impl Failure {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            status: None,
            detail: detail.into(),
            found: None,
        }
    }

    /// A request never sent; `why` says what stopped it, for people.
    pub fn not_sent(why: NotSent, detail: impl Into<String>) -> Failure {
        Failure::new(FailureKind::NotSent(why), detail)
    }

    /// Whether the request was never sent (it judges nothing).
    pub fn was_not_sent(&self) -> bool {
        matches!(self.kind, FailureKind::NotSent(_))
    }

    /// This failure came after an answer with `status` (its body failed).
    pub fn after_status(mut self, status: u16) -> Failure {
        self.status = Some(status);
        self
    }

    /// What asking the target again found, carried for people.
    pub fn with_found(mut self, found: Option<String>) -> Failure {
        self.found = found;
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if wording::reworded() {
            return wording::write(self, f);
        }
        if let FailureKind::NotSent(_) = self.kind {
            return write!(f, "not sent: {}", self.detail);
        }
        if let Some(s) = self.status {
            write!(f, "answered {s}, then ")?;
        }
        f.write_str(&self.detail)?;
        if let FailureKind::BadAnswer(b) = self.kind {
            write!(f, ": {}", b.words())?;
        }
        if let Some(found) = &self.found {
            write!(f, "; {found}")?;
        }
        Ok(())
    }
}

impl BadAnswer {
    /// What the target did in plain words, and the likely mistake.
    pub fn words(self) -> &'static str {
        match self {
            BadAnswer::HeadTooLarge => {
                "the answer's head was larger than this client reads (about 400 KB of headers in \
                 check, 64 KB in load, or more than 100 of them): the target sent too many or too \
                 large headers"
            }
            BadAnswer::NotHttp => {
                "the target sent bytes that are not HTTP (an https:// port reached with http://, \
                 or the reverse?)"
            }
            BadAnswer::NotTls => {
                "the TLS handshake met bytes that are not TLS (an http:// port reached with \
                 https://?)"
            }
        }
    }
}

/// A reqwest failure, classified and worded with its source chain (reqwest's own message is
/// the URL; its sources say what happened).
pub fn describe(e: &reqwest::Error) -> Failure {
    let head = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    classified(head, e.is_timeout(), e.source())
}

/// `head`, then `cause` and each of its sources, classified by what they say. hyper, rustls
/// and the OS give their account of what they parsed or met only in words (hyper has no
/// accessor for a header it could not read, an io error's kind is not what a body write that
/// failed was), so `kind_of_words` reads them, once, here.
pub(super) fn classified(
    head: &str,
    timed_out: bool,
    cause: Option<&(dyn Error + 'static)>,
) -> Failure {
    let mut detail = head.to_string();
    let mut src = cause;
    while let Some(inner) = src {
        detail.push_str(": ");
        detail.push_str(&inner.to_string());
        src = inner.source();
    }
    let kind = if timed_out {
        FailureKind::Timeout
    } else {
        kind_of_words(&detail)
    };
    Failure::new(kind, detail)
}

/// What the words of a third-party error (hyper's, rustls', the OS's) say: the same reading for
/// every client of ours. A timeout is worded "timed out" by every client (reqwest's
/// `is_timeout` and the generator's own are named so above the cause).
pub(crate) fn kind_of_words(described: &str) -> FailureKind {
    let l = described.to_ascii_lowercase();
    const LOCAL: [&str; 8] = [
        "too many open files",
        "os error 24",
        "cannot assign requested address",
        "os error 99",
        "no buffer space available",
        "os error 105",
        "too many open files in system",
        "os error 23",
    ];
    let any = |words: &[&str]| words.iter().any(|w| l.contains(w));
    if any(&LOCAL) {
        FailureKind::LocalLimit
    } else if any(&["message head is too large", "too many headers"]) {
        FailureKind::BadAnswer(BadAnswer::HeadTooLarge)
    } else if any(&[
        "invalid http version",
        "invalid http status",
        "invalid http header",
        "invalid response",
        "http/0.9",
    ]) {
        FailureKind::BadAnswer(BadAnswer::NotHttp)
    } else if any(&["invalidcontenttype", "corrupt message"]) {
        FailureKind::BadAnswer(BadAnswer::NotTls)
    } else if any(&["timed out", "timeout"]) {
        FailureKind::Timeout
    } else if l.contains("error writing a body") {
        FailureKind::WriteFailed
    } else if l.contains("refused") {
        FailureKind::Refused
    } else if any(&["reset", "closed", "broken pipe", "eof", "aborted"]) {
        FailureKind::Reset
    } else {
        FailureKind::Other
    }
}

/// The plain words of a TLS handshake's failure, and what the target likely did
/// (`raw::raw_get`'s diagnosis, which is words for people).
pub fn explain_tls(described: String) -> String {
    match kind_of_words(&described) {
        FailureKind::BadAnswer(b) => format!("{described}: {}", b.words()),
        _ => described,
    }
}

/// A test-only wording of every failure: the suites run with it too, and must give the same
/// verdicts, streaks and exit codes (nothing decides on words). Set by the environment
/// variable `LINKCERT_TEST_REWORD_FAILURES=1`, read once per process.
pub mod wording {
    use std::sync::OnceLock;

    use super::{Failure, FailureKind};

    static REWORDED: OnceLock<bool> = OnceLock::new();

    pub fn reworded() -> bool {
        *REWORDED
            .get_or_init(|| std::env::var("LINKCERT_TEST_REWORD_FAILURES").is_ok_and(|v| v == "1"))
    }

    /// The same facts, other words: the kind's name and the client's detail, reversed.
    pub(super) fn write(x: &Failure, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match x.kind {
            FailureKind::NotSent(n) => format!("held back ({n:?})"),
            k => format!("{k:?}"),
        };
        let detail: String = x.detail.chars().rev().collect();
        write!(f, "[{kind}] {detail}")?;
        if let Some(s) = x.status {
            write!(f, " (after {s})")?;
        }
        if let Some(found) = &x.found {
            write!(f, " / {found}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_out_of_sockets_is_ours_and_a_refused_connection_is_not() {
        assert_eq!(
            kind_of_words(
                "could not connect: client error (Connect): tcp connect error: Too many open files (os error 24)"
            ),
            FailureKind::LocalLimit
        );
        assert_eq!(
            kind_of_words(
                "could not connect: tcp connect error: Cannot assign requested address (os error 99)"
            ),
            FailureKind::LocalLimit
        );
        assert_eq!(
            kind_of_words(
                "could not connect: tcp connect error: Connection refused (os error 111)"
            ),
            FailureKind::Refused
        );
        assert_eq!(
            kind_of_words("timed out: operation timed out"),
            FailureKind::Timeout
        );
        let emfile = std::io::Error::from_raw_os_error(24);
        assert_eq!(
            classified("could not connect", false, Some(&emfile)).kind,
            FailureKind::LocalLimit
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            classified("could not connect", false, Some(&refused)).kind,
            FailureKind::Refused
        );
        // A body write the target cut off by a reset is still a write that failed
        // (`http.body-size` reads it so), whatever the io error beneath says.
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(
            classified(
                "request failed: error writing a body to connection",
                false,
                Some(&reset)
            )
            .kind,
            FailureKind::WriteFailed
        );
        // A Content-Length hyper cannot read is no sign of bytes that are not HTTP.
        assert_eq!(
            kind_of_words("request failed: invalid content-length parsed"),
            FailureKind::Other
        );
    }

    #[test]
    fn transport_failures_are_read_from_the_client_s_words_where_nothing_typed_says() {
        for (e, k) in [
            (
                "could not connect: tcp connect error: Connection refused (os error 111)",
                FailureKind::Refused,
            ),
            (
                "request failed: connection closed before message completed",
                FailureKind::Reset,
            ),
            (
                "request failed: Connection reset by peer (os error 104)",
                FailureKind::Reset,
            ),
            (
                "request failed: error writing a body to connection: Broken pipe (os error 32)",
                FailureKind::WriteFailed,
            ),
            ("timed out: operation timed out", FailureKind::Timeout),
            (
                "request failed: invalid HTTP version parsed",
                FailureKind::BadAnswer(BadAnswer::NotHttp),
            ),
            ("request failed: something new", FailureKind::Other),
        ] {
            assert_eq!(kind_of_words(e), k, "{e}");
        }
    }

    #[test]
    fn parser_failures_name_what_the_target_sent() {
        let f = Failure::new(
            kind_of_words("request failed: invalid HTTP version parsed"),
            "request failed: invalid HTTP version parsed",
        );
        assert_eq!(f.kind, FailureKind::BadAnswer(BadAnswer::NotHttp));
        assert!(
            f.to_string()
                .ends_with("not HTTP (an https:// port reached with http://, or the reverse?)")
        );
        let head = kind_of_words("request failed: message head is too large");
        assert_eq!(head, FailureKind::BadAnswer(BadAnswer::HeadTooLarge));
        assert!(FailureKind::Timeout.costly() && FailureKind::Stalled.costly());
        assert!(!FailureKind::Refused.costly());
        assert_eq!(explain_tls("timed out".into()), "timed out");
    }

    #[test]
    fn a_failure_is_worded_with_its_status_and_what_asking_again_found() {
        let f = Failure::new(FailureKind::Stalled, "the body stopped arriving")
            .after_status(200)
            .with_found(Some("a fresh connection to GET / was refused".into()));
        assert_eq!(
            f.to_string(),
            "answered 200, then the body stopped arriving; a fresh connection to GET / was refused"
        );
        let n = Failure::not_sent(NotSent::TargetGone, "the target stopped answering");
        assert!(n.was_not_sent());
        assert_eq!(n.to_string(), "not sent: the target stopped answering");
    }
}
