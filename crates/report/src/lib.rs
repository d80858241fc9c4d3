//! Reports people read and CI gates on: `report.json` (schema in `reports/README.md`),
//! `junit.xml` (one testcase per check and operation), `report.md` and `report.html` (the
//! certificate, `html.rs`), plus the summary table printed at the end of a run, and GitHub
//! Actions annotations and step summary (`github.rs`). What they say is `model::Report` (the
//! findings of a run, with its waivers, baseline and clause coverage).

pub mod gate;
pub mod github;
mod html;
mod junit;

pub use html::CoverageHtml;
pub mod model;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::gate::accept::WaiverUse;
use linkcert_registry::{Command, Coverage};
use linkcert_spec::verdict::Verdict;
use model::CheckResult;

pub use model::{KeyVariable, REPORT_SCHEMA_VERSION, Report, RunHeader, Totals};

impl Report {
    /// Write report.json, junit.xml, report.md and report.html into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let files = [
            (
                "report.json",
                serde_json::to_string_pretty(self).map_err(std::io::Error::other)?,
            ),
            ("junit.xml", self.junit()),
            ("report.md", self.markdown()),
            ("report.html", self.html()),
        ];
        let mut out = Vec::new();
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::write(&p, text)?;
            out.push(p);
        }
        Ok(out)
    }

    pub fn markdown(&self) -> String {
        let mut m = String::new();
        let _ = writeln!(m, "# linkcert report: {}\n", self.outcome.word());
        m.push_str(&self.incomplete_markdown());
        m.push_str(&self.run_markdown());
        m.push_str(&self.baseline_markdown());
        m.push_str(&self.checks_markdown());
        for (title, v) in [
            ("Failures", Verdict::Fail),
            ("Not judged", Verdict::NotJudged),
            ("Accepted deviations (waived)", Verdict::Accepted),
            ("Non-strict", Verdict::NonStrict),
            (
                "Observations (the spec leaves these open)",
                Verdict::Informational,
            ),
            ("Skipped", Verdict::Skipped),
        ] {
            if v == Verdict::Skipped {
                m.push_str(&self.partly_judged_markdown());
            }
            let list: Vec<&CheckResult> = self.checks.iter().filter(|c| c.verdict == v).collect();
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(m, "\n## {title}\n");
            for c in list {
                m.push_str(&check_markdown(c));
            }
        }
        m.push_str(&self.waivers_markdown());
        m.push_str(&self.coverage_markdown());
        m
    }

    /// The run (target, spec, seed, when, how long), an interrupt, the keys' variables and the
    /// totals, under the title of report.md.
    fn run_markdown(&self) -> String {
        let mut m = String::new();
        let _ = writeln!(
            m,
            "- target: `{}`\n- spec: {} {}\n- seed: {} (replay with `--seed {}`)\n- started: {}, took {:.1} s, {} requests ({} throttled and retried)\n- plans with keys: {}\n",
            self.run.target,
            self.run.spec_title,
            self.run.spec_version,
            self.seed,
            self.seed,
            self.run.started_at,
            self.run.duration_secs,
            self.requests,
            self.throttled_and_retried,
            self.plans.join(", ")
        );
        if !self.clients.is_empty() {
            let _ = writeln!(m, "Clients sent as: {}.\n", self.clients.join("; "));
        }
        if let Some(i) = &self.interrupted {
            let _ = writeln!(
                m,
                "Interrupted: {} at {}, {:.1} s into the run; it did not finish.\n",
                i.signal, i.at, i.after_secs
            );
        }
        if !self.key_variables.is_empty() {
            m.push_str("Keys in the curl lines: set each variable to the key it names.\n\n| variable | key |\n|---|---|\n");
            for k in &self.key_variables {
                let _ = writeln!(
                    m,
                    "| `${}` | the {} `--key {}=...` |",
                    k.variable,
                    ordinal(k.nth),
                    k.plan
                );
            }
            m.push('\n');
        }
        if !self.families.is_empty() {
            let spent: Vec<String> = self
                .families
                .iter()
                .map(|f| format!("{} {:.1} s ({})", f.family, f.seconds, f.requests))
                .collect();
            let _ = writeln!(m, "Time per family (requests): {}.\n", spent.join(", "));
        }
        let t = &self.totals;
        let _ = writeln!(
            m,
            "| pass | fail | not judged | accepted | non-strict | informational | skipped |\n|---|---|---|---|---|---|---|\n| {} | {} | {} | {} | {} | {} | {} |\n",
            t.pass, t.fail, t.not_judged, t.accepted, t.non_strict, t.informational, t.skipped
        );
        m
    }

    /// Every check in one table.
    fn checks_markdown(&self) -> String {
        let mut m = String::from(
            "## Checks\n\n| verdict | check | operation | cases | clause |\n|---|---|---|---|---|\n",
        );
        for c in &self.checks {
            let _ = writeln!(
                m,
                "| {} | `{}` {} | {} | {} | {} |",
                c.verdict.as_str(),
                c.id,
                md(&c.title),
                md(&c.operation),
                c.cases,
                md(&c.clause)
            );
        }
        m
    }

    /// Checks judged on some cases only, and why not on the others.
    fn partly_judged_markdown(&self) -> String {
        let partly: Vec<&CheckResult> = self
            .checks
            .iter()
            .filter(|c| c.partly_skipped.is_some())
            .collect();
        let mut m = String::new();
        if !partly.is_empty() {
            m.push_str("\n## Partly judged\n\n");
        }
        for c in partly {
            let _ = writeln!(
                m,
                "- `{}` on {}: {}",
                c.id,
                c.operation,
                c.partly_skipped.as_deref().unwrap_or_default()
            );
        }
        m
    }

    /// Why the run is incomplete and what to do, at the top of report.md.
    fn incomplete_markdown(&self) -> String {
        let Some(i) = &self.incomplete else {
            return String::new();
        };
        let mut m = format!(
            "**Incomplete: neither a pass nor a failure.** {}.\n\nWhat to do: {}.\n\n",
            md(&i.reason),
            md(&i.what_to_do)
        );
        if !i.not_judged.is_empty() {
            m.push_str("Not judged:\n\n");
            for c in &i.not_judged {
                let _ = writeln!(m, "- `{c}`");
            }
            m.push('\n');
        }
        m
    }

    fn baseline_markdown(&self) -> String {
        let Some(b) = &self.baseline else {
            return String::new();
        };
        let mut m = format!(
            "## Against the baseline\n\nBaseline `{}`: {} new failure(s), {} fixed, {} still failing, {} new check(s), {} removed.\n\n",
            b.file,
            b.new_failures.len(),
            b.fixed.len(),
            b.still_failing.len(),
            b.new_checks.len(),
            b.removed_checks.len()
        );
        for (what, list) in b.changes() {
            for k in list {
                let _ = writeln!(m, "- {what}: `{}` on {}", k.id, md(&k.operation));
            }
        }
        m.push('\n');
        m
    }

    fn waivers_markdown(&self) -> String {
        let Some(w) = &self.waivers else {
            return String::new();
        };
        let mut m = format!(
            "\n## Waivers\n\nFrom `{}`.\n\n| check | operation | reason | ticket | expires | matched | state |\n|---|---|---|---|---|---|---|\n",
            md(&w.file)
        );
        for u in &w.entries {
            let e = &u.entry;
            let _ = writeln!(
                m,
                "| `{}` | {} | {} | {} | {} | {} | {} |",
                md(&e.check),
                md(e.operation.as_deref().unwrap_or("any")),
                md(&e.reason),
                md(e.ticket.as_deref().unwrap_or("-")),
                e.expires.as_deref().unwrap_or("-"),
                u.matched,
                waiver_state(u)
            );
        }
        m
    }

    fn coverage_markdown(&self) -> String {
        coverage_markdown(&self.coverage, Command::Check)
    }

    /// The table printed at the end of a run: families by verdict, then the failing checks.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{:<12} {:>5} {:>5} {:>8} {:>10} {:>6} {:>8} {:>10}\n",
            "family", "pass", "fail", "accepted", "non-strict", "info", "skipped", "not-judged"
        );
        let rows = self
            .by_family()
            .into_iter()
            .chain([("total", self.totals.clone())]);
        for (f, t) in rows {
            let r = t.row();
            let _ = writeln!(
                s,
                "{f:<12} {:>5} {:>5} {:>8} {:>10} {:>6} {:>8} {:>10}",
                r[0], r[1], r[2], r[3], r[4], r[5], r[6]
            );
        }
        s.push_str(&self.failures_summary());
        s.push_str(&self.baseline_summary());
        s.push_str(&coverage_line(&self.coverage));
        s.push_str(&self.not_judged_summary());
        if let Some(o) = self.incomplete.as_ref().and_then(|i| i.outage.as_ref()) {
            let _ = writeln!(s, "OUTAGE {}", o.sentence());
        }
        s.push_str(&self.outcome_summary());
        s
    }

    /// FAIL and ACCEPTED lines, one per check, and a WAIVER line per waiver that matched none.
    fn failures_summary(&self) -> String {
        let mut s = String::new();
        for c in self.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
            let first = c
                .findings
                .first()
                .map_or(String::new(), |f| one_line(&f.message, 160));
            let _ = writeln!(s, "FAIL {} on {}: {first}", c.id, c.operation);
        }
        for c in self
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::Accepted)
        {
            let _ = writeln!(
                s,
                "ACCEPTED {} on {}: {}",
                c.id,
                c.operation,
                accepted_text(c)
            );
        }
        if let Some(w) = &self.waivers {
            for u in w.entries.iter().filter(|u| u.matched == 0) {
                let _ = writeln!(
                    s,
                    "WAIVER {}{}: {}",
                    u.entry.check,
                    u.entry
                        .operation
                        .as_deref()
                        .map_or(String::new(), |o| format!(" on {o}")),
                    waiver_state(u)
                );
            }
        }
        s
    }

    /// The changes against the baseline, counted, then each new failure.
    fn baseline_summary(&self) -> String {
        let Some(b) = &self.baseline else {
            return String::new();
        };
        let mut s = format!(
            "against {}:\n{:>14} {:>7} {:>14} {:>11} {:>9}\n{:>14} {:>7} {:>14} {:>11} {:>9}\n",
            b.file,
            "new failures",
            "fixed",
            "still failing",
            "new checks",
            "removed",
            b.new_failures.len(),
            b.fixed.len(),
            b.still_failing.len(),
            b.new_checks.len(),
            b.removed_checks.len()
        );
        for k in &b.new_failures {
            let _ = writeln!(s, "NEW FAIL {} on {}", k.id, k.operation);
        }
        s
    }

    /// Checks not judged, and setup problems (fixtures no key owns, ...): the user's to fix.
    /// What an interrupt cut short is counted on the verdict line, not listed.
    fn not_judged_summary(&self) -> String {
        let cut_short = |why: &str| {
            self.interrupted
                .as_ref()
                .is_some_and(|i| why.ends_with(&i.sentence()))
        };
        let mut s = String::new();
        for c in &self.checks {
            let why = c.skipped.as_deref().or(c.partly_skipped.as_deref());
            let why = why.filter(|w| w.starts_with("setup:"));
            if let Some(why) = c.not_judged.as_deref().or(why)
                && !cut_short(why)
            {
                let _ = writeln!(s, "NOT JUDGED {} on {}: {why}", c.id, c.operation);
            }
        }
        s
    }

    /// The last line: the outcome, how long, how many requests, the seed, and why incomplete.
    fn outcome_summary(&self) -> String {
        let mut s = format!(
            "{} in {:.1} s, {} requests, seed {}",
            self.outcome.word(),
            self.run.duration_secs,
            self.requests,
            self.seed
        );
        match &self.incomplete {
            Some(i) => {
                let _ = writeln!(
                    s,
                    "{}: {}. What to do: {}.",
                    if self.outcome == model::Outcome::Failed {
                        "; and incomplete"
                    } else {
                        ""
                    },
                    i.reason,
                    i.what_to_do
                );
            }
            None => s.push('\n'),
        }
        s
    }
}

