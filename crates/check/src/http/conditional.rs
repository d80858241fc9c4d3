//! `http.conditional`: conditional requests built from the validators the target itself gave
//! (RFC 9110 8.8, 13.1). Where an answer carries an ETag or a Last-Modified: the same request
//! with If-None-Match naming it, or If-Modified-Since at it, gets 304 or the answer again;
//! 304 never comes for an entity tag the target never gave, for the tag of another answer, or
//! for a date before the answer's Last-Modified. And one strong ETag never names two
//! different answers of the operation (those `http.neighbours` had: other values of each
//! parameter). A target that gives no validators has nothing to judge here.

use std::collections::HashMap;

use super::same::{self, Body, Diff};
use super::{Judged, answer_text, record};
use crate::Ctx;
use crate::conformance::Expect;
use crate::probe::{Exchange, Req};
use linkcert_http::{Resp, is_envelope};
use linkcert_registry::check_id;
use linkcert_spec::Operation;

/// An entity tag no target gave.
const NEVER_GIVEN: &str = "\"linkcert-never-given\"";
/// A date before any answer was modified.
const LONG_AGO: &str = "Thu, 01 Jan 1970 00:00:00 GMT";

/// One conditional request and what its answer may be.
struct Conditional {
    what: String,
    req: Req,
    /// 304 is right (the validator still matches); else it is wrong.
    may_304: bool,
    /// Otherwise its answer is the plain request's (false: another request's, not compared).
    as_plain: bool,
}

fn with(req: &Req, name: &str, value: &str) -> Req {
    req.clone().header(name, value.to_string())
}

fn strong_etag(r: &Resp) -> Option<&str> {
    r.header("etag")
        .filter(|e| !e.trim_start().starts_with("W/"))
}

/// `had`: the operation's requests already answered (by where they are kept), `plain` the
/// plain request's place among them.
pub(super) async fn run(
    ctx: &Ctx,
    op: &Operation,
    kind: Body,
    plain: &Req,
    had: &HashMap<String, (Req, Exchange)>,
    at: impl Fn(&Req) -> String,
) {
    let id = check_id!("http.conditional");
    let label = op.label();
    one_answer_per_tag(ctx, &label, kind, had);
    let Some(base) = had.get(&at(plain)).and_then(|(_, x)| x.resp()) else {
        return;
    };
    let (etag, modified) = (base.header("etag"), base.header("last-modified"));
    if !base.is_success() {
        let why = format!("the plain request got {}", base.status);
        ctx.rec.skip(id, &label, why);
        return;
    }
    if etag.is_none() && modified.is_none() {
        ctx.rec.skip(
            id,
            &label,
            "the target gives no ETag or Last-Modified: no conditional request to build",
        );
        return;
    }
    let sends = conditionals(kind, base, plain, had, etag, modified);
    let reqs = sends
        .iter()
        .map(|c| (op, c.req.clone(), Expect::Any))
        .collect();
    let mut answers = Vec::with_capacity(sends.len());
    ctx.exchange_each(reqs, |_, x, _| answers.push(x)).await;
    let expected = "304 only while the validator sent still matches; otherwise the answer, or a \
                    clean error in the envelope";
    for (c, x) in sends.iter().zip(&answers) {
        record(ctx, id, &label, expected, judge(kind, base, c, x), x);
    }
}

/// One strong ETag names one answer (RFC 9110 8.8.3): among the operation's answers the run
/// had, two that differ never carry the same strong tag.
fn one_answer_per_tag(ctx: &Ctx, label: &str, kind: Body, had: &HashMap<String, (Req, Exchange)>) {
    let id = check_id!("http.conditional");
    let label = label.to_string();
    let mut by_tag: HashMap<&str, (&Req, &Exchange)> = HashMap::new();
    let mut keys: Vec<&String> = had.keys().collect();
    keys.sort();
    for k in keys {
        let (req, x) = &had[k];
        let Some(r) = x.resp().filter(|r| r.is_success()) else {
            continue;
        };
        let Some(tag) = strong_etag(r) else { continue };
        match by_tag.get(tag) {
            Some((first, fx)) => {
                let Some(fr) = fx.resp() else { continue };
                if matches!(same::differs(kind, fr, r), Diff::Other(_)) {
                    ctx.rec.violation(
                        id,
                        &label,
                        "a strong ETag names one answer (RFC 9110 8.8.3)",
                        format!(
                            "ETag {tag} on two different answers: {}?{} and {}?{}",
                            first.path,
                            first.query_string(),
                            req.path,
                            req.query_string()
                        ),
                        Some(x),
                    );
                } else {
                    ctx.rec.pass(id, &label);
                }
            }
            None => {
                by_tag.insert(tag, (req, x));
            }
        }
    }
}

/// The conditional requests the plain answer's validators allow.
fn conditionals(
    kind: Body,
    base: &Resp,
    plain: &Req,
    had: &HashMap<String, (Req, Exchange)>,
    etag: Option<&str>,
    modified: Option<&str>,
) -> Vec<Conditional> {
    let mut sends = Vec::new();
    if let Some(e) = etag {
        sends.push(Conditional {
            what: format!("If-None-Match: {e} (the ETag it gave)"),
            req: with(plain, "if-none-match", e),
            may_304: true,
            as_plain: true,
        });
        sends.push(Conditional {
            what: format!("If-None-Match: {NEVER_GIVEN} (an entity tag it never gave)"),
            req: with(plain, "if-none-match", NEVER_GIVEN),
            may_304: false,
            as_plain: true,
        });
        // Another answer of the operation (another value of a parameter), with this one's tag.
        let other = had.values().find(|(_, x)| {
            x.resp().is_some_and(|r| {
                r.is_success()
                    && r.header("etag") != Some(e)
                    && matches!(same::differs(kind, base, r), Diff::Other(_))
            })
        });
        if let Some((req, _)) = other {
            sends.push(Conditional {
                what: format!(
                    "If-None-Match: {e} (another answer's ETag) on {}?{}",
                    req.path,
                    req.query_string()
                ),
                req: with(req, "if-none-match", e),
                may_304: false,
                as_plain: false,
            });
        }
    }
    if let Some(m) = modified {
        sends.push(Conditional {
            what: format!("If-Modified-Since: {m} (its Last-Modified)"),
            req: with(plain, "if-modified-since", m),
            may_304: true,
            as_plain: true,
        });
        sends.push(Conditional {
            what: format!("If-Modified-Since: {LONG_AGO} (before its Last-Modified)"),
            req: with(plain, "if-modified-since", LONG_AGO),
            may_304: false,
            as_plain: true,
        });
    }
    sends
}

fn judge(kind: Body, base: &Resp, c: &Conditional, x: &Exchange) -> Judged {
    let Some(r) = x.resp() else {
        return Judged::Fail(format!("{} for {}", answer_text(x), c.what));
    };
    match r.status {
        304 if c.may_304 => Judged::Pass(format!("{}: 304 Not Modified", c.what)),
        304 => Judged::Fail(format!(
            "304 Not Modified for {}: a client keeps what it had, not this answer",
            c.what
        )),
        s if s >= 500 || (s >= 400 && !is_envelope(r)) => {
            Judged::Fail(format!("{} for {}", answer_text(x), c.what))
        }
        _ if c.as_plain => same::judge(kind, base, x, &c.what),
        s => Judged::Pass(format!("{}: answered {s}", c.what)),
    }
}
