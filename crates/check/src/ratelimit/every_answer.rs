//! `ratelimit.every-answer`: the counter rule (`linkcert_rate::quota`, the one `ratelimit.counter`
//! and `load` apply) over every request the run sent with each key, whichever family sent it,
//! judged once when the families are done (the probe's request log: each request as the
//! wire saw it, answered or not). A new family gets it without asking.
//!
//! Only what the spec makes the standard counter's is taken at its word: an operation of the
//! standard class at its own method and path. Everything else sent with the key (a neighbour's
//! path, another method, an analytics operation, a deactivation: whether the counter counts
//! those is the target's choice, or another counter's) is kept as a request that was sent and
//! whose fields say nothing: it may have spent quota (a later 429 is not blamed on the key's
//! own traffic), and it is never counted as an admission (a Remaining it left untouched is not
//! blamed either); so is a request carrying the key in another form (another spelling of the
//! scheme, a second header, the query). A request let go unanswered may have been decided at
//! any time after. A key whose plan's limit the spec does not give (a custom plan) is judged
//! on its 429s alone. The limiter's own keys are judged by `limiter.over-time`.

use super::*;
use crate::probe::Sent;
use linkcert_rate::quota::{History, Said};

/// Judge each key's whole record (after every family).
pub(crate) fn judge(ctx: &Ctx) {
    let id = check_id!("ratelimit.every-answer");
    // The same histories judge the RateLimit fields' units left (`fields::history`).
    let own = ctx.enabled(id);
    if !own && !ctx.enabled(check_id!("ratelimit.fields")) {
        return;
    }
    let class = ctx.spec.default_rate_class.clone();
    let w = ctx.target.window(&ctx.spec, &class).as_secs_f64();
    let label = "every answer of the run, key by key";
    let (log, full) = ctx.probe.take_request_log();
    if full && own {
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
        let mut mine: Vec<(&Sent, Form)> = log
            .iter()
            .filter_map(|s| Some((s, form(s, key)?)))
            .collect();
        mine.sort_by(|a, b| a.0.said.sent.total_cmp(&b.0.said.sent));
        // Let go unanswered, a request may have been decided at any time after: up to the end
        // of the key's history, for all the rule knows.
        let end = mine.iter().map(|(s, _)| s.said.recv).fold(0.0, f64::max);
        let said: Vec<Said> = mine
            .iter()
            .map(|(s, f)| {
                let mut said = counted(ctx, s, *f, &class);
                if !s.answered {
                    said.recv = said.recv.max(end);
                }
                said
            })
            .collect();
        let n = limit(ctx, key, &class);
        let pairs: Vec<(&Sent, Said)> = mine
            .iter()
            .map(|(s, _)| *s)
            .zip(said.iter().copied())
            .collect();
        super::fields::history(ctx, &pairs, key, &class, n);
        if !own {
            continue;
        }
        let j = History::new(n, w).judge_each(&said);
        let at = j.first.as_ref().and_then(|f| mine.get(f.at));
        let words = counter::Words {
            what: "",
            at: at.map_or(String::new(), |(s, _)| {
                format!("; the answer to {} {}", s.method, s.path)
            }),
            more: format!(", over {} requests the run sent with the key", said.len()),
        };
        counter::record_history(ctx, id, label, key, &j, words, None);
    }
}

/// How a request carries a key: as `check` sends it (one Authorization header, the key's own
/// form), or in any other way (another spelling of the scheme, a second header, the query):
/// a target may count those against the key or not.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Own,
    Other,
}

/// How `s` carries `key`, if it does.
fn form(s: &Sent, key: &PlanKey) -> Option<Form> {
    let own = key.authorization();
    if s.authorization.len() == 1 && s.authorization[0] == own && !s.query.contains(&key.key) {
        return Some(Form::Own);
    }
    let mentions =
        s.authorization.iter().any(|a| a.contains(&key.key)) || s.query.contains(&key.key);
    mentions.then_some(Form::Other)
}

/// The key's limit per window: its plan's. Where the spec names none (a custom plan), the
/// window and the quota the target keeps are its own, and the Limit it announces may be any
/// figure (per hour, a bucket's capacity): only a 429 with quota left can be judged, which
/// needs neither (a limit no history reaches).
fn limit(ctx: &Ctx, key: &PlanKey, class: &str) -> u64 {
    match plan_limit(ctx, key, class) {
        Limit::Fixed(n) => n,
        _ => u64::MAX,
    }
}

/// A request as the rule takes it: an operation of `class` at its own method and path, with
/// the key in its own form, as answered; anything else as sent and saying nothing (status 0:
/// no admission, no fields).
fn counted(ctx: &Ctx, s: &Sent, form: Form, class: &str) -> Said {
    let standard = form == Form::Own
        && ctx.spec.operations.iter().any(|op| {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(authorization: &[&str], query: &str) -> Sent {
        Sent {
            authorization: authorization.iter().map(|a| a.to_string()).collect(),
            query: query.to_string(),
            method: http::Method::GET,
            path: "/tags".into(),
            said: Said::read(0.0, 0.1, 200, Some("5"), None),
            answered: true,
            fields: None,
        }
    }

    /// The key as `check` sends it is taken at its word; in any other form it is a request
    /// that may have spent quota; another key's request is not the key's at all.
    #[test]
    fn a_key_in_another_form_is_kept_as_saying_nothing() {
        let key = PlanKey {
            plan: "free".into(),
            key: "lk_free_1".into(),
        };
        let own = key.authorization();
        assert!(matches!(form(&sent(&[&own], ""), &key), Some(Form::Own)));
        for other in [
            sent(&["bearer lk_free_1"], ""),
            sent(&["Bearer  lk_free_1"], ""),
            sent(&[&own, &own], ""),
            sent(&[], "apiKey=lk_free_1"),
            sent(&[&own], "apiKey=lk_free_1"),
        ] {
            assert!(matches!(form(&other, &key), Some(Form::Other)), "{other:?}");
        }
        assert!(form(&sent(&["Bearer lk_pro_1"], ""), &key).is_none());
        assert!(form(&sent(&[], ""), &key).is_none());
    }
}
