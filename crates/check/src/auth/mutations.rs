//! `auth.mutations`: every key the target was given, mutated systematically, on every route
//! in turn: each mutation must be refused. "A missing or invalid credential gives status
//! 401"; a 400 or 422 in the envelope (a header the target reads as malformed, as the real
//! service answers without `Bearer `) is a refusal too. Only a mutated credential served (a
//! 2xx, a 403 or 404 that says the identity was known), a 5xx or an error outside the envelope
//! fails. The scheme's case is not mutated here: RFC 9110 makes it case-insensitive, and
//! `auth.choices` observes it.
//!
//! Two Authorization headers are ambiguous (RFC 9110 5.3: the field is not a list, so the
//! message is malformed, and servers commonly read the first): serving them is observed in
//! `auth.choices`, never failed. So are the valid key in a query parameter (another mechanism,
//! which the spec, showing one, does not exclude) and the valid key after `Bearer` and a tab
//! (a lenient separator): each carries the valid key, not a mutated one.

use serde_json::json;

use super::minimal_request;
use crate::Ctx;
use crate::conformance::Expect;
use crate::probe::Req;
use linkcert_http::{REJECTIONS, Resp, is_envelope, refused_cleanly};
use linkcert_registry::check_id;
use linkcert_spec::Operation;

/// Requests the check sends at most: every mutation of every key stays within it for the
/// usual six keys; beyond, keys take turns per mutation (every mutation still goes once).
const MAX_SENDS: usize = 110;
/// The operations whose shape the spec gives, which the mutations take turns on.
const ROUTES: [&str; 3] = ["getTags", "getQRCode", "deactivatePartner"];
/// What a mutated deactivation names: a partner no target has, so nothing changes if the
/// target lets the credential in (it then answers 404, which is what gives it away).
const ABSENT_PARTNER: &str = "pn_linkcert_auth_absent";

/// What a mutated request carries instead of a valid credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Carries {
    /// One Authorization header with this value.
    Header(String),
    /// Several Authorization headers, in this order.
    Headers(Vec<String>),
    /// No Authorization header; the key in this query parameter.
    Query(&'static str, String),
}

#[derive(Clone, Debug)]
pub(super) struct Mutation {
    pub what: &'static str,
    pub carries: Carries,
    /// Serving it is a choice HTTP leaves open (duplicated headers): observed, not failed.
    pub ambiguous: bool,
}

fn header(what: &'static str, value: String) -> Mutation {
    Mutation {
        what,
        carries: Carries::Header(value),
        ambiguous: false,
    }
}

/// Every byte of `s` as `%XX`: a target that percent-decodes the credential lets it in.
/// The key with every ASCII letter in the other case (`auth.required` sends it too).
/// A key that looks issued and was not: each letter and digit moved to the next of its class.
pub(crate) fn look_alike(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            '0'..='8' | 'a'..='y' | 'A'..='Y' => (c as u8 + 1) as char,
            '9' => '0',
            'z' => 'a',
            'Z' => 'A',
            c => c,
        })
        .collect()
}

