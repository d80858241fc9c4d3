//! Checks every exchange gets, whichever family sent it: the status is one the spec lists, an
//! error is the envelope with the table's code, a success has the declared content type and
//! schema (a PNG is a whole PNG datastream: `qr::png`; a deactivation asked by partnerId names
//! that partner), and answers to authenticated requests carry the rate-limit headers (Reset in
//! epoch seconds) and, where the target sends them, true IETF RateLimit fields (`fields`).

use linkcert_registry::check_id;
use std::collections::HashMap;

use serde_json::Value;

use super::Ctx;
use super::past_end::{self, PastEnd};
use super::probe::Exchange;
use linkcert_http::{REJECTIONS, Resp, envelope_error, is_envelope, refused_cleanly};
use linkcert_rate::headers::{self as rate_headers, HeaderFault};
use linkcert_spec::Operation;

pub(crate) mod fields;
mod served;

/// What the sender knows about the request it made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Valid per the spec, and touching nothing the spec leaves open: must be accepted.
    Accept,
    /// Valid per the spec, but the target may reject it cleanly (a bound the spec does not set).
    AcceptOrReject,
    /// Valid per the spec, but the key's plan may be refused it: any 4xx in the envelope but
    /// 429 is clean (what a plan may do beyond the spec's gates is not shown).
    AcceptOrRefuse,
    /// Invalid per the spec: must be rejected cleanly (400 or 422).
    Reject,
    /// The family judges the status itself.
    Any,
}

/// How the target answered, once the cross-cutting checks are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    /// 400 or 422 in the envelope.
    CleanRejection(u16),
    /// 429: not held against the check that met it.
    Throttled,
    /// Any other status.
    Other(u16),
    /// No HTTP answer at all.
    Transport,
}

/// What a run judges once: compiled response schemas, by (operation id, status), and the
/// verdicts on PNG datastreams, by their body's hash (`qr::png`: a burst of the same image is
/// inflated once, however many answers carry it).
#[derive(Default)]
pub struct Memo {
    pub(super) schemas: HashMap<(String, u16), Option<jsonschema::Validator>>,
    pub(super) pngs: HashMap<u64, Result<(), linkcert_qr_read::datastream::Fault>>,
    /// The key of the bodies' hashes: random per run, so a target cannot craft a bad image
    /// that collides with a good one judged before.
    pub(super) png_keys: std::collections::hash_map::RandomState,
    /// What the run may still inflate of PNG image data (`qr::png`).
    pub(super) png_budget: linkcert_qr_read::datastream::Budget,
    /// The GET and HEAD requests the target served (2xx), by their hash (`served`).
    pub(super) served: std::collections::HashSet<u64>,
}

/// The run's `Memo` (named for what it first held).
pub type SchemaCache = Memo;

impl Ctx {
    /// Whether `r` is the spec's error for `status`: that status, with the code the spec's
    /// error table gives it in the envelope.
    pub fn is_error(&self, r: &Resp, status: u16) -> bool {
        r.status == status
            && self.spec.errors.code(status).is_some()
            && linkcert_http::error_code(r).as_deref() == self.spec.errors.code(status)
    }

