//! What `linkcert load` writes: `load.json` (schema in reports/README.md), `load.md` and
//! `load.html` (with an SVG chart per scenario and key), and a terminal summary. Each ends
//! with the clause coverage of the load rules (`linkcert_registry`), as a check run's does.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use askama::Template;
use serde::Serialize;

use super::judge::fleet::LISTED_KEYS;
use fleet::{FLEET_FAILS_SHOWN, fleet_lines, fleet_markdown, shards_markdown};
mod fleet;
use super::judge::{KeyStats, ScenarioResult, ScenarioVerdict};
use super::scheduler::Plan;
use linkcert_registry::{Command, Coverage, Judgement};
use linkcert_report::{self as report, RunHeader};
use linkcert_run::target::Target;
use linkcert_spec::Spec;
use linkcert_spec::verdict::Verdict;

/// `templates/load.html`: the report, and each scenario with its charts (none when skipped).
#[derive(Template)]
#[template(path = "load.html", config = "askama.toml")]
struct LoadPage<'a> {
    r: &'a LoadReport,
    /// Each scenario, its charts, and (a fleet's) findings grouped alike.
    scenarios: Vec<(&'a ScenarioResult, String, Vec<fleet::Alike<'a>>)>,
    coverage: report::CoverageHtml<'a>,
}

/// Per key over the whole run.
#[derive(Clone, Debug, Serialize)]
pub struct KeyTotal {
    pub label: String,
    pub plan: String,
    /// Position in the target's key list.
    pub target_key: usize,
    pub sent: u64,
    pub admitted: u64,
    pub throttled: u64,
    /// Requests the spec forbids, refused cleanly (expected).
    pub refused: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    #[serde(flatten)]
    pub run: RunHeader,
    /// The target's standard window in seconds.
    pub window_secs: f64,
    /// pass, fail, client-saturated (not judged), or skipped (nothing ran).
    pub verdict: ScenarioVerdict,
    pub totals: BTreeMap<String, u64>,
    pub keys: Vec<KeyTotal>,
    /// Which scenarios ran together: estimated, and what happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    pub scenarios: Vec<ScenarioResult>,
    /// First runs of scenarios whose generator saturated beside others: each ran again alone
    /// and its verdict is that run's (in `scenarios`). Their requests count in `keys`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<ScenarioResult>,
    /// The target went away mid-run: when and how; the run is incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outage: Option<linkcert_run::outage::Outage>,
    /// The run was asked to stop before it finished (SIGINT, SIGTERM): it is incomplete,
    /// whatever its scenarios had judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<linkcert_run::interrupt::Interrupted>,
    /// Clauses of the spec document exercised by this run (by the load rules).
    pub coverage: Coverage,
    /// A run merged from shards: each shard, where and when it ran (`load::merge`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<crate::shard::ShardMeta>,
    /// Why a merged run is incomplete: a shard missing, failed or started late.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// With `--start-at`: how long after it this run began, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_late_secs: Option<f64>,
    /// With `--metrics`: what was written to Prometheus, and what was lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<crate::metrics::MetricsAccount>,
}

impl LoadReport {
    /// How the run ended, for the exit code: interrupted is no verdict; a shard whose
    /// scenarios all run in other shards did its part; nothing run at all, or a generator
    /// that could not hold its schedule, could not run.
    pub fn outcome(&self) -> linkcert_run::Outcome {
        use linkcert_run::Outcome;
        if self.interrupted.is_some() {
            return Outcome::Incomplete;
        }
        match self.verdict {
            ScenarioVerdict::Fail => Outcome::Failed,
            ScenarioVerdict::Pass | ScenarioVerdict::Informational | ScenarioVerdict::NonStrict => {
                Outcome::Passed
            }
            ScenarioVerdict::Skipped
                if !self.scenarios.is_empty() && self.scenarios.iter().all(|s| s.elsewhere) =>
            {
                Outcome::Passed
            }
            ScenarioVerdict::Skipped | ScenarioVerdict::ClientSaturated => Outcome::CannotRun,
            ScenarioVerdict::Incomplete => Outcome::Incomplete,
        }
    }