pub(super) fn case_flipped(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn percent_encoded(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// Every mutation of `key`; `other` is a key of another plan, if the target was given one.
/// Never the key itself, nor any key in `known`.
pub(super) fn mutations(key: &str, other: Option<&str>, known: &[&str]) -> Vec<Mutation> {
    let chars: Vec<char> = key.chars().collect();
    let n = chars.len();
    let other_char = |c: char| if c == 'x' { 'y' } else { 'x' };
    let changed = |i: usize| -> String {
        let mut v = chars.clone();
        if let Some(c) = v.get_mut(i) {
            *c = other_char(*c);
        }
        v.into_iter().collect()
    };
    let flipped = case_flipped(key);
    let b = linkcert_run::target::authorization;
    let mut out = vec![
        header(
            "the key one character short",
            b(&chars[..n.saturating_sub(1)].iter().collect::<String>()),
        ),
        header("the key with one character appended", b(&format!("{key}x"))),
        header("the key with its first character changed", b(&changed(0))),
        header(
            "the key with a middle character changed",
            b(&changed(n / 2)),
        ),
        header(
            "the key with its last character changed",
            b(&changed(n.saturating_sub(1))),
        ),
        header("the key in the other letter case", b(&flipped)),
        header(
            "the first half of the key",
            b(&chars[..n / 2].iter().collect::<String>()),
        ),
        // A tab is not the space the spec puts after the scheme, but the key after it is the
        // valid one: a target lenient about the separator (RFC 9110's BWS-minded parsers)
        // lets a valid key in, which the spec does not exclude: observed, not failed.
        Mutation {
            what: "a tab before the key",
            carries: Carries::Header(format!("Bearer \t{key}")),
            ambiguous: true,
        },
        // HTTP strips whitespace at the end of a field value, so a trailing space never
        // reaches the target; a no-break space does, and a Unicode trim removes it.
        header(
            "a no-break space after the key",
            format!("Bearer {key}\u{a0}"),
        ),
        header("the key twice", b(&format!("{key}{key}"))),
        header("the key percent-encoded", b(&percent_encoded(key))),
        header("an empty quoted key", "Bearer \"\"".into()),
        header("Bearer with no key", "Bearer".into()),
        Mutation {
            what: "two Authorization headers, the valid one first",
            carries: Carries::Headers(vec![b(key), b(&format!("{key}x"))]),
            ambiguous: true,
        },
        Mutation {
            what: "two Authorization headers, the valid one second",
            carries: Carries::Headers(vec![b(&format!("{key}x")), b(key)]),
            ambiguous: true,
        },
        // The valid key by another mechanism: the spec shows one ("One authentication
        // mechanism ... is shown") without excluding others, so honouring it is a choice.
        Mutation {
            what: "the key in a query parameter, no Authorization header",
            carries: Carries::Query("apiKey", key.to_string()),
            ambiguous: true,
        },
    ];
    if let Some(o) = other {
        // A target that finds a known key at the start of the credential lets it in.
        out.push(header(
            "a key of another plan with this key after it",
            b(&format!("{o}{key}")),
        ));
    }
    let token = |m: &Mutation| match &m.carries {
        Carries::Header(h) => h.strip_prefix("Bearer ").map(str::to_string),
        _ => None,
    };
    out.retain(|m| {
        token(m).is_none_or(|t| !t.is_empty() && t != key && !known.contains(&t.as_str()))
    });
    out
}

/// How one answer to a mutated credential fares.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Judged {
    /// Refused cleanly, with this status.
    Refused(u16),
    /// Served, where serving is a choice left open: the words say how.
    Observed(String),
    Fail(String),
    Throttled,
}

pub(super) fn judge(r: &Resp, ambiguous: bool) -> Judged {
    let s = r.status;
    if s == 429 {
        return Judged::Throttled;
    }
    if s >= 500 {
        return Judged::Fail(r.answered());
    }
    if s >= 400 && !is_envelope(r) {
        return Judged::Fail(r.without_envelope());
    }
    // A credential refused: 401, or a header the target reads as malformed.
    if refused_cleanly(r, &[REJECTIONS[0], 401, REJECTIONS[1]]) {
        return Judged::Refused(s);
    }
    if (300..400).contains(&s) {
        return Judged::Fail(format!("{s}: a redirect, not a refusal in the envelope"));
    }
    let served = format!("{} (the credential was let in)", r.answered());
    if ambiguous {
        Judged::Observed(served)
    } else {
        Judged::Fail(served)
    }
}

/// The request for `op` carrying `m` instead of a credential: the operation's minimal
/// request, a deactivation naming a partner nobody has.
fn request(op: &Operation, m: &Mutation) -> Req {
    let mut req = match &op.body {
        Some(b) => Req::new(op.method.clone(), &op.path).body(
            &b.content_type,
            json!({ "partnerId": ABSENT_PARTNER })
                .to_string()
                .into_bytes(),
        ),
        None => minimal_request(op),
    };
    match &m.carries {
        Carries::Header(h) => req = req.header("authorization", h.clone()),
        Carries::Headers(hs) => {
            for h in hs {
                req = req.header("authorization", h.clone());
            }
        }
        Carries::Query(name, key) => req = req.query(name, key.clone()),
    }
    req
}

/// Which (key, mutation, operation) triples a run sends: every mutation of every key while
/// within `MAX_SENDS`, routes rotating with the seed so each mutation meets every route over
/// the keys; beyond it, keys take turns per mutation.
pub(super) fn plan(
    keys: usize,
    per_key: usize,
    ops: usize,
    seed: u64,
) -> Vec<(usize, usize, usize)> {
    let stride = (keys * per_key).div_ceil(MAX_SENDS).clamp(1, keys.max(1));
    let mut out = Vec::new();
    for j in 0..per_key {
        for i in 0..keys {
            if (i + j) % stride != 0 {
                continue;
            }
            let route = (i + j + (seed as usize % ops.max(1))) % ops.max(1);
            out.push((i, j, route));
        }
    }
    out
}

pub async fn run(ctx: &Ctx) {
    let id = check_id!("auth.mutations");
    let keys = ctx.target.keys.clone();
    // The operations the spec shapes; the stand-ins for only-named ones are not sent.
    let ops: Vec<&Operation> = ROUTES.iter().filter_map(|id| ctx.op(id)).collect();
    if keys.is_empty() || ops.is_empty() {
        ctx.rec
            .skip(id, "*", "no key, or no operation to send it to");
        return;
    }
    let known: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
    let per_key: Vec<Vec<Mutation>> = keys
        .iter()
        .map(|k| {
            let other = keys
                .iter()
                .find(|o| o.plan != k.plan)
                .map(|o| o.key.as_str());
            mutations(&k.key, other, &known)
        })
        .collect();
    let most = per_key.iter().map(Vec::len).max().unwrap_or(0);
    let sends: Vec<(usize, &Mutation, &Operation)> =
        plan(keys.len(), most, ops.len(), ctx.opts.seed)
            .into_iter()
            .filter_map(|(i, j, route)| Some((i, per_key[i].get(j)?, *ops.get(route)?)))
            .collect();
    let requests = sends
        .iter()
        .map(|&(_, m, op)| (op, request(op, m), Expect::Any))
        .collect();
    ctx.exchange_each(requests, |n, x, _| {
        let Some(&(i, m, op)) = sends.get(n) else {
            return;
        };
        let Some(r) = x.resp() else { return };
        let label = op.label();
        let on = format!("{} ({} key)", m.what, keys[i].plan);
        match judge(r, m.ambiguous) {
            Judged::Refused(s) => {
                ctx.rec.pass(id, &label);
                if s != 401 {
                    let what = format!("{on}: refused with {}", r.answered());
                    ctx.rec
                        .observe(check_id!("auth.choices"), &label, what, Some(&x));
                }
            }
            Judged::Observed(what) => {
                ctx.rec.pass(id, &label);
                let what = format!("{on}: {what}");
                ctx.rec
                    .observe(check_id!("auth.choices"), &label, what, Some(&x));
            }
            Judged::Fail(actual) => ctx.rec.violation(
                id,
                &label,
                format!("{on}: refused (401 unauthorized, or 400/422 in the envelope)"),
                actual,
                Some(&x),
            ),
            Judged::Throttled => {}
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, body: &str) -> Resp {
        Resp::json_answer(status, body)
    }

    #[test]
    fn a_look_alike_key_keeps_its_shape() {
        assert_eq!(look_alike("lk_free_19z"), "ml_gsff_20a");
        let k = "lk_enterprise_1";
        let a = look_alike(k);
        assert_eq!(a.len(), k.len());
        assert!(
            a.chars()
                .zip(k.chars())
                .all(|(x, y)| x.is_ascii_digit() == y.is_ascii_digit()
                    && x.is_ascii_lowercase() == y.is_ascii_lowercase())
        );
        assert_ne!(a, k);
    }

    #[test]
    fn every_mutation_differs_from_every_key() {
        let known = ["lk_pro_1", "lk_free_1"];
        let ms = mutations("lk_pro_1", Some("lk_free_1"), &known);
        assert_eq!(ms.len(), 17, "{ms:?}");
        for m in &ms {
            if let Carries::Header(h) = &m.carries {
                assert_ne!(h, "Bearer lk_pro_1", "{}", m.what);
                assert_ne!(h, "Bearer lk_free_1", "{}", m.what);
            }
        }
        let headers: Vec<String> = ms
            .iter()
            .filter_map(|m| match &m.carries {
                Carries::Header(h) => Some(h.clone()),
                _ => None,
            })
            .collect();
        for want in [
            "Bearer lk_pro_",
            "Bearer LK_PRO_1",
            "Bearer lk_p",
            "Bearer %6C%6B%5F%70%72%6F%5F%31",
            "Bearer lk_free_1lk_pro_1",
            "Bearer lk_pro_1\u{a0}",
        ] {
            assert!(headers.iter().any(|h| h == want), "{want} in {headers:?}");
        }
        // Only the valid key by another mechanism or separator, and duplicated headers, are
        // choices; every mutated key is not.
        let ambiguous: Vec<&str> = ms.iter().filter(|m| m.ambiguous).map(|m| m.what).collect();
        assert_eq!(
            ambiguous,
            [
                "a tab before the key",
                "two Authorization headers, the valid one first",
                "two Authorization headers, the valid one second",
                "the key in a query parameter, no Authorization header",
            ]
        );
        // A one-character key: its empty half and shortened forms are dropped, not sent.
        assert!(
            mutations("k", None, &["k"])
                .iter()
                .all(|m| m.carries != Carries::Header("Bearer ".into()))
        );
    }

    #[test]
    fn refusals_are_401_400_or_422_in_the_envelope() {
        let env = |c: &str| format!(r#"{{"error":{{"code":"{c}","message":"m"}}}}"#);
        assert_eq!(
            judge(&resp(401, &env("unauthorized")), false),
            Judged::Refused(401)
        );
        assert_eq!(
            judge(&resp(400, &env("bad_request")), false),
            Judged::Refused(400)
        );
        assert!(matches!(judge(&resp(200, "[]"), false), Judged::Fail(_)));
        assert!(matches!(
            judge(&resp(404, &env("not_found")), false),
            Judged::Fail(_)
        ));
        assert!(matches!(
            judge(&resp(403, &env("forbidden")), false),
            Judged::Fail(_)
        ));
        assert!(matches!(judge(&resp(401, "nope"), false), Judged::Fail(_)));
        assert!(matches!(judge(&resp(302, ""), true), Judged::Fail(_)));
        assert!(matches!(
            judge(&resp(500, &env("x")), true),
            Judged::Fail(_)
        ));
        assert!(matches!(judge(&resp(200, "[]"), true), Judged::Observed(_)));
        assert_eq!(
            judge(&resp(429, &env("rate_limit_exceeded")), false),
            Judged::Throttled
        );
    }

    #[test]
    fn the_plan_covers_every_mutation_and_rotates_routes() {
        let p = plan(6, 17, 3, 1);
        assert_eq!(p.len(), 102);
        for j in 0..17 {
            let routes: std::collections::HashSet<usize> =
                p.iter().filter(|t| t.1 == j).map(|t| t.2).collect();
            assert_eq!(routes.len(), 3, "mutation {j} on every route");
        }
        // Many keys: bounded, every mutation still sent.
        let p = plan(40, 17, 3, 1);
        assert!(p.len() <= MAX_SENDS + 17, "{}", p.len());
        for j in 0..17 {
            assert!(p.iter().any(|t| t.1 == j));
        }
    }
}
