//! One rule for a key's rate-limit answers, judged from that key's own history alone, whatever
//! the other keys of the run do: `check` (ratelimit.counter) and `load` (load.counter) both feed
//! it each key's exchanges in send order. Linear in the keys: each key is judged apart.
//!
//! Spec, "Limits": limits are per key ("60 requests per minute, per key"), and "all other
//! endpoints use the standard limits above": one counter per key for every standard operation.
//! The spec names no algorithm, so what follows from a history is what any legal limiter of N
//! per window W may do (field facts, "Rate limiting, from outside"): between two instants it
//! gives back at most the most of
//! - a token bucket or sliding counter: N per W of elapsed time, plus one for rounding;
//! - a sliding log: the key's own admissions that age out meanwhile (one window earlier), plus
//!   what the key may have used before its history starts (its first answer's Remaining says);
//! - a fixed window or a sliding log: N for every window the span touches (a fixed window
//!   gives N back at each boundary; a log admits at most N in any window), unless the
//!   target's own Reset says no boundary passed (both answers name one Reset; never the
//!   client's clock against the target's Reset, since the two clocks may differ by seconds).
//!
//! Times are the client's (send, answer); the target decided each request somewhere between,
//! so every count below is taken the way that favours the target. Three findings:
//! - over-admitted: after an answer saying Remaining r, more admitted than r and the refill;
//! - remaining: Remaining higher than the earlier answer's, less what was admitted since, and
//!   the refill allow (a counter per route, requests not counted, Remaining that does not
//!   count at some phase of the window). Judged against the latest answer, and along answers
//!   that overlapped no other (`chain`), so a slow drift is found as well as a jump;
//! - remaining on a refusal (any status but 2xx and 429 that carries the field): as for an
//!   admission, no higher than the history leaves. Whether a refusal is counted is the
//!   target's choice; a refusal alone in flight that lowers Remaining proves it was
//!   (`Judgement::lowered_by_refusals`);
//! - throttled: a 429 although the key's latest Remaining was more than everything the key
//!   sent since (every status: a target may count refused requests) could spend: another
//!   key's traffic spent it (a counter shared by keys, plans or the workspace);
//! - lowered: an admission's Remaining lower than the key's own requests since an earlier
//!   admission explain, past the tolerance the rule gives an answer the other way (what any
//!   limiter gives back over the span, and two): every legal limiter only gives back as time
//!   passes, so a Remaining that falls further was charged for requests that were not the
//!   key's (another key's, or ones refused for their credential). Judged only on a key whose
//!   every request is in its history (`History::of_every_request`: `check`'s limiter keys);
//!   charges slower than the limit's own rate hide in the tolerance.

use std::collections::{HashMap, VecDeque};

use crate::headers as rate_headers;

/// One exchange of a key as the client saw it (times: UTC epoch seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Said {
    pub sent: f64,
    pub recv: f64,
    /// 0: no answer.
    pub status: u16,
    pub remaining: Option<u64>,
    /// X-RateLimit-Reset, when it is epoch seconds (any other unit is ratelimit.reset's).
    pub reset: Option<u64>,
}

impl Said {
    /// From the raw header values.
    pub fn read(
        sent: f64,
        recv: f64,
        status: u16,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> Said {
        Said {
            sent,
            recv,
            status,
            remaining: rate_headers::parse_count(remaining),
            reset: reset.and_then(rate_headers::epoch_reset),
        }
    }
    fn admitted(&self) -> bool {
        (200..300).contains(&self.status)
    }
    /// An answer that neither admitted nor throttled (a refusal: 4xx, or 5xx).
    fn refused(&self) -> bool {
        self.status != 0 && self.status != 429 && !self.admitted()
    }
    /// What the answer says is left: a 429 says none; no answer says nothing.
    fn left(&self) -> Option<u64> {
        match self.status {
            0 => None,
            429 => Some(0),
            _ => self.remaining,
        }
    }
}

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    OverAdmitted,
    Remaining,
    Throttled,
    /// Remaining lower than the key's own requests explain.
    Lowered,
}

/// One answer the key's history contradicts.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub fault: Fault,
    /// Its position in the key's history (send order, from 0).
    pub at: usize,
    pub expected: String,
    pub actual: String,
}

/// The verdict on one key's history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Judgement {
    /// Answers judged (admissions and 429s with an earlier answer to judge them by).
    pub judged: u64,
    pub faults: u64,
    /// The first fault, in the order the answers were judged.
    pub first: Option<Finding>,
    /// Refusals alone in flight whose Remaining can be set against the answer just before
    /// (both naming one Reset), and of those the ones that said less was left: each of these
    /// was counted against the key (nothing but a charge lowers Remaining).
    pub quiet_refusals: u64,
    pub lowered_by_refusals: u64,
}

struct Entry {
    s: Said,
    /// Admissions up to and including this one, in send order.
    cum: u64,
    /// Every earlier exchange of the key was answered before this one was sent.
    quiet_before: bool,
}

