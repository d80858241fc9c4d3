//! `http.client-headers`: headers real clients send (content negotiation, compression, the
//! SDKs' User-Agent, proxies' forwarding headers, CORS's Origin, caching, Connection) do not
//! change the spec's answer: the same tags, the same QR code, or a clean error in the
//! envelope. `http.forwarded-limit`: X-Forwarded-For (X-Real-IP, Forwarded) does not give a key
//! a counter of its own.

use super::same::{self, Body};
use super::{answer_text, record};
use crate::Ctx;
use crate::auth::minimal_request;
use crate::conformance::Expect;
use crate::recorder::Why;
use linkcert_rate::headers::REMAINING;
use linkcert_registry::check_id;
use linkcert_spec::Operation;

/// What the Python SDK (Speakeasy-generated, `dub` 0.39.0) sends as its User-Agent.
const SDK_AGENT: &str = "speakeasy-sdk/python 0.39.0 2.660.0 0.0.1 dub";

/// Headers sent to every GET the check dresses.
const EVERY: &[(&str, &str)] = &[
    ("accept", "*/*"),
    ("accept-encoding", "gzip"),
    ("user-agent", SDK_AGENT),
    ("x-forwarded-for", "203.0.113.7"),
];

/// Headers sent to GET /tags only (one route is enough for them).
const TAGS_ONLY: &[(&str, &str)] = &[
    ("accept", "application/json"),
    // Not `br`: `http::body` inflates gzip and deflate only, so a target honouring br would
    // leave a body no judge here (nor conformance's) can read, and be failed for a choice.
    ("accept-encoding", "gzip, deflate"),
    ("x-real-ip", "203.0.113.8"),
    ("forwarded", "for=203.0.113.9;proto=https"),
    ("origin", "https://app.example.com"),
    ("cache-control", "no-cache"),
    ("connection", "close"),
    // An entity tag no answer has: a 304 for it would be wrong.
    ("if-none-match", "\"linkcert-no-such-etag\""),
];

pub(super) async fn client_headers(ctx: &Ctx) {
    let id = check_id!("http.client-headers");
    let routes = [
        (
            "getTags",
            Body::Tags { whole: false },
            &[("accept", "application/json")][..],
        ),
        ("getQRCode", Body::Image, &[("accept", "image/png")][..]),
    ];
    for (op_id, body, own) in routes {
        let Some((op, key)) = ctx
            .op(op_id)
            .and_then(|op| ctx.key_for(op).map(|k| (op, k.clone())))
        else {
            continue;
        };
        let label = op.label();
        let plain = minimal_request(op).key(&key);
        let (x, _) = ctx.exchange(op, plain.clone(), Expect::Any).await;
        let Some(base) = x.resp().filter(|r| r.is_success()) else {
            let why = format!("the plain request got {}", answer_text(&x));
            ctx.rec.skip(id, &label, Why::after(&x, why));
            continue;
        };
        let mut dress: Vec<(&str, &str)> = EVERY.to_vec();
        let mut body = body;
        if let Body::Tags { .. } = body {
            body = Body::Tags {
                whole: ctx.service.holds_all(ctx, op, &key, base).await,
            };
            dress.extend(TAGS_ONLY);
        } else {
            dress.extend(own);
        }
        for (name, value) in dress {
            let dressed = format!("{name}: {value}");
            let (x, _) = ctx
                .exchange(op, plain.clone().header(name, value), Expect::Any)
                .await;
            let j = same::judge(body, base, &x, &dressed);
            let expected = format!(
                "the plain request's answer ({}), or a clean error in the envelope",
                base.status
            );
            record(ctx, id, &label, &expected, j, &x);
        }
    }
}

/// Requests sent without the header before the first forwarded one, so the key's counter is
/// below a fresh one's.
const LEAD: usize = 3;
/// Forwarded requests, each between two plain ones.
const FORWARDED: usize = 3;
/// The headers proxies name the client's address in, one per forwarded request.
const FORWARDING: [&str; 3] = ["x-forwarded-for", "x-real-ip", "forwarded"];

/// A key's requests alternate plain and forwarded (each from another address, in
/// X-Forwarded-For, X-Real-IP and Forwarded in turn): the counter
/// goes down through all of them. A forwarded answer with more remaining than the plain one
/// before it, while the plain one after it has fewer, was counted elsewhere.
pub(super) async fn forwarded_limit(ctx: &Ctx) {
    let id = check_id!("http.forwarded-limit");
    let Some((op, key)) = ctx
        .op("getTags")
        .and_then(|op| ctx.key_for(op).map(|k| (op, k.clone())))
    else {
        ctx.rec.skip(id, "GET /tags", "no key that may list tags");
        return;
    };
    // A sliding counter gives back what ages out: a rise between the plain requests says
    // nothing of keys, and the sequence is sent again (a few times), not judged on it.
    for attempt in 1..=ATTEMPTS {
        let (seen, xs) = sequence(ctx, op, &key).await;
        let r: Vec<Option<u64>> = seen.iter().map(|s| s.1).collect();
        let rose = matches!(counted_elsewhere(&r, LEAD), Sequence::Rose(_));
        if !rose || attempt == ATTEMPTS {
            judge_sequence(ctx, op, &seen, &xs);
            return;
        }
    }
}

/// Times the sequence is sent while its plain requests' counter rises.
const ATTEMPTS: usize = 3;

