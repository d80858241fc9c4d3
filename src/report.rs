//! Reports people read and CI gates on: `report.json` (schema in `reports/README.md`),
//! `junit.xml` (one testcase per check and operation) and `report.md`, plus the summary
//! table printed at the end of a run. What they say is `check::model::Report` (the findings
//! of a run); this module only writes it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::check::model::{CheckResult, Verdict};

pub use crate::check::model::{KeyVariable, REPORT_SCHEMA_VERSION, Report, Totals};

impl Report {
    /// Write report.json, junit.xml and report.md into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let files = [
            (
                "report.json",
                serde_json::to_string_pretty(self).map_err(std::io::Error::other)?,
            ),
            ("junit.xml", self.junit()),
            ("report.md", self.markdown()),
        ];
        let mut out = Vec::new();
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::write(&p, text)?;
            out.push(p);
        }
        Ok(out)
    }

    pub fn junit(&self) -> String {
        let mut by_family: BTreeMap<&str, Vec<&CheckResult>> = BTreeMap::new();
        for c in &self.checks {
            by_family
                .entry(c.id.split('.').next().unwrap_or(""))
                .or_default()
                .push(c);
        }
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            x,
            "<testsuites name=\"linkcert\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            self.checks.len(),
            self.totals.fail,
            self.totals.skipped,
            self.duration_secs
        );
        for (family, checks) in by_family {
            let fails = checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
            let skipped = checks
                .iter()
                .filter(|c| c.verdict == Verdict::Skipped)
                .count();
            let _ = writeln!(
                x,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fails}\" skipped=\"{skipped}\">",
                xml(family),
                checks.len()
            );
            for c in checks {
                let _ = write!(
                    x,
                    "    <testcase classname=\"{}\" name=\"{} {}\">",
                    xml(&c.id),
                    xml(&c.id),
                    xml(&c.operation)
                );
                match c.verdict {
                    Verdict::Fail => {
                        let first = c.findings.first();
                        let _ = write!(
                            x,
                            "<failure message=\"{}\">{}</failure>",
                            xml(first.map_or("failed", |f| f.message.as_str())),
                            xml(&finding_text(c))
                        );
                    }
                    Verdict::Skipped => {
                        let _ = write!(
                            x,
                            "<skipped message=\"{}\"/>",
                            xml(c.skipped.as_deref().unwrap_or("skipped"))
                        );
                    }
                    Verdict::NonStrict | Verdict::Informational => {
                        let _ = write!(
                            x,
                            "<system-out>{}: {}</system-out>",
                            c.verdict.as_str(),
                            xml(&finding_text(c))
                        );
                    }
                    Verdict::Pass => {}
                }
                x.push_str("</testcase>\n");
            }
            x.push_str("  </testsuite>\n");
        }
        x.push_str("</testsuites>\n");
        x
    }

    pub fn markdown(&self) -> String {
        let mut m = String::new();
        let verdict = if self.passed() { "PASSED" } else { "FAILED" };
        let _ = writeln!(m, "# linkcert report: {verdict}\n");
        let _ = writeln!(
            m,
            "- target: `{}`\n- spec: {} {}\n- seed: {} (replay with `--seed {}`)\n- started: {}, took {:.1} s, {} requests ({} throttled and retried)\n- plans with keys: {}\n",
            self.target,
            self.spec_title,
            self.spec_version,
            self.seed,
            self.seed,
            self.started_at,
            self.duration_secs,
            self.requests,
            self.throttled_and_retried,
            self.plans.join(", ")
        );
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
        let t = &self.totals;
        let _ = writeln!(
            m,
            "| pass | fail | non-strict | informational | skipped |\n|---|---|---|---|---|\n| {} | {} | {} | {} | {} |\n",
            t.pass, t.fail, t.non_strict, t.informational, t.skipped
        );
        m.push_str("## Checks\n\n| verdict | check | operation | cases | clause |\n|---|---|---|---|---|\n");
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
        for (title, v) in [
            ("Failures", Verdict::Fail),
            ("Non-strict", Verdict::NonStrict),
            (
                "Observations (the spec leaves these open)",
                Verdict::Informational,
            ),
            ("Skipped", Verdict::Skipped),
        ] {
            let list: Vec<&CheckResult> = self.checks.iter().filter(|c| c.verdict == v).collect();
            if v == Verdict::Skipped {
                let partly: Vec<&CheckResult> = self
                    .checks
                    .iter()
                    .filter(|c| c.partly_skipped.is_some())
                    .collect();
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
            }
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(m, "\n## {title}\n");
            for c in list {
                let _ = writeln!(
                    m,
                    "### `{}` on {}\n\n{} ({})\n",
                    c.id, c.operation, c.title, c.clause
                );
                if let Some(why) = &c.skipped {
                    let _ = writeln!(m, "Skipped: {why}\n");
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
                                (Some(s), _) =>
                                    format!("{s}, body `{}`", one_line(&x.response_body, 300)),
                                (None, Some(e)) => format!("no answer ({e})"),
                                _ => "no answer".into(),
                            },
                            x.curl
                        );
                    }
                }
            }
        }
        m
    }

    /// The table printed at the end of a run: families by verdict, then the failing checks.
    pub fn summary(&self) -> String {
        let mut by_family: BTreeMap<&str, [u64; 5]> = BTreeMap::new();
        for c in &self.checks {
            let row = by_family
                .entry(c.id.split('.').next().unwrap_or(""))
                .or_default();
            row[match c.verdict {
                Verdict::Pass => 0,
                Verdict::Fail => 1,
                Verdict::NonStrict => 2,
                Verdict::Informational => 3,
                Verdict::Skipped => 4,
            }] += 1;
        }
        let mut s = format!(
            "{:<12} {:>5} {:>5} {:>10} {:>6} {:>8}\n",
            "family", "pass", "fail", "non-strict", "info", "skipped"
        );
        for (f, r) in &by_family {
            let _ = writeln!(
                s,
                "{f:<12} {:>5} {:>5} {:>10} {:>6} {:>8}",
                r[0], r[1], r[2], r[3], r[4]
            );
        }
        let t = &self.totals;
        let _ = writeln!(
            s,
            "{:<12} {:>5} {:>5} {:>10} {:>6} {:>8}",
            "total", t.pass, t.fail, t.non_strict, t.informational, t.skipped
        );
        for c in self.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
            let first = c
                .findings
                .first()
                .map_or(String::new(), |f| one_line(&f.message, 160));
            let _ = writeln!(s, "FAIL {} on {}: {first}", c.id, c.operation);
        }
        // Setup problems (fixtures no key owns, ...) are the user's to fix: say them here too.
        for c in &self.checks {
            let why = c.skipped.as_deref().or(c.partly_skipped.as_deref());
            if let Some(why) = why.filter(|w| w.starts_with("setup:")) {
                let _ = writeln!(s, "NOT JUDGED {} on {}: {why}", c.id, c.operation);
            }
        }
        let _ = writeln!(
            s,
            "{} in {:.1} s, {} requests, seed {}",
            if self.passed() { "PASSED" } else { "FAILED" },
            self.duration_secs,
            self.requests,
            self.seed
        );
        s
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

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('?'),
            c => out.push(c),
        }
    }
    out
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
