//! `http.neighbour-auth`: each neighbour of an operation (`super::neighbours`) sent with the
//! credentials that must not be served (none, a key that looks issued and was not, a key of a
//! plan below the operation's), and a deactivation's naming a fixture with the plan below's
//! key (`gated_on_fixture`): refused cleanly, or redirected; a 2xx off the spec's paths fails
//! only where it is the operation's own answer.

use super::super::{Judged, answer_text};
use super::{neighbours, note};
use crate::Ctx;
use crate::auth::look_alike;
use crate::conformance::Expect;
use crate::probe::{Exchange, Req};
use linkcert_http::{Resp, is_envelope};
use linkcert_registry::check_id;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

/// A key of a plan that may not call `op`, if the run has one.
pub(super) fn key_below<'a>(ctx: &'a Ctx, op: &Operation) -> Option<&'a PlanKey> {
    op.min_plan.as_ref()?;
    ctx.target.keys.iter().find(|k| {
        ctx.spec
            .plan(&k.plan)
            .is_some_and(|plan| !ctx.spec.plan_allows(plan, op))
    })
}

/// `req` with each credential that must not be served: none, a key that looks issued and was
/// not, and a key of a plan below the operation's where the run has one.
pub(super) fn credentials(req: &Req, key: &PlanKey, below: Option<&PlanKey>) -> Vec<(String, Req)> {
    let mut bare = req.clone();
    bare.key = None;
    let alike = bare
        .clone()
        .header("authorization", format!("Bearer {}", look_alike(&key.key)));
    let mut out = vec![
        ("without a key".to_string(), bare.clone()),
        ("with a key that was never issued".to_string(), alike),
    ];
    if let Some(k) = below {
        let who = format!("with a {} key (a plan below the operation's)", k.plan);
        out.push((who, bare.key(k)));
    }
    out
}

/// The neighbours of a state-changing request that names a fixture (`req`; `id`, the
/// fixture's), and the request itself, each sent with a key of a plan below the operation's:
/// the plan gate holds on every shape. A gated key spends nothing: the fixture changes only
/// where the target fails. Whether any was served (then the fixture may be spent); none sent
/// without such a key.
pub(in crate::http) async fn gated_on_fixture(
    ctx: &Ctx,
    op: &Operation,
    req: &Req,
    id: &str,
) -> bool {
    let Some(below) = key_below(ctx, op).cloned() else {
        return false;
    };
    let who = format!(
        "with a {} key (a plan below the operation's), naming the fixture partner {id}",
        below.plan
    );
    let refusals = std::iter::once(("the request itself".to_string(), req.clone()))
        .chain(neighbours(op, req).into_iter().map(|n| (n.what, n.req)))
        .map(|(what, mut r)| {
            r.key = None;
            Refusal {
                what,
                who: who.clone(),
                off_path: r.path != req.path,
                req: r.key(&below),
                served: None,
            }
        })
        .collect();
    // Off the spec's paths, a 2xx is the operation's only where it names the fixture.
    let names = |r: &Resp| String::from_utf8_lossy(&r.body).contains(id);
    refuse_each(ctx, op, &op.label(), refusals, &names).await > 0
}

/// A request that must be refused.
pub(super) struct Refusal {
    /// The neighbour, and whose credential it carries.
    pub what: String,
    pub who: String,
    pub req: Req,
    /// The status the run's key got for the same shape (None: not sent, or no answer).
    pub served: Option<u16>,
    /// Its path is not the spec's (a suffix, a prefix, another case...).
    pub off_path: bool,
}

/// Send each refusal, `--concurrency` at a time, and judge it by `http.neighbour-auth`;
/// `serves`: whether a 2xx off the spec's paths is the operation's own answer. How many got
/// the operation's answer (a 2xx on its path, or one `serves` names).
pub(super) async fn refuse_each(
    ctx: &Ctx,
    op: &Operation,
    label: &str,
    refusals: Vec<Refusal>,
    serves: &(dyn Fn(&Resp) -> bool + Sync),
) -> usize {
    let expected = "401 or 403 in the envelope (or another clean refusal): a shape is served to \
                    no credential the operation refuses";
    let sends = refusals
        .iter()
        .map(|r| (op, r.req.clone(), Expect::Any))
        .collect();
    let mut served = 0;
    ctx.exchange_each(sends, |i, x, _| {
        if let Some(r) = refusals.get(i) {
            let operation = |a: &Resp| a.is_success() && (!r.off_path || serves(a));
            served += usize::from(x.resp().is_some_and(operation));
            let j = judge_refused(r, &x, serves);
            note(
                ctx,
                check_id!("http.neighbour-auth"),
                label,
                expected,
                j,
                &x,
            );
        }
    })
    .await;
    served
}

/// A neighbour sent with a credential that must not be served (`r`: the refusal), and whether
/// a 2xx to it is the operation's own answer (`serves`).
fn judge_refused(r: &Refusal, x: &Exchange, serves: &(dyn Fn(&Resp) -> bool + Sync)) -> Judged {
    let (what, who) = (&r.what, &r.who);
    let Some(a) = x.resp() else {
        return Judged::Fail(format!("{} for {what} {who}", answer_text(x)));
    };
    match a.status {
        429 => Judged::Throttled,
        // A redirect (to the path normalised, say) serves nothing: the request it leads to is
        // the plain one's, judged without a key by `auth.*`.
        s if (300..400).contains(&s) => Judged::Pass(format!("{what} {who}: redirected ({s})")),
        // Off the spec's paths, a 2xx may be another resource (a public page, a catch-all):
        // only the operation's own answer is a way around the credential.
        s if (200..300).contains(&s) && r.off_path && !serves(a) => Judged::Observe(format!(
            "{s} for {what} {who}: not the operation's answer (the path is not the spec's)"
        )),
        s if (200..300).contains(&s) => Judged::Fail(match r.served {
            Some(k) if (200..300).contains(&k) => {
                format!("{s} for {what} {who}: served as to the run's key")
            }
            Some(k) => format!("{s} for {what} {who}, which the run's key got {k} for"),
            None => format!("{s} for {what} {who}"),
        }),
        401 | 403 if is_envelope(a) => Judged::Pass(format!("{what} {who}: {}", answer_text(x))),
        s if (400..500).contains(&s) && is_envelope(a) => {
            Judged::Pass(format!("{what} {who}: refused with {}", answer_text(x)))
        }
        _ => Judged::Fail(format!("{} for {what} {who}", answer_text(x))),
    }
}
