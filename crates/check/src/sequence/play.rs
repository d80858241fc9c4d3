//! One play of a sequence against the target: each step sent in order (through `Ctx::exchange`,
//! so conformance judges every exchange), judged by the model, until a failure or a step that
//! cannot be judged. Reads of tags and QR are compared with the run's baselines, taken before
//! any deactivation.

use std::collections::BTreeSet;

use serde_json::Value;

use super::model::{Answer, Failure, Judged, Model, Side};
use super::steps::{AT_ONCE, Form, Key, Names, Step, body, form_name};
use super::{Cast, Setup};
use crate::Ctx;
use crate::conformance::Expect;
use crate::fixtures::Presumed;
use crate::probe::{Exchange, Req};
use crate::service::Choice;
use crate::service::on_largest_page;
use linkcert_http::{Resp, error_code, is_envelope};
use linkcert_registry::check_id;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

/// The URL the sequence's QR reads encode.
const QR_URL: &str = "https://example.com/linkcert-sequence";

/// What a play showed.
#[derive(Default)]
pub(super) struct Played {
    /// Every request sent: the index of its step in the sequence, what it was (a read of the
    /// links after a refusal besides the step's own), and its exchange.
    pub sent: Vec<(usize, Step, Exchange)>,
    pub judged: Vec<(Judged, usize)>,
    /// The first failure and the index of its step; the play stops there.
    pub failure: Option<(usize, Failure)>,
    /// Why the play stopped before its end without a failure.
    pub halted: Option<String>,
}

/// What a read answered, as compared across a run: its status and what the spec shapes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Seen {
    /// Tags: (id, name) of each, sorted.
    Tags(u16, Vec<(String, String)>),
    /// A PNG's size and grey pixels.
    Image(u16, u32, u32, Vec<u8>),
    /// Anything else: status and bytes.
    Raw(u16, Vec<u8>),
}

impl Seen {
    pub(super) fn of_tags(r: &Resp) -> Seen {
        // Sorted: only the set is compared (the ids and names of the whole list).
        let mut pairs: Vec<(String, String)> = match r.json() {
            Some(Value::Array(items)) if r.status == 200 => items
                .iter()
                .map(|t| {
                    let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    (s("id"), s("name"))
                })
                .collect(),
            _ => return Seen::Raw(r.status, r.body.clone()),
        };
        pairs.sort();
        Seen::Tags(r.status, pairs)
    }
    pub(super) fn of_image(r: &Resp) -> Seen {
        match image::load_from_memory(&r.body) {
            Ok(img) if r.status == 200 => {
                let g = img.to_luma8();
                Seen::Image(r.status, g.width(), g.height(), g.into_raw())
            }
            _ => Seen::Raw(r.status, r.body.clone()),
        }
    }
    /// The names only (a first page sorted by name: the ids of ties may differ).
    pub(super) fn names_only(self) -> Seen {
        match self {
            Seen::Tags(s, pairs) => {
                let mut names: Vec<(String, String)> =
                    pairs.into_iter().map(|(_, n)| (String::new(), n)).collect();
                names.sort();
                Seen::Tags(s, names)
            }
            other => other,
        }
    }
    fn status(&self) -> u16 {
        match self {
            Seen::Tags(s, _) | Seen::Image(s, ..) | Seen::Raw(s, _) => *s,
        }
    }
}

/// The request of a read step.
pub(super) fn read_request(
    op: &Operation,
    key: &PlanKey,
    step: Step,
    partner: Option<&str>,
) -> Req {
    let req = Req::new(op.method.clone(), &op.path).key(key);
    match step {
        Step::Qr => req.query("url", QR_URL),
        Step::Links => {
            let filter = op
                .param("partnerId")
                .map_or("partnerId", |p| p.name.as_str());
            let req = req.query(filter, partner.unwrap_or_default());
            on_largest_page(op, req)
        }
        Step::Tags => tags_query(op, req),
        _ => req,
    }
}

/// A read of the tags in an order the request fixes (the spec's sort parameters, found by
/// role: by name, or its first field, ascending), on the largest page: so the same read
/// before and after deactivations shows the same page, and whether it held the whole list.
fn tags_query(op: &Operation, mut req: Req) -> Req {
    let pick = |role: &str, want: &str| {
        let p = op.param_with_role(role)?;
        let values = p.enum_values()?;
        let v = values
            .iter()
            .find(|v| v.eq_ignore_ascii_case(want))
            .or(values.first())?;
        Some((p.name.clone(), v.to_string()))
    };
    for (name, value) in [pick("sort-by", "name"), pick("sort-order", "asc")]
        .into_iter()
        .flatten()
    {
        req = req.query(&name, value);
    }
    on_largest_page(op, req)
}

