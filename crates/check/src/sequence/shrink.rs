//! Shrinking a failing sequence against a remote, stateful target: the steps after the failing
//! one are dropped (they were never sent), then each earlier step is left out in turn and the
//! rest replayed on fresh fixtures from the pool; a replay that still fails the same check is
//! kept. It stops when no step can go, after `MAX_REPLAYS`, or when the pool is spent, and the
//! report says which.

use super::model::Failure;
use super::play::{Played, play};
use super::steps::{AT_ONCE, Key, Step, form_name};
use super::{Pool, Setup};
use crate::Ctx;

/// Replays at most, per failing sequence.
const MAX_REPLAYS: usize = 12;

/// A shrunk failing sequence.
pub(super) struct Shrunk {
    pub steps: Vec<Step>,
    pub played: Played,
    pub from: usize,
    pub replays: usize,
    /// Why shrinking stopped where it did, when not for want of a step that can go.
    pub stopped: Option<&'static str>,
}

fn failure(p: &Played) -> Option<&(usize, Failure)> {
    p.failure.as_ref()
}

/// Shrink `steps`, whose play `played` failed.
pub(super) async fn shrink(
    ctx: &Ctx,
    s: &Setup<'_>,
    pool: &mut Pool,
    steps: Vec<Step>,
    played: Played,
) -> Shrunk {
    let from = steps.len();
    let Some((at, first)) = failure(&played).cloned() else {
        return Shrunk {
            steps,
            played,
            from,
            replays: 0,
            stopped: None,
        };
    };
    let mut best = Shrunk {
        steps: steps[..=at].to_vec(),
        played,
        from,
        replays: 0,
        stopped: None,
    };
    let mut i = 0;
    while i + 1 < best.steps.len() {
        if best.replays >= MAX_REPLAYS {
            best.stopped = Some("shrinking stopped after its most replays");
            break;
        }
        let mut candidate = best.steps.clone();
        candidate.remove(i);
        let Some(cast) = pool.cast(&candidate) else {
            best.stopped = Some("shrinking stopped: the spare fixture pool is spent");
            break;
        };
        best.replays += 1;
        let replayed = play(ctx, s, &cast, &candidate).await;
        match failure(&replayed) {
            Some((at, f)) if f.check == first.check => {
                best.steps = candidate[..=*at].to_vec();
                best.played = replayed;
            }
            _ => i += 1,
        }
    }
    best
}

/// How a report names a step.
fn describe(s: &Setup<'_>, step: Step) -> String {
    match step {
        Step::Tags => "GET /tags".into(),
        Step::Qr => "GET /qr".into(),
        Step::Links => "GET /links of the partner fixture".into(),
        Step::Deactivate(key, form) => {
            let who = match key {
                Key::Owner => "the owner's key".to_string(),
                Key::Gated(i) => s.gated.get(i).map_or("a gated key".into(), |k| {
                    format!("the {} key (a plan below the operation's)", k.plan)
                }),
                Key::Other(i) => s
                    .others
                    .get(i)
                    .map_or("another key".into(), |k| format!("the {} key", k.plan)),
            };
            format!("deactivate {} with {who}", form_name(form))
        }
        Step::AtOnce(form) => format!(
            "deactivate {} with the owner's key, {AT_ONCE} times at once",
            form_name(form)
        ),
    }
}

/// The failure of sequence `n`, shrunk: its steps in order, each with its answer and curl
/// line (keys as their variables), and the command that replays it.
pub(super) fn report(ctx: &Ctx, s: &Setup<'_>, n: usize, shrunk: &Shrunk) {
    let Some((_, f)) = failure(&shrunk.played) else {
        return;
    };
    let secrets = ctx.target.secrets();
    let mut lines = vec![format!(
        "{} at request {} of sequence {n}, shrunk from {} steps to {} in {} replays{}:",
        f.actual,
        shrunk.played.sent.len(),
        shrunk.from,
        shrunk.steps.len(),
        shrunk.replays,
        shrunk.stopped.map_or(String::new(), |w| format!(" ({w})"))
    )];
    for (k, (_, step, x)) in shrunk.played.sent.iter().enumerate() {
        let status = x.status().map_or("no answer".into(), |c| c.to_string());
        lines.push(format!(
            "  {}. {} -> {status}\n     {}",
            k + 1,
            describe(s, *step),
            x.curl(&secrets)
        ));
    }
    lines.push(format!(
        "replay: linkcert check --only sequence --seed {} (same target, keys and fixtures; a \
         fresh reference replays it)",
        ctx.opts.seed
    ));
    // The failing request is the last one sent.
    let x = shrunk.played.sent.last().map(|(.., x)| x);
    ctx.rec
        .violation(f.check, &s.label, f.expected.clone(), lines.join("\n"), x);
}
