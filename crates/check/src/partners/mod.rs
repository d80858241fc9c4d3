//! `partners.*`: `POST /partners/deactivate`: unknown partners, a request naming neither id,
//! deactivation by partnerId and by tenantId, its effect on the partner's links (through
//! `GET /links` where the target has it), and the choices the spec leaves open.
//!
//! Deactivation changes the target: it runs only with --allow-destructive, on the fixture
//! partners given (--partner/--tenant), at most once per fixture (bar one deliberate repeat).
//! A fixture belongs to a workspace, so it is deactivated with a key of that workspace: the
//! plan it is bound to (`--partner advanced=ID`), or else each key whose plan may deactivate,
//! strongest first, until one does not answer 404. A fixture every key answered 404 for was
//! attempted and not judged (a setup problem, or a target whose deactivation is broken: linkcert
//! cannot tell): never the target's failure, never a skip either; the run is incomplete, and
//! the reason says how to bind it.
//! With --allow-destructive the first request for a fixture carries `null` for the other field.

use linkcert_registry::{Check, check_id};
use serde_json::{Value, json};

use super::Ctx;
use super::conformance::{Expect, Outcome};
use super::probe::{Exchange, Req};
use crate::fixtures::{self, Field, Tried};
use crate::recorder::Why;
use crate::service::{Choice, Question, largest_page, on_largest_page};
use linkcert_http::{error_code, is_envelope};
use linkcert_run::target::{Fixture, PlanKey};
use linkcert_spec::Operation;

mod lengths;
mod nulls;
use nulls::{null_beside, nulls};

/// The family's name in the fixture ledger.
const FAMILY: &str = "partners";
const UNKNOWN_PARTNER: &str = "pn_linkcert_does_not_exist";
const UNKNOWN_TENANT: &str = "tn_linkcert_does_not_exist";
/// Pages of a partner's links read, at most.
const MAX_LINK_PAGES: usize = 20;

const DESTRUCTIVE: [Check; 3] = [
    check_id!("partners.deactivate"),
    check_id!("partners.links-disabled"),
    check_id!("partners.choices"),
];

struct Deactivator<'a> {
    ctx: &'a Ctx,
    op: &'a Operation,
    key: PlanKey,
    label: String,
}

/// What `GET /links?partnerId=` gave.
enum Links {
    /// The target has no such endpoint (404).
    Absent,
    Unreadable(Why),
    /// The links of the partner (items naming another partner are left out).
    Items(Vec<Value>),
}