impl Report {
    /// Per family, the totals of its checks.
    pub fn by_family(&self) -> BTreeMap<&str, Totals> {
        let mut by_family: BTreeMap<&str, Totals> = BTreeMap::new();
        for c in &self.checks {
            by_family.entry(c.family()).or_default().add(c.verdict);
        }
        by_family
    }
}

/// The clause coverage section of a command's markdown report.
pub fn coverage_markdown(c: &Coverage, command: Command) -> String {
    let mut m = format!(
        "\n## Clause coverage\n\n| exercised | enforceable | total |\n|---|---|---|\n| {} | {} | {} |\n\nClauses are the normative statements of the spec document (`specs/clauses.toml`, `linkcert catalogue`).\n",
        c.exercised, c.enforceable, c.total
    );
    if !c.skipped.is_empty() {
        m.push_str("\nNot exercised in this run:\n\n");
        for n in &c.skipped {
            let _ = writeln!(m, "- `{}`: {}", n.clause, md(&n.why));
        }
    }
    if !c.unenforced.is_empty() {
        let _ = writeln!(m, "\nNo {} enforces:\n", command.noun());
        for n in &c.unenforced {
            let _ = writeln!(m, "- `{}`: {}", n.clause, md(&n.why));
        }
    }
    m
}

/// The clause coverage line of a run's console summary.
pub fn coverage_line(c: &Coverage) -> String {
    format!(
        "clauses exercised {}/{} enforceable ({} in the spec document)\n",
        c.exercised, c.enforceable, c.total
    )
}

