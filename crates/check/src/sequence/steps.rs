//! The steps of a sequence and how they are drawn: deactivations in every form with every kind
//! of key, and the reads (tags, QR, a partner's links) interleaved with them. A sequence names
//! its fixtures abstractly (the partner fixture, the tenant fixture): each play of it is cast
//! with fresh ones from the pool, so a replay meets partners in the state the model starts from.

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use serde_json::{Value, json};

/// Steps drawn per sequence (a leading links read comes on top).
pub(super) const MIN_STEPS: usize = 6;
pub(super) const MAX_STEPS: usize = 18;

const UNKNOWN_PARTNER: &str = "pn_linkcert_sequence_unknown";
const UNKNOWN_TENANT: &str = "tn_linkcert_sequence_unknown";

/// Which key sends a deactivation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    /// The key of the workspace that owns the fixture the body names.
    Owner,
    /// The i-th key of a plan below the one the operation needs.
    Gated(usize),
    /// The i-th key of a plan that may deactivate (sent only unknown ids or none).
    Other(usize),
}

/// What the body of a deactivation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// The partner fixture's partnerId.
    Partner,
    /// The tenant fixture's tenantId.
    Tenant,
    /// Both: the partner fixture's partnerId and the tenant fixture's tenantId (two partners).
    Both,
    /// The partnerId the tenant fixture's deactivation answered (sent once it is known).
    Learned,
    Neither,
    UnknownPartner,
    UnknownTenant,
}

/// How many identical deactivations an `AtOnce` step sends together.
pub(super) const AT_ONCE: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Deactivate(Key, Form),
    /// The owner's deactivation in this form, sent `AT_ONCE` times at the same moment: the
    /// target answers one of them as the first and the others as repeats, in some order.
    AtOnce(Form),
    Tags,
    Qr,
    /// The partner fixture's links (`GET /links`, where the target serves linkcert's stand-in).
    Links,
}

impl Step {
    /// Whether a play of it needs the partner fixture.
    pub(super) fn needs_partner(self) -> bool {
        matches!(
            self,
            Step::Links
                | Step::Deactivate(_, Form::Partner | Form::Both)
                | Step::AtOnce(Form::Partner | Form::Both)
        )
    }
    /// Whether a play of it needs the tenant fixture.
    pub(super) fn needs_tenant(self) -> bool {
        matches!(
            self,
            Step::Deactivate(_, Form::Tenant | Form::Both | Form::Learned)
                | Step::AtOnce(Form::Tenant | Form::Both | Form::Learned)
        )
    }
}

/// What the target and the keys given allow a sequence to hold.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape {
    pub gated: usize,
    pub others: usize,
    pub tags: bool,
    pub qr: bool,
    pub links: bool,
}

fn forms() -> BoxedStrategy<Form> {
    Union::new_weighted(vec![
        (3, Just(Form::Partner).boxed()),
        (3, Just(Form::Tenant).boxed()),
        (2, Just(Form::Both).boxed()),
        (3, Just(Form::Learned).boxed()),
        (1, Just(Form::Neither).boxed()),
        (1, Just(Form::UnknownPartner).boxed()),
        (1, Just(Form::UnknownTenant).boxed()),
    ])
    .boxed()
}

fn step(shape: Shape) -> BoxedStrategy<Step> {
    let mut arms: Vec<(u32, BoxedStrategy<Step>)> = vec![(
        10,
        forms()
            .prop_map(|f| Step::Deactivate(Key::Owner, f))
            .boxed(),
    )];
    // The forms that address a fixture (what can be first once and repeated after).
    let fixture_forms = prop_oneof![
        Just(Form::Partner),
        Just(Form::Tenant),
        Just(Form::Both),
        Just(Form::Learned)
    ];
    arms.push((3, fixture_forms.prop_map(Step::AtOnce).boxed()));
    if shape.gated > 0 {
        let gated = (0..shape.gated, forms());
        arms.push((
            4,
            gated
                .prop_map(|(i, f)| Step::Deactivate(Key::Gated(i), f))
                .boxed(),
        ));
    }
    if shape.others > 0 {
        let unknown = prop_oneof![
            Just(Form::UnknownPartner),
            Just(Form::UnknownTenant),
            Just(Form::Neither)
        ];
        arms.push((
            1,
            (0..shape.others, unknown)
                .prop_map(|(i, f)| Step::Deactivate(Key::Other(i), f))
                .boxed(),
        ));
    }
    for (on, weight, s) in [
        (shape.tags, 1, Step::Tags),
        (shape.qr, 1, Step::Qr),
        (shape.links, 2, Step::Links),
    ] {
        if on {
            arms.push((weight, Just(s).boxed()));
        }
    }
    Union::new_weighted(arms).boxed()
}

/// A sequence: steps in order, opening with a read of the partner's links where the target
/// serves them (so a later read has something to compare with). A step by the learned
/// partnerId before the tenantId was sent by the owner is sent by tenantId instead: it could
/// not be sent, and this way the tenant's partner gets deactivated before it is asked about.
pub(super) fn sequence(shape: Shape) -> BoxedStrategy<Vec<Step>> {
    prop::collection::vec(step(shape), MIN_STEPS..=MAX_STEPS)
        .prop_map(move |mut v| {
            let mut tenant_sent = false;
            for s in &mut v {
                match s {
                    Step::Deactivate(k, f @ Form::Learned) if !tenant_sent => {
                        *f = Form::Tenant;
                        tenant_sent = *k == Key::Owner;
                    }
                    Step::AtOnce(f @ Form::Learned) if !tenant_sent => {
                        *f = Form::Tenant;
                        tenant_sent = true;
                    }
                    Step::Deactivate(Key::Owner, Form::Tenant | Form::Both)
                    | Step::AtOnce(Form::Tenant | Form::Both) => tenant_sent = true,
                    _ => {}
                }
            }
            if shape.links {
                v.insert(0, Step::Links);
            }
            v
        })
        .boxed()
}

