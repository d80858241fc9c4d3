//! `auth.*` and `plan.*`: credentials on every operation, and what each plan may call.

use linkcert_registry::check_id;
use serde_json::json;

use super::Ctx;
use super::conformance::{Expect, Outcome};
use super::probe::Req;
use linkcert_http::{error_code, is_envelope, refused_cleanly};
use linkcert_run::target::PlanKey;
use linkcert_spec::{Limit, Operation};

mod mutations;

pub(crate) use mutations::look_alike;

/// A request for `op` that is valid apart from what the check varies: required parameters
/// get their simplest valid value, a JSON body is an empty object.
pub fn minimal_request(op: &Operation) -> Req {
    let mut req = Req::new(op.method.clone(), &op.path);
    for p in op.params.iter().filter(|p| p.required) {
        let v = match p.kind {
            linkcert_spec::ParamKind::Integer | linkcert_spec::ParamKind::Number => "1".to_string(),
            linkcert_spec::ParamKind::Boolean => "false".into(),
            _ => p
                .enum_values()
                .and_then(|e| e.first().map(|s| s.to_string()))
                .unwrap_or_else(|| "https://example.com/linkcert".into()),
        };
        req = req.query(&p.name, v);
    }
    if let Some(b) = &op.body {
        req = req.body(&b.content_type, b"{}".to_vec());
    }
    req
}

/// Ways to get credentials wrong, with what the request carries: no credential, the wrong
/// scheme, and near misses of a real key in every direction (shorter, longer, one character
/// changed at either end or in the middle, other case, the key doubled), so a target that
/// compares keys loosely (prefix, case-insensitive, length-capped) is caught.
fn bad_credentials(real_key: &str) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = vec![
        ("no Authorization header".into(), None),
        ("an empty Authorization header".into(), Some(String::new())),
        ("the Basic scheme".into(), Some(format!("Basic {real_key}"))),
        ("the key without Bearer".into(), Some(real_key.to_string())),
        ("Bearer and no key".into(), Some("Bearer ".into())),
        (
            "an unknown key".into(),
            Some("Bearer lc_not_a_key_0000000000".into()),
        ),
    ];
    for (what, key) in near_misses(real_key) {
        out.push((what, Some(format!("Bearer {key}"))));
    }
    // The real key with more after it: "the word Bearer, a space, and an API key" ends at the
    // key, and RFC 9110's credentials have one token68 after the scheme, so whatever follows
    // makes the credential invalid. A target that keeps the first word after Bearer lets these in.
    for (what, tail) in [
        ("the key, a space and more text", " linkcert"),
        ("the key, a tab and more text", "\tlinkcert"),
        (
            "the key, a space and the key again",
            &format!(" {real_key}"),
        ),
        (
            "the key and a comma-separated parameter",
            ", realm=\"linkcert\"",
        ),
    ] {
        out.push((what.into(), Some(format!("Bearer {real_key}{tail}"))));
    }
    out
}

