//! `ratelimit.every-answer`: the counter rule (`linkcert_rate::quota`, the one `ratelimit.counter`
//! and `load` apply) over every request the run sent with each key, whichever family sent it,
//! judged once when the families are done (the probe's credential log: each request as the
//! wire saw it, answered or not). A new family gets it without asking.
//!
//! Only what the spec makes the standard counter's is taken at its word: an operation of the
//! standard class at its own method and path. Everything else sent with the key (a neighbour's
//! path, another method, an analytics operation, a deactivation: whether the counter counts
//! those is the target's choice, or another counter's) is kept as a request that was sent and
//! whose fields say nothing: it may have spent quota (a later 429 is not blamed on the key's
//! own traffic), and it is never counted as an admission (a Remaining it left untouched is not
//! blamed either). A key whose plan's limit the spec does not give (a custom plan) is judged
//! by the limit its own answers announce. The limiter's own keys are judged by
//! `limiter.over-time`.

use super::*;
use crate::probe::Sent;
use linkcert_rate::quota::{History, Said};

/// Judge each key's whole record (after every family).
pub(crate) fn judge(ctx: &Ctx) {
    let id = check_id!("ratelimit.every-answer");
    if !ctx.enabled(id) {
        return;
    }
    let class = ctx.spec.default_rate_class.clone();
    let w = ctx.target.window(&ctx.spec, &class).as_secs_f64();
    let label = "every answer of the run, key by key";
    let (log, full) = ctx.probe.credential_log();
    if full {
        ctx.rec.observe(
            id,
            label,
            format!(
                "the run sent more requests with a key than the log keeps: judged on the first {}",
                log.len()
            ),
            None,
        );
    }
    for key in &ctx.target.keys {
        let authorization = key.authorization();
        let mut mine: Vec<&Sent> = log
            .iter()
            .filter(|s| s.authorization == authorization)
            .collect();
        mine.sort_by(|a, b| a.said.sent.total_cmp(&b.said.sent));
        let Some(n) = limit(ctx, key, &class, &mine) else {
            continue;
        };
        let said: Vec<Said> = mine.iter().map(|s| counted(ctx, s, &class)).collect();
        let j = History::new(n, w).judge_each(&said);
        match j.first {
            None if j.judged > 0 => ctx.rec.pass(id, label),
            None => {}
            Some(f) => {
                let at = mine
                    .get(f.at)
                    .map(|s| format!("; the answer to {} {}", s.method, s.path))
                    .unwrap_or_default();
                ctx.rec.violation(
                    id,
                    label,
                    format!("the {} key: {}", key.plan, f.expected),
                    format!(
                        "{}: {}{at} ({} of {} answers, over {} requests the run sent with the key)",
                        counter::fault_words(f.fault),
                        f.actual,
                        j.faults,
                        j.judged,
                        said.len()
                    ),
                    None,
                );
            }
        }
    }
}

/// The key's limit per window: its plan's; where the spec names none (a custom plan), the one
/// the key's own answers announce, when they all announce the same (several: that is
/// `ratelimit.limit`'s finding, and nothing is judged here).
fn limit(ctx: &Ctx, key: &PlanKey, class: &str, mine: &[&Sent]) -> Option<u64> {
    if let Limit::Fixed(n) = plan_limit(ctx, key, class) {
        return Some(n);
    }
    let mut announced = mine
        .iter()
        .filter(|s| counted(ctx, s, class).status != 0)
        .filter_map(|s| s.limit);
    let n = announced.next()?;
    announced.all(|m| m == n).then_some(n).filter(|&n| n > 0)
}

/// A request as the rule takes it: an operation of `class` at its own method and path as
/// answered; anything else as sent and saying nothing (status 0: no admission, no fields).
fn counted(ctx: &Ctx, s: &Sent, class: &str) -> Said {
    let standard = ctx.spec.operations.iter().any(|op| {
        op.method == s.method
            && op.path == s.path
            && op.rate_class == class
            && op.id != "deactivatePartner"
    });
    if standard {
        s.said
    } else {
        Said {
            status: 0,
            remaining: None,
            reset: None,
            ..s.said
        }
    }
}
