//! `ratelimit.fields` over each key's history: the units left the IETF RateLimit fields say,
//! by the counter rule over every request the run sent with the key (`every_answer` hands the
//! histories over), as X-RateLimit-Remaining is judged there. Each answer's fields alone are
//! judged as they arrive (`conformance::fields`).

use linkcert_rate::headers::ietf;
use linkcert_rate::quota::{History, Said};
use linkcert_registry::check_id;

use super::*;
use crate::conformance::fields::quota;
use crate::probe::Sent;

/// The units left the fields say, by the counter rule over each key's every request (as
/// `every_answer` judges X-RateLimit-Remaining): judged on the keys whose answers carry them.
pub(crate) fn history(ctx: &Ctx, log: &[(&Sent, Said)], key: &PlanKey, class: &str, n: u64) {
    let id = check_id!("ratelimit.fields");
    let q = quota(ctx, key, class);
    if !ctx.enabled(id) || !log.iter().any(|(s, _)| s.fields.is_some()) {
        return;
    }
    let w = q.window.as_secs_f64();
    // The fields' units left in X-RateLimit-Remaining's place; no Reset: `t` names no instant
    // both answers share.
    let said: Vec<Said> = log
        .iter()
        .map(|(s, said)| Said {
            remaining: s
                .fields
                .as_deref()
                .filter(|_| said.status != 0)
                .and_then(|f| ietf::remaining(f, &q)),
            reset: None,
            ..*said
        })
        .collect();
    let j = History::new(n, w).judge_each(&said);
    let label = "the units left the RateLimit fields say, key by key";
    match j.first {
        None if j.judged > 0 => ctx.rec.pass(id, label),
        None => {}
        Some(f) => {
            let at = log.get(f.at).map(|(s, _)| s);
            let quoted = at
                .and_then(|s| s.fields.as_deref())
                .map(|f| format!("; {}", f.quoted(ietf::RATELIMIT)))
                .unwrap_or_default();
            ctx.rec.violation(
                id,
                label,
                format!("the {} key: {}", key.plan, f.expected),
                format!(
                    "{} (the RateLimit fields' units left, in X-RateLimit-Remaining's place): {}{quoted} ({} of {} answers)",
                    counter::fault_words(f.fault),
                    f.actual,
                    j.faults,
                    j.judged
                ),
                None,
            );
        }
    }
}
