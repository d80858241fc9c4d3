//! `status.server-error`, on every answer: a GET or HEAD the target served (2xx) is never
//! answered with a server error (500, 502, 503, 504) when sent again, the same in every byte
//! (method, path, query, headers, body, key). The target's own earlier answer says the request
//! is one it serves, so the error is the target failing: the spec's 500 is an "unexpected
//! server condition", and a limiter that breaks at its limit, or a cache that breaks on a
//! second read, shows exactly this. Safe methods only: a state change may make the same
//! request mean something else the second time. 501 and 505 are HTTP's words for a method or
//! a version not served, never judged here.

use std::hash::{BuildHasher, Hash, Hasher};

use crate::Ctx;
use crate::probe::Exchange;
use linkcert_http::Resp;
use linkcert_registry::check_id;

/// The statuses of a server that failed, as opposed to one that declines.
const FAILED: [u16; 4] = [500, 502, 503, 504];

pub(super) fn judge(ctx: &Ctx, label: &str, x: &Exchange, r: &Resp) {
    let req = &x.req;
    if !(req.method == http::Method::GET || req.method == http::Method::HEAD) {
        return;
    }
    let id = check_id!("status.server-error");
    let mut memo = ctx.schemas.lock().unwrap_or_else(|p| p.into_inner());
    let mut h = memo.png_keys.build_hasher();
    (&req.method.as_str(), &req.path, &req.query, &req.raw_query).hash(&mut h);
    (
        &req.headers,
        req.body.as_deref(),
        req.key.as_ref().map(|k| &k.key),
    )
        .hash(&mut h);
    let seen = h.finish();
    if r.is_success() {
        memo.served.insert(seen);
        return;
    }
    if !memo.served.contains(&seen) {
        return;
    }
    drop(memo);
    if FAILED.contains(&r.status) {
        ctx.rec.violation(
            id,
            label,
            "the answer it gave this same request before (2xx), a 429, or a clean refusal",
            format!("{}: a server error", r.status),
            Some(x),
        );
    } else {
        ctx.rec.pass(id, label);
    }
}