impl Deactivator<'_> {
    async fn send(&self, body: Value, expect: Expect) -> (Exchange, Outcome) {
        self.send_as(&self.key, body, expect).await
    }

    async fn send_as(&self, key: &PlanKey, body: Value, expect: Expect) -> (Exchange, Outcome) {
        let ct = self
            .op
            .body
            .as_ref()
            .map_or("application/json", |b| b.content_type.as_str());
        let req = Req::new(self.op.method.clone(), &self.op.path)
            .body(ct, body.to_string().into_bytes())
            .key(key);
        self.ctx.exchange(self.op, req, expect).await
    }

    /// The links of a partner, every page up to the bound.
    async fn links_of(&self, key: &PlanKey, partner_id: &str) -> Links {
        let Some(op) = self.ctx.op("listLinks") else {
            return Links::Absent;
        };
        let filter = op
            .param("partnerId")
            .map_or("partnerId".to_string(), |p| p.name.clone());
        let page = op.param_with_role("page").map(|p| p.name.clone());
        let size_max = largest_page(op).map(|(_, max)| max);
        let mut found = Vec::new();
        for n in 1..=MAX_LINK_PAGES {
            let req = Req::new(op.method.clone(), &op.path)
                .key(key)
                .query(&filter, partner_id);
            let mut req = on_largest_page(op, req);
            if let Some(p) = &page {
                req = req.query(p, n.to_string());
            }
            // linkcert's own stand-in: its status is not judged here.
            let (x, o) = self.ctx.exchange(op, req, Expect::Any).await;
            let items = match (o, x.resp()) {
                (Outcome::Accepted, Some(r)) => match r.json() {
                    Some(Value::Array(a)) => a,
                    _ => {
                        return Links::Unreadable(
                            format!("{} but not a JSON array", r.status).into(),
                        );
                    }
                },
                (_, Some(r)) if r.status == 404 && n == 1 => return Links::Absent,
                (Outcome::Throttled, _) => {
                    return Links::Unreadable("429 even after waiting".into());
                }
                (_, Some(r)) => {
                    return Links::Unreadable(
                        format!("{} {}", r.status, error_code(r).unwrap_or_default()).into(),
                    );
                }
                (_, None) => {
                    return Links::Unreadable(Why::after(&x, x.failure_words()));
                }
            };
            let len = items.len();
            found.extend(
                items
                    .into_iter()
                    .filter(|l| l.get("partnerId").and_then(Value::as_str) == Some(partner_id)),
            );
            let short = size_max.is_some_and(|m| (len as u64) < m);
            if len == 0 || short || page.is_none() {
                break;
            }
        }
        Links::Items(found)
    }

    /// `partners.links-disabled`: after deactivation every link of the partner is disabled.
    async fn judge_links(&self, key: &PlanKey, partner_id: &str, before: Option<Links>) {
        let id = check_id!("partners.links-disabled");
        let links_label = self
            .ctx
            .op("listLinks")
            .map_or_else(|| "GET /links".to_string(), Operation::label);
        if let Some(Links::Absent) = before {
            self.ctx.rec.skip(
                id,
                &self.label,
                format!("the target has no {links_label} (404): the effect cannot be seen"),
            );
            return;
        }
        let before = match before {
            Some(Links::Items(v)) => Some(v),
            _ => None,
        };
        match self.links_of(key, partner_id).await {
            Links::Absent => self.ctx.rec.skip(
                id,
                &self.label,
                format!("the target has no {links_label} (404): the effect cannot be seen"),
            ),
            Links::Unreadable(why) => self.ctx.rec.skip(
                id,
                &self.label,
                why.context(|w| format!("the links of {partner_id} could not be read: {w}")),
            ),
            Links::Items(after) if after.is_empty() => {
                let note = match before {
                    Some(b) if !b.is_empty() => format!(
                        "{partner_id}'s {} links are no longer listed after deactivation",
                        b.len()
                    ),
                    _ => format!("{partner_id} has no links listed: nothing to judge"),
                };
                self.ctx.rec.observe(id, &self.label, note, None);
            }
            Links::Items(after) => {
                let enabled: Vec<&str> = after
                    .iter()
                    .filter(|l| l.get("disabled").and_then(Value::as_bool) == Some(false))
                    .map(|l| l.get("id").and_then(Value::as_str).unwrap_or("(no id)"))
                    .collect();
                if enabled.is_empty() {
                    self.ctx.rec.pass(id, &self.label);
                } else {
                    self.ctx.rec.violation(
                        id,
                        &self.label,
                        format!("every link of {partner_id} disabled after its deactivation"),
                        format!(
                            "{} of {} still enabled ({})",
                            enabled.len(),
                            after.len(),
                            enabled
                                .iter()
                                .take(3)
                                .copied()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None,
                    );
                }
            }
        }
    }
}

/// The partnerId of a 200 answer, if it has a string one.
fn answered_id(x: &Exchange) -> Option<String> {
    x.resp()?
        .json()?
        .get("partnerId")?
        .as_str()
        .map(str::to_string)
}

/// A refusal of a deactivation whose answer the spec leaves to the target (`Choice::refusal`).
fn refusal(x: &Exchange) -> Option<Choice> {
    x.resp()
        .and_then(|r| Choice::refusal(r.status, is_envelope(r)))
}