/// The best earlier quiet answer naming one Reset, for the `chain`.
#[derive(Clone, Copy)]
struct Link {
    /// Its (Remaining + admissions so far) less N per W of its send time: the lowest wins.
    g: f64,
    at: usize,
}

/// One key's history, fed in send order; judged as answers settle, so it keeps only what a
/// few windows and the answers in flight hold.
pub struct History {
    n: u64,
    w: f64,
    entries: VecDeque<Entry>,
    /// Position of `entries.front()` in the key's history.
    base: usize,
    cum: u64,
    max_recv: f64,
    max_latency: f64,
    /// The first send, and what the key may have used before it.
    start: Option<(f64, u64)>,
    /// The latest send of an entry no longer kept.
    dropped_to: f64,
    /// Positions not judged yet: something sent before their answer may still come.
    pending: VecDeque<usize>,
    chains: HashMap<u64, Link>,
    /// Every request sent with the key is in the history: `lowered` is judged.
    every_request: bool,
    out: Judgement,
}

mod judge;

/// The most earlier exchanges one answer is compared with: an answer judged against an older
/// one than the latest is judged no less soundly, only less tightly, so a run with thousands
/// in flight costs no more than this per answer.
const REACH: usize = 2048;

impl History {
    /// `n` requests per `window_secs`: the key's plan.
    pub fn new(n: u64, window_secs: f64) -> History {
        History {
            n,
            w: window_secs.max(1e-3),
            entries: VecDeque::new(),
            base: 0,
            cum: 0,
            max_recv: f64::NEG_INFINITY,
            max_latency: 0.0,
            start: None,
            dropped_to: f64::NEG_INFINITY,
            pending: VecDeque::new(),
            chains: HashMap::new(),
            every_request: false,
            out: Judgement::default(),
        }
    }

    /// A history holding every request sent with the key (no one else uses it): a Remaining
    /// lower than its own requests explain is judged too (`Fault::Lowered`).
    pub fn of_every_request(mut self) -> History {
        self.every_request = true;
        self
    }

    /// The next exchange of the key, in send order.
    pub fn observe(&mut self, s: Said) {
        let s = Said {
            recv: s.recv.max(s.sent),
            ..s
        };
        self.start
            .get_or_insert((s.sent, self.n.saturating_sub(s.left().unwrap_or(0))));
        // Everything sent before this one's send is in: answers received before it settle.
        let (entries, base) = (&self.entries, self.base);
        let settled = |i: usize| entries.get(i - base).is_none_or(|e| e.s.recv < s.sent);
        let ready: Vec<usize> = self
            .pending
            .iter()
            .copied()
            .filter(|&i| settled(i))
            .collect();
        self.pending.retain(|&i| !settled(i));
        for i in ready {
            self.judge(i);
        }
        if s.admitted() {
            self.cum += 1;
        }
        let quiet_before = self.max_recv <= s.sent;
        self.max_recv = self.max_recv.max(s.recv);
        self.max_latency = self.max_latency.max(s.recv - s.sent);
        self.entries.push_back(Entry {
            s,
            cum: self.cum,
            quiet_before,
        });
        self.pending.push_back(self.base + self.entries.len() - 1);
        self.prune(s.sent);
    }

    /// The verdict, once every exchange is in.
    pub fn finish(mut self) -> Judgement {
        let rest: Vec<usize> = self.pending.drain(..).collect();
        for i in rest {
            self.judge(i);
        }
        self.out
    }

    /// Judges a whole history at once.
    pub fn judge_all(n: u64, window_secs: f64, history: &[Said]) -> Judgement {
        History::new(n, window_secs).judge_each(history)
    }

    /// Judges these exchanges, then the whole.
    pub fn judge_each(mut self, history: &[Said]) -> Judgement {
        for s in history {
            self.observe(*s);
        }
        self.finish()
    }

    fn get(&self, at: usize) -> Option<&Entry> {
        self.entries.get(at.checked_sub(self.base)?)
    }

    /// Keeps three windows behind the latest send, and whatever is still to be judged.
    fn prune(&mut self, now: f64) {
        let keep_from = now - 3.0 * self.w - self.max_latency;
        let first_pending = self.pending.front().copied().unwrap_or(usize::MAX);
        while let Some(e) = self.entries.front() {
            if e.s.recv >= keep_from || self.base >= first_pending {
                break;
            }
            self.dropped_to = e.s.sent;
            self.entries.pop_front();
            self.base += 1;
        }
        let base = self.base;
        self.chains.retain(|_, l| l.at >= base);
    }

    fn fault(&mut self, fault: Fault, at: usize, expected: String, actual: String) {
        self.out.faults += 1;
        self.out.first.get_or_insert(Finding {
            fault,
            at,
            expected,
            actual,
        });
    }
}

#[cfg(test)]
mod tests;
