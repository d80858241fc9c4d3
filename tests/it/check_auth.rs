//! `auth.mutations` in front of both implementations: keys compared loosely (by prefix,
//! ignoring case, trimmed) let mutated credentials in and fail it; the fault-free
//! implementations pass, and so do targets making either legal choice about the scheme's
//! case (RFC 9110: case-insensitive), refusing it with a 400 or accepting it.

use crate::common;

use axum::http::HeaderValue;
use common::broken::{
    Defect, Incoming, Row,
    Then::{Fails, NothingFails, Passes, Says},
    run_table,
};

/// The keys both implementations have (`tests/variant` uses the reference's strings).
const KEYS: [&str; 6] = [
    "lk_free_1",
    "lk_free_2",
    "lk_pro_1",
    "lk_business_1",
    "lk_advanced_1",
    "lk_enterprise_1",
];

/// The credential after `Bearer `, as the bytes came (a no-break space included).
fn presented(inc: &Incoming) -> Option<String> {
    let v = inc.headers.get("authorization")?;
    let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
    v.strip_prefix("Bearer ").map(str::to_string)
}

/// A proxy that lets in any credential `matches` pairs with a known key, as that key.
fn loose(matches: fn(&str, &str) -> bool) -> Defect {
    Defect::before(move |inc| {
        let Some(p) = presented(inc) else { return };
        if KEYS.contains(&p.as_str()) {
            return;
        }
        if let Some(k) = KEYS.iter().find(|k| matches(&p, k)) {
            inc.headers.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {k}")).unwrap(),
            );
        }
    })
}

fn by_prefix() -> Defect {
    loose(|p, k| p.len() >= 10 && k.len() >= 10 && p.as_bytes()[..10] == k.as_bytes()[..10])
}

fn ignoring_case() -> Defect {
    loose(|p, k| p.eq_ignore_ascii_case(k))
}

fn trimmed() -> Defect {
    loose(|p, k| p.trim() == k)
}

fn lower_case_scheme(inc: &Incoming) -> bool {
    inc.headers
        .get("authorization")
        .is_some_and(|v| v.as_bytes().starts_with(b"bearer "))
}

/// `bearer KEY` refused as a malformed header, in the envelope (the real service answers 400
/// to a header without `Bearer `).
fn lower_case_scheme_400() -> Defect {
    Defect::after(|inc, ans| {
        if lower_case_scheme(inc) {
            ans.status = 400;
            ans.body = br#"{"error":{"code":"bad_request","message":"the scheme must be Bearer"}}"#
                .to_vec();
            ans.set_header("content-type", "application/json");
        }
    })
}

/// `bearer KEY` accepted, in front of the variant too (which refuses it alone).
fn lower_case_scheme_accepted() -> Defect {
    Defect::before(|inc| {
        if lower_case_scheme(inc) {
            let v = String::from_utf8_lossy(inc.headers["authorization"].as_bytes())
                .replacen("bearer ", "Bearer ", 1);
            inc.headers
                .insert("authorization", HeaderValue::from_str(&v).unwrap());
        }
    })
}

/// The valid key taken from `?apiKey=` as well: another mechanism, which the spec (showing
/// one) does not exclude.
fn key_in_query_accepted() -> Defect {
    Defect::before(|inc| {
        if inc.headers.contains_key("authorization") {
            return;
        }
        let key = url::form_urlencoded::parse(inc.query.as_bytes())
            .find(|(k, _)| k == "apiKey")
            .map(|(_, v)| v.into_owned());
        if let Some(k) = key.filter(|k| KEYS.contains(&k.as_str())) {
            inc.headers.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {k}")).unwrap(),
            );
        }
    })
}

/// `Bearer`, whitespace, the valid key: a lenient separator, the key itself exact.
fn lenient_separator() -> Defect {
    Defect::before(|inc| {
        let Some(v) = inc.headers.get("authorization") else {
            return;
        };
        let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
        let Some(rest) = v.strip_prefix("Bearer") else {
            return;
        };
        let k = rest.trim_start_matches([' ', '\t']);
        if rest.len() > k.len() && KEYS.contains(&k) {
            inc.headers.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {k}")).unwrap(),
            );
        }
    })
}

const MUTATIONS: &[&str] = &["auth.mutations"];

const DEFECTS: &[Row] = &[
    Row::new(
        "no defect",
        Defect::none,
        MUTATIONS,
        &[NothingFails, Passes("auth.mutations")],
    ),
    Row::new(
        "a key accepted by its first 10 characters",
        by_prefix,
        MUTATIONS,
        &[
            Fails("auth.mutations"),
            Says("auth.mutations", "the key with its last character changed"),
        ],
    ),
    Row::new(
        "a key compared ignoring case",
        ignoring_case,
        MUTATIONS,
        &[
            Fails("auth.mutations"),
            Says("auth.mutations", "the key in the other letter case"),
        ],
    ),
    Row::new(
        "a key trimmed of whitespace",
        trimmed,
        MUTATIONS,
        &[
            Fails("auth.mutations"),
            Says("auth.mutations", "a no-break space after the key"),
        ],
    ),
    Row::new(
        "the valid key honoured in ?apiKey= (another mechanism)",
        key_in_query_accepted,
        &["auth"],
        &[
            NothingFails,
            Passes("auth.mutations"),
            Says("auth.choices", "the key in a query parameter"),
        ],
    ),
    Row::new(
        "the valid key honoured after Bearer and a tab (a lenient separator)",
        lenient_separator,
        &["auth"],
        &[
            NothingFails,
            Passes("auth.mutations"),
            Says("auth.choices", "a tab before the key"),
        ],
    ),
    Row::new(
        "the scheme in lower case refused with 400",
        lower_case_scheme_400,
        &["auth"],
        &[
            NothingFails,
            Passes("auth.mutations"),
            Says(
                "auth.choices",
                "the scheme in lower case: refused with 400 bad_request",
            ),
        ],
    ),
    Row::new(
        "the scheme in lower case accepted",
        lower_case_scheme_accepted,
        &["auth"],
        &[
            NothingFails,
            Passes("auth.mutations"),
            Says("auth.choices", "the scheme in lower case: accepted"),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loose_key_comparisons_fail_and_the_scheme_s_case_is_a_choice() {
    run_table(DEFECTS).await;
}
