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

/// `head`, then `cause` and each of its sources, as `describe` words every failure.
pub(super) fn with_causes(head: &str, cause: Option<&(dyn Error + 'static)>) -> String {
    let mut s = head.to_string();
    let mut src = cause;
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
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
}
