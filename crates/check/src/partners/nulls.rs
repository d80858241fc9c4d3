//! `partners.null`: JSON `null` for the body fields of a deactivation. The probes that name
//! no fixture run always; with --allow-destructive the first request for a fixture carries
//! `null` for the other field, and what it accepts it must honour.

use linkcert_registry::check_id;
use serde_json::json;

use super::{Deactivator, UNKNOWN_PARTNER, UNKNOWN_TENANT, status_text};
use crate::conformance::{Expect, Outcome};
use crate::probe::Exchange;
use linkcert_http::refused_cleanly;
use linkcert_run::target::PlanKey;

/// `partners.null`: `null` for either field, both, or beside an unknown id of the other. None
/// names a partner that exists, so nothing may be deactivated: a clean rejection (400/422) or
/// 404 not_found (null read as absent, the other id unknown) passes; a 2xx (what was
/// deactivated?), a 5xx or an error outside the envelope fails.
pub(super) async fn nulls(d: &Deactivator<'_>) {
    let id = check_id!("partners.null");
    let bodies = [
        json!({ "partnerId": null }),
        json!({ "tenantId": null }),
        json!({ "partnerId": null, "tenantId": null }),
        json!({ "partnerId": null, "tenantId": UNKNOWN_TENANT }),
        json!({ "partnerId": UNKNOWN_PARTNER, "tenantId": null }),
    ];
    for body in bodies {
        let (x, o) = d.send(body.clone(), Expect::Any).await;
        let Some(r) = x.resp() else { continue };
        let clean = match o {
            Outcome::Throttled | Outcome::Transport => continue,
            Outcome::CleanRejection(_) => true,
            _ => d.ctx.is_error(r, 404),
        };
        if clean {
            d.ctx.rec.pass(id, &d.label);
        } else {
            d.ctx.rec.violation(
                id,
                &d.label,
                format!(
                    "400/422 in the envelope (or 404 not_found) for {body}: no known partner named"
                ),
                status_text(&x),
                Some(&x),
            );
        }
    }
}

/// `partners.null` with --allow-destructive: the fixture's id with `null` for the other
/// field, before the plain request. Accepted: that answer is the deactivation, judged as any
/// (so an acceptance must be honoured). A clean rejection, or a 404 (which may only mean
/// another workspace's key): None, and the plain request follows. A 5xx fails.
pub(super) async fn null_beside(
    d: &Deactivator<'_>,
    key: &PlanKey,
    field: &str,
    value: &str,
) -> Option<(Exchange, Outcome)> {
    let id = check_id!("partners.null");
    if !d.ctx.enabled(id) {
        return None;
    }
    let other = if field == "tenantId" {
        "partnerId"
    } else {
        "tenantId"
    };
    let body = json!({ field: value, other: null });
    let (x, o) = d.send_as(key, body.clone(), Expect::Any).await;
    let r = x.resp()?;
    let note = |what: &str| format!("{field} of a fixture with {other}: null: {what}");
    match o {
        Outcome::Throttled | Outcome::Transport => None,
        Outcome::Accepted => {
            d.ctx.rec.pass(id, &d.label);
            let seen = note("accepted (null read as absent)");
            d.ctx
                .rec
                .observe(check_id!("partners.choices"), &d.label, seen, Some(&x));
            Some((x, o))
        }
        Outcome::CleanRejection(s) => {
            d.ctx.rec.pass(id, &d.label);
            let seen = note(&format!("rejected with {s}"));
            d.ctx
                .rec
                .observe(check_id!("partners.choices"), &d.label, seen, Some(&x));
            None
        }
        _ if r.status == 409 => Some((x, o)),
        _ if refused_cleanly(r, &[404]) => None,
        _ => {
            d.ctx.rec.violation(
                id,
                &d.label,
                format!("a clean rejection or the deactivation for {body}"),
                status_text(&x),
                Some(&x),
            );
            None
        }
    }
}
