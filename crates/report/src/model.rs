//! The record of a `check` run: the findings of every check on every operation, their
//! totals, the run's header (shared with `linkcert load`'s report), its clause coverage, and
//! what the gate made of it (waivers, baseline). `check` fills it; `report` writes it out.

use std::time::Duration;

use serde::Serialize;

use crate::gate::accept::{self, Acceptance, WaiverFile, Waivers};
use crate::gate::baseline::{self, Baseline, BaselineDiff, CheckKey};
use crate::gate::{self, FailOn};
use linkcert_registry::{Coverage, Judgement};
use linkcert_run::interrupt::Interrupted;
use linkcert_run::outage::Outage;
use linkcert_run::target::Target;
use linkcert_spec::Spec;
use linkcert_spec::clock::rfc3339;
use linkcert_spec::verdict::Verdict;

/// How an exchange is written in reports (see `report` for the schema).
#[derive(Clone, Debug, Serialize)]
pub struct ExchangeRecord {
    pub method: String,
    pub url: String,
    pub request_headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    pub status: Option<u16>,
    pub response_headers: Vec<(String, String)>,
    pub response_body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub curl: String,
    /// A PNG answer itself (base64), so report.html can show what the target drew.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub png_base64: Option<String>,
}

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
    /// Attempted, and (for some or all of its cases) not judged: why (a fixture no key owns,
    /// the target stopped answering). Its verdict is `not-judged` unless it also failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
}

/// How a run ended, for people and CI: the verdict line, `report.json`'s `outcome` and the
/// exit code (0, 1, 3) say the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every check that ran was judged, and none failed.
    Passed,
    /// The target contradicts the spec (failures not waived).
    Failed,
    /// No failure, but some check was attempted and not judged (a fixture no key owns, a
    /// target that stopped answering): neither a pass nor a failure. An interrupted run is
    /// incomplete whatever it had judged.
    Incomplete,
}

impl Outcome {
    /// As the verdict line says it.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Passed => "PASSED",
            Outcome::Failed => "FAILED",
            Outcome::Incomplete => "INCOMPLETE",
        }
    }
}

/// Why a run is incomplete, and what to do about it.
#[derive(Clone, Debug, Serialize)]
pub struct Incomplete {
    pub reason: String,
    pub what_to_do: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outage: Option<Outage>,
    /// The checks not judged, as `id on operation`.
    pub not_judged: Vec<String>,
}

/// What every run's report starts with, `check`'s and `load`'s alike (flattened into their
/// JSON: the field names are the same as before it was shared).
#[derive(Clone, Debug, Serialize)]
pub struct RunHeader {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    pub target: String,
    pub spec_title: String,
    pub spec_version: String,
    pub started_at: String,
    pub duration_secs: f64,
}

impl RunHeader {
    pub fn new(
        schema_version: u32,
        spec: &Spec,
        target: &Target,
        started_epoch: u64,
        took: Duration,
    ) -> RunHeader {
        RunHeader {
            schema_version,
            tool: "linkcert".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            target: target.base_url.to_string(),
            spec_title: spec.title.clone(),
            spec_version: spec.version.clone(),
            started_at: rfc3339(started_epoch),
            duration_secs: took.as_secs_f64(),
        }
    }
}

/// Bumped when a field changes meaning or goes away; new fields do not bump it.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    #[serde(flatten)]
    pub run: RunHeader,
    pub seed: u64,
    pub requests: u64,
    /// 429s met and waited out by paced sends (not failures).
    pub throttled_and_retried: u64,
    /// Plans of the keys used, each once (keys themselves are never written).
    pub plans: Vec<String>,
    /// The real clients whose requests were sent as they send them (`http.clients`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
    /// Which shell variable stands for which `--key` in the curl lines.
    pub key_variables: Vec<KeyVariable>,
    /// The command that replays this run (keys as their variables).
    pub replay: String,
    pub totals: Totals,
    pub checks: Vec<CheckResult>,
    /// Clauses of the spec document exercised by this run (by `check`'s checks).
    pub coverage: Coverage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waivers: Option<Waivers>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineDiff>,
    /// passed, failed or incomplete (what the exit code says: 0, 1, 3).
    pub outcome: Outcome,
    /// Why the run could not judge everything it attempted, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// The run was asked to stop before it finished (SIGINT, SIGTERM): it is incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interrupted>,
    /// Where the time went: each family run, in run order, its wall time and requests.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub families: Vec<FamilyTime>,
}

