//! What a run finds: findings, the recorder every check family writes to, and the report
//! they add up to (`crate::report` writes it out).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::catalogue::{self, CheckDef};
use super::probe::{Exchange, ExchangeRecord};
use crate::clock::rfc3339;
use crate::spec::Spec;
use crate::target::{Secret, Target};

pub use crate::verdict::Verdict;

/// One thing seen: a violation (at the check's level) or an observation.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub verdict: Verdict,
    pub message: String,
    pub expected: String,
    pub actual: String,
    /// The request and what came back (shrunk to a minimal request where cases were generated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<ExchangeRecord>,
}

/// The outcome of one check on one operation (or on the whole target: operation "*").
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub id: String,
    pub title: String,
    pub clause: String,
    pub operation: String,
    pub verdict: Verdict,
    /// Requests or properties this check judged.
    pub cases: u64,
    /// How many violations there were (only the first few are kept in `findings`).
    pub violations: u64,
    pub findings: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Judged on some cases, but not on others, and why (a fixture no key owns, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partly_skipped: Option<String>,
    /// The waiver that turned this failure into `accepted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted: Option<Acceptance>,
}

/// Why a failure was accepted: the waiver entry that matched it (`crate::gate::accept`).
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
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

/// A check on an operation, as baselines compare them (never by message text).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct CheckKey {
    pub id: String,
    pub operation: String,
}

/// This run against an earlier one of the same target (`--baseline`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct BaselineDiff {
    pub file: String,
    /// Failing now, not failing in the baseline.
    pub new_failures: Vec<CheckKey>,
    /// Failing in the baseline, not now.
    pub fixed: Vec<CheckKey>,
    pub still_failing: Vec<CheckKey>,
    /// Checks run now that the baseline did not have, and the reverse.
    pub new_checks: Vec<CheckKey>,
    pub removed_checks: Vec<CheckKey>,
}

