//! `check` and `load` see the same fault in the same rate-limit headers.

use std::time::Duration;

use linkcert_http::Resp;
use linkcert_rate::headers::{HeaderFault, LIMIT, ON_EVERY_ANSWER, REMAINING, RESET, header_fault};

use super::Record;

#[test]
fn a_limit_of_abc_is_a_fault_for_check_and_for_load_alike() {
    let spec = linkcert_spec::Spec::embedded().unwrap();
    let named: Vec<String> = spec
        .rate_headers
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    assert_eq!(
        named, ON_EVERY_ANSWER,
        "load records what the spec requires"
    );
    let values = [(LIMIT, "abc"), (REMAINING, "3"), (RESET, "1800000030")];
    // `check`: the answer as the probe read it, the names as the spec lists them.
    let resp = Resp {
        status: 200,
        headers: values
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: Vec::new(),
        truncated: false,
        elapsed: Duration::ZERO,
    };
    let by_check = header_fault(&spec.rate_headers, |n| resp.header(n));
    // `load`: the answer as the engine recorded it.
    let rec = Record {
        status: Some(200),
        limit: Some("abc".into()),
        remaining: Some("3".into()),
        reset: Some("1800000030".into()),
        ..Record::slot(0, 0, 0.0)
    };
    let by_load = header_fault(&ON_EVERY_ANSWER, |n| rec.rate_header(n));
    let fault = |name: &str| HeaderFault::NotInteger {
        name: name.into(),
        value: "abc".into(),
    };
    assert_eq!(by_check, Some(fault("X-RateLimit-Limit")));
    assert_eq!(by_load, Some(fault(LIMIT)));
    // Absent is a fault too, and integers (space-padded) are none.
    assert_eq!(
        header_fault(&ON_EVERY_ANSWER, |n| (n != RESET).then_some(" 7 ")),
        Some(HeaderFault::Absent { name: RESET.into() })
    );
    assert_eq!(header_fault(&ON_EVERY_ANSWER, |_| Some("7")), None);
}

/// Every value of a rate-limit field given twice is kept with its name; a field given once is
/// read as its first value, and leaves `repeated` empty.
#[test]
fn a_rate_field_given_twice_is_kept_with_every_value() {
    let mut h = http::HeaderMap::new();
    h.insert("x-ratelimit-limit", http::HeaderValue::from_static("60"));
    h.append("x-ratelimit-remaining", http::HeaderValue::from_static("5"));
    let mut r = Record {
        status: Some(200),
        ..Record::slot(0, 0, 0.0)
    };
    r.read_rate_fields(&h);
    assert_eq!(
        (r.limit.as_deref(), r.remaining.as_deref()),
        (Some("60"), Some("5"))
    );
    assert_eq!(r.repeated, None);
    h.append("x-ratelimit-remaining", http::HeaderValue::from_static("4"));
    r.read_rate_fields(&h);
    assert_eq!(r.remaining.as_deref(), Some("5"));
    assert_eq!(r.repeated.as_deref(), Some("x-ratelimit-remaining: 5, 4"));
}

/// What a record of a forbidden request counts as: a clean refusal (400 or 422 in the
/// envelope) is refused and may have spent quota; an admission spent it; nothing else did.
#[test]
fn a_forbidden_requests_clean_refusal_is_refused_and_spent_and_nothing_else_is() {
    let rec = |forbidden: bool, status: u16, code: Option<&str>| Record {
        forbidden,
        status: Some(status),
        code: code.map(str::to_string),
        ..Record::slot(0, 0, 0.0)
    };
    let cases = [
        (rec(true, 400, Some("bad_request")), true, true),
        (rec(true, 422, Some("unprocessable_entity")), true, true),
        (rec(true, 400, None), false, false),
        (rec(true, 500, Some("internal_server_error")), false, false),
        (rec(true, 429, Some("rate_limit_exceeded")), false, false),
        (rec(false, 400, Some("bad_request")), false, false),
        (rec(true, 200, None), false, true),
        (rec(false, 200, None), false, true),
    ];
    for (i, (r, refused, spent)) in cases.iter().enumerate() {
        assert_eq!((r.refused(), r.spent()), (*refused, *spent), "case {i}");
    }
}
