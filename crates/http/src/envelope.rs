//! The spec's error envelope, `{"error": {"code": string, "message": string, ...}}`, as read
//! from an answer. Which code a status must carry is the spec's error table's to say.

use serde_json::Value;

use super::Resp;

/// The `error` object of an envelope, if the body is one.
pub fn envelope_error(r: &Resp) -> Option<Value> {
    body_envelope_error(&r.body)
}

pub fn is_envelope(r: &Resp) -> bool {
    envelope_error(r).is_some()
}

/// The envelope's code, if the body is an envelope.
pub fn error_code(r: &Resp) -> Option<String> {
    body_error_code(&r.body)
}

/// `envelope_error` of a body alone (for callers that keep no `Resp`).
pub fn body_envelope_error(body: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let err = v.get("error")?;
    (err.get("code")?.is_string() && err.get("message")?.is_string()).then(|| err.clone())
}

/// `error_code` of a body alone.
pub fn body_error_code(body: &[u8]) -> Option<String> {
    body_envelope_error(body)?
        .get("code")?
        .as_str()
        .map(str::to_string)
}
