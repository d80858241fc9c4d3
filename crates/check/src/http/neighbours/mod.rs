//! `http.neighbours` and `http.neighbour-auth`: the neighbours of every operation's plain
//! request, derived from the spec rather than listed per route. The path (a trailing or
//! doubled slash, upper case, a letter percent-encoded, a suffix, a prefix); each query
//! parameter the spec names, at a value every target must accept (repeated with the same
//! value and with another, percent-encoded once and twice, empty where it is optional, with
//! each of `http.chars`' hostile strings appended); the
//! body's media type in capitals, and each of its fields' forms (`body.rs`). A neighbour gets the answer of the request it means (for a
//! parameter given two values, either one's), or a clean error in the envelope.
//!
//! Every neighbour is sent again without a key, with a key that looks issued and was not (the
//! same length and character classes), and, where the operation needs a plan, with a key of a
//! plan below: each must be refused (401, 403) or refused cleanly, whatever the run's key got;
//! served, the shape is a way around authentication or the plan gate. A state-changing
//! operation's neighbours name unknown ids; with a fixture the ledger gave `http`, they are
//! also sent naming it with the key of a plan below (`gated_on_fixture`), which spends nothing
//! unless the gate fails. The credentials and how a refusal is judged: `auth.rs`.

use std::collections::HashMap;

mod auth;
mod body;

pub(in crate::http) use auth::gated_on_fixture;
use auth::{Refusal, credentials, key_below, refuse_each};

use super::plain::{plain, service_ops};
use super::same::{self, Body};
use super::{Judged, answer_text, record};
use crate::Ctx;
use crate::cases::{generated, other_value, sure_value};
use crate::conformance::Expect;
use crate::probe::{Exchange, Req};
use crate::recorder::Why;
use linkcert_http::{Resp, is_envelope};
use linkcert_registry::check_id;
use linkcert_spec::{Operation, Param};

/// One request near the plain one, and the requests it may mean (any of their answers holds;
/// none: any clean answer).
#[derive(Clone, Debug)]
pub(super) struct Neighbour {
    pub what: String,
    pub req: Req,
    pub meant: Vec<Req>,
    /// An answer it must not get, and the request whose answer must differ from that one for
    /// it to say anything (the target reads the parameter at all).
    pub not: Option<(Req, Req)>,
}

