//! load.retry-after, load.reset, load.remaining (what the headers mean: the rules `check`
//! judges too, from `linkcert_rate::headers`) and load.headers (every 2xx and 429 carries them, as
//! integers: `rate_headers::header_fault`; and no answer of any status carries one twice:
//! `rate_headers::repeated`; as `check` judges them).
//!
//! `check` judges a short burst as one list; here answers come one at a time, in send order,
//! and each is judged alone by the same `rate_headers` functions. What spans answers is kept
//! small: the first failure of each kind, counts, the lowest Remaining before the first 429,
//! and, for Reset never moving back, the exchanges still in flight at the latest send.

use linkcert_registry::{Rule as RuleId, rule_id};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::order::OrdF64;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use linkcert_rate::headers::{self as rate_headers, Answer};
use linkcert_spec::verdict::Verdict;
use rate_headers::{HeaderFault, Judged, ResetUnit};

pub(super) struct State {
    wall0: f64,
    window: std::time::Duration,
    /// The slack on comparing the target's Reset with our clock (`rate_headers::skewed_slack`
    /// of its clock offset).
    slack: f64,
    /// Answers (2xx or 429), of them those lacking an X-RateLimit-* header and those carrying
    /// one that is not an integer (with the first such header).
    answered: u64,
    absent: u64,
    not_integer: u64,
    not_integer_example: Option<String>,
    /// Answers of any status carrying a rate-limit field more than once, and the first.
    repeated: u64,
    repeated_example: Option<String>,
    retry_after: RetryAfters,
    remaining: RemainingBefore429,
    reset: Resets,
}

/// load.retry-after: each 429 judged alone; the first failure (in send order) is the verdict,
/// else the first HTTP-date (non-strict), else a pass over all of them.
#[derive(Default)]
struct RetryAfters {
    judged: usize,
    fail: Option<Judged>,
    date: Option<Judged>,
    pass: Option<Judged>,
}

/// load.remaining: the lowest Remaining of admissions (and clean refusals) sent before the first 429's answer
/// (epoch seconds). In send order an admission's place is settled when it arrives: any 429
/// still to come was sent, so answered, no earlier than it.
struct RemainingBefore429 {
    first_429_recv: Option<f64>,
    before: usize,
    lowest: Option<u64>,
}

/// load.reset: the first answer (by receipt) of each way a Reset can be wrong, and the first
/// that moved back. `in_flight`: (recv, reset) of exchanges answered after the latest send;
/// `highest`: the highest Reset of those answered before it.
#[derive(Default)]
struct Resets {
    seconds: usize,
    /// (rank of the kind of failure, recv, verdict): lower ranks win, then the first received.
    fail: Option<(u8, f64, Judged)>,
    pass: Option<Judged>,
    in_flight: BinaryHeap<Reverse<(OrdF64, u64)>>,
    highest: Option<u64>,
    backwards: Option<(u64, u64)>,
}

impl State {
    pub fn new(wall0: f64, window: std::time::Duration, offset: Option<f64>) -> State {
        State {
            wall0,
            window,
            slack: rate_headers::skewed_slack(offset),
            answered: 0,
            absent: 0,
            not_integer: 0,
            not_integer_example: None,
            repeated: 0,
            repeated_example: None,
            retry_after: RetryAfters::default(),
            remaining: RemainingBefore429 {
                first_429_recv: None,
                before: 0,
                lowest: None,
            },
            reset: Resets::default(),
        }
    }

    /// Each field once, on any status; present and an integer on every 2xx and 429, an
    /// integer on a clean refusal that carries it.
    fn fields(&mut self, x: &Record) {
        // Any status: wherever a target puts the fields, each comes once.
        if let Some(r) = &x.repeated {
            self.repeated += 1;
            self.repeated_example.get_or_insert_with(|| r.clone());
        }
        // A clean refusal need not carry the fields (the spec does not say); where it does,
        // they are judged as the others'.
        let judged = x.admitted() || x.throttled();
        if judged || x.refused() {
            self.answered += u64::from(judged);
            // Presence and integer form, judged as `check` judges them.
            match rate_headers::header_fault(&rate_headers::ON_EVERY_ANSWER, |n| x.rate_header(n)) {
                Some(HeaderFault::Absent { .. }) if judged => self.absent += 1,
                Some(HeaderFault::Absent { .. }) => {}
                Some(HeaderFault::NotInteger { name, value }) => {
                    self.not_integer += 1;
                    self.not_integer_example
                        .get_or_insert_with(|| format!("{name}: {value}"));
                }
                None => {}
            }
        }
    }