/// Forms of a valid credential the spec and RFC 9110 leave to the target: the scheme is
/// case-insensitive (RFC 9110 11.1), and `1*SP` may separate it from the key (RFC 9110 11.4),
/// though the spec writes "a space". Accepting or refusing (401) is the target's choice.
fn open_forms(real_key: &str) -> [(&'static str, String); 3] {
    [
        ("the scheme in lower case", format!("bearer {real_key}")),
        ("the scheme in upper case", format!("BEARER {real_key}")),
        ("two spaces after Bearer", format!("Bearer  {real_key}")),
    ]
}

/// Keys that differ from `key` a little, each with what was done; never `key` itself, and
/// only characters a header may carry.
fn near_misses(key: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = key.chars().collect();
    let n = chars.len();
    // A character unlike the one it replaces, from the key's own alphabet where possible.
    let other = |c: char| if c == 'x' { 'y' } else { 'x' };
    let with = |i: usize, c: char| {
        let mut v = chars.clone();
        v[i] = c;
        v.into_iter().collect::<String>()
    };
    let mut out: Vec<(String, String)> = Vec::new();
    if n > 1 {
        out.push((
            "a key one character short".into(),
            chars[..n - 1].iter().collect(),
        ));
        out.push((
            "a key without its first character".into(),
            chars[1..].iter().collect(),
        ));
        out.push((
            "the first half of a key".into(),
            chars[..n / 2].iter().collect(),
        ));
    }
    out.push(("a key one character longer".into(), format!("{key}x")));
    out.push(("a key with a character before it".into(), format!("x{key}")));
    out.push(("a key given twice".into(), format!("{key}{key}")));
    if n > 0 {
        out.push((
            "a key with its last character changed".into(),
            with(n - 1, other(chars[n - 1])),
        ));
        out.push((
            "a key with its first character changed".into(),
            with(0, other(chars[0])),
        ));
        out.push((
            "a key with a middle character changed".into(),
            with(n / 2, other(chars[n / 2])),
        ));
    }
    out.push((
        "a key in the other letter case".into(),
        mutations::case_flipped(key),
    ));
    out.retain(|(_, k)| k != key && !k.is_empty());
    out
}

/// `auth.choices` on the open forms of a credential, on one operation with a key that may
/// call it: accepted, 401 unauthorized or a 400 in the envelope (the header read as
/// malformed), all observed; anything else (a 422, a 5xx) is an `auth.required` failure (a
/// credential is either valid or "invalid: 401").
async fn open_credential_forms(ctx: &Ctx) {
    let (id, judge) = (check_id!("auth.choices"), check_id!("auth.required"));
    let Some(op) = ctx.op("getTags").or(ctx.spec.operations.first()) else {
        return;
    };
    let Some(key) = ctx.key_for(op).cloned() else {
        return;
    };
    for (what, header) in open_forms(&key.key) {
        let req = minimal_request(op).header("authorization", header);
        let (x, o) = ctx.exchange(op, req, Expect::Any).await;
        let Some(r) = x.resp() else { continue };
        let code = error_code(r).unwrap_or_default();
        let refused = ctx.is_error(r, 401);
        // A scheme the target does not take, read as a malformed header: the real service
        // answers 400 without `Bearer `; a clean refusal, as the spec's 401 is.
        let malformed = refused_cleanly(r, &[400]);
        match o {
            Outcome::Throttled | Outcome::Transport => {}
            Outcome::Accepted => {
                ctx.rec
                    .observe(id, &op.label(), format!("{what}: accepted"), Some(&x))
            }
            _ if refused || malformed => ctx.rec.observe(
                id,
                &op.label(),
                format!("{what}: refused with {}", r.answered()),
                Some(&x),
            ),
            _ => ctx.rec.violation(
                judge,
                &op.label(),
                format!("{what}: accepted, or refused with 401 unauthorized"),
                format!("{} {code}", r.status),
                Some(&x),
            ),
        }
    }
}

pub async fn run(ctx: &Ctx) {
    let Some(key) = ctx.main_key().cloned() else {
        return;
    };
    if ctx.enabled(check_id!("auth.choices")) {
        open_credential_forms(ctx).await;
    }
    if ctx.enabled(check_id!("auth.mutations")) {
        mutations::run(ctx).await;
    }
    if ctx.enabled(check_id!("auth.required")) {
        required(ctx, &key).await;
    }
    if ctx.enabled(check_id!("auth.accepted")) {
        accepted(ctx).await;
    }
}

/// `auth.required`: every operation, every bad credential, refused with 401.
async fn required(ctx: &Ctx, key: &PlanKey) {
    let mut sends = Vec::new();
    let mut asked = Vec::new();
    for op in &ctx.spec.operations {
        for (what, header) in bad_credentials(&key.key) {
            let mut req = minimal_request(op);
            // None: nothing at all, no key either.
            if let Some(h) = header {
                req = req.header("authorization", h);
            }
            sends.push((op, req, Expect::Any));
            asked.push((op, what));
        }
    }
    ctx.exchange_each(sends, |i, x, _| {
        let Some((op, what)) = asked.get(i) else {
            return;
        };
        match x.resp() {
            Some(r) if ctx.is_error(r, 401) => {
                ctx.rec.pass(check_id!("auth.required"), &op.label())
            }
            // The limiter may answer before auth on some targets; not this check's call.
            Some(r) if r.status == 429 => {}
            Some(r) => ctx.rec.violation(
                check_id!("auth.required"),
                &op.label(),
                format!("401 unauthorized for {what}"),
                r.answered(),
                Some(&x),
            ),
            None => {}
        }
    })
    .await;
}

/// `auth.accepted`: every operation with a key that may call it, not 401.
async fn accepted(ctx: &Ctx) {
    let called: Vec<(&Operation, &PlanKey)> = ctx
        .spec
        .operations
        .iter()
        .filter_map(|op| Some((op, ctx.key_for(op)?)))
        .collect();
    let sends = called
        .iter()
        .map(|&(op, k)| (op, minimal_request(op).key(k), Expect::Any))
        .collect();
    ctx.exchange_each(sends, |i, x, o| {
        let Some(&(op, k)) = called.get(i) else {
            return;
        };
        match o {
            Outcome::Other(401) => ctx.rec.violation(
                check_id!("auth.accepted"),
                &op.label(),
                format!("not 401 for a {} key", k.plan),
                "401",
                Some(&x),
            ),
            Outcome::Transport | Outcome::Throttled => {}
            _ => ctx.rec.pass(check_id!("auth.accepted"), &op.label()),
        }
    })
    .await;
}

/// `plan.*`: minimum plans, analytics availability, paid-only parameters.
pub async fn run_plans(ctx: &Ctx) {
    let spec = ctx.spec.clone();
    for op in &spec.operations {
        if op.min_plan.is_some() {
            gating(ctx, op).await;
        }
    }
    analytics_on_free(ctx).await;
    paid_params(ctx).await;
}

async fn gating(ctx: &Ctx, op: &Operation) {
    let label = op.label();
    let mut below = false;
    let mut above = false;
    for k in ctx.target.keys.iter() {
        let Some(plan) = ctx.spec.plan(&k.plan) else {
            continue;
        };
        let allowed = ctx.spec.plan_allows(plan, op);
        let id = if allowed {
            check_id!("plan.partner-allowed")
        } else {
            check_id!("plan.partner-gating")
        };
        if !ctx.enabled(id) {
            continue;
        }
        // Valid shape, unknown partner: allowed plans answer 404 (or a clean rejection),
        // refused plans 403; nothing is deactivated either way.
        let req = match &op.body {
            Some(b) => Req::new(op.method.clone(), &op.path).body(
                &b.content_type,
                json!({"partnerId": "pn_linkcert_gating_probe"})
                    .to_string()
                    .into_bytes(),
            ),
            None => minimal_request(op),
        }
        .key(k);
        let (x, o) = ctx.exchange(op, req, Expect::Any).await;
        if matches!(o, Outcome::Throttled | Outcome::Transport) {
            continue;
        }
        let Some(r) = x.resp() else { continue };
        let code = error_code(r).unwrap_or_default();
        if allowed {
            above = true;
            if matches!(r.status, 401 | 403) {
                ctx.rec.violation(
                    id,
                    &label,
                    format!("not 401/403 for the {} plan", plan.name),
                    r.answered(),
                    Some(&x),
                );
            } else {
                ctx.rec.pass(id, &label);
            }
        } else {
            below = true;
            if ctx.is_error(r, 403) {
                ctx.rec.pass(id, &label);
            } else {
                ctx.rec.violation(
                    id,
                    &label,
                    format!(
                        "403 forbidden for the {} plan (needs {})",
                        plan.name,
                        op.min_plan.as_deref().unwrap_or("?")
                    ),
                    format!("{} {code}", r.status),
                    Some(&x),
                );
            }
        }
    }
    if !below {
        ctx.rec.skip(
            check_id!("plan.partner-gating"),
            &label,
            "no key of a plan below the minimum (--key free=... or pro=...)",
        );
    }
    if !above {
        ctx.rec.skip(
            check_id!("plan.partner-allowed"),
            &label,
            "no key of Advanced or higher (--key advanced=...)",
        );
    }
}

async fn analytics_on_free(ctx: &Ctx) {
    let id = check_id!("plan.analytics-free");
    if !ctx.enabled(id) {
        return;
    }
    let spec = ctx.spec.clone();
    let classes_unavailable: Vec<&str> = spec
        .rate_classes
        .keys()
        .map(String::as_str)
        .filter(|c| spec.plans.iter().any(|p| p.limit(c) == Limit::Unavailable))
        .collect();
    let ops: Vec<&Operation> = spec
        .operations
        .iter()
        .filter(|o| classes_unavailable.contains(&o.rate_class.as_str()))
        .collect();
    if ops.is_empty() {
        ctx.rec.skip(
            id,
            "*",
            format!(
                "the target serves no operation of a rate class some plan lacks ({})",
                classes_unavailable.join(", ")
            ),
        );
        return;
    }
    let keys: Vec<_> = ctx
        .target
        .keys
        .iter()
        .filter(|k| {
            spec.plan(&k.plan).is_some_and(|p| {
                ops.iter()
                    .any(|o| p.limit(&o.rate_class) == Limit::Unavailable)
            })
        })
        .cloned()
        .collect();
    if keys.is_empty() {
        ctx.rec.skip(
            id,
            "*",
            "no key of a plan without analytics (--key free=...)",
        );
        return;
    }
    for op in ops {
        let k = &keys[0];
        let (x, _) = ctx
            .exchange(op, minimal_request(op).key(k), Expect::Any)
            .await;
        let Some(r) = x.resp() else { continue };
        if ctx.is_error(r, 403) {
            ctx.rec.pass(id, &op.label());
        } else {
            ctx.rec.violation(
                id,
                &op.label(),
                format!("403 forbidden for the {} plan (not available)", k.plan),
                r.answered(),
                Some(&x),
            );
        }
    }
}

/// `plan.paid-params` (observed) and `plan.paid-params-safe` (judged): logo and hideLogo sent
/// with a key of every plan that lacks them. A clean 403, a clean rejection, or accepted (and
/// ignored or honoured) are all the target's choice; a 5xx or an error outside the envelope
/// fails.
async fn paid_params(ctx: &Ctx) {
    let (observe, judge) = (
        check_id!("plan.paid-params"),
        check_id!("plan.paid-params-safe"),
    );
    if !ctx.enabled(observe) && !ctx.enabled(judge) {
        return;
    }
    let spec = ctx.spec.clone();
    let mut plans_seen = std::collections::HashSet::new();
    // One key per plan: two keys of one plan are gated alike.
    let unpaid: Vec<_> = ctx
        .target
        .keys
        .iter()
        .filter(|k| spec.plan(&k.plan).is_some_and(|p| !p.paid))
        .filter(|k| plans_seen.insert(k.plan.clone()))
        .cloned()
        .collect();
    if unpaid.is_empty() {
        for id in [observe, judge] {
            ctx.rec
                .skip(id, "*", "no key of an unpaid plan (--key free=...)");
        }
        return;
    }
    for k in &unpaid {
        for op in &spec.operations {
            for p in op.params.iter().filter(|p| p.paid_only) {
                let value = match p.kind {
                    linkcert_spec::ParamKind::Boolean => "true".to_string(),
                    _ => "https://example.com/logo.png".into(),
                };
                let req = minimal_request(op).query(&p.name, value).key(k);
                let (x, o) = ctx.exchange(op, req, Expect::Any).await;
                let Some(r) = x.resp() else { continue };
                let code = error_code(r).unwrap_or_default();
                let what = match o {
                    Outcome::Throttled | Outcome::Transport => continue,
                    Outcome::Accepted => {
                        format!("{} on {}: accepted (ignored or honoured)", p.name, k.plan)
                    }
                    _ => format!("{} on {}: refused with {} {code}", p.name, k.plan, r.status),
                };
                let clean = match o {
                    Outcome::Accepted | Outcome::CleanRejection(_) => true,
                    _ => ctx.is_error(r, 403),
                };
                if ctx.enabled(observe) {
                    ctx.rec.observe(observe, &op.label(), what, Some(&x));
                }
                if !ctx.enabled(judge) {
                    continue;
                }
                if clean {
                    ctx.rec.pass(judge, &op.label());
                } else {
                    let got = if is_envelope(r) {
                        format!("{} {code}", r.status)
                    } else {
                        r.without_envelope()
                    };
                    ctx.rec.violation(
                        judge,
                        &op.label(),
                        format!(
                            "{} on {}: 403 forbidden, 400/422 in the envelope, or accepted",
                            p.name, k.plan
                        ),
                        got,
                        Some(&x),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::near_misses;

    #[test]
    fn near_misses_go_every_direction_and_never_equal_the_key() {
        let key = "lk_Pro_1";
        let misses = near_misses(key);
        assert!(misses.len() >= 9, "{misses:?}");
        for (what, k) in &misses {
            assert_ne!(k, key, "{what}");
            assert!(!k.is_empty());
        }
        let keys: Vec<&str> = misses.iter().map(|(_, k)| k.as_str()).collect();
        for want in [
            "lk_Pro_",
            "k_Pro_1",
            "lk_Pro_1x",
            "xlk_Pro_1",
            "LK_pRO_1",
            "lk_Pro_x",
        ] {
            assert!(keys.contains(&want), "{want} in {keys:?}");
        }
        // The real key with text after it, whatever separates them.
        let bad: Vec<String> = super::bad_credentials(key)
            .into_iter()
            .filter_map(|(_, h)| h)
            .collect();
        for want in ["Bearer lk_Pro_1 linkcert", "Bearer lk_Pro_1\tlinkcert"] {
            assert!(bad.iter().any(|h| h == want), "{want} in {bad:?}");
        }
        // A one-character key still gets misses that differ from it.
        assert!(near_misses("x").iter().all(|(_, k)| k != "x"));
    }
}
