//! What a request is and how an exchange is written down: the request a check builds (`Req`),
//! what came back (`Exchange`), and its record for the report (`ExchangeRecord`) with secrets
//! redacted, a body excerpt, the PNG kept for the certificate and a one-line curl to reproduce
//! it. Sending it is `probe`'s.

use bytes::Bytes;
use http::Method;
use serde_json::Value;

use super::long_body::{INLINE_BODY, Repeated};
use linkcert_http::{Failure, Resp};
use linkcert_report::model::ExchangeRecord;
use linkcert_run::target::{PlanKey, Secret};

/// What a report shows of a body.
const EXCERPT: usize = 1500;
/// Body bytes kept of an exchange held among many (`Exchange::lighten`): the excerpt, or a
/// small PNG whole.
const KEPT_AMONG_MANY: usize = 16 * 1024;

#[derive(Clone, Debug)]
pub struct Req {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Used verbatim instead of `query` when set (to send what an encoder would not).
    pub raw_query: Option<String>,
    pub headers: Vec<(String, String)>,
    /// Shared, not copied, by the clones a send makes (bodies of 16 MiB are sent).
    pub body: Option<Bytes>,
    /// Sent as `Authorization: Bearer <key>` unless `headers` sets Authorization itself.
    pub key: Option<PlanKey>,
}

impl Req {
    pub fn new(method: Method, path: &str) -> Req {
        Req {
            method,
            path: path.to_string(),
            query: Vec::new(),
            raw_query: None,
            headers: Vec::new(),
            body: None,
            key: None,
        }
    }
    pub fn get(path: &str) -> Req {
        Req::new(Method::GET, path)
    }
    pub fn post_json(path: &str, body: &Value) -> Req {
        Req::new(Method::POST, path).body("application/json", body.to_string().into_bytes())
    }
    pub fn query(mut self, k: &str, v: impl Into<String>) -> Req {
        self.query.push((k.to_string(), v.into()));
        self
    }
    pub fn header(mut self, k: &str, v: impl Into<String>) -> Req {
        self.headers.push((k.to_string(), v.into()));
        self
    }
    pub fn body(mut self, content_type: &str, bytes: impl Into<Bytes>) -> Req {
        self.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
        self.headers
            .push(("content-type".into(), content_type.into()));
        self.body = Some(bytes.into());
        self
    }
    pub fn key(mut self, key: &PlanKey) -> Req {
        self.key = Some(key.clone());
        self
    }

    pub fn query_string(&self) -> String {
        if let Some(raw) = &self.raw_query {
            return raw.clone();
        }
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &self.query {
            s.append_pair(k, v);
        }
        s.finish()
    }

    pub fn url(&self, base: &linkcert_http::BaseUrl) -> String {
        let q = self.query_string();
        if q.is_empty() {
            base.join(&self.path)
        } else {
            base.join(&format!("{}?{q}", self.path))
        }
    }

    fn sets_authorization(&self) -> bool {
        self.headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    }

    /// The headers as sent, the key included.
    pub(super) fn all_headers(&self) -> Vec<(String, String)> {
        let mut h = self.headers.clone();
        if let (Some(k), false) = (&self.key, self.sets_authorization()) {
            h.insert(0, ("authorization".into(), k.authorization()));
        }
        h
    }
}

#[derive(Clone, Debug)]
pub struct Exchange {
    pub req: Req,
    pub url: String,
    pub result: Result<Resp, Failure>,
    pub insecure: bool,
}

impl Exchange {
    pub fn resp(&self) -> Option<&Resp> {
        self.result.as_ref().ok()
    }
    /// What the request ran into when no answer came.
    pub fn failure(&self) -> Option<&Failure> {
        self.result.as_ref().err()
    }
    /// The failure in words (empty when an answer came), for people.
    pub fn failure_words(&self) -> String {
        self.failure().map(ToString::to_string).unwrap_or_default()
    }
    /// Never sent (the run stopping, the target gone or broken, its route given up): such an
    /// exchange judges nothing.
    pub fn not_sent(&self) -> bool {
        self.failure().is_some_and(Failure::was_not_sent)
    }
    pub fn status(&self) -> Option<u16> {
        self.resp().map(|r| r.status)
    }
    /// A 429: the target throttled this request.
    pub fn throttled(&self) -> bool {
        self.status() == Some(429)
    }