/// `reason (ticket T, until D)` of an accepted failure.
fn accepted_text(c: &CheckResult) -> String {
    let Some(a) = &c.accepted else {
        return String::new();
    };
    let mut s = a.reason.clone();
    let mut extra = Vec::new();
    if let Some(t) = &a.ticket {
        extra.push(format!("ticket {t}"));
    }
    if let Some(d) = &a.expires {
        extra.push(format!("until {d}"));
    }
    if !extra.is_empty() {
        s = format!("{s} ({})", extra.join(", "));
    }
    s
}

fn waiver_state(u: &WaiverUse) -> String {
    if u.expired {
        format!(
            "expired{}",
            if u.would_match > 0 {
                format!(": {} failure(s) it would match fail again", u.would_match)
            } else {
                String::new()
            }
        )
    } else if u.matched == 0 {
        "unused: matched no failure (stale?)".into()
    } else {
        "used".into()
    }
}

fn finding_text(c: &CheckResult) -> String {
    let mut s = String::new();
    for f in &c.findings {
        let _ = writeln!(s, "{}", f.message);
        if let Some(x) = &f.exchange {
            let _ = writeln!(s, "  {}", x.curl);
        }
    }
    s
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out: String = flat.chars().take(max).collect();
    if flat.chars().count() > max {
        out.push('…');
    }
    out.replace('`', "'")
}