/// The sequence with its first deactivation of a fixture by the owner sent `AT_ONCE` times
/// at once: where the fixture is still active, the requests race for its one first answer.
/// A sequence with none gets one in the form `add` after its leading reads.
pub(super) fn at_once_first(v: &mut Vec<Step>, add: Form) {
    let fixture = |f: Form| matches!(f, Form::Partner | Form::Tenant | Form::Both | Form::Learned);
    for s in v.iter_mut() {
        match *s {
            Step::AtOnce(f) if fixture(f) => return,
            Step::Deactivate(Key::Owner, f) if fixture(f) => {
                *s = Step::AtOnce(f);
                return;
            }
            _ => {}
        }
    }
    let at = v
        .iter()
        .position(|s| !matches!(s, Step::Links | Step::Tags | Step::Qr))
        .unwrap_or(v.len());
    v.insert(at, Step::AtOnce(add));
}

/// The ids a play's body may name.
pub(super) struct Names<'a> {
    pub partner: Option<&'a str>,
    pub tenant: Option<&'a str>,
    /// The partnerId the tenant fixture's deactivation answered, once it did.
    pub learned: Option<&'a str>,
}

/// The body of a deactivation, or None when the form names what this play does not have.
pub(super) fn body(form: Form, n: &Names<'_>) -> Option<Value> {
    Some(match form {
        Form::Partner => json!({ "partnerId": n.partner? }),
        Form::Tenant => json!({ "tenantId": n.tenant? }),
        Form::Both => json!({ "partnerId": n.partner?, "tenantId": n.tenant? }),
        Form::Learned => json!({ "partnerId": n.learned? }),
        Form::Neither => json!({}),
        Form::UnknownPartner => json!({ "partnerId": UNKNOWN_PARTNER }),
        Form::UnknownTenant => json!({ "tenantId": UNKNOWN_TENANT }),
    })
}

/// How a report names a form.
pub(super) fn form_name(form: Form) -> &'static str {
    match form {
        Form::Partner => "by partnerId",
        Form::Tenant => "by tenantId",
        Form::Both => "by both ids (of two partners)",
        Form::Learned => "by the partnerId its deactivation by tenantId answered",
        Form::Neither => "naming neither id",
        Form::UnknownPartner => "by an unknown partnerId",
        Form::UnknownTenant => "by an unknown tenantId",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    /// Drawn sequences stay within their bounds and use only the keys the shape has.
    #[test]
    fn sequences_are_bounded_and_use_the_keys_given() {
        let shape = Shape {
            gated: 0,
            others: 0,
            tags: true,
            qr: false,
            links: true,
        };
        let mut runner = TestRunner::deterministic();
        for _ in 0..50 {
            let v = sequence(shape).new_tree(&mut runner).unwrap().current();
            assert!((MIN_STEPS + 1..=MAX_STEPS + 1).contains(&v.len()));
            assert_eq!(v[0], Step::Links);
            assert!(v.iter().all(|s| !matches!(
                s,
                Step::Qr
                    | Step::Deactivate(Key::Gated(_) | Key::Other(_), _)
                    | Step::AtOnce(Form::Neither | Form::UnknownPartner | Form::UnknownTenant)
            )));
        }
        let names = Names {
            partner: Some("p"),
            tenant: None,
            learned: None,
        };
        assert_eq!(body(Form::Tenant, &names), None);
        assert_eq!(body(Form::Partner, &names), Some(json!({"partnerId": "p"})));
    }

    /// Whatever was drawn, the first deactivation of a fixture is sent at once, and nothing
    /// else of the sequence changes.
    #[test]
    fn the_first_deactivation_of_a_fixture_goes_at_once() {
        let shape = Shape {
            gated: 1,
            others: 1,
            tags: true,
            qr: true,
            links: true,
        };
        let mut runner = TestRunner::deterministic();
        for _ in 0..200 {
            let drawn = sequence(shape).new_tree(&mut runner).unwrap().current();
            let mut v = drawn.clone();
            at_once_first(&mut v, Form::Partner);
            let first = v.iter().position(|s| {
                matches!(s, Step::AtOnce(_) | Step::Deactivate(Key::Owner, _))
                    && s.needs_partner() | s.needs_tenant()
            });
            assert!(
                matches!(first.map(|i| v[i]), Some(Step::AtOnce(_))),
                "{v:?}"
            );
            let changed =
                v.len() != drawn.len() || v.iter().zip(&drawn).filter(|(a, b)| a != b).count() > 1;
            assert!(!changed || v.len() == drawn.len() + 1, "{drawn:?} -> {v:?}");
        }
        let mut reads = vec![Step::Links, Step::Tags];
        at_once_first(&mut reads, Form::Tenant);
        assert_eq!(reads, [Step::Links, Step::Tags, Step::AtOnce(Form::Tenant)]);
    }
}