/// Whether the tags are read sorted by name (the spec's sort parameters found): then the names
/// on the first page are the list's first by name, whatever the order of ties.
pub(super) fn sorted_by_name(op: &Operation) -> bool {
    op.param_with_role("sort-by")
        .and_then(|p| p.enum_values())
        .is_some_and(|v| v.iter().any(|v| v.eq_ignore_ascii_case("name")))
        && op.param_with_role("sort-order").is_some()
}

fn answer(ctx: &Ctx, r: &Resp) -> Answer {
    let code = error_code(r);
    let partner_id = (r.status == 200)
        .then(|| r.json()?.get("partnerId")?.as_str().map(str::to_string))
        .flatten();
    let got = match (r.status, &code) {
        (s, Some(c)) if s >= 400 && is_envelope(r) => format!("{s} {c}"),
        (s, _) if s >= 400 => r.without_envelope(),
        (s, _) => format!(
            "{s} {}",
            String::from_utf8_lossy(&r.body[..r.body.len().min(200)])
        ),
    };
    Answer {
        status: r.status,
        spec_error: ctx.is_error(r, r.status),
        envelope: is_envelope(r),
        code,
        partner_id,
        got,
    }
}

/// The ids of the links listed as enabled for the partner, or None when unreadable.
fn enabled_links(r: &Resp, partner: &str) -> Option<BTreeSet<String>> {
    let Some(Value::Array(items)) = r.json().filter(|_| r.status == 200) else {
        return None;
    };
    Some(
        items
            .iter()
            .filter(|l| l.get("partnerId").and_then(Value::as_str) == Some(partner))
            .filter(|l| l.get("disabled").and_then(Value::as_bool) == Some(false))
            .filter_map(|l| l.get("id").and_then(Value::as_str).map(str::to_string))
            .collect(),
    )
}

/// Play `steps` with the fixtures of `cast`. After each refused request that names the
/// partner fixture while it is active, its links are read (where the target serves them): a
/// refusal that deactivated it anyway shows there, whatever a repeat is answered.
pub(super) async fn play(ctx: &Ctx, s: &Setup<'_>, cast: &Cast, steps: &[Step]) -> Played {
    let mut model = Model::new(cast.partner.as_ref().map(|f| f.id.as_str()));
    model.tenant_id = cast.tenant.as_ref().map(|f| f.id.clone());
    for (side, presumed) in [
        (Side::Partner, cast.partner_presumed),
        (Side::Tenant, cast.tenant_presumed),
    ] {
        if presumed == Presumed::Yes {
            model.presume(side);
        }
    }
    let mut out = Played::default();
    for (i, step) in steps.iter().enumerate() {
        let read_after = matches!(step, Step::Deactivate(Key::Gated(_), _))
            && step.needs_partner()
            && s.links.is_some();
        for step in [Some(*step), read_after.then_some(Step::Links)]
            .into_iter()
            .flatten()
        {
            if step == Step::Links && read_after && model.partner_deactivated() {
                continue;
            }
            let sent = match step {
                Step::AtOnce(form) => send_at_once(ctx, s, cast, &mut model, form).await,
                _ => send(ctx, s, cast, &mut model, step)
                    .await
                    .map(|(x, j)| (vec![x], j)),
            };
            let Some((xs, judged)) = sent else {
                continue;
            };
            out.sent.extend(xs.into_iter().map(|x| (i, step, x)));
            for j in judged {
                match j {
                    Judged::Fail(f) => {
                        out.failure = Some((i, f));
                        return out;
                    }
                    Judged::Halt(why) => {
                        out.halted = Some(why);
                        return out;
                    }
                    j => out.judged.push((j, i)),
                }
            }
        }
    }
    out
}

