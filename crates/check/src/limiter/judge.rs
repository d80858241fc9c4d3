//! Each key's life judged by the rules `load` judges its keys by (`linkcert_rate`): never on
//! whether a schedule was held, only on what was sent, when, and what came back.

use linkcert_rate::headers as rate_headers;
use linkcert_rate::windows::{Bounds, Learner, Model, NamedWindows, ResetWindows};
use linkcert_registry::check_id;
use linkcert_spec::verdict::Verdict;
use std::time::Duration;

use super::drive::Life;
use crate::Ctx;
use crate::ratelimit::counter::{fault_words, history};
use crate::ratelimit::headers::{Seen, header_verdicts};

/// Whole-second Resets tell windows apart from a window of this many seconds on.
const NAMED_FROM: f64 = 3.0;

/// Every key's life, then the run's model.
pub(super) fn all(ctx: &Ctx, lives: &[Life]) {
    let standard = ctx.spec.default_rate_class.as_str();
    let mut judged: Vec<&Life> = Vec::new();
    for l in lives.iter().filter(|l| l.n > 0) {
        match l.refused_first() {
            Some(st) => ctx.rec.skip(
                check_id!("limiter.over-time"),
                &l.label(standard),
                format!("the class's cheapest request was refused ({st}): its operations are not served to this key"),
            ),
            None => judged.push(l),
        }
    }
    // The model from the classes whose Resets can name windows (the per-second ones cannot).
    let learned: Vec<Option<Model>> = judged
        .iter()
        .map(|l| (l.w >= NAMED_FROM).then(|| learn(l)))
        .collect();
    let models: Vec<(&str, Model)> = judged
        .iter()
        .zip(&learned)
        .filter_map(|(l, m)| Some((l.driven.key.plan.as_str(), (*m)?)))
        .collect();
    let run = Model::of_run(models.iter().map(|(_, m)| *m));
    for (life, own) in judged.iter().zip(&learned) {
        let label = life.label(standard);
        over_time(ctx, life, &label);
        fresh(ctx, life, &label);
        // Windows on the clock, by every key's Resets: each named window is [R - W, R).
        let on_clock = Model::NamedWindows { clock: true };
        windows(ctx, life, &label, run == on_clock && *own == Some(on_clock));
    }
    let w = judged
        .iter()
        .find(|l| l.w >= NAMED_FROM)
        .map_or(0.0, |l| l.w);
    model(ctx, &models, w);
}

fn epoch_reset(s: &Seen) -> Option<u64> {
    rate_headers::epoch_reset(s.exchange.resp()?.header(rate_headers::RESET)?)
}

fn admitted(s: &Seen) -> bool {
    (200..300).contains(&s.status())
}

/// limiter.over-time: the key's own history (`quota`), and its admissions within N for every
/// window its life touched (`Bounds`).
fn over_time(ctx: &Ctx, life: &Life, label: &str) {
    let w = life.w;
    let id = check_id!("limiter.over-time");
    if !ctx.enabled(id) {
        return;
    }
    if !life.whole {
        // Requests in flight were let go when one went unanswered: the target may have
        // decided them, and a history without them would blame it for their charges.
        let why = "the key's life was cut short: a request went unanswered and those in flight were let go (the unanswered request is the other checks' finding)";
        ctx.rec.skip(id, label, why);
        return;
    }
    let j = history(life.n, w, &life.seen, true);
    if let Some(f) = j.first {
        let what = fault_words(f.fault);
        ctx.rec.violation(
            id,
            label,
            format!("the {} key: {}", life.driven.key.plan, f.expected),
            format!(
                "{what}: {} ({} of {} answers)",
                f.actual, j.faults, j.judged
            ),
            life.seen.get(f.at).map(|s| &s.exchange),
        );
        return;
    }
    let (first, last) = match (life.seen.first(), life.seen.last()) {
        (Some(a), Some(b)) => (a.sent, b.sent),
        _ => return,
    };
    let b = Bounds::of(last - first, life.n, w, false);
    let count = life.seen.iter().filter(|s| admitted(s)).count() as f64;
    if count > b.upper {
        ctx.rec.violation(
            id,
            label,
            format!(
                "at most {:.0} admitted in {:.1} s: {} per window of {w} s for each of the {:.0} windows the key's requests touched, and {:.0} for rounding",
                b.upper,
                last - first,
                life.n,
                b.k.ceil() + 1.0,
                b.slack
            ),
            format!("{count} admitted"),
            None,
        );
    } else if j.judged > 0 {
        ctx.rec.pass(id, label);
    }
}

/// limiter.fresh: the request after two idle windows.
fn fresh(ctx: &Ctx, life: &Life, label: &str) {
    let w = life.w;
    let id = check_id!("limiter.fresh");
    let Some((at, idle)) = life.fresh else { return };
    let Some(s) = life.seen.get(at).filter(|_| ctx.enabled(id)) else {
        return;
    };
    let n = life.n;
    let why = format!(
        "the key had sent nothing for {idle:.1} s (two windows of {w} s): every limiter of {n} per window has given the whole quota back"
    );
    let remaining = s
        .exchange
        .resp()
        .and_then(|r| rate_headers::parse_count(r.header(rate_headers::REMAINING)));
    match s.status() {
        429 => ctx.rec.violation(
            id,
            label,
            format!("admitted: {why}"),
            "429",
            Some(&s.exchange),
        ),
        st if (200..300).contains(&st) => match remaining {
            Some(r) if r + 1 < n => ctx.rec.violation(
                id,
                label,
                format!("X-RateLimit-Remaining {}: {why}", n - 1),
                format!("X-RateLimit-Remaining {r}"),
                Some(&s.exchange),
            ),
            _ => ctx.rec.pass(id, label),
        },
        // A refusal or no answer is the other checks' finding.
        _ => {}
    }
}