/// `value` with its first character percent-encoded (`abc` as `%61bc`): the same value once
/// decoded (RFC 3986 2.1, 6.2.2.2).
fn encode_first(value: &str) -> String {
    let mut chars = value.chars();
    let Some(c) = chars.next() else {
        return String::new();
    };
    let mut buf = [0u8; 4];
    let first: String = c
        .encode_utf8(&mut buf)
        .bytes()
        .map(|b| format!("%{b:02X}"))
        .collect();
    let rest: String = url::form_urlencoded::byte_serialize(chars.as_str().as_bytes()).collect();
    format!("{first}{rest}")
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn pair(k: &str, v: &str) -> String {
    format!("{}={}", enc(k), enc(v))
}

/// `req` with its query given verbatim: its pairs but `name`'s, then `tail`.
fn with_raw(req: &Req, name: &str, tail: &str) -> Req {
    let mut parts: Vec<String> = req
        .query
        .iter()
        .filter(|(k, _)| k != name)
        .map(|(k, v)| pair(k, v))
        .collect();
    parts.push(tail.to_string());
    let mut r = req.clone();
    r.raw_query = Some(parts.join("&"));
    r
}

/// `req` with `name` set to `value` (replacing it where present).
fn with_param(req: &Req, name: &str, value: &str) -> Req {
    let mut r = req.clone();
    r.query.retain(|(k, _)| k != name);
    r.query.push((name.to_string(), value.to_string()));
    r
}

fn with_path(req: &Req, path: String) -> Req {
    let mut r = req.clone();
    r.path = path;
    r
}

/// The path with its first letter percent-encoded (`/tags` as `/%74ags`).
fn path_encoded(path: &str) -> String {
    let at = path.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(0);
    let (head, tail) = path.split_at(at);
    format!("{head}{}", encode_first(tail))
}

/// Every neighbour of `plain`, an operation's plain request, derived from the spec.
pub(super) fn neighbours(op: &Operation, plain: &Req) -> Vec<Neighbour> {
    let mut out = shape_neighbours(op, plain);
    for p in op.params.iter().filter(|p| generated(p)) {
        out.extend(param_neighbours(p, plain));
    }
    out.extend(body::neighbours(plain));
    out
}

/// The path's neighbours, and the body's media type in capitals.
fn shape_neighbours(op: &Operation, plain: &Req) -> Vec<Neighbour> {
    let same = |what: &str, req: Req| Neighbour {
        what: what.to_string(),
        req,
        meant: vec![plain.clone()],
        not: None,
    };
    let path = &plain.path;
    let mut out = vec![
        same("a trailing slash", with_path(plain, format!("{path}/"))),
        same("a doubled slash", with_path(plain, format!("/{path}"))),
        same(
            "the path in upper case",
            with_path(plain, path.to_uppercase()),
        ),
        same(
            "a letter of the path percent-encoded",
            with_path(plain, path_encoded(path)),
        ),
        same("a suffix (.json)", with_path(plain, format!("{path}.json"))),
        same("a prefix (/v1)", with_path(plain, format!("/v1{path}"))),
    ];
    if let Some(body) = &op.body {
        let upper = body.content_type.to_uppercase();
        let mut req = plain.clone();
        for h in &mut req.headers {
            if h.0.eq_ignore_ascii_case("content-type") {
                h.1 = upper.clone();
            }
        }
        out.push(same(&format!("Content-Type: {upper}"), req));
    }
    out
}

/// One parameter's neighbours, at a value every target must accept: repeated with it and
/// with another, percent-encoded once and twice, empty where it is optional.
fn param_neighbours(p: &Param, plain: &Req) -> Vec<Neighbour> {
    let mut out = Vec::new();
    let name = &p.name;
    let given = plain
        .query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone());
    let Some(v) = given.or_else(|| sure_value(p)) else {
        return Vec::new();
    };
    let base = with_param(plain, name, &v);
    let to_base = |what: String, req: Req| Neighbour {
        what,
        req,
        meant: vec![base.clone()],
        not: None,
    };
    let w = other_value(p);
    out.push(to_base(
        format!("{name} given twice ({name}={v}&{name}={v})"),
        with_raw(
            plain,
            name,
            &format!("{}&{}", pair(name, &v), pair(name, &v)),
        ),
    ));
    if let Some(w) = &w {
        out.push(Neighbour {
            what: format!("{name} given twice with two values ({name}={v}&{name}={w})"),
            req: with_raw(
                plain,
                name,
                &format!("{}&{}", pair(name, &v), pair(name, w)),
            ),
            meant: vec![base.clone(), with_param(plain, name, w)],
            not: None,
        });
    }
    let once = encode_first(&v);
    out.push(to_base(
        format!("{name} percent-encoded ({name}={once})"),
        with_raw(plain, name, &format!("{}={once}", enc(name))),
    ));
    // Encoded twice, a value means the text `%61bc`: whatever a target makes of that, it
    // is not the value itself (decoded twice). The value is the parameter's second one, so
    // its answer differs from the plain request's wherever the target reads the parameter.
    if let Some(w) = &w {
        let twice = encode_first(w).replace('%', "%25");
        out.push(Neighbour {
            what: format!("{name} percent-encoded twice ({name}={twice})"),
            req: with_raw(plain, name, &format!("{}={twice}", enc(name))),
            meant: Vec::new(),
            not: Some((with_param(plain, name, w), base.clone())),
        });
    }
    // `http.chars`' hostile strings appended: the value then names something else, so any
    // clean answer holds; a 5xx or an error outside the envelope fails.
    for (kind, tail) in crate::cases::hostile_strings() {
        let hostile = format!("{v}{tail}");
        out.push(Neighbour {
            what: format!(
                "{name} with {kind} appended ({name}={})",
                hostile.escape_debug()
            ),
            req: with_param(plain, name, &hostile),
            meant: Vec::new(),
            not: None,
        });
    }
    if !p.required {
        let mut without = plain.clone();
        without.query.retain(|(k, _)| k != name);
        out.push(Neighbour {
            what: format!("{name} empty ({name}=)"),
            req: with_raw(plain, name, &format!("{}=", enc(name))),
            meant: vec![without],
            not: None,
        });
    }
    out
}

/// Where a request is kept among the answers already had: its method, path, query and body.
fn at(req: &Req) -> String {
    let body = req.body.as_deref().map(String::from_utf8_lossy);
    format!(
        "{} {}?{} {}",
        req.method,
        req.path,
        req.query_string(),
        body.unwrap_or_default()
    )
}

