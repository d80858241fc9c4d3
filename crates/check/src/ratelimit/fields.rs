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
    let at = j.first.as_ref().and_then(|f| log.get(f.at));
    let words = counter::Words {
        what: " (the RateLimit fields' units left, in X-RateLimit-Remaining's place)",
        at: at
            .and_then(|(s, _)| s.fields.as_deref())
            .map_or(String::new(), |f| {
                format!("; {}", f.quoted(ietf::RATELIMIT))
            }),
        more: String::new(),
    };
    counter::record_history(ctx, id, label, key, &j, words, None);
}
