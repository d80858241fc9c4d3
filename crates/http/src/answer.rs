//! An answer as read: status, headers and a body read up to a cap.

use std::time::Duration;

use serde_json::Value;

#[derive(Clone, Debug)]
pub struct Resp {
    pub status: u16,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub truncated: bool,
    pub elapsed: Duration,
}

impl Resp {
    /// A JSON answer with `status` and `body`, made by hand: for the judges' unit tests in the
    /// crates that judge answers.
    pub fn json_answer(status: u16, body: &str) -> Resp {
        Resp {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            truncated: false,
            elapsed: Duration::default(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// A header as a non-negative integer, if it is one.
    pub fn header_u64(&self, name: &str) -> Option<u64> {
        self.header(name)?.trim().parse().ok()
    }
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
    /// The media type, lower-cased, without parameters.
    pub fn media_type(&self) -> Option<String> {
        let ct = self.header("content-type")?;
        Some(
            ct.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase(),
        )
    }
    /// Why the body is not JSON, in words naming what the target sent, when it is not.
    pub fn json_problem(&self) -> Option<String> {
        let e = serde_json::from_slice::<Value>(&self.body).err()?;
        let m = e.to_string();
        Some(if m.contains("recursion limit exceeded") {
            "JSON nested deeper than 128 levels, deeper than any answer of the spec".into()
        } else if std::str::from_utf8(&self.body).is_err() || m.contains("unicode") {
            format!("not valid UTF-8, as JSON must be ({m})")
        } else if self.truncated {
            format!("cut at {} bytes", self.body.len())
        } else {
            format!("not JSON: {m}")
        })
    }

    /// ` (the body is …)`, naming why a body that is not the envelope is not JSON; empty when
    /// it is JSON or there is none.
    pub fn why_not_json(&self) -> String {
        match self.json_problem() {
            Some(p) if !self.body.is_empty() => format!(" (the body is {p})"),
            _ => String::new(),
        }
    }

    /// `400 without the error envelope`, with why the body is not JSON when it is not, or
    /// that it was empty: the one wording of an answer that is not the envelope.
    pub fn without_envelope(&self) -> String {
        let why = if self.body.is_empty() {
            ", empty".to_string()
        } else {
            self.why_not_json()
        };
        format!("{} without the error envelope{why}", self.status)
    }

    /// The answer in words: `401 unauthorized` (status and envelope code), `400 without the
    /// error envelope (the body is …)`, or the status alone.
    pub fn answered(&self) -> String {
        match super::error_code(self) {
            Some(code) => format!("{} {code}", self.status),
            None if self.status >= 400 => self.without_envelope(),
            None => self.status.to_string(),
        }
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &[u8]) -> Resp {
        Resp {
            status: 400,
            headers: Vec::new(),
            body: body.to_vec(),
            truncated: false,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn a_body_that_is_not_json_says_why() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(
            answer(deep.as_bytes())
                .without_envelope()
                .contains("nested deeper than 128 levels"),
        );
        let bad = answer(b"{\"error\":{\"code\":\"x\xff\",\"message\":\"m\"}}");
        assert!(
            bad.without_envelope().contains("not valid UTF-8"),
            "{}",
            bad.without_envelope()
        );
        assert_eq!(
            answer(b"").without_envelope(),
            "400 without the error envelope, empty"
        );
        assert_eq!(answer(br#"{"a":1}"#).why_not_json(), "");
    }
}