/// Send a step and judge its answer; None when this play cannot send it.
async fn send(
    ctx: &Ctx,
    s: &Setup<'_>,
    cast: &Cast,
    model: &mut Model,
    step: Step,
) -> Option<(Exchange, Vec<Judged>)> {
    let (op, req) = request(s, cast, model, step)?;
    let (x, _) = ctx.exchange(op, req, Expect::Any).await;
    let judged = match x.resp() {
        None => vec![Judged::Halt(format!("no answer: {}", x.failure_words()))],
        Some(r) if r.status == 429 => vec![Judged::Halt("429 even after waiting".into())],
        Some(r) => judge(ctx, s, cast, model, step, r),
    };
    Some((x, judged))
}

/// The owner's deactivation in `form`, `AT_ONCE` times at the same moment. The target served
/// them in some order it does not say: the answers hold if, in some order, one is the first
/// deactivation's and the others repeats' (the model judges each order from its state before
/// them). When no order holds, the order the target's answers came in is judged (the first to
/// come as the first deactivation), and its failure says the requests went at once. None when
/// this play cannot send the form.
async fn send_at_once(
    ctx: &Ctx,
    s: &Setup<'_>,
    cast: &Cast,
    model: &mut Model,
    form: Form,
) -> Option<(Vec<Exchange>, Vec<Judged>)> {
    let (op, req) = request(s, cast, model, Step::AtOnce(form))?;
    // Kept in the order the answers came: where no order holds, the answer that came first
    // is judged as the first deactivation (the target most likely served it first).
    let mut sends: futures::stream::FuturesUnordered<_> = (0..AT_ONCE)
        .map(|_| ctx.exchange(op, req.clone(), Expect::Any))
        .collect();
    let mut xs: Vec<Exchange> = Vec::with_capacity(AT_ONCE);
    while let Some((x, _)) = futures::StreamExt::next(&mut sends).await {
        xs.push(x);
    }
    let mut answers = Vec::with_capacity(xs.len());
    for x in &xs {
        match x.resp() {
            None => {
                let why = format!("no answer: {}", x.failure_words());
                return Some((xs.clone(), vec![Judged::Halt(why)]));
            }
            Some(r) if r.status == 429 => {
                return Some((
                    xs.clone(),
                    vec![Judged::Halt("429 even after waiting".into())],
                ));
            }
            Some(r) => answers.push(r),
        }
    }
    let step = Step::AtOnce(form);
    let mut fallback: Option<(OrderRank, Model, Vec<Judged>)> = None;
    for first in 0..answers.len() {
        let mut m = model.clone();
        let order = std::iter::once(first).chain((0..answers.len()).filter(|&i| i != first));
        let judged: Vec<Judged> = order
            .flat_map(|i| judge(ctx, s, cast, &mut m, step, answers[i]))
            .collect();
        let failed = judged.iter().any(|j| matches!(j, Judged::Fail(_)));
        let halted = judged.iter().any(|j| matches!(j, Judged::Halt(_)));
        if !failed && !halted {
            *model = m;
            let firsts = answers.iter().filter(|r| r.status == 200).count();
            let mut xs = xs;
            let mut judged = judged;
            if firsts > 1 {
                // 200 to more than one: repeats answered 200 (the target's choice), or each
                // served as a first. The same request alone tells which.
                let (x, _) = ctx.exchange(op, req, Expect::Any).await;
                if let Some(r) = x.resp().filter(|r| r.status != 429) {
                    judged.extend(judge(ctx, s, cast, model, step, r));
                    if Choice::refusal(r.status, is_envelope(r)).is_some() {
                        judged.push(Judged::Fail(Failure {
                            check: check_id!("sequence.first"),
                            expected: format!(
                                "{AT_ONCE} deactivations {} sent at once: one first \
                                 deactivation and repeats, answered as a repeat alone is",
                                form_name(form)
                            ),
                            actual: format!(
                                "{firsts} of them answered 200, and the same request alone \
                                 after them {}: a repeat is refused, so the partner was \
                                 deactivated more than once",
                                answer(ctx, r).got
                            ),
                        }));
                    }
                }
                xs.push(x);
            }
            return Some((xs, judged));
        }
        let rank = order_rank(&judged, &answers, first);
        if fallback.as_ref().is_none_or(|(r, _, _)| rank < *r) {
            fallback = Some((rank, m, judged));
        }
    }
    let (_, m, mut judged) = fallback?;
    *model = m;
    mark_at_once(&mut judged);
    Some((xs, judged))
}

/// How an order of answers to requests sent at once ranks where none holds (lower first): one
/// that could not be judged beats one that fails; then the fewest failures; then the one that
/// takes as the first deactivation the answer unlike every other (the first differs from the
/// repeats); then the order the answers came in (the earlier `first`).
type OrderRank = (bool, usize, bool);