    /// Run the cross-cutting checks on an exchange and the status check `expect` asks for.
    pub fn judge(&self, op: &Operation, x: &Exchange, expect: Expect) -> Outcome {
        let label = op.label();
        let Some(r) = x.resp() else {
            // A target that does not answer fails whatever was asked of it.
            let id = match expect {
                Expect::Reject => check_id!("status.invalid-rejected"),
                _ => check_id!("status.valid-accepted"),
            };
            self.rec
                .violation(id, &label, "an HTTP answer", x.failure_words(), Some(x));
            return Outcome::Transport;
        };
        self.status_listed(op, x, r);
        if r.status >= 400 {
            self.envelope(&label, x, r);
        } else if r.is_success() {
            self.success_body(op, x, r);
            if op.id == DEACTIVATE {
                self.deactivated_partner(&label, x, r);
            }
        }
        let authenticated = x.req.key.is_some()
            && !x
                .req
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        if authenticated && (r.is_success() || r.status == 429) {
            self.rate_headers_present(&label, x, r);
            fields::judge(self, op, x, r);
        }
        self.rate_headers_once(&label, x, r);
        served::judge(self, &label, x, r);
        let outcome = match r.status {
            429 => Outcome::Throttled,
            s if (200..300).contains(&s) => Outcome::Accepted,
            s if refused_cleanly(r, &REJECTIONS) => Outcome::CleanRejection(s),
            s => Outcome::Other(s),
        };
        // A page that may lie past the last: `past_end`'s 404 is the target's choice, whatever
        // else the request asks (as for the generated cases).
        let maybe_past_end = past_end::may_lie_past_the_last(op, &x.req.query);
        match (expect, outcome) {
            (_, Outcome::Throttled) | (Expect::Any, _) => {}
            (_, Outcome::Other(_)) if maybe_past_end && PastEnd::of(r) == PastEnd::NotFound => {}
            (Expect::Reject, Outcome::CleanRejection(_)) => {
                self.rec.pass(check_id!("status.invalid-rejected"), &label)
            }
            (Expect::Reject, o) => self.rec.violation(
                check_id!("status.invalid-rejected"),
                &label,
                "400 or 422 in the error envelope",
                describe(o, r),
                Some(x),
            ),
            (
                Expect::Accept | Expect::AcceptOrReject | Expect::AcceptOrRefuse,
                Outcome::Accepted,
            ) => self.rec.pass(check_id!("status.valid-accepted"), &label),
            (Expect::AcceptOrReject | Expect::AcceptOrRefuse, Outcome::CleanRejection(_)) => {}
            (Expect::AcceptOrRefuse, Outcome::Other(s))
                if (400..500).contains(&s) && is_envelope(r) => {}
            (_, o) => self.rec.violation(
                check_id!("status.valid-accepted"),
                &label,
                if maybe_past_end {
                    format!("a 2xx answer, or {}", past_end::ALSO)
                } else {
                    "a 2xx answer".to_string()
                },
                describe(o, r),
                Some(x),
            ),
        }
        outcome
    }

    /// `status.listed` on one answer to a request aimed at `op`'s path. A status standard HTTP
    /// gives a request outside the operation's shape (`standard_status`) is an observation:
    /// the spec's list names none of them, and does not forbid them either.
    pub fn status_listed(&self, op: &Operation, x: &Exchange, r: &Resp) {
        let label = op.label();
        if op.declares_status(r.status) {
            self.rec.pass(check_id!("status.listed"), &label);
        } else if let Some(why) = standard_status(op, x, r) {
            self.rec
                .observe(check_id!("status.listed"), &label, why, Some(x));
        } else {
            let listed: Vec<String> = op.responses.keys().map(u16::to_string).collect();
            self.rec.violation(
                check_id!("status.listed"),
                &label,
                format!("one of {}", listed.join(", ")),
                r.status.to_string(),
                Some(x),
            );
        }
    }

    /// `envelope.*` on one error answer.
    pub fn envelope(&self, label: &str, x: &Exchange, r: &Resp) {
        let media = r.media_type().unwrap_or_default();
        if media == "application/json" || media.ends_with("+json") {
            self.rec.pass(check_id!("envelope.content-type"), label);
        } else {
            self.rec.violation(
                check_id!("envelope.content-type"),
                label,
                "Content-Type: application/json",
                if media.is_empty() {
                    "no Content-Type".into()
                } else {
                    media
                },
                Some(x),
            );
        }
        let Some(err) = envelope_error(r) else {
            self.rec.violation(
                check_id!("envelope.shape"),
                label,
                r#"{"error": {"code": string, "message": string}}"#,
                body_summary(r),
                Some(x),
            );
            return;
        };
        self.rec.pass(check_id!("envelope.shape"), label);
        let code = err.get("code").and_then(Value::as_str).unwrap_or_default();
        self.message(label, x, code, err.get("message"));
        match self.spec.errors.code(r.status) {
            Some(expected) if expected == code => self.rec.pass(check_id!("envelope.code"), label),
            Some(expected) => self.rec.violation(
                check_id!("envelope.code"),
                label,
                format!("code {expected} for status {}", r.status),
                format!("code {code:?}"),
                Some(x),
            ),
            // A status outside the table is status.listed's business.
            None => {}
        }
        match err.get("doc_url") {
            None => {}
            Some(Value::String(url)) => match doc_url_fragment(url, code) {
                FragmentMatch::Exact => {
                    self.rec.pass(check_id!("envelope.doc-url"), label);
                    self.rec.pass(check_id!("envelope.doc-url-spelling"), label);
                }
                FragmentMatch::Loose => {
                    self.rec.pass(check_id!("envelope.doc-url"), label);
                    self.rec.violation(
                        check_id!("envelope.doc-url-spelling"),
                        label,
                        format!("a fragment spelling {code} (or with hyphens)"),
                        url.clone(),
                        Some(x),
                    );
                }
                FragmentMatch::No => self.rec.violation(
                    check_id!("envelope.doc-url"),
                    label,
                    format!("a link whose fragment names {code}"),
                    url.clone(),
                    Some(x),
                ),
            },
            Some(other) => self.rec.violation(
                check_id!("envelope.doc-url"),
                label,
                "a string",
                other.to_string(),
                Some(x),
            ),
        }
    }

