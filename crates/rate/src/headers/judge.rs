//! The header rules over a sequence of answers, as `check` (one burst) and `load` (a run) both
//! judge them: Reset, Retry-After, Remaining before the first 429, and how Remaining counts.

use super::*;

/// One answer as a client saw it. Times are UTC epoch seconds.
#[derive(Clone, Copy, Debug)]
pub struct Answer<'a> {
    pub sent: f64,
    pub recv: f64,
    pub status: u16,
    pub remaining: Option<&'a str>,
    pub reset: Option<&'a str>,
    pub retry_after: Option<&'a str>,
}

impl Answer<'_> {
    pub(super) fn admitted(&self) -> bool {
        (200..300).contains(&self.status)
    }
    pub(super) fn throttled(&self) -> bool {
        self.status == 429
    }
}

/// A verdict on one rule over a sequence of answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    pub expected: String,
    pub actual: String,
    /// The answer that shows it (a position in the sequence given).
    pub at: Option<usize>,
    /// Answers the rule judged.
    pub judged: usize,
}

impl Judged {
    pub(super) fn pass(judged: usize, what: impl Into<String>) -> Judged {
        Judged {
            verdict: Verdict::Pass,
            expected: what.into(),
            actual: String::new(),
            at: None,
            judged,
        }
    }
    pub(super) fn fail(
        expected: impl Into<String>,
        actual: impl Into<String>,
        at: usize,
    ) -> Judged {
        Judged {
            verdict: Verdict::Fail,
            expected: expected.into(),
            actual: actual.into(),
            at: Some(at),
            judged: 1,
        }
    }
}

/// The rules `check` and `load` share, by name (`ratelimit.<name>` in `check`, `load.<name>`
/// in `load`), each with its verdict where it had something to judge. Both call this, so a
/// header sequence gets one verdict whichever of them saw it.
pub fn judge_shared(answers: &[Answer], window: Duration) -> Vec<(&'static str, Judged)> {
    judge_shared_skewed(answers, window, None)
}

/// `judge_shared` where the target's clock is `offset` seconds from the client's (estimated
/// from its Date headers, `clock_offset`): the bounds that compare the target's Reset with the
/// client's clock are widened by it.
pub fn judge_shared_skewed(
    answers: &[Answer],
    window: Duration,
    offset: Option<f64>,
) -> Vec<(&'static str, Judged)> {
    let slack = skewed_slack(offset);
    [
        ("reset", judge_resets_within(answers, window, slack)),
        (
            "retry-after",
            judge_retry_afters_within(answers, window, slack),
        ),
        ("remaining", judge_remaining_before_429(answers)),
    ]
    .into_iter()
    .filter_map(|(rule, j)| Some((rule, j?)))
    .collect()
}

/// X-RateLimit-Reset on every admitted or throttled answer: epoch seconds, between now less
/// the slack and one window (plus the slack) ahead, and never moving back between exchanges
/// that did not overlap. None: no answer carried one. "Now" is when the server decided, which
/// the client only knows lies between its send and its receipt: a far target's round trip is
/// allowed for by judging the lower bound from the send and the upper from the receipt.
pub fn judge_resets(answers: &[Answer], window: Duration) -> Option<Judged> {
    judge_resets_within(answers, window, SLACK_SECS)
}

