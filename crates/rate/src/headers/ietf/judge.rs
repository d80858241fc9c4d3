//! Whether one answer's RateLimit fields say the truth, as `check` and `load` both judge them.
//! Only what the fields say of the plan's own policy is set against X-RateLimit-*: a target
//! may list other policies (a burst policy beside a daily one) and, as the drafts up to -07
//! ask, report the state of the one closest to running out. So:
//! - a listed policy over the plan's window states the plan's quota (another quota over the
//!   same window contradicts the plan); one over another window is another policy;
//! - a `RateLimit` member is the plan's policy's state when it names the listed policy that
//!   is the plan's, or states the plan's limit (-06, -07), or is the only member beside one
//!   listed policy, the plan's; anything else is another policy's state, not judged here;
//! - the plan's state: its units left are X-RateLimit-Remaining's; its seconds to the reset at
//!   most its window, what X-RateLimit-Reset names, and on a 429 no fewer than Retry-After's.
//!
//! The spec's words also allow a per-hour reading of a per-minute limit (`read_limit`): a
//! policy of 60 times the limit over an hour is read as the plan's too. Whether the units
//! left follow from the key's own history is the counter rule's (`crate::quota`), fed
//! `remaining` by the caller.

use std::time::{Duration, UNIX_EPOCH};

use super::read::{Fields, Form, LIMIT_06, Now, Policy, REMAINING_06, RESET_06};
use super::{POLICY, RATELIMIT};
use crate::headers::{ResetUnit, SLACK_SECS, parse_count, parse_retry_after, reset_unit};

/// What the spec's plan says of the class a request is counted in.
#[derive(Clone, Copy, Debug)]
pub struct Quota<'a> {
    pub plan: &'a str,
    /// The plan's fixed limit per window; None where the spec gives none (a custom plan): then
    /// nothing identifies the plan's policy, and only the fields' form is judged.
    pub limit: Option<u64>,
    pub window: Duration,
    /// The class is the spec's standard (per-minute) one, the only one read per hour.
    pub standard: bool,
}

/// What else one answer says, beside its fields.
#[derive(Clone, Copy, Debug)]
pub struct Beside<'a> {
    pub status: u16,
    pub remaining: Option<&'a str>,
    pub reset: Option<&'a str>,
    pub retry_after: Option<&'a str>,
    pub date: Option<&'a str>,
    /// When the exchange went and came back (UTC epoch seconds), where the caller knows them:
    /// without a Date, what the seconds to the reset count from.
    pub exchange: Option<(f64, f64)>,
}

/// A RateLimit field that says what is not so: the field, quoted as sent, the draft whose
/// meaning it was read by, and what it should have said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Untrue {
    pub field: &'static str,
    pub quoted: String,
    pub draft: &'static str,
    pub expected: String,
    pub actual: String,
}

/// The window of the per-hour reading.
const HOUR: u64 = 3600;

/// A window of `w` whole seconds is `window`: equal, or either whole second around a window
/// that has a fraction (a shortened development window).
fn window_is(w: u64, window: Duration) -> bool {
    (w as f64 - window.as_secs_f64()).abs() < 1.0
}

impl Quota<'_> {
    /// The window, in seconds, a quota of `quota` is the plan's over: its window, the hour of
    /// the per-hour reading, or None (not the plan's).
    fn window_of(&self, quota: u64, w: Option<u64>) -> Option<f64> {
        let n = self.limit?;
        if quota == n && w.is_none_or(|w| window_is(w, self.window)) {
            Some(self.window.as_secs_f64())
        } else if self.standard && quota == n.saturating_mul(60) && w.is_none_or(|w| w == HOUR) {
            Some(HOUR as f64)
        } else {
            None
        }
    }
}

/// The listed policy that is the plan's, with its window in seconds.
fn plans_policy<'f>(f: &'f Fields, q: &Quota) -> Option<(&'f Policy, f64)> {
    f.policies
        .iter()
        .filter(|p| p.requests)
        .find_map(|p| Some((p, q.window_of(p.quota, p.window)?)))
}

