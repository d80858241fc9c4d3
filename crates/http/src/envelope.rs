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

/// The statuses any request may be refused with cleanly: the spec's 400 (malformed) and 422
/// (invalid data), its silence on which it picks being the target's choice.
pub const REJECTIONS: [u16; 2] = [400, 422];

/// Whether an answer is a clean refusal of what was asked: one of `clean` (the statuses this
/// request may be refused with, `REJECTIONS` and whatever it adds: 413 for a body too large,
/// 401 for a credential, 404 for an id), in the error envelope. The one rule every judge of
/// `check` and `load` applies; `load`'s records give `in_envelope` from the code they read.
pub fn clean_refusal(status: u16, in_envelope: bool, clean: &[u16]) -> bool {
    in_envelope && clean.contains(&status)
}

/// `clean_refusal` of an answer as read.
pub fn refused_cleanly(r: &Resp, clean: &[u16]) -> bool {
    clean_refusal(r.status, is_envelope(r), clean)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_refusal_is_an_allowed_status_in_the_envelope() {
        let env = br#"{"error":{"code":"bad_request","message":"no"}}"#;
        let answer = |status: u16, body: &[u8]| Resp {
            status,
            headers: Vec::new(),
            body: body.to_vec(),
            truncated: false,
            elapsed: std::time::Duration::ZERO,
        };
        assert!(refused_cleanly(&answer(400, env), &REJECTIONS));
        assert!(refused_cleanly(&answer(422, env), &REJECTIONS));
        assert!(!refused_cleanly(&answer(404, env), &REJECTIONS));
        assert!(refused_cleanly(&answer(404, env), &[404]));
        assert!(!refused_cleanly(&answer(400, b"bad request"), &REJECTIONS));
        assert!(!clean_refusal(500, true, &REJECTIONS));
        assert!(clean_refusal(413, true, &[400, 413, 422]));
    }
}
