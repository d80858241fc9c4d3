//! `sequence.*`: sequences of `POST /partners/deactivate` in every form (by partnerId, by
//! tenantId, by both, by neither, by unknown ids), with every key given (plans below the
//! operation's are refused whatever the form), repeated, in any order, interleaved with
//! `GET /tags`, `GET /qr` and reads of a partner's links, judged against a model of the
//! fixtures' states (`model.rs`). A failing sequence is shrunk to the shortest that still
//! fails (`shrink.rs`), and reported step by step with a curl line each.
//!
//! Sequences are drawn with proptest strategies over a `Vec` of steps and a seeded
//! `TestRunner`, not with `proptest-state-machine`: that crate's runner is a test macro and its
//! `StateMachineTest::apply` is synchronous, while here every step is an async request to a
//! remote target, and each replay while shrinking needs fresh fixture partners, so the
//! replays must be counted and stopped when the pool is spent, which its shrinking cannot.
//!
//! Deactivation changes the target: this runs only with --allow-destructive, on the fixtures
//! left in the ledger once `http` and `partners` claimed theirs (`fixtures.rs`). A fixture's
//! owner is its plan's key when bound (`--partner advanced=ID`); given bare, it is presumed
//! (the key found to own another fixture, else the strongest that may deactivate), and a 404
//! to its first deactivation stops the play as a setup problem naming the flag that binds it.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::Ctx;
use super::conformance::Expect;
use crate::fixtures::{self, Field, Presumed};
use linkcert_registry::{self as registry, check_id};
use linkcert_run::target::{Fixture, PlanKey};
use linkcert_spec::Operation;

mod model;
mod play;
mod shrink;
mod steps;

use model::Judged;
use play::{Played, Seen, play, read_request};
use steps::{Form, Shape, Step};

/// Sequences a run plays (each up to `steps::MAX_STEPS` requests, and its shrinking on a
/// failure).
const SEQUENCES: usize = 5;
/// The family's name in the fixture ledger.
const FAMILY: &str = "sequence";

/// What every play of the run shares.
struct Setup<'a> {
    op: &'a Operation,
    label: String,
    /// The key tags and QR are read with (the first spare fixture's owner).
    home: PlanKey,
    /// Keys of plans below the operation's, and keys of plans that may call it.
    gated: Vec<PlanKey>,
    others: Vec<PlanKey>,
    tags: Option<&'a Operation>,
    qr: Option<&'a Operation>,
    links: Option<&'a Operation>,
    base_tags: Option<Seen>,
    base_qr: Option<Seen>,
    /// Tags compared by the names of a first page sorted by name (the list is longer).
    tags_names_only: bool,
}

/// The fixtures one play uses, the keys that own them, and whether each owner is presumed.
#[derive(Default)]
struct Cast {
    partner: Option<Fixture>,
    partner_owner: Option<PlanKey>,
    partner_presumed: Presumed,
    tenant: Option<Fixture>,
    tenant_owner: Option<PlanKey>,
    tenant_presumed: Presumed,
}

/// A fixture, its owner's key, and whether that owner is presumed.
type Owned = (Fixture, PlanKey, Presumed);

/// The fixtures the sequences claimed, not used yet, each with its owner's key.
struct Pool {
    partners: std::collections::VecDeque<Owned>,
    tenants: std::collections::VecDeque<Owned>,
    /// Claimed, but bound to a plan no key given may deactivate with.
    unowned: Vec<String>,
}

impl Pool {
    /// Every fixture left in the ledger; those no key given may deactivate stay unused.
    fn new(ctx: &Ctx, op: &Operation) -> Pool {
        let allowed = ctx.keys_for(op);
        let mut unowned = Vec::new();
        let mut owned = |field| {
            let mut out = std::collections::VecDeque::new();
            for f in ctx.fixtures.claim_all(field, FAMILY) {
                match ctx.fixtures.owner(&f, &allowed) {
                    Some((key, presumed)) => out.push_back((f, key, presumed)),
                    None => unowned.push(format!("{} {}", Field::flag(field), f.id)),
                }
            }
            out
        };
        let (partners, tenants) = (owned(Field::PartnerId), owned(Field::TenantId));
        Pool {
            partners,
            tenants,
            unowned,
        }
    }