    /// An empty report of a run that started at `started_epoch` (UTC epoch seconds).
    pub fn new(spec: &Spec, target: &Target, started_epoch: u64) -> LoadReport {
        LoadReport {
            run: RunHeader::new(1, spec, target, started_epoch, std::time::Duration::ZERO),
            window_secs: target.rate_window.secs(),
            verdict: ScenarioVerdict::Pass,
            totals: BTreeMap::new(),
            keys: Vec::new(),
            plan: None,
            scenarios: Vec::new(),
            superseded: Vec::new(),
            outage: None,
            interrupted: None,
            coverage: Coverage::default(),
            shards: Vec::new(),
            incomplete: None,
            start_late_secs: None,
            metrics: None,
        }
    }

    /// Totals, per-key sums and the overall verdict: an interrupted run is incomplete (it did
    /// not finish: no verdict), then a failure decides, then an outage.
    pub fn finish(&mut self, labels: &[String]) {
        let mut totals = BTreeMap::new();
        for s in &self.scenarios {
            *totals.entry(s.verdict.as_str().to_string()).or_insert(0) += 1;
        }
        self.totals = totals;
        let mut keys: BTreeMap<usize, KeyTotal> = BTreeMap::new();
        for s in self.scenarios.iter().chain(&self.superseded) {
            for k in &s.keys {
                let e = keys.entry(k.target_key).or_insert_with(|| KeyTotal {
                    label: labels.get(k.target_key).cloned().unwrap_or_default(),
                    plan: s.plan.clone(),
                    target_key: k.target_key,
                    sent: 0,
                    admitted: 0,
                    throttled: 0,
                    refused: 0,
                });
                e.sent += k.sent;
                e.admitted += k.admitted;
                e.throttled += k.throttled;
                e.refused += k.refused;
            }
        }
        self.keys = keys.into_values().collect();
        let v = |x| self.scenarios.iter().any(|s| s.verdict == x);
        self.verdict = if self.interrupted.is_some() || self.incomplete.is_some() {
            ScenarioVerdict::Incomplete
        } else if v(ScenarioVerdict::Fail) {
            ScenarioVerdict::Fail
        } else if v(ScenarioVerdict::Incomplete) || self.outage.is_some() {
            ScenarioVerdict::Incomplete
        } else if v(ScenarioVerdict::ClientSaturated) {
            ScenarioVerdict::ClientSaturated
        } else if self
            .scenarios
            .iter()
            .all(|s| s.verdict == ScenarioVerdict::Skipped)
        {
            ScenarioVerdict::Skipped
        } else {
            ScenarioVerdict::Pass
        };
    }

    pub fn passed(&self) -> bool {
        self.verdict == ScenarioVerdict::Pass
    }

    /// Scenarios that failed, by name.
    pub fn failed(&self) -> Vec<&ScenarioResult> {
        self.scenarios
            .iter()
            .filter(|s| s.verdict == ScenarioVerdict::Fail)
            .collect()
    }

