//! Accepted deviations (`--accept FILE`): TOML `[[accept]]` entries, each naming a check (an id,
//! a family or a prefix ending in `*`), optionally an operation, a mandatory reason, an optional
//! ticket and expiry date. A failure an entry matches becomes `accepted`; an expired entry
//! matches nothing and says so; an entry that matched nothing is reported unused. The types
//! are data the report carries; deciding is done here on ids and operations, applying the
//! decision to a report is the report's (`crate`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::GateError;
use super::baseline::CheckKey;
use linkcert_registry::pattern_matches;

/// Why a failure was accepted: the waiver entry that matched it (`crate::gate::accept` decides).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Acceptance {
    /// The entry's check pattern (an id, a family or a prefix ending in `*`).
    pub check: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
    /// YYYY-MM-DD: the last day the entry matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

/// What became of one waiver entry in this run.
#[derive(Clone, Debug, Serialize)]
pub struct WaiverUse {
    pub entry: Acceptance,
    /// Failures it turned into `accepted`.
    pub matched: u64,
    /// Past its `expires` date: it matched nothing, and says so.
    pub expired: bool,
    /// Failures it would have matched had it not expired.
    pub would_match: u64,
}

/// The waivers of a run (`--accept FILE`).
#[derive(Clone, Debug, Serialize)]
pub struct Waivers {
    pub file: String,
    pub entries: Vec<WaiverUse>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    accept: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    check: String,
    #[serde(default)]
    operation: Option<String>,
    reason: String,
    #[serde(default)]
    ticket: Option<String>,
    /// A TOML date (`2026-12-31`) or the same as a string.
    #[serde(default)]
    expires: Option<toml::Value>,
}

/// A waiver file, read and checked.
#[derive(Clone, Debug)]
pub struct WaiverFile {
    pub path: String,
    pub entries: Vec<Acceptance>,
}

/// `YYYY-MM-DD`, checked.
fn date(v: &toml::Value) -> Option<String> {
    let s = match v {
        toml::Value::Datetime(d) => d.date?.to_string(),
        toml::Value::String(s) => s.trim().to_string(),
        _ => return None,
    };
    let b = s.as_bytes();
    let ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    ok.then_some(s)
}

impl WaiverFile {
    pub fn read(path: &Path) -> Result<WaiverFile, GateError> {
        let (text, p) = super::read_text(path)?;
        WaiverFile::parse(&text, &p)
    }

    pub fn parse(text: &str, path: &str) -> Result<WaiverFile, GateError> {
        let bad = |problem: String| GateError::Invalid {
            path: path.to_string(),
            problem,
        };
        let f: File = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut entries = Vec::new();
        for (i, e) in f.accept.into_iter().enumerate() {
            let n = i + 1;
            if e.check.trim().is_empty() {
                return Err(bad(format!("entry {n}: `check` is empty")));
            }
            if e.reason.trim().is_empty() {
                return Err(bad(format!(
                    "entry {n} ({}): `reason` is mandatory: say why this deviation is accepted",
                    e.check
                )));
            }
            let expires = match &e.expires {
                None => None,
                Some(v) => Some(date(v).ok_or_else(|| {
                    bad(format!(
                        "entry {n} ({}): `expires` must be a date, YYYY-MM-DD",
                        e.check
                    ))
                })?),
            };
            entries.push(Acceptance {
                check: e.check,
                operation: e.operation,
                reason: e.reason,
                ticket: e.ticket,
                expires,
            });
        }
        Ok(WaiverFile {
            path: path.to_string(),
            entries,
        })
    }
}

impl Acceptance {
    fn matches(&self, id: &str, operation: &str) -> bool {
        pattern_matches(&self.check, id) && self.operation.as_deref().is_none_or(|o| o == operation)
    }
    /// Past its last day (`today` as YYYY-MM-DD, compared as text: the format sorts).
    fn expired(&self, today: &str) -> bool {
        self.expires.as_deref().is_some_and(|d| d < today)
    }
}

/// Which entry accepts each of these failures (the first live entry that matches wins), and
/// what became of every entry. `today` is YYYY-MM-DD (UTC). The report applies the answer
/// (`Report::apply_waivers`).
pub fn decide(
    waivers: &WaiverFile,
    failures: &[CheckKey],
    today: &str,
) -> (Vec<Option<Acceptance>>, Waivers) {
    let mut uses: Vec<WaiverUse> = waivers
        .entries
        .iter()
        .map(|e| WaiverUse {
            entry: e.clone(),
            matched: 0,
            expired: e.expired(today),
            would_match: 0,
        })
        .collect();
    let mut accepted = Vec::with_capacity(failures.len());
    for f in failures {
        let mut taken = None;
        for u in uses.iter_mut() {
            if !u.entry.matches(&f.id, &f.operation) {
                continue;
            }
            if u.expired {
                u.would_match += 1;
            } else if taken.is_none() {
                u.matched += 1;
                taken = Some(u.entry.clone());
            }
        }
        accepted.push(taken);
    }
    let waivers = Waivers {
        file: waivers.path.clone(),
        entries: uses,
    };
    (accepted, waivers)
}

/// Today's date, UTC, as YYYY-MM-DD.
pub fn today() -> String {
    let secs = linkcert_spec::clock::now_epoch_secs();
    linkcert_spec::clock::rfc3339(secs)[..10].to_string()
}