    /// Take the key's next answer in send order.
    pub fn observe(&mut self, x: &Record) {
        self.fields(x);
        let Some(status) = x.status else { return };
        let a = Answer {
            sent: self.wall0 + x.sent,
            recv: self.wall0 + x.recv,
            status,
            remaining: x.remaining.as_deref(),
            reset: x.reset.as_deref(),
            retry_after: x.retry_after.as_deref(),
        };
        let one = [a];
        // Retry-After.
        if let Some(jd) = rate_headers::judge_retry_afters_within(&one, self.window, self.slack) {
            let ra = &mut self.retry_after;
            ra.judged += 1;
            let slot = match jd.verdict {
                Verdict::Fail => &mut ra.fail,
                Verdict::NonStrict => &mut ra.date,
                _ => &mut ra.pass,
            };
            slot.get_or_insert(jd);
        }
        // Remaining before the first 429: the last of the quota may go to a clean refusal
        // (a target that counts refusals says its 0 there).
        let rm = &mut self.remaining;
        if x.throttled() {
            rm.first_429_recv = Some(rm.first_429_recv.map_or(a.recv, |f| f.min(a.recv)));
        } else if x.spent()
            && rm.first_429_recv.is_none_or(|f| a.sent <= f)
            && let Some(v) = rate_headers::parse_count(a.remaining)
        {
            rm.before += 1;
            rm.lowest = Some(rm.lowest.map_or(v, |l| l.min(v)));
        }
        // Reset.
        let rs = &mut self.reset;
        // Exchanges answered before this one was sent are certainly earlier at the server.
        while let Some(Reverse((recv, v))) = rs.in_flight.peek().copied()
            && recv.0 < a.sent
        {
            rs.in_flight.pop();
            rs.highest = Some(rs.highest.map_or(v, |h| h.max(v)));
        }
        let Some(raw) = a
            .reset
            .filter(|_| x.admitted() || x.throttled() || x.refused())
        else {
            return;
        };
        let Some(jd) = rate_headers::judge_resets_within(&one, self.window, self.slack) else {
            return;
        };
        let rank = match rate_headers::reset_unit(raw) {
            ResetUnit::EpochMillis(_) => 0,
            ResetUnit::NotInteger(_) => 1,
            ResetUnit::SecondsUntil(_) => 2,
            ResetUnit::EpochSeconds(v) => {
                rs.seconds += 1;
                if let Some(h) = rs.highest
                    && v + 1 < h
                {
                    rs.backwards.get_or_insert((h, v));
                }
                rs.in_flight.push(Reverse((OrdF64(a.recv), v)));
                3
            }
        };
        if jd.verdict == Verdict::Fail {
            if rs
                .fail
                .as_ref()
                .is_none_or(|(r, t, _)| (rank, a.recv) < (*r, *t))
            {
                rs.fail = Some((rank, a.recv, jd));
            }
        } else {
            rs.pass.get_or_insert(jd);
        }
    }

    /// load.reset fails: the Reset does not name the target's windows.
    pub fn reset_failed(&self) -> bool {
        self.reset.fail.is_some() || self.reset.backwards.is_some()
    }

    /// The three shared rules' verdicts, as `rate_headers::judge_shared` gives them.
    fn shared(&self) -> Vec<(RuleId, Judged)> {
        let rs = &self.reset;
        let reset = if let Some((_, _, jd)) = &rs.fail {
            Some(jd.clone())
        } else if let (Some((higher, lower)), Some(p)) = (rs.backwards, &rs.pass) {
            Some(Judged {
                verdict: Verdict::Fail,
                expected: p.expected.clone(),
                actual: format!("{lower} after {higher} (moved backwards)"),
                at: None,
                judged: 1,
            })
        } else {
            rs.pass.clone().map(|p| Judged {
                judged: rs.seconds,
                ..p
            })
        };
        let ra = &self.retry_after;
        let retry_after = ra
            .fail
            .clone()
            .or_else(|| ra.date.clone().or_else(|| ra.pass.clone()))
            .map(|jd| match jd.verdict {
                Verdict::Fail => jd,
                _ => Judged {
                    judged: ra.judged,
                    ..jd
                },
            });
        let rm = &self.remaining;
        let remaining = match (rm.first_429_recv, rm.lowest) {
            // The same verdict `check` gives, from the two answers that decide it.
            (Some(recv), Some(lowest)) => {
                let text = lowest.to_string();
                let two = [
                    Answer {
                        sent: recv,
                        recv,
                        status: 200,
                        remaining: Some(&text),
                        reset: None,
                        retry_after: None,
                    },
                    Answer {
                        sent: recv,
                        recv,
                        status: 429,
                        remaining: None,
                        reset: None,
                        retry_after: None,
                    },
                ];
                rate_headers::judge_remaining_before_429(&two).map(|jd| match jd.verdict {
                    Verdict::Pass => Judged {
                        judged: rm.before,
                        ..jd
                    },
                    _ => jd,
                })
            }
            _ => None,
        };
        [
            (rule_id!("load.reset"), reset),
            (rule_id!("load.retry-after"), retry_after),
            (rule_id!("load.remaining"), remaining),
        ]
        .into_iter()
        .filter_map(|(rule, j)| Some((rule, j?)))
        .collect()
    }
}

pub(super) fn judge(j: &mut Judge, view: &KeyView, st: &State) {
    let lbl = view.label;
    // What the headers mean: the rules `check` judges with the same functions.
    for (rule, jd) in st.shared() {
        j.shared(rule, lbl, &jd);
    }
    if st.absent + st.not_integer + st.repeated > 0 {
        let mut what = Vec::new();
        let mut actual = Vec::new();
        if let Some(example) = &st.repeated_example {
            what.push(format!(
                "{} carry a rate-limit field more than once ({example})",
                st.repeated
            ));
            actual.push(format!("{} repeated", st.repeated));
        }
        if st.absent > 0 {
            what.push(format!("{} lack an X-RateLimit-* header", st.absent));
            actual.push(format!("{} without", st.absent));
        }
        if let Some(example) = &st.not_integer_example {
            what.push(format!(
                "{} carry one that is not an integer ({example})",
                st.not_integer
            ));
            actual.push(format!("{} not an integer", st.not_integer));
        }
        j.fail(
            rule_id!("load.headers"),
            lbl,
            format!("of {} answers, {}", st.answered, what.join(", ")),
            "X-RateLimit-Limit, -Remaining and -Reset on every 2xx and 429, each once and a non-negative integer".into(),
            actual.join(", "),
        );
    }
}

/// load.headers, load.retry-after, load.reset and load.remaining, for every key.
pub(super) struct Headers;

impl Rule for Headers {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        Some(Box::new(State::new(s.wall0, s.r.window, s.r.clock_offset)))
    }
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        State::observe(self, x);
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, notes: &mut KeyNotes) {
        judge(j, view, &self);
        notes.reset_failed = self.reset_failed();
    }
}