    /// What is kept of an exchange held among many (a burst of a thousand answers): the
    /// headers and status its judges read, and no more of the body than a report shows.
    pub fn lighten(mut self) -> Exchange {
        if let Ok(r) = &mut self.result
            && r.body.len() > KEPT_AMONG_MANY
        {
            r.body.truncate(KEPT_AMONG_MANY);
            r.body.shrink_to_fit();
            r.truncated = true;
        }
        self
    }

    /// The exchange as a report shows it: each key replaced by its variable (`$LINKCERT_KEY_PRO`).
    pub fn record(&self, secrets: &[Secret]) -> ExchangeRecord {
        let red = |s: &str| redact(s, secrets);
        let headers = |h: &[(String, String)]| -> Vec<(String, String)> {
            h.iter().map(|(k, v)| (k.clone(), red(v))).collect()
        };
        ExchangeRecord {
            method: self.req.method.to_string(),
            url: red(&self.url),
            request_headers: headers(&self.req.all_headers()),
            request_body: self.req.body.as_ref().map(|b| red(&excerpt(b, None))),
            status: self.status(),
            response_headers: self.resp().map(|r| headers(&r.headers)).unwrap_or_default(),
            response_body: self
                .resp()
                .map(|r| red(&excerpt(&r.body, r.media_type().as_deref())))
                .unwrap_or_default(),
            error: self.result.as_ref().err().map(|e| red(&e.to_string())),
            curl: self.curl(secrets),
            png_base64: self.resp().and_then(|r| png_base64(&r.body)),
        }
    }

    /// One line of shell that sends the same request; the key is its variable
    /// (`$LINKCERT_KEY_PRO`), so the reader sees which key reproduces it.
    pub fn curl(&self, secrets: &[Secret]) -> String {
        let mut parts = vec!["curl -sS -i".to_string()];
        if self.insecure {
            parts.push("-k".into());
        }
        if self.req.method != Method::GET {
            parts.push(format!("-X {}", self.req.method));
        }
        parts.push(shell_quote(&redact(&self.url, secrets)));
        for (k, v) in self.req.all_headers() {
            let line = format!("{k}: {v}");
            let red = redact(&line, secrets);
            if red != line {
                // Double quotes so the shell expands the key's variable.
                parts.push(format!("-H \"{}\"", red.replace('"', "\\\"")));
            } else {
                parts.push(format!("-H {}", shell_quote(&line)));
            }
        }
        let mut pipe = None;
        if let Some(b) = &self.req.body {
            if b.len() > INLINE_BODY {
                // Too long for a command line: a pipeline makes it, or it is named as a file.
                pipe = Repeated::of(b).map(|r| {
                    let q = |s: &str| shell_quote(&redact(s, secrets));
                    format!(
                        "{{ printf '%s' {}; head -c {} /dev/zero | tr '\\0' '{}'; printf '%s' {}; }}",
                        q(r.head),
                        r.len,
                        r.byte,
                        q(r.tail)
                    )
                });
                parts.push(match pipe {
                    Some(_) => "--data-binary @-".into(),
                    None => format!("--data-binary @body.bin  # {} bytes", b.len()),
                });
            } else {
                let data = match std::str::from_utf8(b) {
                    Ok(s) => shell_quote(&redact(s, secrets)),
                    Err(_) => ansi_c_quote(b),
                };
                parts.push(format!("--data-binary {data}"));
            }
        }
        match pipe {
            Some(p) => format!("{p} | {}", parts.join(" ")),
            None => parts.join(" "),
        }
    }
}

/// PNG images kept whole in a finding up to this size; larger ones are only summarised.
const MAX_KEPT_PNG: usize = 512 * 1024;

/// The body as base64 when it is a PNG (by its signature, whatever the content type says).
fn png_base64(body: &[u8]) -> Option<String> {
    use base64::Engine;
    (body.starts_with(b"\x89PNG\r\n\x1a\n") && body.len() <= MAX_KEPT_PNG)
        .then(|| base64::engine::general_purpose::STANDARD.encode(body))
}

