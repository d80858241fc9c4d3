//! Untrue IETF RateLimit fields, for the defect proxy (`broken`) in front of either
//! implementation: each rewrites the fields in the form the implementation writes them (the
//! reference draft -11's Lists, the variant draft -07's Dictionary). `check` (tests/it) and
//! `load` (tests/load) run the same ones.

use super::broken::{Answer, Defect};

/// Rewrites field `name` of an answer, when it has it, with `f` of its value.
pub fn rewrite(a: &mut Answer, name: &'static str, f: impl Fn(&str) -> String) {
    let Some(v) = a.headers.get(name).and_then(|v| v.to_str().ok()) else {
        return;
    };
    let new = f(v);
    a.set_header(name, new);
}

/// Every Integer of parameter or member `key` in a field's value, changed by `f`
/// (`"standard";q=60;w=6` with key `q`, or the Dictionary's `limit=60`).
pub fn param(value: &str, key: &str, f: impl Fn(u64) -> u64) -> String {
    let mut out = String::new();
    for (i, part) in value.split_inclusive([';', ',']).enumerate() {
        let lead = part.len() - part.trim_start().len();
        let (space, part) = part.split_at(lead);
        out.push_str(space);
        let rewritten = part.strip_prefix(&format!("{key}=")).and_then(|v| {
            let digits = v.chars().take_while(char::is_ascii_digit).count();
            let n: u64 = v[..digits].parse().ok()?;
            Some(format!("{key}={}{}", f(n), &v[digits..]))
        });
        // The first part is the member itself, never a parameter.
        match rewritten.filter(|_| i > 0 || !value.starts_with('"')) {
            Some(r) => out.push_str(&r),
            None => out.push_str(part),
        }
    }
    out
}

#[test]
fn the_defects_rewrite_only_the_parameter_they_name() {
    let d11 = r#""standard";r=59;t=6"#;
    assert_eq!(param(d11, "t", |t| t * 1000), r#""standard";r=59;t=6000"#);
    let d07 = "limit=60, remaining=59, reset=5";
    assert_eq!(param(d07, "t", |t| t * 1000), d07);
    assert_eq!(
        param(d07, "reset", |t| t * 1000),
        "limit=60, remaining=59, reset=5000"
    );
}

/// The quota a policy states, one more than the plan's: `q` (-11) or the Integer (-07).
pub fn quota_plus_one() -> Defect {
    Defect::after(|_, a| {
        rewrite(a, "ratelimit-policy", |v| {
            if v.contains("q=") {
                param(v, "q", |q| q + 1)
            } else {
                let (q, w) = v.split_once(';').expect("60;w=6");
                format!("{};{w}", q.parse::<u64>().expect("a quota") + 1)
            }
        })
    })
}

/// The units left three more than X-RateLimit-Remaining says.
pub fn remaining_plus_three() -> Defect {
    Defect::after(|_, a| {
        rewrite(a, "ratelimit", |v| {
            param(&param(v, "r", |r| r + 3), "remaining", |r| r + 3)
        })
    })
}

/// No X-RateLimit-Remaining, and fields whose units left never fall: only the key's history
/// shows them untrue.
pub fn remaining_stuck_alone() -> Defect {
    Defect::after(|_, a| {
        a.headers.remove("x-ratelimit-remaining");
        rewrite(a, "ratelimit", |v| {
            param(&param(v, "r", |_| 50), "remaining", |_| 50)
        })
    })
}

/// The reset in milliseconds.
pub fn reset_in_milliseconds() -> Defect {
    Defect::after(|_, a| {
        rewrite(a, "ratelimit", |v| {
            param(&param(v, "t", |t| t * 1000), "reset", |t| t * 1000)
        })
    })
}

/// A RateLimit field no draft writes: an unterminated String.
pub fn malformed() -> Defect {
    Defect::after(|_, a| rewrite(a, "ratelimit", |_| "\"standard;r=5".into()))
}