/// `judge_resets` with `slack` seconds on the bounds that compare Reset with the client's
/// clock (`skewed_slack`).
pub fn judge_resets_within(answers: &[Answer], window: Duration, slack: f64) -> Option<Judged> {
    let w = window.as_secs_f64();
    let expected = format!("UTC epoch seconds between now and now + {window:?}, never backwards");
    let mut order: Vec<usize> = (0..answers.len()).collect();
    order.sort_by(|a, b| answers[*a].recv.total_cmp(&answers[*b].recv));
    let (mut millis, mut not_int, mut until, mut out_of_range) = (None, None, None, None);
    let mut seconds = Vec::new();
    for i in order {
        let a = &answers[i];
        let Some(raw) = a.reset.filter(|_| a.admitted() || a.throttled()) else {
            continue;
        };
        match reset_unit(raw) {
            ResetUnit::EpochMillis(v) => {
                millis.get_or_insert((i, v));
            }
            ResetUnit::NotInteger(s) => {
                not_int.get_or_insert((i, s));
            }
            ResetUnit::SecondsUntil(v) => {
                until.get_or_insert((i, v));
            }
            ResetUnit::EpochSeconds(v) => {
                let f = v as f64;
                if f < a.sent - slack {
                    out_of_range
                        .get_or_insert((i, format!("{v} ({:.0} s in the past)", a.sent - f)));
                } else if f > a.recv + w + slack {
                    out_of_range.get_or_insert((
                        i,
                        format!("{v} ({:.0} s ahead, beyond one window)", f - a.recv),
                    ));
                }
                seconds.push((i, a.sent, a.recv, v));
            }
        }
    }
    if let Some((i, v)) = millis {
        return Some(Judged::fail(
            expected,
            format!("{v} (epoch milliseconds, not seconds)"),
            i,
        ));
    }
    if let Some((i, s)) = not_int {
        return Some(Judged::fail(expected, format!("{s:?} (not an integer)"), i));
    }
    if let Some((i, v)) = until {
        return Some(Judged::fail(
            expected,
            format!("{v} (seconds until the reset, not an epoch time)"),
            i,
        ));
    }
    if let Some((i, what)) = out_of_range {
        return Some(Judged::fail(expected, what, i));
    }
    if let Some((i, higher, lower)) = reset_backwards(&seconds) {
        return Some(Judged::fail(
            expected,
            format!("{lower} after {higher} (moved backwards)"),
            i,
        ));
    }
    (!seconds.is_empty()).then(|| Judged::pass(seconds.len(), expected))
}

/// A Reset lower (by more than 1 s of rounding) than one the target gave to an exchange that was
/// over before this one was sent: (position, the higher, the lower). Exchanges in flight
/// together may be served in either order (one just before a fixed window's boundary, one just
/// after), so only requests the server certainly handled later are compared.
/// Items: (position, sent, recv, reset).
pub fn reset_backwards(items: &[(usize, f64, f64, u64)]) -> Option<(usize, u64, u64)> {
    let mut by_recv: Vec<&(usize, f64, f64, u64)> = items.iter().collect();
    by_recv.sort_by(|a, b| a.2.total_cmp(&b.2));
    let mut by_sent: Vec<&(usize, f64, f64, u64)> = items.iter().collect();
    by_sent.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (mut done, mut highest) = (0usize, None::<u64>);
    for &&(i, sent, _, v) in &by_sent {
        while let Some(&&(_, _, recv, h)) = by_recv.get(done)
            && recv < sent
        {
            highest = Some(highest.map_or(h, |x| x.max(h)));
            done += 1;
        }
        if let Some(h) = highest
            && v + 1 < h
        {
            return Some((i, h, v));
        }
    }
    None
}

/// Retry-After on every 429: present, a wait of at most one window (plus the slack; longer
/// suggests milliseconds), and not past the reset the same answer announces. The spec's form is
/// seconds; an HTTP-date (RFC 9110) is non-strict. None: no 429 to judge.
pub fn judge_retry_afters(answers: &[Answer], window: Duration) -> Option<Judged> {
    judge_retry_afters_within(answers, window, SLACK_SECS)
}

/// `judge_retry_afters` with `slack` seconds where Retry-After is compared with Reset by the
/// client's clock (`skewed_slack`).
pub fn judge_retry_afters_within(
    answers: &[Answer],
    window: Duration,
    slack: f64,
) -> Option<Judged> {
    let w = window.as_secs_f64();
    // An HTTP-date's wait is the target's clock less ours: the slack allows for its offset.
    let longest = w + slack;
    let mut judged = 0;
    let mut date = None;
    for (i, a) in answers.iter().enumerate().filter(|(_, a)| a.throttled()) {
        judged += 1;
        let Some(raw) = a.retry_after else {
            return Some(Judged::fail(
                "Retry-After on every 429 (delay-seconds or an HTTP-date)",
                "absent",
                i,
            ));
        };
        let Some(ra) = parse_retry_after(raw) else {
            return Some(Judged::fail(
                "Retry-After on every 429 (delay-seconds or an HTTP-date)",
                format!("{raw:?}"),
                i,
            ));
        };
        let wait = ra.wait_secs(a.recv);
        if wait > longest {
            return Some(Judged::fail(
                format!("at most one window ({window:?}) of seconds"),
                format!("{raw} (milliseconds?)"),
                i,
            ));
        }
        // Quota is back once the window resets: asking to wait longer contradicts Reset. A
        // shorter wait is the limiter's to give (one unit may free before the whole window);
        // whether it is honest is judged by retrying after it. Both count from when the
        // server decided, at the send at the earliest: the longest wait Reset allows.
        if let Some(ResetUnit::EpochSeconds(reset)) = a.reset.map(reset_unit) {
            let by_reset = reset as f64 - a.sent;
            if wait > by_reset + slack {
                return Some(Judged::fail(
                    format!("a wait no longer than X-RateLimit-Reset announces ({by_reset:.0} s)"),
                    format!("Retry-After {raw} ({wait:.0} s)"),
                    i,
                ));
            }
        }
        if matches!(ra, RetryAfter::Date(_)) {
            date.get_or_insert((i, raw));
        }
    }
    if judged == 0 {
        return None;
    }
    Some(match date {
        Some((i, raw)) => Judged {
            verdict: Verdict::NonStrict,
            expected: "Retry-After in seconds, as the spec's table says (RFC 9110 also allows an HTTP-date)".into(),
            actual: format!("{raw:?}"),
            at: Some(i),
            judged,
        },
        None => Judged::pass(judged, "Retry-After on every 429, in seconds, within a window"),
    })
}