    /// Checks that failed in a scenario (e.g. `load.admitted`).
    pub fn failed_checks(&self, scenario: &str) -> Vec<String> {
        self.scenarios
            .iter()
            .filter(|s| s.name == scenario)
            .flat_map(|s| &s.findings)
            .filter(|f| f.verdict == Verdict::Fail)
            .map(|f| f.check.clone())
            .collect()
    }

    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let json = dir.join("load.json");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&json, text + "\n")?;
        let md = dir.join("load.md");
        std::fs::write(&md, self.markdown())?;
        let html = dir.join("load.html");
        std::fs::write(&html, self.html())?;
        Ok(vec![json, md, html])
    }

    pub fn markdown(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "# linkcert load: {}\n", self.verdict.as_str());
        let _ = writeln!(
            o,
            "Target {} · spec {} {} · standard window {} s · started {} · {:.0} s\n",
            self.run.target,
            self.run.spec_title,
            self.run.spec_version,
            self.window_secs,
            self.run.started_at,
            self.run.duration_secs
        );
        if let Some(i) = &self.interrupted {
            let _ = writeln!(
                o,
                "**Incomplete**: {}, before the run finished. Scenarios not run or cut short were not judged; the run is no verdict, whatever it had judged: run it again and let it finish.\n",
                i.sentence()
            );
        }
        if let Some(why) = &self.incomplete {
            let _ = writeln!(o, "**Incomplete**: {why}.\n");
        }
        if !self.shards.is_empty() {
            o.push_str(&shards_markdown(&self.shards));
        }
        if let Some(out) = &self.outage {
            let _ = writeln!(
                o,
                "**Incomplete**: {}. Scenarios not run or overlapping it were not judged; check that the target is up and reachable, then run again.\n",
                out.sentence()
            );
        }
        o.push_str(&self.scenarios_markdown());
        if let Some(plan) = &self.plan {
            o.push_str(&plan.markdown());
        }
        let _ = writeln!(
            o,
            "\n## Keys\n\n| key | sent | admitted | throttled |\n|---|---|---|---|"
        );
        // A fleet's keys are in its scenario's summary; here, the plans.
        if self.keys.len() > 2 * LISTED_KEYS {
            for (plan, [n, sent, adm, thr]) in self.per_plan() {
                let _ = writeln!(o, "| {plan} ({n} keys) | {sent} | {adm} | {thr} |");
            }
        }
        for k in self
            .keys
            .iter()
            .take_while(|_| self.keys.len() <= 2 * LISTED_KEYS)
        {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                k.label, k.sent, k.admitted, k.throttled
            );
        }
        for s in &self.scenarios {
            o.push_str(&scenario_markdown(s));
        }
        o.push_str(&report::coverage_markdown(&self.coverage, Command::Load));
        o
    }

    /// One line per scenario: what it is, its verdict and what the generator achieved.
    fn scenarios_markdown(&self) -> String {
        let mut o = String::from(
            "| scenario | plan | class | shape | limit | verdict | sent | admitted | throttled | late/unsent | achieved/scheduled req/s | behaviour |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for s in &self.scenarios {
            let (sent, adm, thr): (u64, u64, u64) = s.keys.iter().fold((0, 0, 0), |a, k| {
                (a.0 + k.sent, a.1 + k.admitted, a.2 + k.throttled)
            });
            let g = s.generator.as_ref();
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} per {:.2} s | **{}** | {sent} | {adm} | {thr} | {} | {} | {} |",
                s.name,
                s.plan,
                s.class,
                s.shape,
                s.limit,
                s.window_secs,
                s.verdict.as_str(),
                g.map_or("-".into(), |g| format!("{}/{}", g.late, g.unsent)),
                g.map_or("-".into(), |g| format!(
                    "{:.1}/{:.1}",
                    g.achieved_rate, g.scheduled_rate
                )),
                s.behaviour
                    .as_deref()
                    .and_then(|b| b.split(':').next())
                    .or(s.skipped.as_deref())
                    .unwrap_or("-")
            );
        }
        o
    }

    pub fn html(&self) -> String {
        let page = LoadPage {
            r: self,
            scenarios: self
                .scenarios
                .iter()
                .map(|s| {
                    let chart = s.skipped.is_none().then(|| super::chart::svg(s));
                    let groups = if s.fleet.is_some() {
                        fleet::alike(&s.findings)
                    } else {
                        Vec::new()
                    };
                    (s, chart.unwrap_or_default(), groups)
                })
                .collect(),
            coverage: report::CoverageHtml::new(&self.coverage, Command::Load),
        };
        // Rendering into a String fails only if a value's Display does, and none here does.
        page.render().expect("load.html renders")
    }

    /// Per plan: its keys, and what they sent, got admitted and throttled.
    fn per_plan(&self) -> BTreeMap<&str, [u64; 4]> {
        let mut plans: BTreeMap<&str, [u64; 4]> = BTreeMap::new();
        for k in &self.keys {
            let e = plans.entry(k.plan.as_str()).or_default();
            *e = [
                e[0] + 1,
                e[1] + k.sent,
                e[2] + k.admitted,
                e[3] + k.throttled,
            ];
        }
        plans
    }

    /// A few lines for the terminal.
    pub fn summary(&self) -> String {
        let mut o = String::new();
        if let Some(i) = &self.interrupted {
            let _ = writeln!(o, "INCOMPLETE: {}, before the run finished", i.sentence());
        }
        if let Some(why) = &self.incomplete {
            let _ = writeln!(o, "INCOMPLETE: {why}");
        }
        if let Some(out) = &self.outage {
            let _ = writeln!(o, "INCOMPLETE: {}", out.sentence());
        }
        for s in &self.scenarios {
            let _ = writeln!(o, "{}", one_line(s));
            if let Some(fl) = &s.fleet {
                let _ = write!(o, "{}", fleet_lines(fl, s.limit));
            }
            let failed = s.findings.iter().filter(|f| f.verdict == Verdict::Fail);
            let shown = if s.fleet.is_some() {
                FLEET_FAILS_SHOWN
            } else {
                usize::MAX
            };
            let more = failed.clone().count().saturating_sub(shown);
            if more > 0 {
                let _ = writeln!(o, "    ... and {more} more failures (load.md lists them)");
            }
            for f in failed.take(shown) {
                let _ = writeln!(
                    o,
                    "    FAIL {}{}: {} (expected {}; got {})",
                    f.check,
                    f.key
                        .as_deref()
                        .map(|k| format!(" [{k}]"))
                        .unwrap_or_default(),
                    f.message,
                    f.expected,
                    f.actual
                );
            }
        }
        if self.keys.len() > 2 * LISTED_KEYS {
            let plans: Vec<String> = self
                .per_plan()
                .into_iter()
                .map(|(p, [n, sent, adm, _])| format!("{p} {adm}/{sent} ({n} keys)"))
                .collect();
            let _ = writeln!(o, "admitted/sent per plan: {}", plans.join(", "));
        } else {
            let keys: Vec<String> = self
                .keys
                .iter()
                .map(|k| format!("{} {}/{}", k.label, k.admitted, k.sent))
                .collect();
            let _ = writeln!(o, "admitted/sent per key: {}", keys.join(", "));
        }
        o.push_str(&crate::metrics::summary(self.metrics.as_ref()));
        if let Some(p) = &self.plan {
            let _ = writeln!(
                o,
                "{}: estimated {:.0} s, took {:.0} s",
                if p.sequential {
                    "one scenario at a time"
                } else {
                    "scenarios on different keys together"
                },
                p.estimated_secs,
                self.run.duration_secs
            );
        }
        let totals: Vec<String> = self
            .totals
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        o.push_str(&report::coverage_line(&self.coverage));
        let _ = writeln!(
            o,
            "load: {} ({}) in {:.0} s",
            self.verdict.as_str(),
            totals.join(", "),
            self.run.duration_secs
        );
        o
    }
}