    fn success_body(&self, op: &Operation, x: &Exchange, r: &Resp) {
        let label = op.label();
        let Some(spec) = op.responses.get(&r.status) else {
            return;
        };
        let Some((declared, _)) = &spec.content else {
            return;
        };
        let media = r.media_type().unwrap_or_default();
        if &media == declared {
            self.rec.pass(check_id!("schema.content-type"), &label);
        } else {
            self.rec.violation(
                check_id!("schema.content-type"),
                &label,
                declared.clone(),
                if media.is_empty() {
                    "no Content-Type".into()
                } else {
                    media
                },
                Some(x),
            );
            return;
        }
        if declared == "image/png" {
            self.png_datastream(&label, x, r);
        }
        if !declared.ends_with("json") {
            return;
        }
        let Some(body) = r.json() else {
            self.rec.violation(
                check_id!("schema.response"),
                &label,
                "a JSON body",
                body_summary(r),
                Some(x),
            );
            return;
        };
        let mut cache = self.schemas.lock().unwrap_or_else(|p| p.into_inner());
        let validator = cache
            .schemas
            .entry((op.id.clone(), r.status))
            .or_insert_with(|| {
                spec.content
                    .as_ref()
                    .and_then(|(_, s)| linkcert_spec::schema::validator(s).ok())
            });
        let Some(v) = validator else { return };
        match v.iter_errors(&body).next() {
            None => self.rec.pass(check_id!("schema.response"), &label),
            Some(e) => self.rec.violation(
                check_id!("schema.response"),
                &label,
                format!("a body matching the {} response schema", r.status),
                format!("{} at {}", e.masked(), e.instance_path()),
                Some(x),
            ),
        }
    }

    /// `ratelimit.headers` on every answer, whatever its status and whoever asked: a
    /// rate-limit field the target puts on it comes once.
    fn rate_headers_once(&self, label: &str, x: &Exchange, r: &Resp) {
        let fields = r.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        if let Some((name, values)) = rate_headers::repeated(&self.spec.rate_headers, fields) {
            self.rec.violation(
                check_id!("ratelimit.headers"),
                label,
                format!("{name} once on a {} answer", r.status),
                format!("{name} {} times: {}", values.len(), values.join(" and ")),
                Some(x),
            );
        }
    }

    /// `envelope.message` on one error: its message explains, in text a person reads.
    fn message(&self, label: &str, x: &Exchange, code: &str, message: Option<&Value>) {
        let id = check_id!("envelope.message");
        let text = message.and_then(Value::as_str).unwrap_or_default();
        let expected = "a human-readable explanation";
        let body = x.req.body.as_deref().unwrap_or_default();
        let asked = format!(
            "{} {} {}",
            x.req.path,
            x.req.query_string(),
            String::from_utf8_lossy(body)
        );
        match message_fault(code, text, &asked) {
            None => self.rec.pass(id, label),
            Some((true, what)) => self.rec.non_strict(id, label, expected, what, Some(x)),
            Some((false, what)) => self.rec.violation(id, label, expected, what, Some(x)),
        }
    }

    fn rate_headers_present(&self, label: &str, x: &Exchange, r: &Resp) {
        let id = check_id!("ratelimit.headers");
        match rate_headers::header_fault(&self.spec.rate_headers, |name| r.header(name)) {
            None => {
                self.rec.pass(id, label);
                self.reset_unit(label, x, r);
            }
            Some(HeaderFault::NotInteger { name, value }) => self.rec.violation(
                id,
                label,
                format!("{name} as a non-negative integer"),
                format!("{name}: {value}"),
                Some(x),
            ),
            Some(HeaderFault::Absent { name }) => self.rec.violation(
                id,
                label,
                format!("{name} on a {} answer", r.status),
                "absent",
                Some(x),
            ),
        }
    }

