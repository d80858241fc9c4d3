//! `ratelimit.fields` on every answer: the IETF RateLimit fields
//! (draft-ietf-httpapi-ratelimit-headers-11, and the forms of -07 and -06), where a target sends
//! them. The spec names only X-RateLimit-*, so sending them is the target's choice and an
//! answer without them judges nothing; sent, they must say the truth. Read and judged by
//! `linkcert_rate::headers::ietf`, as `load` judges them: on every admitted or throttled answer
//! to a key, whichever family sent it, they are well formed, state the plan's quota and window,
//! and say X-RateLimit-Remaining's units left and X-RateLimit-Reset's reset (on a 429, no
//! reset before Retry-After's wait). The units left over each key's whole history are
//! `ratelimit::fields`'.

use linkcert_http::Resp;
use linkcert_rate::headers as rate_headers;
use linkcert_rate::headers::ietf::{self, Beside, Quota};
use linkcert_registry::check_id;
use linkcert_run::target::PlanKey;
use linkcert_spec::{Limit, Operation};

use super::Ctx;
use crate::probe::Exchange;

/// What the plan of `key` says of a rate class.
pub(crate) fn quota<'a>(ctx: &Ctx, key: &'a PlanKey, class: &str) -> Quota<'a> {
    let limit = ctx.spec.plan(&key.plan).map(|p| p.limit(class));
    Quota {
        plan: &key.plan,
        limit: match limit {
            Some(Limit::Fixed(n)) => Some(n),
            _ => None,
        },
        window: ctx.target.window(&ctx.spec, class),
        standard: class == ctx.spec.default_rate_class,
    }
}

/// One admitted or throttled answer to a request with a key: its fields, where it has them.
pub(super) fn judge(ctx: &Ctx, op: &Operation, x: &Exchange, r: &Resp) {
    let id = check_id!("ratelimit.fields");
    let Some(key) = x.req.key.as_ref() else {
        return;
    };
    if !ctx.enabled(id) {
        return;
    }
    let label = op.label();
    let f = match ietf::read_pairs(r.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        Ok(None) => return,
        Ok(Some(f)) => f,
        Err(m) => {
            ctx.rec.violation(
                id,
                &label,
                format!(
                    "{} well formed, as a draft of the IETF RateLimit fields writes it",
                    m.field
                ),
                format!("{}: {} ({})", m.field, m.value, m.why),
                Some(x),
            );
            return;
        }
    };
    let h = |name| r.header(name);
    // The seconds to the reset count from the answer's Date: a family may hand an answer over
    // well after it came (behind a slower one), so the client's clock is not used here.
    let a = Beside {
        status: r.status,
        remaining: h(rate_headers::REMAINING),
        reset: h(rate_headers::RESET),
        retry_after: h(rate_headers::RETRY_AFTER),
        date: h("date"),
        exchange: None,
    };
    match ietf::judge_answer(&f, &quota(ctx, key, &op.rate_class), &a) {
        Ok(()) => ctx.rec.pass(id, &label),
        Err(u) => ctx.rec.violation(
            id,
            &label,
            format!("{} (read by {})", u.expected, u.draft),
            format!("{}; {}", u.actual, u.quoted),
            Some(x),
        ),
    }
}