fn order_rank(judged: &[Judged], answers: &[&Resp], first: usize) -> OrderRank {
    let fails = judged
        .iter()
        .filter(|j| matches!(j, Judged::Fail(_)))
        .count();
    let a = answers[first];
    let odd = answers
        .iter()
        .enumerate()
        .all(|(i, b)| i == first || (b.status, &b.body) != (a.status, &a.body));
    (fails > 0, fails, !odd)
}

/// A failure among answers to requests sent at once says so.
fn mark_at_once(judged: &mut [Judged]) {
    for j in judged {
        if let Judged::Fail(f) = j {
            f.actual = format!(
                "{} (one of {AT_ONCE} identical requests sent at once: in no order are their \
                 answers one first deactivation and repeats)",
                f.actual
            );
        }
    }
}

/// The operation and request of a step, or None when this play cannot send it (the partnerId
/// a tenantId's deactivation answers is not known yet).
fn request<'a>(
    s: &'a Setup<'_>,
    cast: &Cast,
    model: &Model,
    step: Step,
) -> Option<(&'a Operation, Req)> {
    let partner = cast.partner.as_ref().map(|f| f.id.as_str());
    match step {
        Step::Tags => Some((s.tags?, read_request(s.tags?, &s.home, step, None))),
        Step::Qr => Some((s.qr?, read_request(s.qr?, &s.home, step, None))),
        Step::Links => {
            let owner = cast.partner_owner.as_ref()?;
            Some((s.links?, read_request(s.links?, owner, step, partner)))
        }
        Step::AtOnce(form) => request(s, cast, model, Step::Deactivate(Key::Owner, form)),
        Step::Deactivate(key, form) => {
            let names = Names {
                partner,
                tenant: cast.tenant.as_ref().map(|f| f.id.as_str()),
                learned: model.learned(),
            };
            // Both ids go with the partner's owner: sent only when one key owns both, so the
            // tenantId is not unknown merely for being another workspace's.
            if form == Form::Both && cast.partner_owner != cast.tenant_owner {
                return None;
            }
            let body = body(form, &names)?;
            let key = match key {
                Key::Owner if step.needs_partner() => cast.partner_owner.as_ref()?,
                Key::Owner if step.needs_tenant() => cast.tenant_owner.as_ref()?,
                Key::Owner => &s.home,
                Key::Gated(i) => s.gated.get(i)?,
                Key::Other(i) => s.others.get(i)?,
            };
            let op = s.op;
            let ct = op
                .body
                .as_ref()
                .map_or("application/json", |b| b.content_type.as_str());
            let req = Req::new(op.method.clone(), &op.path)
                .body(ct, body.to_string().into_bytes())
                .key(key);
            Some((op, req))
        }
    }
}

fn judge(
    ctx: &Ctx,
    s: &Setup<'_>,
    cast: &Cast,
    model: &mut Model,
    step: Step,
    r: &Resp,
) -> Vec<Judged> {
    let unaffected = linkcert_registry::check_id!("sequence.unaffected");
    let compare = |seen: Seen, base: Option<&Seen>, what: &str| match base {
        None => Vec::new(),
        Some(b) if *b == seen => vec![Judged::Pass(unaffected)],
        Some(b) => vec![Judged::Fail(Failure {
            check: unaffected,
            expected: format!("{what} as before any deactivation ({})", b.status()),
            actual: format!("{} and a different body", seen.status()),
        })],
    };
    match step {
        Step::Tags => {
            let seen = Seen::of_tags(r);
            let seen = if s.tags_names_only {
                seen.names_only()
            } else {
                seen
            };
            compare(seen, s.base_tags.as_ref(), "GET /tags answered")
        }
        Step::Qr => compare(Seen::of_image(r), s.base_qr.as_ref(), "GET /qr answered"),
        Step::Links => {
            let partner = cast.partner.as_ref().map_or("", |f| f.id.as_str());
            match enabled_links(r, partner) {
                Some(enabled) => model.links(enabled),
                None => Vec::new(),
            }
        }
        Step::Deactivate(Key::Gated(_), form) => model.gated(form, &answer(ctx, r)),
        Step::Deactivate(_, form) | Step::AtOnce(form) => model.allowed(form, &answer(ctx, r)),
    }
}