    /// `schema.deactivated-partner`: a 200 to a deactivation asked by partnerId alone names
    /// that partner, whichever check asked. With tenantId too, which field wins is not shown,
    /// so that answer is not judged; an answer without a partnerId string is `schema.response`'s.
    fn deactivated_partner(&self, label: &str, x: &Exchange, r: &Resp) {
        let id = check_id!("schema.deactivated-partner");
        if r.status != 200 || !self.enabled(id) {
            return;
        }
        let asked: Option<Value> = x
            .req
            .body
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok());
        let Some(asked) = asked.as_ref().and_then(Value::as_object) else {
            return;
        };
        let (Some(Value::String(wanted)), None) = (asked.get("partnerId"), asked.get("tenantId"))
        else {
            return;
        };
        let answered = r.json();
        let Some(got) = answered.as_ref().and_then(|v| v.get("partnerId")?.as_str()) else {
            return;
        };
        if got == wanted {
            self.rec.pass(id, label);
        } else {
            self.rec.violation(
                id,
                label,
                format!("{{\"partnerId\": {wanted:?}}}, the partner asked for"),
                format!("{{\"partnerId\": {got:?}}}"),
                Some(x),
            );
        }
    }

    /// X-RateLimit-Reset's unit on every answer that carries it: epoch seconds, not
    /// milliseconds, not seconds until the reset. Only a violation is recorded here: the
    /// ratelimit family judges the whole rule (within one window, never backwards) on its
    /// bursts, and passes it there.
    fn reset_unit(&self, label: &str, x: &Exchange, r: &Resp) {
        let Some(raw) = r.header(rate_headers::RESET) else {
            return;
        };
        let actual = match rate_headers::reset_unit(raw) {
            rate_headers::ResetUnit::EpochMillis(v) => format!("{v} (epoch milliseconds)"),
            rate_headers::ResetUnit::SecondsUntil(v) => {
                format!("{v} (seconds until the reset, not an epoch time)")
            }
            _ => return,
        };
        self.rec.violation(
            check_id!("ratelimit.reset"),
            label,
            "X-RateLimit-Reset in UTC epoch seconds",
            actual,
            Some(x),
        );
    }
}

mod standard;
pub use standard::{message_fault, standard_status};

/// The deactivation's operation id.
const DEACTIVATE: &str = "deactivatePartner";

/// A request body at least this large is larger than any the spec's operations need (theirs
/// are a few short strings): a 413 for it is standard HTTP.
pub const OVERSIZED_BODY: usize = 1024 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum FragmentMatch {
    /// The code, or the code with hyphens for underscores.
    Exact,
    /// Names the code but spelled otherwise (e.g. `#rate-limit_exceeded`).
    Loose,
    No,
}

pub fn doc_url_fragment(url: &str, code: &str) -> FragmentMatch {
    let Some((_, frag)) = url.rsplit_once('#') else {
        return FragmentMatch::No;
    };
    if frag == code || frag == code.replace('_', "-") {
        return FragmentMatch::Exact;
    }
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    if !frag.is_empty() && norm(frag) == norm(code) {
        FragmentMatch::Loose
    } else {
        FragmentMatch::No
    }
}

fn body_summary(r: &Resp) -> String {
    let text = String::from_utf8_lossy(&r.body[..r.body.len().min(200)]).into_owned();
    format!("{}{} {}", r.status, r.why_not_json(), text)
}

fn describe(o: Outcome, r: &Resp) -> String {
    match o {
        Outcome::CleanRejection(s) => format!("{s} (a rejection)"),
        Outcome::Other(s) if s >= 400 && !is_envelope(r) => r.without_envelope(),
        Outcome::Other(s) => s.to_string(),
        Outcome::Accepted => format!("{} (accepted)", r.status),
        Outcome::Throttled => "429".into(),
        Outcome::Transport => "no answer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_url_fragments() {
        let u = "https://x/errors#";
        assert_eq!(
            doc_url_fragment(&format!("{u}not_found"), "not_found"),
            FragmentMatch::Exact
        );
        assert_eq!(
            doc_url_fragment(&format!("{u}not-found"), "not_found"),
            FragmentMatch::Exact
        );
        assert_eq!(
            doc_url_fragment(&format!("{u}rate-limit_exceeded"), "rate_limit_exceeded"),
            FragmentMatch::Loose
        );
        assert_eq!(
            doc_url_fragment(&format!("{u}forbidden"), "not_found"),
            FragmentMatch::No
        );
        assert_eq!(
            doc_url_fragment("https://x/errors", "not_found"),
            FragmentMatch::No
        );
    }
}
