//! The model a sequence is judged against: the two fixture partners of a play (active or
//! deactivated, the partnerId each answers to), and the target's choices as the play shows
//! them (how a repeat is answered, which id wins when both are given). A choice is observed
//! the first time and must hold after; the spec's rules hold from the first step.

use linkcert_http::{REJECTIONS, clean_refusal};
use std::collections::BTreeSet;

use super::steps::{Form, form_name};
use crate::fixtures::Field;
use crate::service::{Choice, Question};
use linkcert_registry::{Check, check_id};

/// What an answer was, as far as the model needs.
#[derive(Clone, Debug, Default)]
pub(super) struct Answer {
    pub status: u16,
    /// The spec's error for its status: the table's code in the envelope.
    pub spec_error: bool,
    pub envelope: bool,
    /// The envelope's error code.
    pub code: Option<String>,
    /// The partnerId of a 200.
    pub partner_id: Option<String>,
    /// How a finding shows it.
    pub got: String,
}

impl Answer {
    fn clean_rejection(&self) -> bool {
        clean_refusal(self.status, self.envelope, &REJECTIONS)
    }
    fn refusal(&self) -> bool {
        Choice::refusal(self.status, self.envelope).is_some()
    }
    fn class(&self) -> String {
        match self.status {
            200 => "200".into(),
            s => format!("{s} {}", self.code.as_deref().unwrap_or("(no code)")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Failure {
    pub check: Check,
    pub expected: String,
    pub actual: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Judged {
    Pass(Check),
    Observe(Check, String),
    /// The target's answer to a question the spec leaves to it (observed once per run, by
    /// `crate::service::Service::chose`).
    Chose(Question, Choice),
    Fail(Failure),
    /// Nothing more of the play can be judged (why).
    Halt(String),
}

fn fail(check: Check, expected: impl Into<String>, a: &Answer) -> Judged {
    Judged::Fail(Failure {
        check,
        expected: expected.into(),
        actual: a.got.clone(),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Partner,
    Tenant,
}

#[derive(Clone, Debug, Default)]
struct Fixture {
    deactivated: bool,
    /// Its partnerId: given for the partner fixture, answered for the tenant fixture.
    partner_id: Option<String>,
    /// A key below the plan addressed it (refused, it must have changed nothing).
    gated: bool,
    /// A request by both ids answered 200 naming the other partner while this one was active:
    /// whether it deactivated this one too is not shown; its next answer tells.
    maybe: bool,
    /// Its links enabled at the last read, while active.
    enabled_links: Option<BTreeSet<String>>,
    /// Given without a plan: its owner's key is presumed (`fixtures::Presumed`), so a 404 to
    /// its first deactivation may mean another workspace owns it.
    presumed: bool,
}

/// Cloned to try the orders in which requests sent at once may have been served.
#[derive(Clone, Debug, Default)]
pub(super) struct Model {
    partner: Fixture,
    tenant: Fixture,
    /// How a repeat was last answered, per form (a target may answer a repeat by partnerId
    /// otherwise than one by tenantId).
    repeats: Vec<(Form, Choice)>,
    /// Which id wins when both are given, once a 200 showed it.
    winner: Option<Side>,
    /// Answers to keys below the plan other than 403, already observed.
    gated_seen: BTreeSet<String>,
    /// The tenant fixture's tenantId.
    pub(super) tenant_id: Option<String>,
}

impl Model {
    pub(super) fn new(partner_id: Option<&str>) -> Model {
        Model {
            partner: Fixture {
                partner_id: partner_id.map(str::to_string),
                ..Fixture::default()
            },
            ..Model::default()
        }
    }

    /// The fixture on `side` was given without a plan: its owner's key is presumed.
    pub(super) fn presume(&mut self, side: Side) {
        self.side(side).presumed = true;
    }

    pub(super) fn partner_deactivated(&self) -> bool {
        self.partner.deactivated
    }

    /// The partnerId the tenant fixture's deactivation answered.
    pub(super) fn learned(&self) -> Option<&str> {
        self.tenant.partner_id.as_deref()
    }

    fn side(&mut self, side: Side) -> &mut Fixture {
        match side {
            Side::Partner => &mut self.partner,
            Side::Tenant => &mut self.tenant,
        }
    }

    /// A deactivation sent with a key of a plan below the operation's: 403, or (the order of
    /// body validation, lookup and plan check is not shown) 400, 404 or 422, all in the error
    /// envelope. Whatever it is answered, it must change nothing (judged by later answers).
    pub(super) fn gated(&mut self, form: Form, a: &Answer) -> Vec<Judged> {
        if matches!(form, Form::Partner | Form::Both) {
            self.partner.gated = true;
        }
        if matches!(form, Form::Tenant | Form::Both | Form::Learned) {
            self.tenant.gated = true;
        }
        let id = check_id!("sequence.gated");
        if a.status == 403 && a.spec_error {
            return vec![Judged::Pass(id)];
        }
        if clean_refusal(a.status, a.envelope, &[400, 404, 422]) {
            let mut out = vec![Judged::Pass(id)];
            if self.gated_seen.insert(a.class()) {
                out.push(Judged::Observe(
                    check_id!("sequence.choices"),
                    format!(
                        "a key below the plan, {}: {} (checked before the plan)",
                        form_name(form),
                        a.class()
                    ),
                ));
            }
            return out;
        }
        vec![fail(
            id,
            format!(
                "{}: 403 forbidden (the plan may not deactivate), or 400/404/422 in the error \
                 envelope",
                form_name(form)
            ),
            a,
        )]
    }

    /// A deactivation sent with a key that may deactivate.
    pub(super) fn allowed(&mut self, form: Form, a: &Answer) -> Vec<Judged> {
        let unknown = check_id!("sequence.unknown");
        let choices = check_id!("sequence.choices");
        match form {
            Form::Neither if a.refusal() => vec![
                Judged::Pass(unknown),
                Judged::Observe(choices, format!("naming neither id: {}", a.class())),
            ],
            Form::Neither => vec![fail(unknown, "naming neither id: a 4xx in the envelope", a)],
            Form::UnknownPartner | Form::UnknownTenant
                if (a.status == 404 && a.spec_error) || a.clean_rejection() =>
            {
                vec![
                    Judged::Pass(unknown),
                    Judged::Observe(choices, format!("{}: {}", form_name(form), a.class())),
                ]
            }
            Form::UnknownPartner | Form::UnknownTenant => vec![fail(
                unknown,
                format!(
                    "{}: 404 not_found (or 400/422) in the envelope",
                    form_name(form)
                ),
                a,
            )],
            Form::Partner => self.address(Side::Partner, form, a),
            Form::Tenant | Form::Learned => self.address(Side::Tenant, form, a),
            Form::Both => self.both(a),
        }
    }

    /// Both ids, of two partners: the target's choice which wins, or a refusal. After a 200,
    /// whether the other partner was deactivated too is not shown: its next answer tells.
    fn both(&mut self, a: &Answer) -> Vec<Judged> {
        let out = self.both_answer(a);
        if a.status == 200
            && let Some(side) = self.winner
        {
            let other = self.side(match side {
                Side::Partner => Side::Tenant,
                Side::Tenant => Side::Partner,
            });
            other.maybe = !other.deactivated;
        }
        out
    }

    fn both_answer(&mut self, a: &Answer) -> Vec<Judged> {
        if let Some(side) = self.winner {
            return self.address(side, Form::Both, a);
        }
        if a.status == 200 {
            let side = if a.partner_id.is_some() && a.partner_id == self.partner.partner_id {
                Side::Partner
            } else {
                Side::Tenant
            };
            self.winner = Some(side);
            let which = match side {
                Side::Partner => Field::PartnerId,
                Side::Tenant => Field::TenantId,
            };
            let mut out = vec![Judged::Chose(Question::BothIds, Choice::Wins(which))];
            out.extend(self.address(side, Form::Both, a));
            return out;
        }
        if !a.refusal() {
            // Whichever wins, a request naming two deactivated partners is a repeat.
            let check = if self.partner.deactivated && self.tenant.deactivated {
                check_id!("sequence.repeat")
            } else {
                check_id!("sequence.first")
            };
            return vec![fail(
                check,
                "by both ids: 200 naming one of the two partners, or a 4xx in the envelope",
                a,
            )];
        }
        // Refused: nothing changed. Which id it was about is not known while no 200 said.
        if !self.partner.deactivated && !self.tenant.deactivated {
            vec![Judged::Chose(Question::BothIds, Choice::Refused(a.status))]
        } else {
            Vec::new()
        }
    }

    /// A deactivation addressing one fixture partner: its first, or a repeat.
    fn address(&mut self, side: Side, form: Form, a: &Answer) -> Vec<Judged> {
        let how = form_name(form);
        if self.side(side).deactivated {
            return self.repeat(side, form, a);
        }
        if a.status == 409 {
            return vec![Judged::Halt(format!(
                "{how}: 409 conflict for the first deactivation of a spare fixture; was it \
                 deactivated by an earlier run?"
            ))];
        }
        // A 404 to a fixture a both-ids 200 may have deactivated is a repeat's answer.
        if a.status == 404 && self.side(side).presumed && !self.side(side).maybe {
            let (flag, id) = match side {
                Side::Partner => (Field::PartnerId.flag(), self.partner.partner_id.clone()),
                Side::Tenant => (Field::TenantId.flag(), self.tenant_id.clone()),
            };
            return vec![Judged::Halt(format!(
                "{how}: 404 for a fixture given without a plan, sent with the key presumed to \
                 own it; bind it to the plan of its workspace's key: {flag} PLAN={}",
                id.unwrap_or_default()
            ))];
        }
        let named = a.partner_id.as_deref().filter(|p| !p.is_empty());
        if side == Side::Tenant
            && a.status == 200
            && named.is_some()
            && named == self.partner.partner_id.as_deref()
        {
            return vec![Judged::Halt(format!(
                "{how}: 200 naming the partner fixture's partnerId: the tenant fixture is the \
                 partner fixture (--tenant gives a --partner's tenantId?), so a first \
                 deactivation cannot be told from a repeat"
            ))];
        }
        if a.refusal()
            && let Some(j) = self.refused_first(side, form, a)
        {
            return j;
        }
        if a.status == 200 && self.first_answered(side, named) {
            return vec![Judged::Pass(check_id!("sequence.first"))];
        }
        let f = self.side(side);
        let want = f
            .partner_id
            .as_deref()
            .map_or("its partnerId".to_string(), |p| {
                format!("{{\"partnerId\": {p:?}}}")
            });
        // Refused as a repeat would be, after refusals that named it: they changed it.
        let (check, after) = if f.gated && a.status != 200 {
            (
                check_id!("sequence.gated"),
                ", the refused requests with a key below the plan before it having changed \
                 nothing",
            )
        } else {
            (check_id!("sequence.first"), "")
        };
        vec![fail(
            check,
            format!("{how}: 200 with {want}, the partner's first deactivation{after}"),
            a,
        )]
    }

    /// A 200 to the first deactivation of a fixture: it is deactivated, when the answer names
    /// it (true), or not.
    fn first_answered(&mut self, side: Side, named: Option<&str>) -> bool {
        let f = self.side(side);
        let ok = named.is_some() && (f.partner_id.is_none() || f.partner_id.as_deref() == named);
        if ok {
            f.deactivated = true;
            f.maybe = false;
            f.partner_id = named.map(str::to_string);
            f.enabled_links = None;
        }
        ok
    }

    /// A refusal (a 4xx in the envelope) of what the model holds to be a fixture's first
    /// deactivation, when it cannot be judged one: a request by both ids may have deactivated
    /// it too (then this refusal shows it did), or the tenant fixture may be the partner
    /// fixture, already deactivated. None when it is a first deactivation refused.
    fn refused_first(&mut self, side: Side, form: Form, a: &Answer) -> Option<Vec<Judged>> {
        let how = form_name(form);
        if self.side(side).maybe {
            let f = self.side(side);
            f.deactivated = true;
            f.maybe = false;
            let mut out = vec![Judged::Observe(
                check_id!("sequence.choices"),
                format!(
                    "both ids of two partners deactivated both: {how} was refused after ({})",
                    a.class()
                ),
            )];
            out.extend(self.repeat(side, form, a));
            return Some(out);
        }
        // After a key below the plan named it, the refusal is judged the gate's (that request
        // changed it): which of the two it was cannot be told, and a gate ignored is the
        // spec's to judge, fixtures that are one partner a configuration's mistake.
        (side == Side::Tenant && self.partner.deactivated && !self.tenant.gated).then(|| {
            vec![Judged::Halt(format!(
                "{how}: {} for the tenant fixture's first deactivation, after the partner \
                 fixture's: is the tenant fixture the partner fixture (--tenant gives a \
                 --partner's tenantId)? A first deactivation cannot be told from a repeat",
                a.class()
            ))]
        })
    }

    /// A deactivation of a partner already deactivated. Each form keeps the answer its first
    /// repeat got: a 200 naming the partner again, or a refusal (any 4xx in the envelope). A
    /// 200 after a refusal in the same form answers as if the partner were active again.
    fn repeat(&mut self, side: Side, form: Form, a: &Answer) -> Vec<Judged> {
        let id = check_id!("sequence.repeat");
        let how = form_name(form);
        let own = self.side(side).partner_id.clone();
        let named = a.partner_id.as_deref().filter(|p| !p.is_empty());
        let class = match a.status {
            200 if named.is_some() && (own.is_none() || own.as_deref() == named) => {
                if own.is_none() {
                    self.side(side).partner_id = named.map(str::to_string);
                }
                Choice::Again
            }
            200 => {
                return vec![fail(
                    id,
                    format!(
                        "{how}, a repeat: a 200 names the partner ({}), or a 4xx",
                        own.as_deref().unwrap_or("its partnerId")
                    ),
                    a,
                )];
            }
            404 if form == Form::Learned && own.is_some() && own == self.tenant_id => {
                return vec![fail(
                    id,
                    format!(
                        "{how}: the deactivation by tenantId answered the tenantId sent as the \
                         partnerId ({}), and no partner has it (404): the 200 named no partner",
                        own.as_deref().unwrap_or_default()
                    ),
                    a,
                )];
            }
            s if a.refusal() => Choice::Refused(s),
            _ => {
                return vec![fail(
                    id,
                    format!("{how}, a repeat: 200 naming the partner, or a 4xx in the envelope"),
                    a,
                )];
            }
        };
        let before = self.repeats.iter().position(|(f, _)| *f == form);
        let question = Question::Repeat(match form {
            Form::Partner | Form::Learned => Some(Field::PartnerId),
            Form::Tenant => Some(Field::TenantId),
            _ => None,
        });
        match before.map(|i| self.repeats[i].1) {
            None => {
                self.repeats.push((form, class));
                vec![Judged::Pass(id), Judged::Chose(question, class)]
            }
            Some(c) if c.refused() && class == Choice::Again => vec![fail(
                id,
                format!(
                    "{how}, a repeat: {} as the repeat before it in this form (a 200 now answers \
                     as if the partner were active again)",
                    c.describe()
                ),
                a,
            )],
            Some(c) if c.refused() == class.refused() => vec![Judged::Pass(id)],
            Some(_) => {
                if let Some(i) = before {
                    self.repeats[i].1 = class;
                }
                vec![Judged::Pass(id), Judged::Chose(question, class)]
            }
        }
    }

    /// A read of the partner fixture's links (the ids of those enabled): while the partner is
    /// active, none is disabled since the last read.
    pub(super) fn links(&mut self, enabled: BTreeSet<String>) -> Vec<Judged> {
        let f = &mut self.partner;
        if f.deactivated {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(before) = &f.enabled_links {
            let lost: Vec<&str> = before.difference(&enabled).map(String::as_str).collect();
            let check = if f.gated {
                check_id!("sequence.gated")
            } else {
                check_id!("sequence.unaffected")
            };
            out.push(if lost.is_empty() {
                Judged::Pass(check)
            } else {
                Judged::Fail(Failure {
                    check,
                    expected: "the links of a partner not (yet) deactivated stay enabled: only \
                               its deactivation disables them, never a refused request"
                        .into(),
                    actual: format!(
                        "{} of them disabled since the last read ({})",
                        lost.len(),
                        lost.iter().take(3).copied().collect::<Vec<_>>().join(", ")
                    ),
                })
            });
        }
        f.enabled_links = Some(enabled);
        out
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