/// The answers to `reqs`, `--concurrency` in flight at a time, in their order, kept as
/// standards: a body cut at its cap is dropped (it is no standard, and a hostile target's
/// would hold the cap's megabytes each).
async fn answers(ctx: &Ctx, op: &Operation, reqs: Vec<Req>) -> Vec<Exchange> {
    let mut out = Vec::with_capacity(reqs.len());
    let sends = reqs.into_iter().map(|r| (op, r, Expect::Any)).collect();
    ctx.exchange_each(sends, |_, mut x, _| {
        if let Ok(r) = &mut x.result
            && r.truncated
        {
            r.body = Vec::new();
        }
        out.push(x)
    })
    .await;
    out
}

/// A neighbour's answer against the answers of what it may mean: held by any of them; with
/// nothing meant, any clean answer but the one it must not get (`not`: that answer, and the
/// answer that must differ from it for the comparison to say anything).
fn judge_meant(
    kind: Body,
    meant: &[Exchange],
    not: Option<(&Exchange, &Exchange)>,
    x: &Exchange,
    what: &str,
) -> Judged {
    if meant.is_empty() {
        let Some(r) = x.resp() else {
            return Judged::Fail(answer_text(x));
        };
        if r.status == 429 {
            return Judged::Throttled;
        }
        if r.status >= 500 || (r.status >= 400 && !is_envelope(r)) {
            return Judged::Fail(format!("{} for {what}", answer_text(x)));
        }
        let (Some(bad), Some(other)) = (not.and_then(|n| n.0.resp()), not.and_then(|n| n.1.resp()))
        else {
            return Judged::Pass(format!("{what}: {}", answer_text(x)));
        };
        let read = bad.is_success()
            && other.is_success()
            && matches!(same::differs(kind, other, bad), same::Diff::Other(_));
        if read && r.is_success() && same::differs(kind, bad, r) == same::Diff::Same {
            return Judged::Fail(format!(
                "{} for {what}: the answer of the value it encodes, decoded twice",
                r.status
            ));
        }
        return Judged::Pass(format!("{what}: {}", answer_text(x)));
    }
    let mut first = None;
    for m in meant {
        let Some(base) = m.resp() else { continue };
        let j = same::judge(kind, base, x, what);
        match j {
            Judged::Fail(_) | Judged::NonStrict(_) => {
                first.get_or_insert(j);
            }
            j => return j,
        }
    }
    first.unwrap_or_else(|| Judged::Observe(format!("{what}: the request it means got no answer")))
}

/// Record a judgement: a pass is only counted (hundreds of neighbours hold; `http.choices`
/// keeps the refusals and observations that say something of the target).
fn note(
    ctx: &Ctx,
    id: linkcert_registry::Check,
    label: &str,
    expected: &str,
    j: Judged,
    x: &Exchange,
) {
    match j {
        Judged::Pass(w) if w.contains("refused with") => {
            record(ctx, id, label, expected, Judged::Pass(w), x)
        }
        Judged::Pass(_) => ctx.rec.pass(id, label),
        j => record(ctx, id, label, expected, j, x),
    }
}

pub(super) async fn run(ctx: &Ctx) {
    let ops = service_ops(&ctx.spec);
    // Two operations at a time (every other one in each lane), each sending `--concurrency`
    // at a time: a far target's round trips overlap (every neighbour goes with four
    // credentials), and the bound stays the user's, doubled, as for families side by side.
    let lane = |odd: usize| {
        let mine: Vec<&Operation> = ops.iter().copied().skip(odd).step_by(2).collect();
        async move {
            for op in mine {
                one(ctx, op).await;
            }
        }
    };
    tokio::join!(lane(0), lane(1));
}