    /// Fresh fixtures for a play of `steps`, or None when the pool lacks one it needs.
    fn cast(&mut self, steps: &[Step]) -> Option<Cast> {
        let needs_p = steps.iter().any(|s| s.needs_partner());
        let needs_t = steps.iter().any(|s| s.needs_tenant());
        if (needs_p && self.partners.is_empty()) || (needs_t && self.tenants.is_empty()) {
            return None;
        }
        let mut cast = Cast::default();
        if needs_p && let Some((f, k, p)) = self.partners.pop_front() {
            (cast.partner, cast.partner_owner, cast.partner_presumed) = (Some(f), Some(k), p);
        }
        if needs_t && let Some((f, k, p)) = self.tenants.pop_front() {
            (cast.tenant, cast.tenant_owner, cast.tenant_presumed) = (Some(f), Some(k), p);
        }
        Some(cast)
    }
}

pub async fn run(ctx: &Ctx) {
    let Some((setup, mut pool)) = setup(ctx).await else {
        return;
    };
    let shape = Shape {
        gated: setup.gated.len(),
        others: setup.others.len(),
        tags: setup.tags.is_some(),
        qr: setup.qr.is_some(),
        links: setup.links.is_some(),
    };
    if setup.gated.is_empty() {
        ctx.rec.skip(
            check_id!("sequence.gated"),
            &setup.label,
            "no key of a plan below the operation's (--key free=...): the gate not tried",
        );
    }
    for (n, mut steps) in (1..).zip(draw(ctx.opts.seed, shape)) {
        if n == 1 {
            // The first play's first deactivation of a fixture goes at once, so every run
            // tries the state change racing itself on a fresh fixture, whatever the seed; one
            // is added where none was drawn, on a fixture the pool has.
            let add = if pool.partners.is_empty() {
                Form::Tenant
            } else {
                Form::Partner
            };
            steps::at_once_first(&mut steps, add);
        }
        let Some(cast) = pool.cast(&steps) else {
            if n == 1 {
                ctx.skip_family(
                    FAMILY,
                    &ctx.fixtures.shortage(FAMILY, fixtures::SEQUENCE_PLAY),
                );
                break;
            }
            ctx.rec.observe(
                check_id!("sequence.choices"),
                &setup.label,
                format!(
                    "sequences stopped after {}: the spare fixture pool is spent",
                    n - 1
                ),
                None,
            );
            break;
        };
        let played = play(ctx, &setup, &cast, &steps).await;
        record(ctx, &setup, &played);
        if played.failure.is_some() {
            let shrunk = shrink::shrink(ctx, &setup, &mut pool, steps, played).await;
            shrink::report(ctx, &setup, n, &shrunk);
        }
    }
}

/// The run's sequences, drawn before any is played (proptest's trees are not `Send`).
fn draw(seed: u64, shape: Shape) -> Vec<Vec<Step>> {
    let strategy = steps::sequence(shape);
    let mut runner = runner(seed);
    (0..SEQUENCES)
        .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|t| t.current()))
        .collect()
}