/// The members of `RateLimit` that are the plan's policy's state, each with its window.
fn plans_now<'f>(f: &'f Fields, q: &Quota) -> Vec<(&'f Now, f64)> {
    let policy = plans_policy(f, q);
    f.now
        .iter()
        .filter_map(|m| match (&m.policy, m.limit) {
            (Some(name), _) => {
                let (p, w) = policy?;
                (p.name.as_deref() == Some(name.as_str())).then_some((m, w))
            }
            (None, Some(l)) => Some((m, q.window_of(l, None)?)),
            (None, None) => {
                let (_, w) = policy.filter(|_| f.policies.len() == 1 && f.now.len() == 1)?;
                Some((m, w))
            }
        })
        .collect()
}

/// The units the plan's policy has left, as the fields say, for the counter rule: None when
/// they do not say it of that policy alone.
pub fn remaining(f: &Fields, q: &Quota) -> Option<u64> {
    match plans_now(f, q)[..] {
        [(one, _)] => one.remaining,
        _ => None,
    }
}

/// The field and word a finding names for a member's units left, and for its reset.
struct Words {
    remaining: (&'static str, &'static str),
    reset: (&'static str, &'static str),
}

fn words(m: &Now) -> Words {
    match m.form {
        Form::Lists => Words {
            remaining: (RATELIMIT, "r"),
            reset: (RATELIMIT, "t"),
        },
        Form::Dictionary => Words {
            remaining: (RATELIMIT, "remaining"),
            reset: (RATELIMIT, "reset"),
        },
        Form::Separate => Words {
            remaining: (REMAINING_06, "RateLimit-Remaining"),
            reset: (RESET_06, "RateLimit-Reset"),
        },
    }
}

/// Judges one answer's fields `f` (a 2xx or 429 to a request of the key whose plan `q` is),
/// beside the rest of the answer (`a`).
pub fn judge_answer(f: &Fields, q: &Quota, a: &Beside) -> Result<(), Untrue> {
    let draft = f.now.first().map_or(Form::Lists, |m| m.form).draft();
    let untrue = |field: &'static str, expected: String, actual: String| Untrue {
        field,
        quoted: f.quoted(field),
        draft,
        expected,
        actual,
    };
    contradicted_quota(f, q)
        .map_err(|(field, expected, actual)| untrue(field, expected, actual))?;
    let plans = plans_now(f, q);
    let told: Vec<&(&Now, f64)> = plans
        .iter()
        .filter(|(m, _)| m.remaining.is_some())
        .collect();
    let chosen = match parse_count(a.remaining).filter(|_| !told.is_empty()) {
        Some(x) => {
            let same = told.iter().find(|(m, _)| m.remaining == Some(x));
            if let (Some((m, _)), None) = (told.first(), same) {
                let (field, r) = words(m).remaining;
                return Err(untrue(
                    field,
                    format!("{r}={x}, as X-RateLimit-Remaining says"),
                    format!("{r}={}", m.remaining.unwrap_or_default()),
                ));
            }
            same.map(|c| **c)
        }
        None => match plans[..] {
            [one] => Some(one),
            _ => None,
        },
    };
    let Some((m, window)) = chosen else {
        return Ok(());
    };
    let Some(t) = m.reset_in else { return Ok(()) };
    reset_agrees(words(m).reset.1, t, window, a)
        .map_err(|(expected, actual)| untrue(words(m).reset.0, expected, actual))
}