fn status_text(x: &Exchange) -> String {
    match x.resp() {
        Some(r) if r.status >= 400 && !is_envelope(r) => r.without_envelope(),
        Some(r) if r.status >= 400 => {
            format!("{} {}", r.status, error_code(r).unwrap_or_default())
        }
        Some(r) => {
            let body = String::from_utf8_lossy(&r.body[..r.body.len().min(200)]).into_owned();
            format!("{} {body}", r.status)
        }
        None => "no answer".into(),
    }
}

pub async fn run(ctx: &Ctx) {
    let Some(op) = ctx.op("deactivatePartner") else {
        ctx.skip_family("partners", "the spec has no deactivatePartner operation");
        return;
    };
    let label = op.label();
    let Some(key) = ctx.key_for(op).cloned() else {
        ctx.skip_family(
            "partners",
            &format!(
                "no key of a plan that may call {label} ({} or higher: --key {}=...)",
                op.min_plan.as_deref().unwrap_or("any"),
                op.min_plan.as_deref().unwrap_or("PLAN")
            ),
        );
        return;
    };
    let d = Deactivator {
        ctx,
        op,
        key,
        label,
    };
    if ctx.enabled(check_id!("partners.unknown")) {
        unknown(&d).await;
        lengths::lengths(&d).await;
    }
    if ctx.enabled(check_id!("partners.neither")) {
        neither(&d).await;
    }
    if ctx.enabled(check_id!("partners.null")) {
        nulls(&d).await;
    }
    if !DESTRUCTIVE.iter().any(|c| ctx.enabled(*c)) {
        return;
    }
    if !ctx.target.allow_destructive {
        for id in DESTRUCTIVE {
            ctx.rec.skip(
                id,
                &d.label,
                "needs --allow-destructive (it deactivates fixture partners)",
            );
        }
        return;
    }
    let partner = ctx.fixtures.claim(Field::PartnerId, FAMILY);
    let tenant = ctx.fixtures.claim(Field::TenantId, FAMILY);
    if partner.is_none() && tenant.is_none() {
        let why = ctx.fixtures.shortage(FAMILY, fixtures::PARTNERS);
        for id in DESTRUCTIVE {
            ctx.rec.skip(id, &d.label, why.clone());
        }
        return;
    }
    let owner = by_partner_id(&d, partner).await;
    by_tenant_id(&d, tenant).await;
    if ctx.enabled(check_id!("partners.choices")) {
        both_ids(&d, owner).await;
    }
}

/// `partners.unknown`: an unknown partnerId or tenantId is 404 not_found.
async fn unknown(d: &Deactivator<'_>) {
    let id = check_id!("partners.unknown");
    for (field, value) in [("partnerId", UNKNOWN_PARTNER), ("tenantId", UNKNOWN_TENANT)] {
        let (x, o) = d.send(json!({ field: value }), Expect::Any).await;
        let Some(r) = x.resp() else { continue };
        if o == Outcome::Throttled {
            continue;
        }
        if d.ctx.is_error(r, 404) {
            d.ctx.rec.pass(id, &d.label);
        } else {
            d.ctx.rec.violation(
                id,
                &d.label,
                format!("404 not_found for an unknown {field}"),
                status_text(&x),
                Some(&x),
            );
        }
    }
}

/// `partners.neither`: a body naming neither id is rejected cleanly.
async fn neither(d: &Deactivator<'_>) {
    let id = check_id!("partners.neither");
    let (x, o) = d.send(json!({}), Expect::Any).await;
    match o {
        Outcome::Throttled | Outcome::Transport => {}
        Outcome::CleanRejection(_) => d.ctx.rec.pass(id, &d.label),
        _ => d.ctx.rec.violation(
            id,
            &d.label,
            "400 or 422 in the error envelope for {} (no partner named)",
            status_text(&x),
            Some(&x),
        ),
    }
}

