//! Whether one answer's RateLimit fields say the truth, as `check` and `load` both judge them:
//! the policy's quota and window are the plan's, the units left are X-RateLimit-Remaining's,
//! the seconds to the reset are what X-RateLimit-Reset names (and, on a 429, no shorter than
//! Retry-After asks to wait). Whether the units left follow from the key's own history is the
//! counter rule's (`crate::quota`), fed `remaining` by the caller.
//!
//! Several policies may be listed (a burst policy beside a daily one): the one that is the
//! plan's is judged, and a `RateLimit` member naming another policy is that policy's state,
//! not judged against X-RateLimit-*.

use std::time::{Duration, UNIX_EPOCH};

use super::read::{Fields, Form, LIMIT_06, Now, Policy, REMAINING_06, RESET_06};
use super::{POLICY, RATELIMIT};
use crate::headers::{Answer, ResetUnit, SLACK_SECS, parse_count, parse_retry_after, reset_unit};

/// What the spec's plan says of the class a request is counted in.
#[derive(Clone, Copy, Debug)]
pub struct Quota<'a> {
    pub plan: &'a str,
    /// The plan's fixed limit per window; None where the spec gives none (a custom plan).
    pub limit: Option<u64>,
    pub window: Duration,
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

/// A window of `w` whole seconds is `window`: equal, or either whole second around a window
/// that has a fraction (a shortened development window).
fn window_is(w: u64, window: Duration) -> bool {
    (w as f64 - window.as_secs_f64()).abs() < 1.0
}

/// The listed policy that is the plan's: the quota its limit, the window its window (or none).
fn plans_policy(f: &Fields, n: u64, window: Duration) -> Option<&Policy> {
    f.policies
        .iter()
        .find(|p| p.requests && p.quota == n && p.window.is_none_or(|w| window_is(w, window)))
}

/// The members of the current state that are the plan's policy's: those naming it, or, when
/// the policy has no name or none is listed, every member.
fn plans_now<'f>(f: &'f Fields, q: &Quota) -> Vec<&'f Now> {
    let policy = q.limit.and_then(|n| plans_policy(f, n, q.window));
    match policy.and_then(|p| p.name.as_deref()) {
        Some(name) => f
            .now
            .iter()
            .filter(|m| m.policy.as_deref().is_none_or(|p| p == name))
            .collect(),
        None => f.now.iter().collect(),
    }
}

/// The units the plan's policy has left, as the fields say, for the counter rule: None when
/// they do not say it of that policy alone.
pub fn remaining(f: &Fields, q: &Quota) -> Option<u64> {
    match plans_now(f, q)[..] {
        [one] => one.remaining,
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
/// beside its X-RateLimit-* and Retry-After (`a`) and its Date.
pub fn judge_answer(f: &Fields, q: &Quota, a: &Answer, date: Option<&str>) -> Result<(), Untrue> {
    let draft = f.now.first().map_or(Form::Lists, |m| m.form).draft();
    let untrue = |field: &'static str, expected: String, actual: String| Untrue {
        field,
        quoted: f.quoted(field),
        draft,
        expected,
        actual,
    };
    let window = q.window;
    if let Some(n) = q.limit {
        let listed: Vec<&Policy> = f.policies.iter().filter(|p| p.requests).collect();
        if !listed.is_empty() && plans_policy(f, n, window).is_none() {
            return Err(untrue(
                POLICY,
                format!(
                    "a policy of quota {n} per {window:?} (w={}, or no w): the {} plan's limit",
                    window.as_secs_f64().round(),
                    q.plan
                ),
                format!("policies {}", describe(&listed)),
            ));
        }
        for m in &f.now {
            let Some(l) = m.limit else { continue };
            if l != n && !listed.iter().any(|p| p.quota == l) {
                let field = if m.form == Form::Separate {
                    LIMIT_06
                } else {
                    RATELIMIT
                };
                return Err(untrue(
                    field,
                    format!("a limit of {n}, the {} plan's per {window:?}", q.plan),
                    format!("{l}"),
                ));
            }
        }
    }
    let candidates = plans_now(f, q);
    let told_any = candidates.iter().any(|m| m.remaining.is_some());
    let chosen = match parse_count(a.remaining).filter(|_| told_any) {
        Some(x) => {
            let told: Vec<&&Now> = candidates
                .iter()
                .filter(|m| m.remaining.is_some())
                .collect();
            let same: Vec<&Now> = told
                .iter()
                .filter(|m| m.remaining == Some(x))
                .map(|m| **m)
                .collect();
            if let (Some(m), true) = (told.first(), same.is_empty()) {
                let (field, r) = words(m).remaining;
                return Err(untrue(
                    field,
                    format!("{r}={x}, as X-RateLimit-Remaining says"),
                    format!("{r}={}", m.remaining.unwrap_or_default()),
                ));
            }
            same.first().copied()
        }
        None => match candidates[..] {
            [one] => Some(one),
            _ => None,
        },
    };
    let Some(m) = chosen else { return Ok(()) };
    let Some(t) = m.reset_in else { return Ok(()) };
    reset_agrees(f, m, t, q, a, date)
        .map_err(|(expected, actual)| untrue(words(m).reset.0, expected, actual))
}

/// The member's seconds to the reset `t`: within the policy's window, what X-RateLimit-Reset
/// names, and on a 429 no shorter than Retry-After's wait. Counted from when the target
/// answered: its Date (whole seconds, centred; a server may cache it up to a second), else the
/// exchange's middle by the client's clock, less certain by half the round trip.
fn reset_agrees(
    f: &Fields,
    m: &Now,
    t: u64,
    q: &Quota,
    a: &Answer,
    date: Option<&str>,
) -> Result<(), (String, String)> {
    let word = words(m).reset.1;
    let policy_window = q
        .limit
        .and_then(|n| plans_policy(f, n, q.window))
        .and_then(|p| p.window)
        .map_or(q.window.as_secs_f64(), |w| w as f64);
    if t as f64 > policy_window + SLACK_SECS {
        return Err((
            format!("{word}: the seconds until the reset, at most the window ({policy_window} s)"),
            format!("{word}={t} (milliseconds, or an epoch time?)"),
        ));
    }
    let by_date = date
        .and_then(|d| httpdate::parse_http_date(d.trim()).ok())
        .and_then(|d| d.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64() + 0.5);
    let (at, tolerance) = match by_date {
        Some(at) => (at, SLACK_SECS + 1.0),
        None => (
            (a.sent + a.recv) / 2.0,
            SLACK_SECS + (a.recv - a.sent) / 2.0,
        ),
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
