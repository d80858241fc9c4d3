//! `auth.*` and `plan.*`: credentials on every operation, and what each plan may call.

use serde_json::json;

use super::Ctx;
use super::conformance::{Expect, Outcome, error_code};
use super::probe::Req;
use crate::spec::{Limit, Operation};

/// A request for `op` that is valid apart from what the check varies: required parameters
/// get their simplest valid value, a JSON body is an empty object.
pub fn minimal_request(op: &Operation) -> Req {
    let mut req = Req::new(op.method.clone(), &op.path);
    for p in op.params.iter().filter(|p| p.required) {
        let v = match p.kind {
            crate::spec::ParamKind::Integer | crate::spec::ParamKind::Number => "1".to_string(),
            crate::spec::ParamKind::Boolean => "false".into(),
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

/// Ways to get credentials wrong, with what the request carries.
fn bad_credentials(real_key: &str) -> Vec<(&'static str, Option<String>)> {
    vec![
        ("no Authorization header", None),
        ("an empty Authorization header", Some(String::new())),
        ("the Basic scheme", Some(format!("Basic {real_key}"))),
        ("the key without Bearer", Some(real_key.to_string())),
        ("Bearer and no key", Some("Bearer ".into())),
        (
            "an unknown key",
            Some("Bearer lc_not_a_key_0000000000".into()),
        ),
        (
            "a key one character short",
            Some(format!(
                "Bearer {}",
                &real_key[..real_key.len().saturating_sub(1)]
            )),
        ),
    ]
}

pub async fn run(ctx: &Ctx) {
    let Some(key) = ctx.main_key().cloned() else {
        return;
    };
    for op in &ctx.spec.operations {
        if ctx.enabled("auth.required") {
            for (what, header) in bad_credentials(&key.key) {
                let mut req = minimal_request(op);
                // None: nothing at all, no key either.
                if let Some(h) = header {
                    req = req.header("authorization", h);
                }
                let (x, _) = ctx.exchange(op, req, Expect::Any).await;
                match x.resp() {
                    Some(r)
                        if r.status == 401 && error_code(r).as_deref() == Some("unauthorized") =>
                    {
                        ctx.rec.pass("auth.required", &op.label())
                    }
                    // The limiter may answer before auth on some targets; not this check's call.
                    Some(r) if r.status == 429 => {}
                    Some(r) => ctx.rec.violation(
                        "auth.required",
                        &op.label(),
                        format!("401 unauthorized for {what}"),
                        format!("{} {}", r.status, error_code(r).unwrap_or_default()),
                        Some(&x),
                    ),
                    None => {}
                }
            }
        }
        if ctx.enabled("auth.accepted")
            && let Some(k) = ctx.key_for(op)
        {
            let (x, o) = ctx
                .exchange(op, minimal_request(op).key(k), Expect::Any)
                .await;
            match o {
                Outcome::Other(401) => ctx.rec.violation(
                    "auth.accepted",
                    &op.label(),
                    format!("not 401 for a {} key", k.plan),
                    "401",
                    Some(&x),
                ),
                Outcome::Transport | Outcome::Throttled => {}
                _ => ctx.rec.pass("auth.accepted", &op.label()),
            }
        }
    }
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
            "plan.partner-allowed"
        } else {
            "plan.partner-gating"
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
                    format!("{} {code}", r.status),
                    Some(&x),
                );
            } else {
                ctx.rec.pass(id, &label);
            }
        } else {
            below = true;
            if r.status == 403 && code == "forbidden" {
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
            "plan.partner-gating",
            &label,
            "no key of a plan below the minimum (--key free=... or pro=...)",
        );
    }
    if !above {
        ctx.rec.skip(
            "plan.partner-allowed",
            &label,
            "no key of Advanced or higher (--key advanced=...)",
        );
    }
}

async fn analytics_on_free(ctx: &Ctx) {
    let id = "plan.analytics-free";
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
        let (x, o) = ctx
            .exchange(op, minimal_request(op).key(k), Expect::Any)
            .await;
        let Some(r) = x.resp() else { continue };
        let code = error_code(r).unwrap_or_default();
        match (r.status, o) {
            (403, _) if code == "forbidden" => ctx.rec.pass(id, &op.label()),
            _ => ctx.rec.violation(
                id,
                &op.label(),
                format!("403 forbidden for the {} plan (not available)", k.plan),
                format!("{} {code}", r.status),
                Some(&x),
            ),
        }
    }
}

async fn paid_params(ctx: &Ctx) {
    let id = "plan.paid-params";
    if !ctx.enabled(id) {
        return;
    }
    let spec = ctx.spec.clone();
    let unpaid: Vec<_> = ctx
        .target
        .keys
        .iter()
        .filter(|k| spec.plan(&k.plan).is_some_and(|p| !p.paid))
        .cloned()
        .collect();
    let Some(k) = unpaid.first() else {
        ctx.rec
            .skip(id, "*", "no key of an unpaid plan (--key free=...)");
        return;
    };
    for op in &spec.operations {
        for p in op.params.iter().filter(|p| p.paid_only) {
            let value = match p.kind {
                crate::spec::ParamKind::Boolean => "true".to_string(),
                _ => "https://example.com/logo.png".into(),
            };
            let req = minimal_request(op).query(&p.name, value).key(k);
            let (x, o) = ctx.exchange(op, req, Expect::Any).await;
            let what = match (o, x.resp()) {
                (Outcome::Accepted, _) => {
                    format!("{} on {}: accepted (ignored or honoured)", p.name, k.plan)
                }
                (_, Some(r)) => format!(
                    "{} on {}: refused with {} {}",
                    p.name,
                    k.plan,
                    r.status,
                    error_code(r).unwrap_or_default()
                ),
                _ => continue,
            };
            ctx.rec.observe(id, &op.label(), what, Some(&x));
        }
    }
}
