//! The run record: what happened to each request (`Record`), where the engine hands each one
//! as its answer arrives (`Sink`), and the engine's account of a scenario's run (`Run`). The
//! generator writes it, the judge and the scheduler read it; it imports none of them.

use std::time::Instant;

use serde::Serialize;

use linkcert_http::Failure;
use linkcert_rate::headers as rate_headers;
use linkcert_run::outage::Outage;

/// What happened to one request.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// Index into the scenario's keys.
    pub key: usize,
    /// Index into the operation mix.
    pub op: usize,
    /// Seconds from the start of the run: planned, actually sent, answer headers received.
    pub due: f64,
    pub sent: f64,
    pub recv: f64,
    /// None: no answer (transport error).
    pub status: Option<u16>,
    pub limit: Option<String>,
    pub remaining: Option<String>,
    pub reset: Option<String>,
    pub retry_after: Option<String>,
    /// A rate-limit field the answer carried more than once, with its values
    /// (`rate_headers::repeated`): "x-ratelimit-remaining: 5, 4".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeated: Option<String>,
    /// The IETF RateLimit fields the answer carried, where it carried any (`judge::fields`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<Box<FieldsSeen>>,
    /// The envelope's code, when the body is one (read for error statuses only).
    pub code: Option<String>,
    /// What the request ran into when it got no answer (or its answer broke off), as data.
    #[serde(serialize_with = "words")]
    pub error: Option<Failure>,
    /// The retry of the retry-after shape (not a slot of the schedule).
    pub retry: bool,
    /// The request carries a parameter the spec forbids (`Resolved::forbidden`): a clean
    /// refusal is its expected answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forbidden: bool,
    /// Seconds from t = 0 to when a user was free to take this slot: after `due`, every user
    /// was busy when it fell due (the in-flight ceiling held the send back).
    pub claimed: f64,
}

/// Header values kept at most this long.
const MAX_HEADER: usize = 64;

/// A header's first value as kept: trimmed, at most `MAX_HEADER` characters.
fn header(h: &http::HeaderMap, name: &str) -> Option<String> {
    let v = h.get(name)?;
    let s = String::from_utf8_lossy(v.as_bytes());
    Some(s.trim().chars().take(MAX_HEADER).collect())
}

impl Record {
    /// A request of slot (`key`, `op`) due at `due`, not sent yet: no times, no answer.
    pub fn slot(key: usize, op: usize, due: f64) -> Record {
        Record {
            key,
            op,
            due,
            sent: 0.0,
            recv: 0.0,
            status: None,
            limit: None,
            remaining: None,
            reset: None,
            retry_after: None,
            repeated: None,
            fields: None,
            code: None,
            error: None,
            retry: false,
            forbidden: false,
            claimed: 0.0,
        }
    }

    /// The rate-limit fields of an answer's headers: each one's first value, and every value
    /// of one given more than once (a field given twice leaves a client to guess; looked for
    /// without allocating, the rule and its words `rate_headers::repeated`'s).
    pub fn read_rate_fields(&mut self, h: &http::HeaderMap) {
        self.limit = header(h, rate_headers::LIMIT);
        self.remaining = header(h, rate_headers::REMAINING);
        self.reset = header(h, rate_headers::RESET);
        self.retry_after = header(h, rate_headers::RETRY_AFTER);
        self.fields = FieldsSeen::of(h).map(Box::new);
        let names = rate_headers::ON_EVERY_ANSWER;
        if !names
            .iter()
            .chain(&[rate_headers::RETRY_AFTER])
            .any(|n| h.get_all(*n).iter().nth(1).is_some())
        {
            return;
        }
        let fields: Vec<(&str, String)> = h
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let fields = fields.iter().map(|(k, v)| (*k, v.as_str()));
        self.repeated = rate_headers::repeated(&names, fields).map(|(name, values)| {
            let values: Vec<String> = values
                .iter()
                .map(|v| v.chars().take(MAX_HEADER).collect())
                .collect();
            format!("{name}: {}", values.join(", "))
        });
    }