/// limiter.windows: the windows the target names, counted exactly (its Reset places each
/// answer), once its Reset is one the rules can trust (ratelimit.reset's shared rule holds on
/// this key's answers); `exact`: the run's Resets name windows on the clock, so a named
/// window's every admission counts, not only those provably within one window.
fn windows(ctx: &Ctx, life: &Life, label: &str, exact: bool) {
    let w = life.w;
    let id = check_id!("limiter.windows");
    if !ctx.enabled(id) {
        return;
    }
    if w < NAMED_FROM {
        let why = format!(
            "a window of {w} s: whole-second Resets tell windows apart from {NAMED_FROM} s on"
        );
        ctx.rec.skip(id, label, why);
        return;
    }
    let trusted = header_verdicts(&life.seen, Duration::from_secs_f64(w))
        .into_iter()
        .find(|(rule, _)| *rule == check_id!("ratelimit.reset"))
        .is_none_or(|(_, j)| j.verdict == Verdict::Pass);
    if !trusted {
        ctx.rec.skip(
            id,
            label,
            "X-RateLimit-Reset does not name windows here (ratelimit.reset's finding)",
        );
        return;
    }
    let (mut named, mut resets) = (NamedWindows::with_first(w), ResetWindows::new(w));
    // Admissions by the Reset they name: on the clock's windows (the model), each named
    // window's count is exact, the target's own word placing each; else only those provably
    // within one window count (`ResetWindows`: a Reset counted from a request and rounded to
    // the second names two windows a fraction of a second apart).
    let mut by_reset: std::collections::BTreeMap<u64, u64> = Default::default();
    for s in &life.seen {
        let Some(reset) = epoch_reset(s) else {
            continue;
        };
        let remaining = s
            .exchange
            .resp()
            .and_then(|r| rate_headers::parse_count(r.header(rate_headers::REMAINING)));
        if admitted(s) {
            resets.observe(s.sent, s.at, reset);
            *by_reset.entry(reset).or_default() += 1;
            named.observe(s.sent, true, reset, remaining);
        } else if s.status() == 429 {
            named.observe(s.sent, false, reset, None);
        } else if s.status() != 0 {
            // Refused: whether that used quota is the target's choice, so the room owed
            // counts it as spent (as `load` counts a clean refusal).
            named.refusal(s.sent, reset);
        }
    }
    let n = life.n;
    let (most, reset) = match by_reset.iter().max_by_key(|(_, c)| **c) {
        Some((r, c)) if exact => (*c, *r),
        _ => resets.finish(),
    };
    let within = if exact {
        "every key's Resets name windows on the clock".to_string()
    } else {
        format!("provably within {w} s")
    };
    let fixed = named.finish(n);
    if most > n {
        ctx.rec.violation(
            id,
            label,
            format!("at most {n} admitted in the window X-RateLimit-Reset {reset} names"),
            format!("{most} admitted naming it ({within})"),
            None,
        );
    } else if let Some(s) = fixed.short {
        ctx.rec.violation(
            id,
            label,
            format!(
                "min({n}, requests naming it) = {} admitted in the window X-RateLimit-Reset {} names: it began with the whole quota (X-RateLimit-Remaining {} on its first admission)",
                n.min(s.answers),
                s.reset,
                n - 1
            ),
            format!("{} admitted of {} naming it", s.admitted, s.answers),
            None,
        );
    } else if most > 0 || fixed.judged > 0 {
        ctx.rec.pass(id, label);
    }
}

/// The model one key's Resets show (admissions and 429s, in send order).
fn learn(life: &Life) -> Model {
    let mut l = Learner::new(life.w);
    for s in life
        .seen
        .iter()
        .filter(|s| admitted(s) || s.status() == 429)
    {
        l.observe(epoch_reset(s));
    }
    l.finish()
}

/// limiter.model: the run's one model, and each key's where they differ.
fn model(ctx: &Ctx, models: &[(&str, Model)], w: f64) {
    let id = check_id!("limiter.model");
    if !ctx.enabled(id) || models.is_empty() {
        return;
    }
    let run = Model::of_run(models.iter().map(|(_, m)| *m));
    let mut text = format!("the run's limiter: {}", run.describe(w));
    let odd: Vec<String> = models
        .iter()
        .filter(|(_, m)| *m != run && *m != Model::Unknown)
        .map(|(plan, m)| format!("the {plan} key: {}", m.describe(w)))
        .collect();
    if !odd.is_empty() {
        text.push_str(&format!("; keys differ: {}", odd.join("; ")));
    }
    ctx.rec.observe(id, "*", text, None);
}