/// What the neighbours mean (and must not get), each sent once beside the plain request's
/// answer `x`: those answers are the standard, by where each request is kept (`at`).
async fn standards(
    ctx: &Ctx,
    op: &Operation,
    near: &[Neighbour],
    plain_req: &Req,
    x: Exchange,
) -> HashMap<String, (Req, Exchange)> {
    let mut had: HashMap<String, (Req, Exchange)> =
        HashMap::from([(at(plain_req), (plain_req.clone(), x))]);
    let mut wanted: Vec<Req> = Vec::new();
    for n in near {
        let not = n.not.iter().flat_map(|(a, b)| [a, b]);
        for r in n.meant.iter().chain(not) {
            if !had.contains_key(&at(r)) && !wanted.iter().any(|w| at(w) == at(r)) {
                wanted.push(r.clone());
            }
        }
    }
    let got_now = answers(ctx, op, wanted.clone()).await;
    had.extend(
        wanted
            .into_iter()
            .zip(got_now)
            .map(|(r, x)| (at(&r), (r, x))),
    );
    had
}

async fn one(ctx: &Ctx, op: &Operation) {
    let id = check_id!("http.neighbours");
    let label = op.label();
    let Some(key) = ctx.key_for(op).cloned() else {
        ctx.rec
            .skip(id, &label, format!("no key whose plan may call {label}"));
        return;
    };
    let (plain_req, kind) = plain(op, &key);
    let near = neighbours(op, &plain_req);
    let (x, _) = ctx.exchange(op, plain_req.clone(), Expect::Any).await;
    if x.resp().is_none_or(|r| r.status >= 500 || r.status == 429) {
        let why = format!("the plain request got {}", answer_text(&x));
        ctx.rec.skip(id, &label, Why::after(&x, why));
        return;
    }
    let kind = match kind {
        Body::Tags { .. } => match x.resp() {
            Some(r) if r.is_success() => Body::Tags {
                whole: ctx.service.holds_all(ctx, op, &key, r).await,
            },
            _ => kind,
        },
        k => k,
    };
    let had = standards(ctx, op, &near, &plain_req, x).await;
    // Preconditions on GET: a state-changing operation's neighbours name unknown ids.
    if op.method == http::Method::GET && ctx.enabled(check_id!("http.conditional")) {
        super::conditional::run(ctx, op, kind, &plain_req, &had, at).await;
    }
    let got = |r: &Req| had.get(&at(r)).map(|(_, x)| x);
    let expected = "the answer of the request it means, or a clean error in the envelope";
    let below = key_below(ctx, op).cloned();
    let mut refusals = Vec::new();
    // Each judged as it comes and dropped: a hostile target's bodies are large.
    let sends = near
        .iter()
        .map(|n| (op, n.req.clone(), Expect::Any))
        .collect();
    ctx.exchange_each(sends, |i, dx, _| {
        let Some(n) = near.get(i) else { return };
        let xs: Vec<Exchange> = n.meant.iter().filter_map(|m| got(m).cloned()).collect();
        let not = n.not.as_ref().and_then(|(a, b)| Some((got(a)?, got(b)?)));
        let j = judge_meant(kind, &xs, not, &dx, &n.what);
        note(ctx, id, &label, expected, j, &dx);
        // Every neighbour, served or not: a shape the run's key is refused may still be one
        // another credential is served (a route whose own gate lets anyone through).
        let served = dx.resp().map(|r| r.status);
        for (who, req) in credentials(&n.req, &key, below.as_ref()) {
            refusals.push(Refusal {
                what: n.what.clone(),
                who,
                off_path: req.path != plain_req.path,
                req,
                served,
            });
        }
    })
    .await;
    // The operation's own answer: the plain request's, to the run's key.
    let plain_answer = got(&plain_req).and_then(|x| x.resp());
    let serves =
        |r: &Resp| plain_answer.is_some_and(|p| same::differs(kind, p, r) == same::Diff::Same);
    refuse_each(ctx, op, &label, refusals, &serves).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_encoded_once_decodes_to_itself() {
        assert_eq!(encode_first("abc"), "%61bc");
        assert_eq!(encode_first("#FFF"), "%23FFF");
        assert_eq!(encode_first("a b"), "%61+b");
        assert_eq!(path_encoded("/tags"), "/%74ags");
    }

    #[test]
    fn repeated_and_encoded_parameters_keep_the_other_pairs() {
        let plain = Req::get("/qr")
            .query("url", "https://e.com")
            .query("size", "300");
        let r = with_raw(&plain, "size", "size=300&size=300");
        assert_eq!(
            r.query_string(),
            "url=https%3A%2F%2Fe.com&size=300&size=300"
        );
        let r = with_raw(&plain, "level", "level=%4C");
        assert_eq!(
            r.query_string(),
            "url=https%3A%2F%2Fe.com&size=300&level=%4C"
        );
    }
}