/// One family's share of a run.
#[derive(Clone, Debug, Serialize)]
pub struct FamilyTime {
    pub family: String,
    pub seconds: f64,
    pub requests: u64,
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
            t.add(c.verdict);
        }
        t
    }

    /// Counts one more result of this verdict.
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Pass => self.pass += 1,
            Verdict::NonStrict => self.non_strict += 1,
            Verdict::Informational => self.informational += 1,
            Verdict::Fail => self.fail += 1,
            Verdict::Skipped => self.skipped += 1,
            Verdict::Accepted => self.accepted += 1,
            Verdict::NotJudged => self.not_judged += 1,
        }
    }

    /// The counts in the order of the summary tables' columns: pass, fail, accepted,
    /// non-strict, informational, skipped, not judged.
    pub fn row(&self) -> [u64; 7] {
        [
            self.pass,
            self.fail,
            self.accepted,
            self.non_strict,
            self.informational,
            self.skipped,
            self.not_judged,
        ]
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
    /// Attempted and not judged (the run is incomplete).
    pub not_judged: u64,
}

impl Report {
    /// The report of a run; `coverage` is the run's (`registry::coverage`, over `checks`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: &Spec,
        target: &Target,
        seed: u64,
        started_epoch: u64,
        took: Duration,
        requests: u64,
        throttled: u64,
        checks: Vec<CheckResult>,
        coverage: Coverage,
    ) -> Report {
        let totals = Totals::of(&checks);
        let key_variables = target
            .identities()
            .into_iter()
            .map(|id| KeyVariable {
                variable: id.variable(),
                plan: id.plan,
                nth: id.nth,
            })
            .collect();
        let mut replay = format!("linkcert check --target {} --seed {seed}", target.base_url);
        for (k, s) in target.keys.iter().zip(target.secrets()) {
            replay.push_str(&format!(" --key {}=\"${}\"", k.plan, s.var));
        }
        let mut report = Report {
            replay,
            run: RunHeader::new(REPORT_SCHEMA_VERSION, spec, target, started_epoch, took),
            seed,
            requests,
            throttled_and_retried: throttled,
            plans: target.plans(),
            clients: Vec::new(),
            key_variables,
            totals,
            checks,
            coverage,
            waivers: None,
            baseline: None,
            outcome: Outcome::Passed,
            incomplete: None,
            interrupted: None,
            families: Vec::new(),
        };
        report.settle(None);
        report
    }

    /// No failure (accepted ones aside). An incomplete run has none either: see `outcome`.
    pub fn passed(&self) -> bool {
        self.totals.fail == 0
    }

    /// The run's outcome and why it is incomplete, from its checks, the outage if any, and
    /// `interrupted` (set before).
    pub fn settle(&mut self, outage: Option<Outage>) {
        let outage = outage.or_else(|| self.incomplete.take().and_then(|i| i.outage));
        let not_judged: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.not_judged.is_some())
            .map(|c| format!("{} on {}", c.id, c.operation))
            .collect();
        // Nothing judged at all (every check skipped, or none of their requests answered) is
        // not a pass: nothing was certified.
        let none_judged = !self.checks.iter().any(|c| c.judged());
        let interrupted = self.interrupted.as_ref();
        self.incomplete = if interrupted.is_none()
            && outage.is_none()
            && not_judged.is_empty()
            && !none_judged
        {
            None
        } else {
            let (reason, what_to_do) = match (interrupted, &outage) {
                (Some(i), _) => (
                    format!(
                        "{}, before it finished; {} check(s) not judged",
                        i.sentence(),
                        not_judged.len()
                    ),
                    "run it again and let it finish: an interrupted run is no verdict, whatever it had judged"
                        .to_string(),
                ),
                (None, None) if not_judged.is_empty() => (
                    "no check was judged: every check run was skipped (see each one's reason)"
                        .to_string(),
                    "widen --only or --skip, give the keys and fixtures the skipped checks ask for, and make sure requests get answers (an HTTPS target whose certificate this machine does not trust: install its CA, or --insecure)"
                        .to_string(),
                ),
                (None, Some(o)) => (
                    format!("{}; {} check(s) not judged", o.sentence(), not_judged.len()),
                    "check that the target is up and reachable (and not overloaded: --concurrency, --request-timeout), then run again"
                        .to_string(),
                ),
                (None, None) if self.checks.iter().any(|c| {
                    c.not_judged
                        .as_deref()
                        .is_some_and(|w| w.contains("given up") || w.contains("broken"))
                }) =>
                {
                    (
                        format!(
                            "{} check(s) not judged: the target misbehaved on a route (or everywhere) and linkcert stopped sending there (see each one's reason)",
                            not_judged.len()
                        ),
                        "see the failures that name what the target did (a body that never ends, a trickle, bytes that are not HTTP...), fix it, then run again"
                            .to_string(),
                    )
                }
                (None, None) => (
                    format!(
                        "{} check(s) attempted and not judged (see each one's reason)",
                        not_judged.len()
                    ),
                    "bind each fixture to the key of the workspace that owns it (--partner PLAN=ID, --tenant PLAN=ID, or [fixtures] in the profile), make sure it exists and is active, then run again"
                        .to_string(),
                ),
            };
            Some(Incomplete {
                reason,
                what_to_do,
                outage,
                not_judged,
            })
        };
        self.outcome = if self.interrupted.is_some() {
            Outcome::Incomplete
        } else if !self.passed() {
            Outcome::Failed
        } else if self.incomplete.is_some() {
            Outcome::Incomplete
        } else {
            Outcome::Passed
        };
    }

    /// Turn the failures the waivers match into `accepted` (`gate::accept` decides which), and
    /// record what became of every entry. `today` is YYYY-MM-DD (UTC).
    pub fn apply_waivers(&mut self, waivers: &WaiverFile, today: &str) {
        let failing: Vec<usize> = (0..self.checks.len())
            .filter(|&i| self.checks[i].verdict == Verdict::Fail)
            .collect();
        let keys: Vec<CheckKey> = failing.iter().map(|&i| self.checks[i].key()).collect();
        let (accepted, uses) = accept::decide(waivers, &keys, today);
        for (i, a) in failing.into_iter().zip(accepted) {
            if let Some(a) = a {
                let c = &mut self.checks[i];
                c.verdict = Verdict::Accepted;
                c.accepted = Some(a);
            }
        }
        self.totals = Totals::of(&self.checks);
        self.waivers = Some(uses);
        self.settle(None);
    }

    /// Compare with the baseline and record the difference.
    pub fn compare_with(&mut self, base: &Baseline) {
        let now: Vec<(CheckKey, Verdict)> =
            self.checks.iter().map(|c| (c.key(), c.verdict)).collect();
        self.baseline = Some(baseline::compare(&now, base));
    }

    /// Whether the run fails the gate (`--fail-on`).
    pub fn fails(&self, fail_on: FailOn) -> bool {
        gate::fails(fail_on, self.passed(), self.baseline.as_ref())
    }

    /// How the run ended (`gate::outcome`): passed, failed, incomplete or interrupted.
    pub fn outcome(&self, fail_on: FailOn) -> linkcert_run::Outcome {
        gate::outcome(
            fail_on,
            self.passed(),
            self.baseline.as_ref(),
            self.incomplete.is_some(),
            self.interrupted.is_some(),
        )
    }
}

impl CheckResult {
    pub fn family(&self) -> &str {
        self.id.split('.').next().unwrap_or("")
    }
    pub fn key(&self) -> CheckKey {
        CheckKey {
            id: self.id.clone(),
            operation: self.operation.clone(),
        }
    }
}

impl Judgement for CheckResult {
    fn id(&self) -> &str {
        &self.id
    }
    fn judged(&self) -> bool {
        self.cases > 0 && self.verdict != Verdict::Skipped
    }
    fn skipped(&self) -> Option<&str> {
        self.skipped.as_deref().or(self.not_judged.as_deref())
    }
}
