//! The plain request of each operation of the service, from the spec: what `http.clients`
//! dresses as each client and `http.neighbours` derives its neighbours from, and what its
//! answer holds (`same.rs` compares by it).

use serde_json::json;

use super::UNKNOWN_PARTNER;
use super::same::Body;
use crate::auth::minimal_request;
use crate::probe::Req;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

/// The service's own operations (not linkcert's stand-ins): what every client and every
/// neighbour is sent to.
pub(super) fn service_ops(spec: &linkcert_spec::Spec) -> Vec<&Operation> {
    spec.operations.iter().filter(|o| !o.extension).collect()
}

/// Whether the operation's success is an image (the spec's media type for it).
pub(super) fn answers_image(op: &Operation) -> bool {
    op.responses
        .values()
        .filter(|r| (200..300).contains(&r.status))
        .filter_map(|r| r.content.as_ref())
        .any(|(media, _)| media.starts_with("image/"))
}

/// The plain request of an operation of the service, and what its answer holds: an operation
/// that takes a body (the deactivation) names what no target has in every field its schema
/// requires (nothing changes), so no fixture is spent.
pub(super) fn plain(op: &Operation, key: &PlanKey) -> (Req, Body) {
    if let Some(b) = &op.body {
        let req = Req::post_json(&op.path, &unknown_body(&b.schema)).key(key);
        return (req, Body::Json);
    }
    let kind = if answers_image(op) {
        Body::Image
    } else if op.param_with_role("page-size").is_some() {
        Body::Tags { whole: false }
    } else {
        Body::Json
    };
    (minimal_request(op).key(key), kind)
}

/// A body of `schema` whose fields name nothing a target has: each string an unknown id, each
/// number 0. The fields are those the schema requires; where it requires none (the
/// deactivation names a partner by either of two ids, which one not shown), its first.
fn unknown_body(schema: &serde_json::Value) -> serde_json::Value {
    let mut body = serde_json::Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .collect();
    let first = schema["properties"]
        .as_object()
        .and_then(|p| p.keys().next());
    let names = if required.is_empty() {
        first.map(String::as_str).into_iter().collect()
    } else {
        required
    };
    for name in names {
        let v = match schema["properties"][name]["type"].as_str() {
            Some("integer" | "number") => json!(0),
            Some("boolean") => json!(false),
            _ => json!(UNKNOWN_PARTNER),
        };
        body.insert(name.to_string(), v);
    }
    serde_json::Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deactivation's plain body is derived from its schema: it requires no field, so its
    /// first, `partnerId`, names a partner no target has.
    #[test]
    fn a_bodys_required_fields_name_nothing_a_target_has() {
        let spec = linkcert_spec::Spec::embedded().unwrap();
        let op = spec
            .operations
            .iter()
            .find(|o| o.body.is_some() && !o.extension)
            .unwrap();
        let body = unknown_body(&op.body.as_ref().unwrap().schema);
        assert_eq!(body, json!({ "partnerId": UNKNOWN_PARTNER }));
        let list = spec
            .operations
            .iter()
            .filter(|o| o.param_with_role("page-size").is_some());
        let ids: Vec<&str> = list
            .filter(|o| !o.extension)
            .map(|o| o.id.as_str())
            .collect();
        assert_eq!(
            ids,
            ["getTags"],
            "the list of tags is the service's one paged list"
        );
    }
}
