//! Errors as handlers and layers raise them, and the one function that turns every error
//! response, ours or the framework's, into the spec's envelope (the outer middleware,
//! `layers::ServiceLayer`, applies it to every answer).

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::App;

/// An error answer: a status from the spec's table and a message for people. The envelope
/// layer adds the code and doc_url, so they are computed in one place.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, m)
    }
    pub fn unprocessable(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, m)
    }
    pub fn forbidden(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, m)
    }
    pub fn not_found(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, m)
    }
    pub fn unauthorized(m: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, m)
    }
}

/// Carried on the response from where the error is raised to the envelope layer.
#[derive(Clone)]
struct ErrorMessage(String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = self.status.into_response();
        r.extensions_mut().insert(ErrorMessage(self.message));
        r
    }
}

/// Any status of 400 or more leaves in the envelope, with a status from the spec's table (the
/// framework's 405 becomes 404: nothing matches; other codes outside the table become 400 or
/// 500) and the code the table gives it. `method` and `uri` are the request's, for messages.
pub fn envelope(app: &App, method: &Method, uri: &Uri, resp: Response) -> Response {
    let status = resp.status();
    if status.as_u16() < 400 {
        return resp;
    }
    let path = uri.path();
    let (mut parts, _) = resp.into_parts();
    let table = &app.spec.errors;
    let (status, fallback) = match status.as_u16() {
        s if table.code(s).is_some() => (status, None),
        405 => (
            StatusCode::NOT_FOUND,
            Some(format!("{path} has no operation {method}")),
        ),
        s if s >= 500 => (StatusCode::INTERNAL_SERVER_ERROR, None),
        _ => (StatusCode::BAD_REQUEST, None),
    };
    let message = parts
        .extensions
        .get::<ErrorMessage>()
        .map(|m| m.0.clone())
        .or(fallback)
        .unwrap_or_else(|| match status {
            StatusCode::NOT_FOUND => format!("no operation {method} {path}"),
            StatusCode::INTERNAL_SERVER_ERROR => "unexpected server condition; retry later".into(),
            s => s.canonical_reason().unwrap_or("error").to_string(),
        });
    let code = table
        .code(status.as_u16())
        .unwrap_or("internal_server_error");
    let body = serde_json::json!({
        "error": { "code": code, "message": message, "doc_url": table.doc_url(code) }
    });
    parts.status = status;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(body.to_string()))
}

/// A panic is a 500 whose message does not leak the panic's text.
pub fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "unexpected server condition; retry later",
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{App, KeySet};
    use axum::extract::Request;
    use axum::routing::get;
    use linkcert_spec::Spec;
    use std::sync::Arc;
    use tower::ServiceExt;

    async fn boom() -> &'static str {
        std::panic::panic_any("secret detail")
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_in_the_envelope_without_its_text() {
        let spec = Arc::new(Spec::embedded().unwrap());
        let keys = KeySet::development(&spec);
        let key = keys.keys().next().unwrap().0.to_string();
        let app = Arc::new(App::new(spec, keys, None).unwrap());
        let router = axum::Router::new()
            .route("/boom", get(boom))
            .layer(crate::layers::ServiceLayer(app.clone()));
        let req = Request::get("/boom")
            .header("authorization", format!("Bearer {key}"))
            .body(Body::empty())
            .unwrap();
        let resp = router.oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(resp.into_body(), 10_000)
            .await
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], "internal_server_error");
        assert!(
            v["error"]["doc_url"]
                .as_str()
                .unwrap()
                .ends_with("#internal_server_error")
        );
        assert!(!String::from_utf8_lossy(&body).contains("secret detail"));
    }
}