    pub fn admitted(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
    pub fn throttled(&self) -> bool {
        self.status == Some(429)
    }
    /// A request the spec forbids, cleanly refused: 400 or 422 in the error envelope.
    pub fn refused(&self) -> bool {
        self.forbidden && matches!(self.status, Some(400 | 422)) && self.code.is_some()
    }
    /// What the key's quota may have been spent on: an admission, or a clean refusal (counting
    /// a refused request against the key is the target's choice). What a window must admit at
    /// least is judged on these; what it may admit at most, on admissions alone: both sound
    /// whichever the target chose.
    pub fn spent(&self) -> bool {
        self.admitted() || self.refused()
    }
    /// A rate-limit header as recorded, by its name in `rate_headers`.
    pub fn rate_header(&self, name: &str) -> Option<&str> {
        match name {
            rate_headers::LIMIT => self.limit.as_deref(),
            rate_headers::REMAINING => self.remaining.as_deref(),
            rate_headers::RESET => self.reset.as_deref(),
            rate_headers::RETRY_AFTER => self.retry_after.as_deref(),
            _ => None,
        }
    }
    /// When this answer says its key's quota is back (UTC epoch seconds); `wall0`: UTC epoch
    /// seconds of the run's t = 0, from which the record's times count.
    pub fn quota_back(&self, wall0: f64) -> rate_headers::QuotaBack {
        rate_headers::quota_back(
            self.status.unwrap_or(0),
            self.reset.as_deref(),
            self.retry_after.as_deref(),
            wall0 + self.recv,
        )
    }
}

/// An answer's IETF RateLimit fields as sent (each field's lines joined, as RFC 9110 combines
/// them), kept whole: a policy list may be longer than `MAX_HEADER`, and a cut field would read
/// as malformed. With its Date, from which the fields' seconds to the reset count. Read and
/// judged by `judge::fields`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FieldsSeen {
    pub pairs: Vec<(&'static str, String)>,
    pub date: Option<String>,
}

/// The RateLimit fields of one answer are kept up to this many bytes in all: past it (a
/// hostile target's), they are not kept, and that answer's fields are not judged.
const MAX_FIELDS: usize = 4096;

impl FieldsSeen {
    /// None: the answer has none of the fields (the spec names only X-RateLimit-*), or more of
    /// them than `MAX_FIELDS`.
    fn of(h: &http::HeaderMap) -> Option<FieldsSeen> {
        use linkcert_rate::headers::ietf::NAMES;
        if !NAMES.iter().any(|n| h.contains_key(*n)) {
            return None;
        }
        let size: usize = NAMES
            .iter()
            .flat_map(|n| h.get_all(*n))
            .map(|v| v.len() + 2)
            .sum();
        if size > MAX_FIELDS {
            return None;
        }
        let pairs = NAMES
            .iter()
            .filter_map(|n| {
                let values: Vec<String> = h
                    .get_all(*n)
                    .iter()
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
                    .collect();
                (!values.is_empty()).then(|| (*n, values.join(", ")))
            })
            .collect();
        Some(FieldsSeen {
            pairs,
            date: header(h, "date"),
        })
    }
}

/// Where the engine hands each record as its answer arrives (the run keeps none itself).
pub trait Sink: Send + 'static {
    fn take(&mut self, rec: Record);
    /// Every record sent before `t` (seconds from t = 0) has been taken.
    fn settled(&mut self, t: f64);
}

/// The engine's account of one scenario's run (the records went to its `Sink`).
#[derive(Debug)]
pub struct Run {
    /// The instant of t = 0 (records' times are seconds from it).
    pub t0: Instant,
    /// Wall clock (UTC epoch seconds) at the start of the run.
    pub wall0: f64,
    /// goose users: the in-flight ceiling of this run.
    pub users: usize,
    /// The most requests that were in flight at once.
    pub peak_in_flight: usize,
    /// Requests goose's own metrics counted.
    pub goose_requests: u64,
    /// goose's reports, when it wrote them.
    pub goose_reports: Vec<String>,
    /// The target went away during this run (the generator stopped sending then).
    pub outage: Option<Outage>,
    /// The target turned out broken during this run (the generator stopped sending then),
    /// in words naming what it did.
    pub broken: Option<String>,
}

#[cfg(test)]
impl Run {
    /// A synthetic run of a test from `wall0`: eight users, one request in flight at most.
    pub fn of_test(wall0: f64) -> Run {
        Run {
            t0: Instant::now(),
            wall0,
            users: 8,
            peak_in_flight: 1,
            goose_requests: 0,
            goose_reports: Vec::new(),
            outage: None,
            broken: None,
        }
    }
}

/// Errors from the HTTP client may carry a URL; keys travel in headers, never in URLs, but
/// keep messages short.
pub fn redact_error(s: &str) -> String {
    s.chars().take(400).collect()
}

/// A failure as a record writes it: its words, kept short.
fn words<S: serde::Serializer>(f: &Option<Failure>, s: S) -> Result<S::Ok, S::Error> {
    match f {
        Some(f) => s.serialize_some(&redact_error(&f.to_string())),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