/// The run's runner: seeded from `--seed`, so a run replays its sequences exactly.
fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let z = seed
            .wrapping_add(0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(i as u64 + 1))
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    let config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// What the run needs, or None (every check skipped, saying why).
async fn setup(ctx: &Ctx) -> Option<(Setup<'_>, Pool)> {
    let skip = |why: &str| {
        ctx.skip_family("sequence", why);
        None
    };
    let Some(op) = ctx.op("deactivatePartner") else {
        return skip("the spec has no deactivatePartner operation");
    };
    if !ctx.target.allow_destructive {
        return skip("needs --allow-destructive (it deactivates spare fixture partners)");
    }
    let pool = Pool::new(ctx, op);
    let Some(home) = pool
        .partners
        .front()
        .or(pool.tenants.front())
        .map(|(_, k, _)| k.clone())
    else {
        if !pool.unowned.is_empty() {
            return skip(&format!(
                "the fixtures left ({}) are bound to plans with no key given that may \
                 deactivate: pass --key PLAN=KEY for their plan",
                pool.unowned.join(", ")
            ));
        }
        return skip(&ctx.fixtures.shortage(FAMILY, fixtures::SEQUENCE_PLAY));
    };
    let allows = |k: &PlanKey| {
        ctx.spec
            .plan(&k.plan)
            .is_some_and(|p| ctx.spec.plan_allows(p, op))
    };
    let mut s = Setup {
        op,
        label: op.label(),
        gated: ctx
            .target
            .keys
            .iter()
            .filter(|k| !allows(k))
            .cloned()
            .collect(),
        others: ctx.keys_for(op).into_iter().cloned().collect(),
        tags: ctx.op("getTags"),
        qr: ctx.op("getQRCode"),
        links: ctx.op("listLinks"),
        home,
        base_tags: None,
        base_qr: None,
        tags_names_only: false,
    };
    // The whole list compared when the page held it; else, sorted by name, the names of the
    // first page (the list's first names, whatever the order of ties); else nothing.
    let tags = baseline(ctx, &s, s.tags, Step::Tags).await;
    (s.base_tags, s.tags_names_only) = match (s.tags, tags) {
        (Some(_), Some((seen, true))) => (Some(seen), false),
        (Some(op), Some((seen, _))) if play::sorted_by_name(op) => (Some(seen.names_only()), true),
        _ => (None, false),
    };
    s.base_qr = baseline(ctx, &s, s.qr, Step::Qr)
        .await
        .map(|(seen, _)| seen);
    Some((s, pool))
}

/// A read before any deactivation of the run's sequences, to compare later reads with, and
/// whether it held every tag of the workspace (the service's list).
async fn baseline(
    ctx: &Ctx,
    s: &Setup<'_>,
    op: Option<&Operation>,
    step: Step,
) -> Option<(Seen, bool)> {
    let op = op?;
    let (x, _) = ctx
        .exchange(op, read_request(op, &s.home, step, None), Expect::Any)
        .await;
    let r = x.resp().filter(|r| r.status != 429)?;
    match step {
        Step::Qr => Some((Seen::of_image(r), false)),
        _ => {
            let whole = r.status == 200 && ctx.service.holds_all(ctx, op, &s.home, r).await;
            Some((Seen::of_tags(r), whole))
        }
    }
}

/// The passes and observations of a play (not of its replays while shrinking), and why it
/// stopped short.
fn record(ctx: &Ctx, s: &Setup<'_>, played: &Played) {
    let exchange = |i: usize| played.sent.iter().find(|(n, ..)| *n == i).map(|(.., x)| x);
    for (j, i) in &played.judged {
        match j {
            Judged::Pass(id) => ctx.rec.pass(*id, &s.label),
            Judged::Observe(id, what) => ctx.rec.observe(*id, &s.label, what, exchange(*i)),
            Judged::Chose(q, c) => {
                let chosen = ctx.service.chose(*q, *c);
                if chosen.new {
                    let id = check_id!("sequence.choices");
                    ctx.rec.observe(id, &s.label, chosen.what, exchange(*i));
                }
            }
            _ => {}
        }
    }
    if let Some(why) = &played.halted {
        for c in registry::family("sequence") {
            if c.def().level != linkcert_spec::verdict::Verdict::Informational {
                ctx.rec
                    .not_judged(c, &s.label, format!("a sequence stopped short: {why}"));
            }
        }
    }
}