impl BaselineDiff {
    /// Each kind of change with its checks, in the order reports list them.
    pub fn changes(&self) -> [(&'static str, &[CheckKey]); 5] {
        [
            ("new failure", &self.new_failures),
            ("fixed", &self.fixed),
            ("still failing", &self.still_failing),
            ("new check", &self.new_checks),
            ("removed check", &self.removed_checks),
        ]
    }
}

/// Which clauses of the spec document this run exercised (`specs/clauses.toml`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    pub total: usize,
    /// Clauses some check enforces.
    pub enforceable: usize,
    /// Enforceable clauses one of whose checks judged at least one case in this run.
    pub exercised: usize,
    /// Enforceable clauses not exercised, and why (their checks' skip reasons).
    pub skipped: Vec<ClauseNote>,
    /// Clauses no check enforces, and why.
    pub unenforced: Vec<ClauseNote>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClauseNote {
    pub clause: String,
    pub why: String,
}

/// Findings kept per check and operation; the rest are counted.
const KEEP_FINDINGS: usize = 5;

#[derive(Default)]
struct Entry {
    cases: u64,
    violations: u64,
    worst: Option<Verdict>,
    findings: Vec<Finding>,
    observations: BTreeMap<String, u64>,
    skipped: Option<String>,
}

/// Thread-safe collector the check families write to.
pub struct Recorder {
    secrets: Vec<Secret>,
    entries: Mutex<BTreeMap<(String, String), Entry>>,
}

impl Recorder {
    pub fn new(secrets: Vec<Secret>) -> Recorder {
        Recorder {
            secrets,
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    fn with<R>(&self, id: &str, op: &str, f: impl FnOnce(&mut Entry) -> R) -> R {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        f(map.entry((id.to_string(), op.to_string())).or_default())
    }

    /// The check judged a case and it held.
    pub fn pass(&self, id: &str, op: &str) {
        self.with(id, op, |e| e.cases += 1);
    }

    /// The check judged a case and it did not hold: a violation at the check's level.
    pub fn violation(
        &self,
        id: &str,
        op: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        let def = catalogue::get(id);
        let verdict = def.map_or(Verdict::Fail, |d| d.level);
        self.finding(id, op, verdict, expected.into(), actual.into(), exchange);
    }

    /// A deviation from what the spec prefers where it does not require it: non-strict,
    /// whatever the check's level.
    pub fn non_strict(
        &self,
        id: &str,
        op: &str,
        expected: impl Into<String>,
        actual: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        self.finding(
            id,
            op,
            Verdict::NonStrict,
            expected.into(),
            actual.into(),
            exchange,
        );
    }

    /// A choice the spec leaves open: informational, whatever the check's level.
    pub fn observe(
        &self,
        id: &str,
        op: &str,
        what: impl Into<String>,
        exchange: Option<&Exchange>,
    ) {
        let what = what.into();
        let first = self.with(id, op, |e| {
            e.cases += 1;
            e.worst = e.worst.max(Some(Verdict::Informational));
            let n = e.observations.entry(what.clone()).or_insert(0);
            *n += 1;
            *n == 1
        });
        // One finding per distinct observation: the same choice seen 40 times is one line.
        if first {
            let record = exchange.map(|x| x.record(&self.secrets));
            self.with(id, op, |e| {
                if e.findings.len() < KEEP_FINDINGS * 2 {
                    e.findings.push(Finding {
                        verdict: Verdict::Informational,
                        message: what,
                        expected: "any (the spec is silent)".into(),
                        actual: String::new(),
                        exchange: record,
                    });
                }
            });
        }
    }

    fn finding(
        &self,
        id: &str,
        op: &str,
        verdict: Verdict,
        expected: String,
        actual: String,
        exchange: Option<&Exchange>,
    ) {
        let keep = self.with(id, op, |e| {
            e.cases += 1;
            e.violations += 1;
            e.worst = e.worst.max(Some(verdict));
            e.findings.len() < KEEP_FINDINGS
        });
        if keep {
            let def = catalogue::get(id);
            let finding = Finding {
                verdict,
                message: self.redact(&format!(
                    "{}: expected {expected}, got {actual}",
                    def.map_or(id, |d| d.title)
                )),
                expected: self.redact(&expected),
                actual: self.redact(&actual),
                exchange: exchange.map(|x| x.record(&self.secrets)),
            };
            self.with(id, op, |e| e.findings.push(finding));
        }
    }

    /// The check could not run here, and why.
    pub fn skip(&self, id: &str, op: &str, why: impl Into<String>) {
        let why = why.into();
        self.with(id, op, |e| {
            if e.skipped.is_none() {
                e.skipped = Some(why);
            }
        });
    }

    pub fn redact(&self, s: &str) -> String {
        super::probe::redact(s, &self.secrets)
    }

    /// How many (check, operation) pairs have failed so far.
    pub fn failing(&self) -> usize {
        let map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        map.values()
            .filter(|e| e.worst == Some(Verdict::Fail))
            .count()
    }

    /// Results in catalogue order, then operation.
    pub fn results(&self) -> Vec<CheckResult> {
        let map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<CheckResult> = map
            .iter()
            .map(|((id, op), e)| {
                let def = catalogue::get(id);
                let verdict = match (e.worst, &e.skipped) {
                    (Some(v), _) => v,
                    (None, Some(_)) if e.cases == 0 => Verdict::Skipped,
                    _ => Verdict::Pass,
                };
                CheckResult {
                    id: id.clone(),
                    title: def.map_or_else(|| id.clone(), |d| d.title.to_string()),
                    clause: def.map_or_else(String::new, |d| d.clause.to_string()),
                    operation: op.clone(),
                    verdict,
                    cases: e.cases,
                    violations: e.violations,
                    findings: e.findings.clone(),
                    skipped: e.skipped.clone().filter(|_| e.cases == 0),
                    partly_skipped: e.skipped.clone().filter(|_| e.cases > 0),
                    accepted: None,
                }
            })
            .collect();
        let order = |id: &str| {
            catalogue::CATALOGUE
                .iter()
                .position(|d: &CheckDef| d.id == id)
        };
        out.sort_by(|a, b| {
            order(&a.id)
                .cmp(&order(&b.id))
                .then_with(|| a.operation.cmp(&b.operation))
        });
        out
    }
}

/// Bumped when a field changes meaning or goes away; new fields do not bump it.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    pub target: String,
    pub spec_title: String,
    pub spec_version: String,
    pub seed: u64,
    pub started_at: String,
    pub duration_secs: f64,
    pub requests: u64,
    /// 429s met and waited out by paced sends (not failures).
    pub throttled_and_retried: u64,
    /// Plans of the keys used, each once (keys themselves are never written).
    pub plans: Vec<String>,
    /// Which shell variable stands for which `--key` in the curl lines.
    pub key_variables: Vec<KeyVariable>,
    /// The command that replays this run (keys as their variables).
    pub replay: String,
    pub totals: Totals,
    pub checks: Vec<CheckResult>,
    /// Clauses of the spec document exercised by this run.
    pub coverage: Coverage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waivers: Option<Waivers>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineDiff>,
}

#[derive(Clone, Debug, Serialize)]
pub struct KeyVariable {
    pub variable: String,
    pub plan: String,
    /// Its place among the keys of its plan, from 1, in the order they were given.
    pub nth: usize,
}

impl Totals {
    pub fn of(checks: &[CheckResult]) -> Totals {
        let mut t = Totals::default();
        for c in checks {
            match c.verdict {
                Verdict::Pass => t.pass += 1,
                Verdict::NonStrict => t.non_strict += 1,
                Verdict::Informational => t.informational += 1,
                Verdict::Fail => t.fail += 1,
                Verdict::Skipped => t.skipped += 1,
                Verdict::Accepted => t.accepted += 1,
            }
        }
        t
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub pass: u64,
    pub non_strict: u64,
    pub informational: u64,
    pub fail: u64,
    pub skipped: u64,
    /// Failures a waiver accepted.
    pub accepted: u64,
}

impl Report {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: &Spec,
        target: &Target,
        seed: u64,
        started: SystemTime,
        took: Duration,
        requests: u64,
        throttled: u64,
        checks: Vec<CheckResult>,
    ) -> Report {
        let totals = Totals::of(&checks);
        let coverage = super::coverage::of(&checks);
        let key_variables = target
            .keys
            .iter()
            .zip(target.secrets())
            .enumerate()
            .map(|(i, (k, s))| KeyVariable {
                variable: s.var,
                plan: k.plan.clone(),
                nth: target.keys[..=i]
                    .iter()
                    .filter(|o| o.plan == k.plan)
                    .count(),
            })
            .collect();
        let mut replay = format!("linkcert check --target {} --seed {seed}", target.base_url);
        for (k, s) in target.keys.iter().zip(target.secrets()) {
            replay.push_str(&format!(" --key {}=\"${}\"", k.plan, s.var));
        }
        Report {
            replay,
            schema_version: REPORT_SCHEMA_VERSION,
            tool: "linkcert".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            target: target.base_url.clone(),
            spec_title: spec.title.clone(),
            spec_version: spec.version.clone(),
            seed,
            started_at: rfc3339(
                started
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs(),
            ),
            duration_secs: took.as_secs_f64(),
            requests,
            throttled_and_retried: throttled,
            plans: target.plans(),
            key_variables,
            totals,
            checks,
            coverage,
            waivers: None,
            baseline: None,
        }
    }

    pub fn passed(&self) -> bool {
        self.totals.fail == 0
    }
}
