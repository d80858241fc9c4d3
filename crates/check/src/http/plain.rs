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

/// The plain request of an operation of the service, and what its answer holds: for a
/// deactivation, a partner no target has (nothing changes).
pub(super) fn plain(op: &Operation, key: &PlanKey) -> (Req, Body) {
    if op.body.is_some() {
        let req = Req::post_json(&op.path, &json!({ "partnerId": UNKNOWN_PARTNER })).key(key);
        return (req, Body::Json);
    }
    let kind = if answers_image(op) {
        Body::Image
    } else if op.id == "getTags" {
        Body::Tags { whole: false }
    } else {
        Body::Json
    };
    (minimal_request(op).key(key), kind)
}