/// Judge a deactivation that must succeed; the partnerId answered when it did.
fn judge_deactivation(
    d: &Deactivator<'_>,
    x: &Exchange,
    o: Outcome,
    what: &str,
    want: Option<&str>,
) -> Option<String> {
    let id = check_id!("partners.deactivate");
    match (o, x.resp()) {
        (Outcome::Throttled | Outcome::Transport, _) | (_, None) => {
            d.ctx.rec.not_judged(
                id,
                &d.label,
                format!("{what}: no judgeable answer ({})", status_text(x)),
            );
            None
        }
        (_, Some(r)) if r.status == 409 => {
            // Most likely the fixture was deactivated by an earlier run.
            d.ctx.rec.not_judged(
                id,
                &d.label,
                format!("{what}: 409 conflict; is the fixture an active partner?"),
            );
            None
        }
        (Outcome::Accepted, Some(r)) if r.status == 200 => {
            let got = answered_id(x);
            let ok = match (want, &got) {
                (Some(w), Some(g)) => w == g,
                (None, Some(g)) => !g.is_empty(),
                (_, None) => false,
            };
            if ok {
                d.ctx.rec.pass(id, &d.label);
            } else {
                d.ctx.rec.violation(
                    id,
                    &d.label,
                    match want {
                        Some(w) => format!("{what}: 200 with {{\"partnerId\": {w:?}}}"),
                        None => format!("{what}: 200 with a partnerId string"),
                    },
                    status_text(x),
                    Some(x),
                );
            }
            got
        }
        _ => {
            d.ctx.rec.violation(
                id,
                &d.label,
                format!(
                    "{what}: 200 with the deactivated partner's partnerId (a fixture: it exists)"
                ),
                status_text(x),
                Some(x),
            );
            None
        }
    }
}

/// The keys that may own a fixture, in the order to try them (the ledger's).
fn owners_to_try(d: &Deactivator<'_>, f: &Fixture) -> Vec<PlanKey> {
    d.ctx.fixtures.owners(f, &d.ctx.keys_for(d.op))
}

/// Deactivate a fixture with a key of the workspace that owns it (the ledger's owners).
/// Returns the key used and the judged answer; None when nothing could be judged.
async fn deactivate_fixture(
    d: &Deactivator<'_>,
    field: Field,
    f: &Fixture,
    what: &str,
) -> Option<(PlanKey, Exchange, Outcome)> {
    let id = check_id!("partners.deactivate");
    // Bound: the key is the owner, so the deactivation must succeed. Unbound: a 404 may only
    // mean another workspace's key.
    let expect = if f.plan.is_some() {
        Expect::Accept
    } else {
        Expect::Any
    };
    let allowed = d.ctx.keys_for(d.op);
    let tried = d
        .ctx
        .fixtures
        .deactivate(field, f, &allowed, |k| async move {
            let (x, o) = match null_beside(d, &k, field.name(), &f.id).await {
                Some(answer) => answer,
                None => d.send_as(&k, json!({ field.name(): f.id }), expect).await,
            };
            (x.status(), (x, o))
        })
        .await;
    match tried {
        Tried::Sent(k, (x, o)) => Some((k, x, o)),
        Tried::NoKey(why) => {
            d.ctx.rec.skip(id, &d.label, format!("{what}: {why}"));
            None
        }
        Tried::NotOwned(why) => {
            d.ctx.rec.not_judged(id, &d.label, why);
            None
        }
    }
}

