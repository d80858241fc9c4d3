//! Accepted deviations (`--accept FILE`): TOML `[[accept]]` entries, each naming a check (an id,
//! a family or a prefix ending in `*`), optionally an operation, a mandatory reason, an optional
//! ticket and expiry date. A failure an entry matches becomes `accepted`; an expired entry
//! matches nothing and says so; an entry that matched nothing is reported unused.

use std::path::Path;

use serde::Deserialize;

use super::GateError;
use crate::check::catalogue::pattern_matches;
use crate::check::model::{Acceptance, Report, Totals, Verdict, WaiverUse, Waivers};

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

/// Turn the failures the waivers match into `accepted` (the first live entry that matches
/// wins), and record what became of every entry. `today` is YYYY-MM-DD (UTC).
pub fn apply(report: &mut Report, waivers: &WaiverFile, today: &str) {
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
    for c in report
        .checks
        .iter_mut()
        .filter(|c| c.verdict == Verdict::Fail)
    {
        let mut taken = false;
        for u in uses.iter_mut() {
            if !u.entry.matches(&c.id, &c.operation) {
                continue;
            }
            if u.expired {
                u.would_match += 1;
            } else if !taken {
                u.matched += 1;
                c.verdict = Verdict::Accepted;
                c.accepted = Some(u.entry.clone());
                taken = true;
            }
        }
    }
    report.totals = Totals::of(&report.checks);
    report.waivers = Some(Waivers {
        file: waivers.path.clone(),
        entries: uses,
    });
}

/// Today's date, UTC, as YYYY-MM-DD.
pub fn today() -> String {
    let secs = crate::clock::now_epoch_secs();
    crate::clock::rfc3339(secs)[..10].to_string()
}
