//! One small handler per operation. Parameters arrive validated, with defaults applied.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde_json::{Value, json};

use super::App;
use super::data::{PartnerStatus, Tag, name_matches};
use super::error::ApiError;
use super::layers::{Caller, Validated};
use linkcert_qr_encode as qr;

/// The handler of each operation id; the router is built from the spec with these.
pub fn for_operation(id: &str) -> Option<MethodRouter<Arc<App>>> {
    Some(match id {
        "getTags" => get(list_tags),
        "getQRCode" => get(qr_code),
        "deactivatePartner" => post(deactivate_partner),
        "listLinks" => get(list_links),
        "retrieveAnalytics" => get(analytics),
        "listEvents" => get(events),
        _ => return None,
    })
}

/// How many items a page skips and holds; past the end is empty, never an error.
fn page_window(v: &Validated) -> (usize, usize) {
    let page = v.i64("page").unwrap_or(1).max(1) as u64;
    let size = v.i64("pageSize").unwrap_or(100).max(1) as u64;
    let skip = (page - 1).saturating_mul(size);
    (
        usize::try_from(skip).unwrap_or(usize::MAX),
        usize::try_from(size).unwrap_or(usize::MAX),
    )
}

async fn list_tags(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Extension(v): Extension<Arc<Validated>>,
) -> Response {
    let by_created = v.str("sortBy") == Some("createdAt");
    let desc = v.str("sortOrder") == Some("desc");
    let ids = v.strings("ids").filter(|ids| !ids.is_empty());
    let search = v.str("search").filter(|s| !s.is_empty());
    let (skip, take) = page_window(&v);
    let tags = app.tags(caller.workspace);
    let wanted = |t: &Tag| {
        ids.as_ref().is_none_or(|ids| ids.contains(&t.id.as_str()))
            && search.is_none_or(|s| name_matches(&t.name, s))
    };
    let page = tags
        .ordered_positions(by_created, desc)
        .filter(|i| tags.items.get(*i).is_some_and(wanted))
        .skip(skip)
        .take(take);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        tags.page_json(page),
    )
        .into_response()
}

async fn qr_code(Extension(v): Extension<Arc<Validated>>) -> Result<Response, ApiError> {
    // Validation guarantees presence and bounds; the fallbacks are the spec's defaults.
    let url = v.str("url").unwrap_or_default();
    let colour = |name: &str, default: &str| {
        let s = v.str(name).unwrap_or(default);
        qr::parse_hex_color(s)
            .ok_or_else(|| ApiError::unprocessable(format!("{name} must be #RRGGBB or #RGB")))
    };
    let logo = v.str("logo").is_some_and(|l| !l.is_empty()) && !v.bool("hideLogo").unwrap_or(false);
    let opts = qr::RenderOptions {
        size: v.f64("size").unwrap_or(600.0) as u32,
        margin: v.f64("margin").unwrap_or(2.0) as u32,
        level: v
            .str("level")
            .and_then(qr::EcLevel::parse)
            .unwrap_or(qr::EcLevel::L),
        fg: colour("fgColor", "#000000")?,
        bg: colour("bgColor", "#FFFFFF")?,
        logo,
    };
    let png = qr::render_png(url.as_bytes(), &opts)
        .map_err(|e| ApiError::unprocessable(e.to_string()))?;
    let mut resp = png.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
    Ok(resp)
}

async fn deactivate_partner(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Extension(v): Extension<Arc<Validated>>,
) -> Result<Response, ApiError> {
    let body = v.body.clone().unwrap_or(Value::Null);
    let field = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let (partner_id, tenant_id) = (field("partnerId"), field("tenantId"));
    if partner_id.is_none() && tenant_id.is_none() {
        return Err(ApiError::unprocessable(
            "either partnerId or tenantId must be provided",
        ));
    }
    let done = app.data(caller.workspace).deactivate(partner_id, tenant_id);
    match done {
        Some(id) => Ok(Json(json!({ "partnerId": id })).into_response()),
        None => Err(ApiError::not_found(match partner_id {
            Some(id) => format!("no partner {id} in this workspace's program"),
            None => format!(
                "no partner with tenantId {} in this workspace's program",
                tenant_id.unwrap_or_default()
            ),
        })),
    }
}

async fn list_links(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Extension(v): Extension<Arc<Validated>>,
) -> Response {
    let partner = v.str("partnerId");
    let (skip, take) = page_window(&v);
    let links: Vec<_> = {
        let data = app.data(caller.workspace);
        data.links
            .iter()
            .filter(|l| partner.is_none_or(|p| l.partner_id == p))
            .skip(skip)
            .take(take)
            .cloned()
            .collect()
    };
    Json(links).into_response()
}

async fn analytics(State(app): State<Arc<App>>, Extension(caller): Extension<Caller>) -> Response {
    let (clicks, leads, sales) = app.data(caller.workspace).totals;
    Json(json!({ "clicks": clicks, "leads": leads, "sales": sales })).into_response()
}

async fn events(State(app): State<Arc<App>>, Extension(caller): Extension<Caller>) -> Response {
    let data = app.data(caller.workspace);
    let events: Vec<Value> = data
        .partners
        .iter()
        .filter(|p| p.status == PartnerStatus::Deactivated)
        .map(|p| json!({ "id": format!("evt_{}", p.partner_id), "kind": "partner.deactivated" }))
        .collect();
    Json(events).into_response()
}