/// Deactivate a fixture partnerId; its links before and after; then a repeat.
async fn by_partner_id(d: &Deactivator<'_>, fixture: Option<Fixture>) -> Option<PlanKey> {
    let ctx = d.ctx;
    let Some(fixture) = &fixture else {
        let why = format!(
            "deactivation by partnerId not tried: {}",
            ctx.fixtures.shortage(FAMILY, fixtures::PARTNERS)
        );
        for id in [
            check_id!("partners.deactivate"),
            check_id!("partners.links-disabled"),
        ] {
            ctx.rec.skip(id, &d.label, why.clone());
        }
        return None;
    };
    let pid = &fixture.id;
    let links = ctx.enabled(check_id!("partners.links-disabled"));
    // The links before are readable only with the owner's key, known in advance when bound.
    let before = match (links, owners_to_try(d, fixture).first(), &fixture.plan) {
        (true, Some(k), Some(_)) => Some(d.links_of(k, pid).await),
        _ => None,
    };
    let what = format!("deactivating partnerId {pid}");
    let (key, x, o) = deactivate_fixture(d, Field::PartnerId, fixture, &what).await?;
    judge_deactivation(d, &x, o, &what, Some(pid))?;
    if links {
        d.judge_links(&key, pid, before).await;
    }
    if ctx.enabled(check_id!("partners.choices")) {
        let (x, o) = d
            .send_as(&key, json!({ "partnerId": pid }), Expect::Any)
            .await;
        if matches!(o, Outcome::Throttled | Outcome::Transport) {
            return Some(key);
        }
        let q = Question::Repeat(Some(Field::PartnerId));
        let note = match (o, answered_id(&x)) {
            (Outcome::Accepted, Some(g)) if g == *pid => ctx.service.chose(q, Choice::Again).what,
            _ => match refusal(&x) {
                Some(c) => ctx.service.chose(q, c).what,
                None => format!("{}: {}", q.describe(), status_text(&x)),
            },
        };
        ctx.rec
            .observe(check_id!("partners.choices"), &d.label, note, Some(&x));
    }
    Some(key)
}

/// Deactivate a fixture tenantId: 200 with a partnerId; that partner's links after.
async fn by_tenant_id(d: &Deactivator<'_>, fixture: Option<Fixture>) {
    let ctx = d.ctx;
    let Some(fixture) = &fixture else {
        ctx.rec.skip(
            check_id!("partners.deactivate"),
            &d.label,
            format!(
                "deactivation by tenantId not tried: {}",
                ctx.fixtures.shortage(FAMILY, fixtures::PARTNERS)
            ),
        );
        return;
    };
    let what = format!("deactivating tenantId {}", fixture.id);
    let Some((key, x, o)) = deactivate_fixture(d, Field::TenantId, fixture, &what).await else {
        return;
    };
    let Some(pid) = judge_deactivation(d, &x, o, &what, None) else {
        return;
    };
    if ctx.enabled(check_id!("partners.links-disabled")) && !pid.is_empty() {
        d.judge_links(&key, &pid, None).await;
    }
}

/// `partners.choices`: both ids, of two different fixture partners: which one wins. Sent with
/// the key that owned the first partnerId (or the second one's bound plan).
async fn both_ids(d: &Deactivator<'_>, owner: Option<PlanKey>) {
    let ctx = d.ctx;
    let Some((pid, tid)) = ctx.fixtures.claim_pair(FAMILY) else {
        ctx.rec.observe(
            check_id!("partners.choices"),
            &d.label,
            format!(
                "{}: not tried: {}",
                Question::BothIds.describe(),
                ctx.fixtures.shortage(FAMILY, fixtures::PARTNERS)
            ),
            None,
        );
        return;
    };
    let key = match &pid.plan {
        Some(_) => owners_to_try(d, &pid).into_iter().next(),
        None => owner.or_else(|| owners_to_try(d, &pid).into_iter().next()),
    }
    .unwrap_or_else(|| d.key.clone());
    let (pid, tid) = (&pid.id, &tid.id);
    let (x, o) = d
        .send_as(
            &key,
            json!({ "partnerId": pid, "tenantId": tid }),
            Expect::Any,
        )
        .await;
    let q = Question::BothIds;
    let note = match (o, answered_id(&x)) {
        (Outcome::Throttled | Outcome::Transport, _) => return,
        (Outcome::Accepted, Some(g)) if g == *pid => {
            ctx.service.chose(q, Choice::Wins(Field::PartnerId)).what
        }
        // Which partner the tenantId names is not known here: not taken for the choice.
        (Outcome::Accepted, Some(g)) => format!(
            "{}: the answer names {g}, not the partnerId given (the tenantId wins?)",
            q.describe()
        ),
        _ => match refusal(&x) {
            Some(c) => ctx.service.chose(q, c).what,
            None => format!("{}: {}", q.describe(), status_text(&x)),
        },
    };
    ctx.rec
        .observe(check_id!("partners.choices"), &d.label, note, Some(&x));
}