/// What each load rule did in one scenario, for clause coverage: a rule judged every scenario
/// of its shape that was judged at all (not skipped, not client saturated).
pub struct RuleJudgement {
    pub id: &'static str,
    pub judged: bool,
    pub skipped: Option<String>,
}

impl Judgement for RuleJudgement {
    fn id(&self) -> &str {
        self.id
    }
    fn judged(&self) -> bool {
        self.judged
    }
    fn skipped(&self) -> Option<&str> {
        self.skipped.as_deref()
    }
}

/// Every rule's judgement of every scenario of the run.
pub fn rule_judgements(scenarios: &[ScenarioResult]) -> Vec<RuleJudgement> {
    let mut out = Vec::new();
    for r in linkcert_registry::RULES {
        for s in scenarios.iter().filter(|s| r.judges_shape(&s.shape)) {
            let not_judged = match s.verdict {
                ScenarioVerdict::Skipped => Some(format!(
                    "{}: {}",
                    s.name,
                    s.skipped.as_deref().unwrap_or("skipped")
                )),
                ScenarioVerdict::ClientSaturated => {
                    Some(format!("{}: client saturated, not judged", s.name))
                }
                ScenarioVerdict::Incomplete => Some(format!(
                    "{}: {}",
                    s.name,
                    s.skipped.as_deref().unwrap_or("not judged")
                )),
                _ => None,
            };
            out.push(RuleJudgement {
                id: r.id,
                judged: not_judged.is_none(),
                skipped: not_judged,
            });
        }
    }
    out
}

