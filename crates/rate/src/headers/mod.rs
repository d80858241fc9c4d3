//! What the rate-limit headers mean, written once. The reference builds its headers here;
//! `check` and `load` judge a target's headers here, so one header sequence gets one verdict
//! whichever of them saw it.
//!
//! Spec, "Rate limits", "Headers": X-RateLimit-Limit, X-RateLimit-Remaining ("requests
//! remaining in the current window"), X-RateLimit-Reset ("time the current window resets, UTC
//! epoch seconds") and Retry-After ("seconds to wait before retrying"). RFC 9110 (10.2.3) also
//! lets Retry-After be an HTTP-date.
//!
//! Here: the names, the slack, the units, building (the reference), parsing, whether one
//! answer's headers are there in integer form (`header_fault`) and when one answer says quota
//! is back (`quota_back`). `judge.rs`: the rules over a sequence of answers that `check` and
//! `load` both apply.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use linkcert_spec::verdict::Verdict;

pub mod ietf;
mod judge;

pub use judge::*;

pub const LIMIT: &str = "x-ratelimit-limit";
pub const REMAINING: &str = "x-ratelimit-remaining";
pub const RESET: &str = "x-ratelimit-reset";
pub const RETRY_AFTER: &str = "retry-after";

/// Rounding to whole seconds plus a round trip: the slack on Reset and Retry-After.
pub const SLACK_SECS: f64 = 2.0;

/// The slack on comparing the target's Reset with the client's clock, the target's clock
/// `offset` seconds from the client's: widened by the offset and its uncertainty (Date has
/// whole seconds, half a second either way once centred).
pub fn skewed_slack(offset: Option<f64>) -> f64 {
    SLACK_SECS + offset.map_or(0.0, |o| o.abs() + 0.5)
}

/// The target's clock less the client's, in seconds, from answers' Date headers: the median
/// over `(sent, recv, Date)` of Date (centred: it has whole seconds) less the exchange's
/// mid-time, as `linkcert merge` estimates it. None: no answer had a Date that parses.
pub fn clock_offset<'a>(answers: impl IntoIterator<Item = (f64, f64, &'a str)>) -> Option<f64> {
    let mut offsets: Vec<f64> = answers
        .into_iter()
        .filter_map(|(sent, recv, date)| {
            let theirs = httpdate::parse_http_date(date.trim()).ok()?;
            let theirs = theirs.duration_since(UNIX_EPOCH).ok()?.as_secs_f64();
            let off = theirs + 0.5 - (sent + recv) / 2.0;
            off.is_finite().then_some(off)
        })
        .collect();
    if offsets.is_empty() {
        return None;
    }
    offsets.sort_by(f64::total_cmp);
    Some(offsets[offsets.len() / 2])
}

/// At or above this a Reset is epoch milliseconds: read as seconds it would fall after the year
/// 5000, read as milliseconds after 1973.
pub const EPOCH_MILLIS_FROM: u64 = 100_000_000_000;

/// Below this a Reset is a count of seconds (until the reset), not an epoch time: 2001-09-09
/// in epoch seconds.
pub const EPOCH_SECONDS_FROM: u64 = 1_000_000_000;

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
    /// Whole seconds until the reset, rounded up: Retry-After's on a throttled answer (the
    /// IETF `RateLimit` field's `t`, `ietf`).
    pub reset_in: u64,
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
        let retry_after = throttled.then(|| ceil_secs(wait).max(1));
        RateHeaders {
            limit,
            remaining,
            reset_epoch,
            retry_after,
            reset_in: retry_after.unwrap_or_else(|| ceil_secs(wait)),
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

/// The headers every admitted or throttled answer to an authenticated request carries (the
/// spec's `x-linkcert-rate-headers`; `load` records these three).
pub const ON_EVERY_ANSWER: [&str; 3] = [LIMIT, REMAINING, RESET];

/// What is wrong with a rate-limit header an answer must carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderFault {
    Absent {
        name: String,
    },
    /// Limit and Remaining are counts and Reset is epoch seconds: each a non-negative integer.
    NotInteger {
        name: String,
        value: String,
    },
}