/// An admitted answer that could have been served before the first 429 says Remaining 0.
/// None: no 429, or no admitted answer before it said how much remained.
pub fn judge_remaining_before_429(answers: &[Answer]) -> Option<Judged> {
    let (first, f) = answers
        .iter()
        .enumerate()
        .filter(|(_, a)| a.throttled())
        .min_by(|a, b| a.1.recv.total_cmp(&b.1.recv))?;
    let before: Vec<u64> = answers
        .iter()
        .filter(|a| a.admitted() && a.sent <= f.recv)
        .filter_map(|a| parse_count(a.remaining))
        .collect();
    let lowest = *before.iter().min()?;
    Some(if lowest == 0 {
        Judged::pass(before.len(), "X-RateLimit-Remaining 0 before the first 429")
    } else {
        Judged::fail(
            "X-RateLimit-Remaining 0 on an admitted answer before the first 429",
            format!("429 while the lowest Remaining seen was {lowest}"),
            first,
        )
    })
}

/// What consecutive X-RateLimit-Remaining values of admissions sent back to back say.
#[derive(Debug, PartialEq)]
pub enum RemainingTrend {
    /// Fell by one (or quota came back) throughout; `pairs` consecutive pairs judged.
    Counting { pairs: usize },
    /// Fell by more than one between positions `at - 1` and `at`.
    Jumped { at: usize, from: u64, to: u64 },
    /// Fell by one in fewer than half of the pairs: not counting requests.
    Stuck { fell_by_one: usize, pairs: usize },
}

/// Only meaningful for requests sent one after another (`check`'s bursts): under concurrent
/// load, answers overtake each other.
pub fn remaining_trend(values: &[Option<u64>]) -> RemainingTrend {
    let (mut fell_by_one, mut pairs) = (0usize, 0usize);
    for (i, w) in values.windows(2).enumerate() {
        let (Some(a), Some(b)) = (w[0], w[1]) else {
            continue;
        };
        pairs += 1;
        // b >= a: quota came back between the two (a window boundary, expiring entries, a
        // refilled bucket; equal is one unit freed and one used).
        if b < a {
            if a - b == 1 {
                fell_by_one += 1;
            } else {
                return RemainingTrend::Jumped {
                    at: i + 1,
                    from: a,
                    to: b,
                };
            }
        }
    }
    if pairs >= 3 && fell_by_one * 2 < pairs {
        RemainingTrend::Stuck { fell_by_one, pairs }
    } else {
        RemainingTrend::Counting { pairs }
    }
}

/// What one announced X-RateLimit-Limit says against a plan's fixed limit `n` (`check`'s
/// ratelimit.limit and `load`'s load.limit read it alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitReading {
    /// The plan's limit.
    Plan,
    /// The hourly figure of a per-minute limit: the spec calls the header "per hour" while the
    /// standard plans are per minute, so this follows one of its two readings.
    PerHour,
    /// Any other figure.
    Wrong,
}

/// `standard`: the limit is of the standard (per-minute) class, the only one read per hour.
pub fn read_limit(announced: u64, n: u64, standard: bool) -> LimitReading {
    if announced == n {
        LimitReading::Plan
    } else if standard && announced == n.saturating_mul(60) {
        LimitReading::PerHour
    } else {
        LimitReading::Wrong
    }
}