/// One line per scenario.
pub fn one_line(s: &ScenarioResult) -> String {
    if let Some(why) = &s.skipped {
        let word = if s.verdict == ScenarioVerdict::Incomplete {
            "incomplete"
        } else {
            "skipped"
        };
        return format!("{:<28} {word}: {why}", s.name);
    }
    let (sent, adm, thr) = s.keys.iter().fold((0, 0, 0), |a, k| {
        (a.0 + k.sent, a.1 + k.admitted, a.2 + k.throttled)
    });
    let g = s.generator.as_ref();
    format!(
        "{:<28} {:<16} sent {sent:>5} admitted {adm:>5} throttled {thr:>5}  gen {:.0}/{:.0} req/s late {} unsent {}  {}",
        s.name,
        s.verdict.as_str(),
        g.map_or(0.0, |g| g.achieved_rate),
        g.map_or(0.0, |g| g.scheduled_rate),
        g.map_or(0, |g| g.late),
        g.map_or(0, |g| g.unsent),
        s.behaviour
            .as_deref()
            .and_then(|b| b.split(':').next())
            .unwrap_or("")
    )
}

/// One scenario's section of load.md: its keys' figures and its findings.
fn scenario_markdown(s: &ScenarioResult) -> String {
    let mut o = format!(
        "\n## {} ({})\n\n{}\n\n",
        s.name,
        s.verdict.as_str(),
        s.description
    );
    if let Some(why) = &s.skipped {
        let _ = writeln!(o, "Skipped: {why}");
        return o;
    }
    if let Some(fl) = &s.fleet {
        o.push_str(&fleet_markdown(fl, s));
        return o;
    }
    o.push_str(
        "| key | scheduled | sent | admitted | throttled | refused (forbidden) | other | no answer | late | unsent | latency p50/p99/max ms | windows | rolling max | admitted bounds |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for k in &s.keys {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {:?} | {} | {} | {} | {:.1}/{:.1}/{:.1} | {:.2} | {} | [{:.0}, {:.0}] |",
            k.label,
            k.scheduled,
            k.sent,
            k.admitted,
            k.throttled,
            k.refused,
            k.other,
            no_answer(k),
            k.late,
            k.unsent,
            k.latency_ms.p50,
            k.latency_ms.p99,
            k.latency_ms.max,
            k.windows_loaded,
            k.rolling_max,
            k.admitted_bounds[0],
            k.admitted_bounds[1]
        );
    }
    o.push('\n');
    for f in &s.findings {
        let _ = write!(
            o,
            "- `{}` **{}**{}: {}",
            f.check,
            f.verdict.as_str(),
            f.key
                .as_deref()
                .map(|k| format!(" ({k})"))
                .unwrap_or_default(),
            f.message
        );
        if !f.expected.is_empty() || !f.actual.is_empty() {
            let _ = write!(o, " (expected {}; got {})", f.expected, f.actual);
        }
        o.push('\n');
    }
    if !s.goose_reports.is_empty() {
        let _ = writeln!(o, "\ngoose's own reports: {}", s.goose_reports.join(", "));
    }
    o
}

/// The "no answer" cell: the target's, and apart, the sockets this machine refused (its own
/// limit, never the target's).
fn no_answer(k: &KeyStats) -> String {
    if k.refused_locally > 0 {
        format!("{} (+{} refused here)", k.errors, k.refused_locally)
    } else {
        k.errors.to_string()
    }
}

#[cfg(test)]
mod tests;