/// The first of `names` an answer lacks or carries in other than integer form; `value_of`
/// gives the answer's value of a header by name. `check` and `load` both judge presence with
/// this, so a Limit of `abc` fails both.
pub fn header_fault<'a, N: AsRef<str>>(
    names: &[N],
    value_of: impl Fn(&str) -> Option<&'a str>,
) -> Option<HeaderFault> {
    names.iter().find_map(|name| {
        let name = name.as_ref();
        match value_of(name) {
            None => Some(HeaderFault::Absent {
                name: name.to_string(),
            }),
            Some(v) if parse_count(Some(v)).is_none() => Some(HeaderFault::NotInteger {
                name: name.to_string(),
                value: v.to_string(),
            }),
            Some(_) => None,
        }
    })
}

/// The first of `names` (with Retry-After) that an answer carries more than once, with its
/// values in the order they came; `fields` are all the answer's (name, value) pairs. Each
/// names one number (the spec's table): two of them, even equal, leave a client to guess
/// which one counts, and a proxy that merges them gives `60, 60`. Any status: wherever a
/// target puts them.
pub fn repeated<'a, N: AsRef<str>>(
    names: &[N],
    fields: impl Iterator<Item = (&'a str, &'a str)> + Clone,
) -> Option<(String, Vec<String>)> {
    names
        .iter()
        .map(AsRef::as_ref)
        .chain([RETRY_AFTER])
        .find_map(|name| {
            let values: Vec<String> = fields
                .clone()
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_string())
                .collect();
            (values.len() > 1).then(|| (name.to_string(), values))
        })
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

/// X-RateLimit-Reset when it is in the spec's unit (epoch seconds); any other unit is
/// ratelimit.reset's finding, and None here.
pub fn epoch_reset(raw: &str) -> Option<u64> {
    match reset_unit(raw) {
        ResetUnit::EpochSeconds(v) => Some(v),
        _ => None,
    }
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

/// When one answer says its key's quota is back, as UTC epoch seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuotaBack {
    /// The instant X-RateLimit-Reset names, in whichever unit `reset_unit` finds it.
    pub reset: Option<f64>,
    /// Whether that Reset was in the spec's unit (epoch seconds). Pacing trusts only such a
    /// Reset; any other is `reset`'s finding.
    pub reset_in_spec_unit: bool,
    /// On a 429 only: the instant its Retry-After asks to wait until.
    pub retry: Option<f64>,
}

impl QuotaBack {
    /// The Reset, when it was in the spec's unit.
    pub fn spec_reset(&self) -> Option<f64> {
        self.reset.filter(|_| self.reset_in_spec_unit)
    }
    /// The later of Reset and Retry-After.
    pub fn latest(&self) -> Option<f64> {
        match (self.reset, self.retry) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What one answer's Reset and (on a 429) Retry-After say about when quota is back; `recv`:
/// when the answer arrived (UTC epoch seconds), from which seconds-until and Retry-After count.
pub fn quota_back(
    status: u16,
    reset: Option<&str>,
    retry_after: Option<&str>,
    recv: f64,
) -> QuotaBack {
    let unit = reset.map(reset_unit);
    QuotaBack {
        reset: unit.as_ref().and_then(|u| match *u {
            ResetUnit::EpochSeconds(s) => Some(s as f64),
            ResetUnit::EpochMillis(ms) => Some(ms as f64 / 1000.0),
            ResetUnit::SecondsUntil(n) => Some(recv + n as f64),
            ResetUnit::NotInteger(_) => None,
        }),
        reset_in_spec_unit: matches!(unit, Some(ResetUnit::EpochSeconds(_))),
        retry: retry_after
            .filter(|_| status == 429)
            .and_then(parse_retry_after)
            .map(|ra| recv + ra.wait_secs(recv)),
    }
}

#[cfg(test)]
mod tests;
