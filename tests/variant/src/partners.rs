//! POST /partners/deactivate. Choices where the document is silent: neither id is 400, both
//! ids means tenantId wins, and deactivating a partner already deactivated is 422 (the request
//! names a partner it cannot apply to; the reference answers 200 again, the real service 400),
//! while an id no partner has is 404. An id longer than 255 characters is 400 (the reference takes
//! any length, and answers 404 for an unknown one).

use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::Value;

use super::{Workspace, error, json};

pub struct Partner {
    pub id: String,
    pub tenant_id: String,
    pub active: bool,
}

/// Longest id accepted, in characters (the document sets no bound).
const MAX_ID: usize = 255;

pub fn seed(plan: &str) -> Vec<Partner> {
    (1..=40)
        .map(|i| Partner {
            id: format!("ptn-{plan}-{i:03}"),
            tenant_id: format!("tenant-{plan}-{i:03}"),
            active: true,
        })
        .collect()
}

pub fn deactivate(ws: &Workspace, headers: &HeaderMap, body: &[u8]) -> Response {
    let json_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    if !json_type {
        return error(400, "the body must be application/json");
    }
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(body) else {
        return error(400, "the body must be a JSON object");
    };
    let field = |name: &str| match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() > MAX_ID => {
            Err(format!("{name} is longer than {MAX_ID} characters"))
        }
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(format!("{name} must be a non-empty string")),
    };
    let (partner_id, tenant_id) = match (field("partnerId"), field("tenantId")) {
        (Ok(p), Ok(t)) => (p, t),
        (Err(m), _) | (_, Err(m)) => return error(400, m),
    };
    let mut list = ws.partners.lock().unwrap();
    let found = match (&tenant_id, &partner_id) {
        (Some(t), _) => list.iter_mut().find(|p| &p.tenant_id == t),
        (None, Some(p)) => list.iter_mut().find(|x| &x.id == p),
        (None, None) => return error(400, "give partnerId or tenantId"),
    };
    match found {
        Some(p) if p.active => {
            p.active = false;
            json(200, &serde_json::json!({"partnerId": p.id}))
        }
        Some(_) => error(422, "the partner is already deactivated"),
        None => error(404, "no partner with that id in this program"),
    }
}