/// A listed policy over the plan's window with another quota, or a limit (-06, -07) that is
/// neither the plan's nor any listed policy's: (field, expected, actual).
fn contradicted_quota(f: &Fields, q: &Quota) -> Result<(), (&'static str, String, String)> {
    let Some(n) = q.limit else { return Ok(()) };
    let window = q.window;
    let listed: Vec<&Policy> = f.policies.iter().filter(|p| p.requests).collect();
    let over_the_window = listed
        .iter()
        .find(|p| p.window.is_some_and(|w| window_is(w, window)) && p.quota != n);
    if let Some(p) = over_the_window {
        return Err((
            POLICY,
            format!(
                "a quota of {n} over {} s, the {} plan's limit per {window:?}",
                p.window.unwrap_or_default(),
                q.plan
            ),
            format!("policies {}", describe(&listed)),
        ));
    }
    for m in f.now.iter().filter(|m| m.policy.is_none()) {
        let Some(l) = m.limit else { continue };
        if !listed.is_empty()
            && q.window_of(l, None).is_none()
            && !listed.iter().any(|p| p.quota == l)
        {
            let field = if m.form == Form::Separate {
                LIMIT_06
            } else {
                RATELIMIT
            };
            return Err((
                field,
                format!(
                    "a limit of {n} (the {} plan's per {window:?}) or of a policy listed",
                    q.plan
                ),
                format!("{l}, beside policies {}", describe(&listed)),
            ));
        }
    }
    Ok(())
}

/// The seconds to the reset `t` of a policy over `window` seconds: at most the window, what
/// X-RateLimit-Reset names, and on a 429 no fewer than Retry-After asks to wait. Counted from
/// when the target answered: its Date (whole seconds, centred; a server may cache it up to a
/// second), else the exchange's middle by the client's clock, less certain by half the round
/// trip; with neither, only the window bounds it.
fn reset_agrees(word: &str, t: u64, window: f64, a: &Beside) -> Result<(), (String, String)> {
    if t as f64 > window + SLACK_SECS {
        return Err((
            format!("{word}: the seconds until the reset, at most the window ({window} s)"),
            format!("{word}={t} (milliseconds, or an epoch time?)"),
        ));
    }
    let by_date = a
        .date
        .and_then(|d| httpdate::parse_http_date(d.trim()).ok())
        .and_then(|d| d.duration_since(UNIX_EPOCH).ok())
        .map(|d| (d.as_secs_f64() + 0.5, SLACK_SECS + 1.0));
    let by_exchange = a
        .exchange
        .map(|(sent, recv)| ((sent + recv) / 2.0, SLACK_SECS + (recv - sent) / 2.0));
    let Some((at, tolerance)) = by_date.or(by_exchange) else {
        return Ok(());
    };
    let x_reset_in = a.reset.map(reset_unit).and_then(|u| match u {
        ResetUnit::EpochSeconds(v) => Some(v as f64 - at),
        ResetUnit::EpochMillis(v) => Some(v as f64 / 1000.0 - at),
        ResetUnit::SecondsUntil(v) => Some(v as f64),
        ResetUnit::NotInteger(_) => None,
    });
    if let Some(x) = x_reset_in
        && (x - t as f64).abs() > tolerance
    {
        return Err((
            format!(
                "{word}={}, the reset X-RateLimit-Reset names",
                x.max(0.0).round()
            ),
            format!("{word}={t}"),
        ));
    }
    let wait = a
        .retry_after
        .filter(|_| a.status == 429)
        .and_then(parse_retry_after)
        .map(|ra| ra.wait_secs(at));
    if let Some(wait) = wait
        && wait > t as f64 + tolerance
    {
        return Err((
            format!("{word} no shorter than the {wait:.0} s Retry-After asks to wait"),
            format!("{word}={t} on a 429"),
        ));
    }
    Ok(())
}

/// Policies as a finding lists them: `"standard";q=60;w=60` or `60;w=60`.
fn describe(policies: &[&Policy]) -> String {
    policies
        .iter()
        .map(|p| {
            let w = p.window.map(|w| format!(";w={w}")).unwrap_or_default();
            match &p.name {
                Some(n) => format!("\"{n}\";q={}{w}", p.quota),
                None => format!("{}{w}", p.quota),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
