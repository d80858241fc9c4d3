//! load.fields: the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11, and the
//! forms of -07 and -06), where a target sends them, judged on every admitted or throttled
//! answer of each key as `check`'s ratelimit.fields judges them (`rate_headers::ietf`): well
//! formed, the plan's quota and window, X-RateLimit-Remaining's units left, X-RateLimit-Reset's
//! reset, and on a 429 no reset before Retry-After's wait; and the units left they say, in
//! X-RateLimit-Remaining's place, by the counter rule over the key's whole history (the rule
//! load.counter applies). A key none of whose answers carries them judges nothing: the spec
//! names only X-RateLimit-*.

use linkcert_registry::rule_id;
use std::time::Duration;

use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use linkcert_rate::headers::ietf::{self, Beside, Quota};
use linkcert_rate::quota::{History, Said};

pub(super) struct State {
    wall0: f64,
    plan: String,
    limit: Option<u64>,
    window: Duration,
    standard: bool,
    history: History,
    /// Answers whose fields were judged, and those found untrue or malformed.
    judged: u64,
    untrue: u64,
    /// The first untrue or malformed one: (request of the key's, in send order; expected;
    /// actual, with the field quoted).
    first: Option<(u64, String, String)>,
    seen: u64,
}

impl State {
    fn quota(&self) -> Quota<'_> {
        Quota {
            plan: &self.plan,
            limit: self.limit,
            window: self.window,
            standard: self.standard,
        }
    }

    /// One answer's fields judged on their own: their units left, for the history.
    fn judge_one(&mut self, x: &Record) -> Option<u64> {
        let seen = x.fields.as_deref()?;
        let pairs = seen.pairs.iter().map(|(k, v)| (*k, v.as_str()));
        // Judged on admitted and throttled answers, as `check` judges them; a refusal's fields
        // (a gateway's, say) only feed the history, where well formed.
        let judged = x.admitted() || x.throttled();
        let (expected, actual) = match ietf::read_pairs(pairs) {
            Ok(None) => return None,
            Err(_) if !judged => return None,
            Ok(Some(f)) => {
                let remaining = ietf::remaining(&f, &self.quota());
                if !judged {
                    return remaining;
                }
                let a = Beside {
                    status: x.status.unwrap_or(0),
                    remaining: x.remaining.as_deref(),
                    reset: x.reset.as_deref(),
                    retry_after: x.retry_after.as_deref(),
                    date: seen.date.as_deref(),
                    exchange: Some((self.wall0 + x.sent, self.wall0 + x.recv)),
                };
                self.judged += 1;
                match ietf::judge_answer(&f, &self.quota(), &a) {
                    Ok(()) => return remaining,
                    Err(u) => (
                        format!("{} (read by {})", u.expected, u.draft),
                        format!("{}; {}", u.actual, u.quoted),
                    ),
                }
            }
            Err(m) => {
                self.judged += 1;
                (
                    format!("{} well formed, as a draft of the IETF RateLimit fields writes it", m.field),
                    format!("{}: {} ({})", m.field, m.value, m.why),
                )
            }
        };
        self.untrue += 1;
        self.first.get_or_insert((self.seen, expected, actual));
        None
    }
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        self.seen += 1;
        let remaining = self.judge_one(x);
        self.history.observe(Said {
            sent: self.wall0 + x.sent,
            recv: self.wall0 + x.recv,
            status: x.status.unwrap_or(0),
            remaining,
            reset: None,
        });
    }

    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, _: &mut KeyNotes) {
        let id = rule_id!("load.fields");
        if self.judged == 0 {
            return;
        }
        if let Some((at, expected, actual)) = self.first {
            j.fail(
                id,
                view.label,
                format!(
                    "the RateLimit fields untrue or malformed on {} of {} answers (request {at} of the key's, in send order)",
                    self.untrue, self.judged
                ),
                expected,
                actual,
            );
            return;
        }
        let history = self.history.finish();
        match history.first {
            Some(f) => j.fail(
                id,
                view.label,
                format!(
                    "the units left the RateLimit fields say do not follow from the key's own history: {} of {} answers (request {} of the key's, in send order)",
                    history.faults,
                    history.judged,
                    f.at + 1
                ),
                f.expected,
                f.actual,
            ),
            None => j.pass(
                id,
                view.label,
                format!(
                    "the RateLimit fields true on all {} answers that carried them",
                    self.judged
                ),
            ),
        }
    }
}

/// load.fields, for every key.
pub(super) struct Fields;

impl Rule for Fields {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        let plan = s.r.keys.get(s.key).map_or(&s.r.scenario.plan, |k| &k.plan);
        let n = s.r.key_limit(s.key);
        let limit = (n > 0 && !s.r.custom.contains(&s.key)).then_some(n);
        Some(Box::new(State {
            wall0: s.wall0,
            plan: plan.clone(),
            limit,
            window: s.r.window,
            standard: s.r.standard,
            // A key without a limit the spec gives: only what the same answer says is judged.
            history: History::new(limit.unwrap_or(u64::MAX), s.r.window.as_secs_f64()),
            judged: 0,
            untrue: 0,
            first: None,
            seen: 0,
        }))
    }
}