/// One check of a section of report.md: what it is, why it was not judged or accepted, and
/// its findings with their exchanges.
fn check_markdown(c: &CheckResult) -> String {
    let mut m = format!(
        "### `{}` on {}\n\n{} ({})\n\n",
        c.id, c.operation, c.title, c.clause
    );
    if let Some(why) = &c.skipped {
        let _ = writeln!(m, "Skipped: {why}\n");
    }
    if let Some(why) = &c.not_judged {
        let _ = writeln!(m, "Not judged: {why}\n");
    }
    if c.accepted.is_some() {
        let _ = writeln!(m, "Accepted: {}\n", md(&accepted_text(c)));
    }
    if c.violations > c.findings.len() as u64 {
        let _ = writeln!(
            m,
            "{} violations; the first {} follow.\n",
            c.violations,
            c.findings.len()
        );
    }
    for f in &c.findings {
        let _ = writeln!(m, "- **{}**: {}", f.verdict.as_str(), f.message);
        if let Some(x) = &f.exchange {
            let _ = writeln!(
                m,
                "  - request: `{} {}`\n  - answer: {}\n  - reproduce:\n\n    ```sh\n    {}\n    ```\n",
                x.method,
                x.url.replace('`', "'"),
                match (&x.status, &x.error) {
                    (Some(s), _) => format!("{s}, body `{}`", one_line(&x.response_body, 300)),
                    (None, Some(e)) => format!("no answer ({e})"),
                    _ => "no answer".into(),
                },
                x.curl
            );
        }
    }
    m
}

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Escapes text for HTML and XML (JUnit) alike, content and attribute values: the one markup
/// escaper of every report. Control characters other than tab and line breaks become U+FFFD,
/// since XML 1.0 forbids them even escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The escaper of the HTML templates (`templates/askama.toml`): `escape`, so that report.html
/// and load.html escape as every report always has.
#[derive(Clone, Copy, Debug)]
pub struct Markup;

impl askama::filters::Escaper for Markup {
    fn write_escaped_str<W: std::fmt::Write>(&self, mut dest: W, s: &str) -> std::fmt::Result {
        dest.write_str(&escape(s))
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
