//! What the rate-limit headers mean, written once. The reference builds its headers here;
//! `check` and `load` judge a target's headers here, so one header sequence gets one verdict
//! whichever of them saw it.
//!
//! Spec, "Rate limits", "Headers": X-RateLimit-Limit, X-RateLimit-Remaining ("requests
//! remaining in the current window"), X-RateLimit-Reset ("time the current window resets, UTC
//! epoch seconds") and Retry-After ("seconds to wait before retrying"). RFC 9110 (10.2.3) also
//! lets Retry-After be an HTTP-date.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::verdict::Verdict;

pub const LIMIT: &str = "x-ratelimit-limit";
pub const REMAINING: &str = "x-ratelimit-remaining";
pub const RESET: &str = "x-ratelimit-reset";
pub const RETRY_AFTER: &str = "retry-after";

/// Rounding to whole seconds plus a round trip: the slack on Reset and Retry-After.
pub const SLACK_SECS: f64 = 2.0;
/// At or above this a Reset is epoch milliseconds: read as seconds it would fall after the year
/// 5000, read as milliseconds after 1973.
pub const EPOCH_MILLIS_FROM: u64 = 100_000_000_000;
/// Below this a Reset is a count of seconds (until the reset), not an epoch time: 2001-09-09
/// in epoch seconds.
pub const EPOCH_SECONDS_FROM: u64 = 1_000_000_000;

/// The wall clock in UTC epoch seconds.
pub fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Whole seconds, rounded up: never less than the real wait.
pub fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The headers as the reference sends them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateHeaders {
    pub limit: u64,
    pub remaining: u64,
    /// UTC epoch seconds, rounded up.
    pub reset_epoch: u64,
    /// On a throttled answer only: whole seconds, rounded up, at least 1.
    pub retry_after: Option<u64>,
}

impl RateHeaders {
    /// `wait`: until quota next frees, counted from `wall`.
    pub fn new(
        limit: u64,
        remaining: u64,
        wait: Duration,
        wall: SystemTime,
        throttled: bool,
    ) -> RateHeaders {
        let reset_epoch = wall
            .checked_add(wait)
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, ceil_secs);
        RateHeaders {
            limit,
            remaining,
            reset_epoch,
            retry_after: throttled.then(|| ceil_secs(wait).max(1)),
        }
    }

    /// (header name, value) pairs, in the spec's order.
    pub fn pairs(&self) -> impl Iterator<Item = (&'static str, u64)> {
        [
            (LIMIT, Some(self.limit)),
            (REMAINING, Some(self.remaining)),
            (RESET, Some(self.reset_epoch)),
            (RETRY_AFTER, self.retry_after),
        ]
        .into_iter()
        .filter_map(|(n, v)| Some((n, v?)))
    }
}

/// A Limit or Remaining value: a non-negative integer.
pub fn parse_count(raw: Option<&str>) -> Option<u64> {
    raw?.trim().parse().ok()
}

/// What an X-RateLimit-Reset value is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResetUnit {
    /// The spec's unit.
    EpochSeconds(u64),
    /// The real service's published deviation.
    EpochMillis(u64),
    /// A small count: seconds until the reset (another common convention), not an epoch time.
    SecondsUntil(u64),
    NotInteger(String),
}

pub fn reset_unit(raw: &str) -> ResetUnit {
    match raw.trim().parse::<u64>() {
        Err(_) => ResetUnit::NotInteger(raw.to_string()),
        Ok(v) if v >= EPOCH_MILLIS_FROM => ResetUnit::EpochMillis(v),
        Ok(v) if v < EPOCH_SECONDS_FROM => ResetUnit::SecondsUntil(v),
        Ok(v) => ResetUnit::EpochSeconds(v),
    }
}

/// A Retry-After value in either of RFC 9110's forms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RetryAfter {
    /// delay-seconds: the spec's form.
    Seconds(u64),
    /// An HTTP-date, in UTC epoch seconds.
    Date(f64),
}

pub fn parse_retry_after(raw: &str) -> Option<RetryAfter> {
    let raw = raw.trim();
    if let Ok(n) = raw.parse::<u64>() {
        return Some(RetryAfter::Seconds(n));
    }
    let at = httpdate::parse_http_date(raw).ok()?;
    Some(RetryAfter::Date(
        at.duration_since(UNIX_EPOCH).ok()?.as_secs_f64(),
    ))
}

impl RetryAfter {
    /// Seconds to wait, counted from `now` (UTC epoch seconds).
    pub fn wait_secs(self, now: f64) -> f64 {
        match self {
            RetryAfter::Seconds(n) => n as f64,
            RetryAfter::Date(at) => (at - now).max(0.0),
        }
    }
}

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
    fn admitted(&self) -> bool {
        (200..300).contains(&self.status)
    }
    fn throttled(&self) -> bool {
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
    fn pass(judged: usize, what: impl Into<String>) -> Judged {
        Judged {
            verdict: Verdict::Pass,
            expected: what.into(),
            actual: String::new(),
            at: None,
            judged,
        }
    }
    fn fail(expected: impl Into<String>, actual: impl Into<String>, at: usize) -> Judged {
        Judged {
            verdict: Verdict::Fail,
            expected: expected.into(),
            actual: actual.into(),
            at: Some(at),
            judged: 1,
        }
    }
}