/// Replace every secret with `$` and its variable; longer secrets first, so a key that
/// contains another is never half-replaced.
pub fn redact(s: &str, secrets: &[Secret]) -> String {
    let mut ordered: Vec<&Secret> = secrets.iter().filter(|k| !k.value.is_empty()).collect();
    ordered.sort_by_key(|k| std::cmp::Reverse(k.value.len()));
    let mut out = s.to_string();
    for k in ordered {
        if out.contains(k.value.as_str()) {
            out = out.replace(k.value.as_str(), &format!("${}", k.var));
        }
    }
    out
}

fn excerpt(body: &[u8], media: Option<&str>) -> String {
    if media.is_some_and(|m| m.starts_with("image/")) {
        return format!("<{} bytes of {}>", body.len(), media.unwrap_or("binary"));
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(EXCERPT * 4)]);
    let mut s: String = text.chars().take(EXCERPT).collect();
    if s.len() < text.len() || body.len() > EXCERPT * 4 {
        s.push_str(&format!("… ({} bytes in all)", body.len()));
    }
    s
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn ansi_c_quote(b: &[u8]) -> String {
    let mut s = String::from("$'");
    for &c in b {
        match c {
            b'\\' | b'\'' => s.push_str(&format!("\\{}", c as char)),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('\'');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_lines_reproduce_without_showing_the_key() {
        let key = PlanKey {
            plan: "pro".into(),
            key: "lk_secret".into(),
        };
        let req = Req::post_json(
            "/partners/deactivate",
            &serde_json::json!({"partnerId": "it's"}),
        )
        .key(&key);
        let x = Exchange {
            url: req.url(&linkcert_http::BaseUrl::parse("https://h").unwrap()),
            req,
            result: Err(Failure::new(linkcert_http::FailureKind::Other, "x")),
            insecure: true,
        };
        let secrets = [
            Secret {
                value: "lk_secret".into(),
                var: "LINKCERT_KEY_PRO".into(),
            },
            Secret {
                value: "lk_secret_2".into(),
                var: "LINKCERT_KEY_PRO_2".into(),
            },
        ];
        let c = x.curl(&secrets);
        assert!(!c.contains("lk_secret"), "{c}");
        assert!(
            c.contains("-H \"authorization: Bearer $LINKCERT_KEY_PRO\""),
            "{c}"
        );
        assert_eq!(
            redact("lk_secret_2 lk_secret", &secrets),
            "$LINKCERT_KEY_PRO_2 $LINKCERT_KEY_PRO"
        );
        assert!(c.contains("-X POST") && c.contains(" -k "), "{c}");
        assert!(
            c.contains(r#"--data-binary '{"partnerId":"it'\''s"}'"#),
            "{c}"
        );
        let rec = x.record(&secrets);
        assert!(!serde_json::to_string(&rec).unwrap().contains("lk_secret"));
    }

    #[test]
    fn long_bodies_are_made_by_a_pipeline_not_written_out() {
        let mut body = br#"{"a":""#.to_vec();
        body.resize(body.len() + 100_000, b'x');
        body.extend_from_slice(br#""}"#);
        let mut req = Req::post_json("/p", &serde_json::json!({}));
        req.body = Some(body.into());
        let x = Exchange {
            url: req.url(&linkcert_http::BaseUrl::parse("https://h").unwrap()),
            req,
            result: Err(Failure::new(linkcert_http::FailureKind::Other, "x")),
            insecure: false,
        };
        let c = x.curl(&[]);
        assert!(c.len() < 400, "{c}");
        assert!(
            c.starts_with(r#"{ printf '%s' '{"a":"'; head -c 100000 /dev/zero | tr '\0' 'x'; printf '%s' '"}'; } | curl"#),
            "{c}"
        );
        assert!(c.ends_with("--data-binary @-"), "{c}");
    }

    #[test]
    fn excerpts_are_bounded_and_images_summarised() {
        assert_eq!(
            excerpt(b"\x89PNG", Some("image/png")),
            "<4 bytes of image/png>"
        );
        let long = vec![b'a'; 100_000];
        assert!(excerpt(&long, None).len() < 2000);
        assert_eq!(ansi_c_quote(&[0xff, b'a', b'\'']), "$'\\xffa\\''");
    }
}
