//! What `linkcert load` writes: `load.json` (schema in reports/README.md), `load.md` and
//! `load.html` (with an SVG chart per scenario and key), and a terminal summary. Each ends
//! with the clause coverage of the load rules (`crate::registry`), as a check run's does.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::judge::{KeyStats, ScenarioResult, ScenarioVerdict};
use super::scheduler::Plan;
use crate::registry::{Command, Coverage, Judgement};
use crate::report::{self, RunHeader};
use crate::spec::Spec;
use crate::target::Target;
use crate::verdict::Verdict;

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
    pub outage: Option<crate::outage::Outage>,
    /// The run was asked to stop before it finished (SIGINT, SIGTERM): it is incomplete,
    /// whatever its scenarios had judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<crate::interrupt::Interrupted>,
    /// Clauses of the spec document exercised by this run (by the load rules).
    pub coverage: Coverage,
}

impl LoadReport {
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
                });
                e.sent += k.sent;
                e.admitted += k.admitted;
                e.throttled += k.throttled;
            }
        }
        self.keys = keys.into_values().collect();
        let v = |x| self.scenarios.iter().any(|s| s.verdict == x);
        self.verdict = if self.interrupted.is_some() {
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
        if let Some(out) = &self.outage {
            let _ = writeln!(
                o,
                "**Incomplete**: {}. Scenarios not run or overlapping it were not judged; check that the target is up and reachable, then run again.\n",
                out.sentence()
            );
        }
        let _ = writeln!(
            o,
            "| scenario | plan | class | shape | limit | verdict | sent | admitted | throttled | late/unsent | achieved/scheduled req/s | behaviour |"
        );
        let _ = writeln!(o, "|---|---|---|---|---|---|---|---|---|---|---|---|");
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
        if let Some(plan) = &self.plan {
            o.push_str(&plan.markdown());
        }
        let _ = writeln!(
            o,
            "\n## Keys\n\n| key | sent | admitted | throttled |\n|---|---|---|---|"
        );
        for k in &self.keys {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                k.label, k.sent, k.admitted, k.throttled
            );
        }
        for s in &self.scenarios {
            let _ = writeln!(
                o,
                "\n## {} ({})\n\n{}\n",
                s.name,
                s.verdict.as_str(),
                s.description
            );
            if let Some(why) = &s.skipped {
                let _ = writeln!(o, "Skipped: {why}");
                continue;
            }
            let _ = writeln!(
                o,
                "| key | scheduled | sent | admitted | throttled | other | no answer | late | unsent | latency p50/p99/max ms | windows | rolling max | admitted bounds |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
            );
            for k in &s.keys {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} | {} | {:?} | {} | {} | {} | {:.1}/{:.1}/{:.1} | {:.2} | {} | [{:.0}, {:.0}] |",
                    k.label,
                    k.scheduled,
                    k.sent,
                    k.admitted,
                    k.throttled,
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
            let _ = writeln!(o);
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
                let _ = writeln!(o);
            }
            if !s.goose_reports.is_empty() {
                let _ = writeln!(o, "\ngoose's own reports: {}", s.goose_reports.join(", "));
            }
        }
        o.push_str(&report::coverage_markdown(&self.coverage, Command::Load));
        o
    }

    pub fn html(&self) -> String {
        let esc = crate::report::escape;
        let mut o = String::new();
        let _ = write!(
            o,
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>linkcert load</title>\
             <style>body{{font-family:sans-serif;max-width:820px;margin:1em auto}}\
             table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ccc;padding:2px 6px}}\
             .fail{{color:#b00}}.pass{{color:#070}}</style></head><body>"
        );
        let _ = write!(
            o,
            "<h1>linkcert load: <span class=\"{}\">{}</span></h1><p>{} · window {} s · {}</p>",
            self.verdict.as_str(),
            self.verdict.as_str(),
            esc(&self.run.target),
            self.window_secs,
            esc(&self.run.started_at)
        );
        if let Some(i) = &self.interrupted {
            let _ = write!(
                o,
                "<p><b>Incomplete</b>: {}, before the run finished; scenarios not run or cut short were not judged.</p>",
                esc(&i.sentence())
            );
        }
        for s in &self.scenarios {
            let _ = write!(
                o,
                "<h2>{} <span class=\"{}\">{}</span></h2><p>{}</p>",
                esc(&s.name),
                s.verdict.as_str(),
                s.verdict.as_str(),
                esc(&s.description)
            );
            if let Some(why) = &s.skipped {
                let _ = write!(o, "<p>Skipped: {}</p>", esc(why));
                continue;
            }
            o.push_str(&super::chart::svg(s));
            o.push_str("<ul>");
            for f in &s.findings {
                let _ = write!(
                    o,
                    "<li class=\"{}\"><code>{}</code> <b>{}</b> {}: {} {}</li>",
                    f.verdict.as_str(),
                    esc(&f.check),
                    f.verdict.as_str(),
                    esc(f.key.as_deref().unwrap_or("")),
                    esc(&f.message),
                    if f.expected.is_empty() && f.actual.is_empty() {
                        String::new()
                    } else {
                        esc(&format!("(expected {}; got {})", f.expected, f.actual))
                    }
                );
            }
            o.push_str("</ul>");
        }
        o.push_str(&report::coverage_html(&self.coverage, Command::Load));
        o.push_str("</body></html>\n");
        o
    }

    /// A few lines for the terminal.
    pub fn summary(&self) -> String {
        let mut o = String::new();
        if let Some(i) = &self.interrupted {
            let _ = writeln!(o, "INCOMPLETE: {}, before the run finished", i.sentence());
        }
        if let Some(out) = &self.outage {
            let _ = writeln!(o, "INCOMPLETE: {}", out.sentence());
        }
        for s in &self.scenarios {
            let _ = writeln!(o, "{}", one_line(s));
            for f in s.findings.iter().filter(|f| f.verdict == Verdict::Fail) {
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
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| format!("{} {}/{}", k.label, k.admitted, k.sent))
            .collect();
        let _ = writeln!(o, "admitted/sent per key: {}", keys.join(", "));
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
    for r in crate::registry::RULES {
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

/// The "no answer" cell: the target's, and apart, the sockets this machine refused (its own
/// limit, never the target's).
fn no_answer(k: &KeyStats) -> String {
    if k.refused_locally > 0 {
        format!("{} (+{} refused here)", k.errors, k.refused_locally)
    } else {
        k.errors.to_string()
    }
}