/// X-RateLimit-Reset on every admitted or throttled answer: epoch seconds, between receipt less
/// the slack and one window (plus the slack) ahead, and never moving back between exchanges
/// that did not overlap. None: no answer carried one.
pub fn judge_resets(answers: &[Answer], window: Duration) -> Option<Judged> {
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
                if f < a.recv - SLACK_SECS {
                    out_of_range
                        .get_or_insert((i, format!("{v} ({:.0} s in the past)", a.recv - f)));
                } else if f > a.recv + w + SLACK_SECS {
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
    let w = window.as_secs_f64();
    let longest = w + SLACK_SECS;
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
        // whether it is honest is judged by retrying after it.
        if let Some(ResetUnit::EpochSeconds(reset)) = a.reset.map(reset_unit) {
            let by_reset = reset as f64 - a.recv;
            if wait > by_reset + SLACK_SECS {
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: f64 = 1_800_000_000.0;
    const W: Duration = Duration::from_secs(60);

    fn answer<'a>(
        t: f64,
        status: u16,
        reset: Option<&'a str>,
        retry: Option<&'a str>,
    ) -> Answer<'a> {
        Answer {
            sent: t - 0.01,
            recv: t,
            status,
            remaining: None,
            reset,
            retry_after: retry,
        }
    }

    #[test]
    fn reset_units_are_told_apart() {
        assert_eq!(
            reset_unit("1800000030"),
            ResetUnit::EpochSeconds(1_800_000_030)
        );
        assert_eq!(
            reset_unit(" 1800000030000 "),
            ResetUnit::EpochMillis(1_800_000_030_000)
        );
        assert_eq!(reset_unit("30"), ResetUnit::SecondsUntil(30));
        assert_eq!(reset_unit("soon"), ResetUnit::NotInteger("soon".into()));
        assert_eq!(reset_unit("-3"), ResetUnit::NotInteger("-3".into()));
    }

    #[test]
    fn retry_after_reads_both_rfc_forms() {
        assert_eq!(parse_retry_after("7"), Some(RetryAfter::Seconds(7)));
        let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(NOW as u64 + 5));
        let ra = parse_retry_after(&date).unwrap();
        assert_eq!(ra.wait_secs(NOW), 5.0);
        assert_eq!(
            ra.wait_secs(NOW + 10.0),
            0.0,
            "a date in the past: retry now"
        );
        assert_eq!(parse_retry_after("-3"), None);
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn the_reference_s_headers_round_up_and_read_back_as_the_spec_s_units() {
        let wall = UNIX_EPOCH + Duration::from_secs(NOW as u64);
        let h = RateHeaders::new(60, 0, Duration::from_millis(39_500), wall, true);
        assert_eq!(h.retry_after, Some(40));
        assert_eq!(h.reset_epoch, NOW as u64 + 40);
        let names: Vec<&str> = h.pairs().map(|(n, _)| n).collect();
        assert_eq!(names, [LIMIT, REMAINING, RESET, RETRY_AFTER]);
        let reset = h.reset_epoch.to_string();
        let retry = "40";
        let seq = [answer(NOW, 429, Some(&reset), Some(retry))];
        assert_eq!(judge_resets(&seq, W).unwrap().verdict, Verdict::Pass);
        assert_eq!(judge_retry_afters(&seq, W).unwrap().verdict, Verdict::Pass);
        // Admitted: no Retry-After, and a wait of zero still says at least 1 s when throttled.
        let h = RateHeaders::new(60, 59, Duration::ZERO, wall, false);
        assert_eq!(h.retry_after, None);
        assert_eq!(h.pairs().count(), 3);
        assert_eq!(
            RateHeaders::new(60, 0, Duration::ZERO, wall, true).retry_after,
            Some(1)
        );
    }

    #[test]
    fn resets_in_the_wrong_unit_or_place_fail_and_say_why() {
        let verdict = |resets: &[&str]| {
            let seq: Vec<Answer> = resets
                .iter()
                .enumerate()
                .map(|(i, r)| answer(NOW + i as f64, 200, Some(r), None))
                .collect();
            judge_resets(&seq, W).map(|j| (j.verdict, j.actual))
        };
        assert_eq!(
            verdict(&["1800000060", "1800000060"]).unwrap().0,
            Verdict::Pass
        );
        let (v, why) = verdict(&["1800000060000"]).unwrap();
        assert_eq!((v, why.contains("milliseconds")), (Verdict::Fail, true));
        let (v, why) = verdict(&["60"]).unwrap();
        assert_eq!((v, why.contains("seconds until")), (Verdict::Fail, true));
        let (v, why) = verdict(&["1799999990"]).unwrap();
        assert_eq!((v, why.contains("in the past")), (Verdict::Fail, true));
        let (v, why) = verdict(&["1800000100"]).unwrap();
        assert_eq!(
            (v, why.contains("beyond one window")),
            (Verdict::Fail, true)
        );
        let (v, why) = verdict(&["1800000060", "1800000050"]).unwrap();
        assert_eq!((v, why.contains("backwards")), (Verdict::Fail, true));
        // 1 s of rounding is not backwards; no Reset at all is not judged here.
        assert_eq!(
            verdict(&["1800000060", "1800000059"]).unwrap().0,
            Verdict::Pass
        );
        assert_eq!(verdict(&[]), None);
    }

    #[test]
    fn reset_backwards_only_between_exchanges_that_did_not_overlap() {
        // In flight together (both sent before either answered): either order is legal.
        let overlapping = [(0, 0.0, 0.5, 120), (1, 0.1, 0.4, 114)];
        assert_eq!(reset_backwards(&overlapping), None);
        // The second was sent after the first's answer: it may not go back.
        let sequential = [(0, 0.0, 0.1, 120), (1, 0.2, 0.3, 114)];
        assert_eq!(reset_backwards(&sequential), Some((1, 120, 114)));
        assert_eq!(
            reset_backwards(&[(0, 0.0, 0.1, 120), (1, 0.2, 0.3, 119)]),
            None
        );
        assert_eq!(
            reset_backwards(&[(0, 0.0, 0.1, 114), (1, 0.2, 0.3, 120)]),
            None
        );
    }

    #[test]
    fn retry_after_is_judged_in_either_form_against_the_window_and_reset() {
        let reset = "1800000030";
        let verdict = |retry: Option<&str>| {
            judge_retry_afters(&[answer(NOW, 429, Some(reset), retry)], W).map(|j| j.verdict)
        };
        assert_eq!(verdict(Some("30")), Some(Verdict::Pass));
        // Shorter than Reset: the limiter's choice (retrying judges honesty).
        assert_eq!(verdict(Some("1")), Some(Verdict::Pass));
        assert_eq!(verdict(Some("45")), Some(Verdict::Fail), "past the reset");
        assert_eq!(verdict(Some("30000")), Some(Verdict::Fail), "milliseconds");
        assert_eq!(verdict(None), Some(Verdict::Fail));
        assert_eq!(verdict(Some("-3")), Some(Verdict::Fail));
        let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(NOW as u64 + 30));
        assert_eq!(verdict(Some(&date)), Some(Verdict::NonStrict));
        // No 429: nothing to judge.
        assert_eq!(
            judge_retry_afters(&[answer(NOW, 200, Some(reset), None)], W),
            None
        );
    }

    #[test]
    fn remaining_reaches_zero_before_the_first_429() {
        let seq = |rem: &[&'static str]| {
            let mut v: Vec<Answer> = rem
                .iter()
                .enumerate()
                .map(|(i, r)| Answer {
                    remaining: Some(r),
                    ..answer(NOW + i as f64, 200, None, None)
                })
                .collect();
            v.push(answer(NOW + rem.len() as f64, 429, None, Some("1")));
            judge_remaining_before_429(&v).map(|j| j.verdict)
        };
        assert_eq!(seq(&["2", "1", "0"]), Some(Verdict::Pass));
        assert_eq!(seq(&["2", "1"]), Some(Verdict::Fail));
        assert_eq!(seq(&[]), None);
    }

    #[test]
    fn remaining_may_stay_or_rise_when_quota_comes_back_but_must_count() {
        let trend = |v: &[u64]| remaining_trend(&v.iter().map(|x| Some(*x)).collect::<Vec<_>>());
        // Exact counting; a refill now and then (equal pairs); a window boundary (a rise).
        assert_eq!(
            trend(&[5, 4, 3, 2, 1, 0]),
            RemainingTrend::Counting { pairs: 5 }
        );
        assert_eq!(
            trend(&[59, 58, 57, 57, 56, 55, 55, 54]),
            RemainingTrend::Counting { pairs: 7 }
        );
        assert_eq!(
            trend(&[2, 1, 0, 59, 58]),
            RemainingTrend::Counting { pairs: 4 }
        );
        // Frozen, or dropping by two: not counting this client's requests one by one.
        assert!(matches!(
            trend(&[42, 42, 42, 42, 42]),
            RemainingTrend::Stuck {
                fell_by_one: 0,
                pairs: 4
            }
        ));
        assert_eq!(
            trend(&[10, 9, 7]),
            RemainingTrend::Jumped {
                at: 2,
                from: 9,
                to: 7
            }
        );
        // Missing values are skipped, not guessed.
        assert_eq!(
            remaining_trend(&[Some(3), None, Some(1)]),
            RemainingTrend::Counting { pairs: 0 }
        );
    }
}