/// One sequence: `LEAD` plain requests, then forwarded and plain ones in turn; what each said
/// was left, and the exchanges.
async fn sequence(
    ctx: &Ctx,
    op: &Operation,
    key: &linkcert_run::target::PlanKey,
) -> (
    Vec<(Option<String>, Option<u64>)>,
    Vec<crate::probe::Exchange>,
) {
    let mut seen: Vec<(Option<String>, Option<u64>)> = Vec::new();
    let mut xs = Vec::new();
    for i in 0..LEAD + 2 * FORWARDED {
        let mut req = minimal_request(op).key(key);
        let step = (i >= LEAD && (i - LEAD).is_multiple_of(2)).then(|| (i - LEAD) / 2);
        let forwarded = step.map(|k| {
            let ip = format!("203.0.113.{}", 20 + k);
            match FORWARDING[k % FORWARDING.len()] {
                "forwarded" => ("forwarded", format!("for={ip}")),
                name => (name, ip),
            }
        });
        if let Some((name, value)) = &forwarded {
            req = req.header(name, value.clone());
        }
        let (x, _) = ctx.exchange(op, req, Expect::Any).await;
        let remaining = x.resp().and_then(|r| r.header_u64(REMAINING));
        seen.push((forwarded.map(|(n, v)| format!("{n}: {v}")), remaining));
        xs.push(x);
    }
    (seen, xs)
}

fn judge_sequence(
    ctx: &Ctx,
    op: &Operation,
    seen: &[(Option<String>, Option<u64>)],
    xs: &[crate::probe::Exchange],
) {
    let id = check_id!("http.forwarded-limit");
    let label = op.label();
    let r: Vec<Option<u64>> = seen.iter().map(|s| s.1).collect();
    match counted_elsewhere(&r, LEAD) {
        Sequence::Unjudged(why) => ctx.rec.skip(id, &label, why),
        Sequence::Rose(lead) => ctx.rec.skip(
            id,
            &label,
            format!(
                "X-RateLimit-Remaining rose between plain requests ({lead:?}), in each of {ATTEMPTS} tries: no one counter to follow"
            ),
        ),
        Sequence::Shared => ctx.rec.pass(id, &label),
        Sequence::Apart(i) => {
            let header = seen[i].0.clone().unwrap_or_default();
            let words: Vec<String> = seen
                .iter()
                .map(|(f, n)| {
                    let n = n.map_or("-".into(), |n| n.to_string());
                    if f.is_some() {
                        format!("[{n} forwarded]")
                    } else {
                        n
                    }
                })
                .collect();
            ctx.rec.violation(
                id,
                &label,
                "X-RateLimit-Remaining going down through every request of the key, forwarded or not",
                format!(
                    "{header} got more remaining than the request before it, and the next plain \
                     one fewer again (remaining in order: {})",
                    words.join(", ")
                ),
                xs.get(i),
            );
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Sequence {
    Unjudged(String),
    /// Remaining rose between the plain requests (these, in order): a counter that gives back.
    Rose(Vec<u64>),
    /// One counter for all of them.
    Shared,
    /// The forwarded request at this index was counted apart.
    Apart(usize),
}

/// `remaining` of each request in order: `lead` plain ones, then forwarded and plain ones in
/// turn. A counter only goes down by requests and up by time (a window's reset, a sliding
/// window's decay): it cannot rise at a forwarded request and fall below where it was at the
/// next plain one, unless the forwarded one was counted elsewhere.
fn counted_elsewhere(remaining: &[Option<u64>], lead: usize) -> Sequence {
    let Some(r) = remaining.iter().copied().collect::<Option<Vec<u64>>>() else {
        return Sequence::Unjudged("an answer without X-RateLimit-Remaining".into());
    };
    if r.len() < lead + 2 {
        return Sequence::Unjudged("too few answers".into());
    }
    // The plain requests alone must go down, or the counter says nothing about keys.
    if r[..lead].windows(2).any(|w| w[1] > w[0]) {
        return Sequence::Rose(r[..lead].to_vec());
    }
    let mut i = lead;
    while i + 1 < r.len() {
        let (before, forwarded, after) = (r[i - 1], r[i], r[i + 1]);
        if forwarded > before && after < before {
            return Sequence::Apart(i);
        }
        i += 2;
    }
    Sequence::Shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_request_counted_apart_shows_in_the_sequence() {
        let s = |v: &[u64]| counted_elsewhere(&v.iter().map(|n| Some(*n)).collect::<Vec<_>>(), 3);
        assert_eq!(s(&[59, 58, 57, 56, 55, 54, 53, 52, 51]), Sequence::Shared);
        // A window reset between: up once, then down from there.
        assert_eq!(s(&[3, 2, 1, 59, 58, 57, 56, 55, 54]), Sequence::Shared);
        // A sliding window's decay: up a little, never back below.
        assert_eq!(s(&[50, 49, 48, 49, 49, 50, 49, 48, 47]), Sequence::Shared);
        // Each forwarded address gets a fresh counter.
        assert_eq!(s(&[58, 57, 56, 59, 55, 59, 54, 59, 53]), Sequence::Apart(3));
        // The plain ones alone rise: sent again, then not judged.
        assert_eq!(
            s(&[5, 6, 4, 5, 4, 3, 2, 1, 0]),
            Sequence::Rose(vec![5, 6, 4])
        );
        assert!(matches!(
            counted_elsewhere(&[Some(1), None, Some(2)], 1),
            Sequence::Unjudged(_)
        ));
    }
}
