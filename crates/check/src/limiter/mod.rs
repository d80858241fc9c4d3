//! `limiter.*`: the limiter over time. Beside the other families, from the run's start, on
//! keys no other family uses (a plan's last key when the plan has three or more: the
//! built-in reference gives each plan three), every such key lives three windows of its
//! own, all keys at once (keys of different plans driven together):
//! - its first window: one request alone, then a burst past its limit (N and a twentieth,
//!   all to the class's cheapest operation, as `ratelimit` bursts: never a render,
//!   then more until a 429: a fixed window's boundary in the burst gives the quota back); the
//!   highest fixed plan given gets its whole long burst, others too when their limit is one
//!   `check` bursts (`MAX_BURST_LIMIT`), the rest a sample (`drive.rs`);
//! - two windows idle, then one request alone (`limiter.fresh`: every legal limiter has given
//!   the whole quota back after two windows, a sliding counter's weighing included);
//! - a later window with the class's routes mixed, spread over it, past the limit on the
//!   small plans: each route costs one (the spec: "all other endpoints use the standard
//!   limits"); each request beside its twins refused for their credential (no key, a key
//!   that looks like it and was never issued), which must not move the key's counter.
//!
//! Each rate class lives its own three windows ("separate per-second limits" for analytics),
//! the classes of a key at once: its analytics requests go out while its standard burst does,
//! each judged against its own class's limit alone. A plan without the class is not driven
//! in it; a class the target serves no operation of is said, once.
//!
//! Each key's whole life is then judged (`judge.rs`) by the rules `load` judges its keys by,
//! written once in `linkcert_rate`: its own history (`quota`, limiter.over-time, with the
//! bounds over the windows it touched), the windows its target names (`windows::NamedWindows`
//! and `ResetWindows`, limiter.windows: exact, the target's Reset placing each answer), and
//! the limiter its Resets show (`windows::Learner`, limiter.model, the run's one model).

use linkcert_registry::{Check, check_id};
use linkcert_run::target::PlanKey;
use linkcert_spec::{Limit, Operation};

use super::Ctx;
use super::ratelimit::{MAX_BURST_LIMIT, callable, counter::cycled, plan_limit, probe_op};

mod drive;
mod judge;

/// Every check of the family.
const CHECKS: [Check; 4] = [
    check_id!("limiter.windows"),
    check_id!("limiter.fresh"),
    check_id!("limiter.over-time"),
    check_id!("limiter.model"),
];

/// Keys of a plan the other families use; the limiter takes a plan's last beyond these.
const SHARED_PER_PLAN: usize = 2;

/// The keys the limiter runs on: the last key of each plan given more than
/// `SHARED_PER_PLAN` keys, in the order given.
pub fn own_keys(keys: &[PlanKey]) -> Vec<PlanKey> {
    let mut own: Vec<PlanKey> = Vec::new();
    for k in keys {
        let mut of_plan = keys.iter().filter(|o| o.plan == k.plan);
        if of_plan.clone().count() > SHARED_PER_PLAN
            && of_plan.next_back() == Some(k)
            && !own.contains(k)
        {
            own.push(k.clone());
        }
    }
    own
}

/// A key the limiter drives in one rate class: its limit, known from the plan or (custom)
/// from its first answer.
#[derive(Clone)]
struct Driven {
    key: PlanKey,
    /// The rate class: each has a limiter of its own ("separate per-second limits").
    class: String,
    /// None: the plan's limit is custom, read off the key's first answer.
    n: Option<u64>,
    /// The whole burst past the limit, whatever its size.
    long: bool,
}

/// A rate class as the limiter drives it: its keys, its cheapest operation, the routes its
/// mixed window spreads, its window in seconds.
struct Class<'a> {
    driven: Vec<Driven>,
    cheap: &'a Operation,
    routes: Vec<&'a Operation>,
    w: f64,
}

pub async fn run(ctx: &Ctx) {
    let enabled: Vec<Check> = CHECKS.into_iter().filter(|c| ctx.enabled(*c)).collect();
    if enabled.is_empty() {
        return;
    }
    let standard = &ctx.spec.default_rate_class;
    let why = if ctx.limiter_keys.is_empty() {
        Some(format!(
            "no plan was given more than {SHARED_PER_PLAN} keys: give a plan a third key (--key free=...) and its last lives three windows beside the other families"
        ))
    } else if cycled(ctx).is_empty() || probe_op(ctx, standard).is_none() {
        Some("the target serves no standard operation any key may call".to_string())
    } else {
        None
    };
    if let Some(why) = why {
        for c in enabled {
            ctx.rec.skip(c, "*", why.clone());
        }
        return;
    }
    // Every class at once: a key's analytics requests go out while its standard burst does,
    // each judged against its own class's limit.
    let mut classes: Vec<Class> = Vec::new();
    for c in ctx.spec.rate_classes.keys() {
        if probe_op(ctx, c).is_none() {
            let why = format!("the target serves no operation of the {c} class");
            ctx.rec.skip(
                check_id!("limiter.over-time"),
                &format!("the {c} windows"),
                why,
            );
        }
        classes.extend(class(ctx, c));
    }
    let lives = futures::future::join_all(classes.iter().flat_map(|c| {
        c.driven
            .iter()
            .map(move |d| drive::life(ctx, d, c.cheap, &c.routes, c.w))
    }))
    .await;
    judge::all(ctx, &lives);
}

/// The limiter's keys of a class and what they are sent; None when no key may call the class.
fn class<'a>(ctx: &'a Ctx, class: &str) -> Option<Class<'a>> {
    // Bursts and lone requests go to the class's cheapest operation (a page of one tag), never
    // a render: a burst of thousands must not crowd the other families' requests.
    let cheap = probe_op(ctx, class)?;
    let routes = if class == ctx.spec.default_rate_class {
        cycled(ctx)
    } else {
        callable(ctx, class).collect()
    };
    let mut driven: Vec<Driven> = ctx
        .limiter_keys
        .iter()
        .filter_map(|k| {
            let (n, long) = match plan_limit(ctx, k, class) {
                Limit::Fixed(n) if n > 0 => (Some(n), n <= MAX_BURST_LIMIT),
                Limit::Custom => (None, false),
                _ => return None,
            };
            Some(Driven {
                key: k.clone(),
                class: class.to_string(),
                n,
                long,
            })
        })
        .collect();
    // The highest fixed plan given: its long burst within one window.
    if let Some(top) = driven
        .iter_mut()
        .filter(|d| d.n.is_some())
        .max_by_key(|d| d.n)
    {
        top.long = true;
    }
    let w = ctx.target.window(&ctx.spec, class).as_secs_f64();
    (!driven.is_empty()).then_some(Class {
        driven,
        cheap,
        routes,
        w,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(plan: &str, key: &str) -> PlanKey {
        PlanKey {
            plan: plan.into(),
            key: key.into(),
        }
    }

    /// A plan's last key is the limiter's once the plan has a third; two stay shared.
    #[test]
    fn a_plans_third_key_is_the_limiters() {
        let keys = [
            k("free", "f1"),
            k("pro", "p1"),
            k("free", "f2"),
            k("free", "f3"),
            k("pro", "p2"),
            k("business", "b1"),
            k("business", "b2"),
            k("business", "b3"),
            k("business", "b4"),
        ];
        assert_eq!(own_keys(&keys), vec![k("free", "f3"), k("business", "b4")]);
        assert_eq!(own_keys(&keys[..5]), vec![k("free", "f3")]);
        assert!(own_keys(&keys[..3]).is_empty());
    }
}
