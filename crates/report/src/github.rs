//! GitHub Actions (`GITHUB_ACTIONS=true` or `--ci github`): one `::error` annotation per
//! failure on stdout, and report.md appended to `$GITHUB_STEP_SUMMARY`. Reports are already
//! redacted: keys never appear.

use std::io::Write;
use std::path::Path;

use super::Report;
use linkcert_spec::verdict::Verdict;

/// Workflow-command data: `%`, CR and LF escaped.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow-command property: also `:` and `,`.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The annotations, one line per failing check and operation; an incomplete run says so
/// (one error: why, and what to do) and names each check not judged (a warning each).
pub fn annotations(report: &Report) -> String {
    let mut out = String::new();
    if let Some(i) = &report.incomplete {
        out.push_str(&format!(
            "::error title={}::{}\n",
            property("linkcert run incomplete"),
            data(&format!("{}. What to do: {}.", i.reason, i.what_to_do))
        ));
        for c in report
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::NotJudged)
        {
            out.push_str(&format!(
                "::warning title={}::{}\n",
                property(&format!("linkcert {} on {} not judged", c.id, c.operation)),
                data(c.not_judged.as_deref().unwrap_or("not judged"))
            ));
        }
    }
    for c in report.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
        let msg = match c.findings.first() {
            Some(f) => format!(
                "{} ({}): expected {}; got {}",
                c.title, c.clause, f.expected, f.actual
            ),
            None => format!("{} ({})", c.title, c.clause),
        };
        out.push_str(&format!(
            "::error title={}::{}\n",
            property(&format!("linkcert {} on {}", c.id, c.operation)),
            data(&msg)
        ));
    }
    out
}

/// Whether the environment is GitHub Actions.
pub fn detected() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Append `markdown` to the step summary file, when GitHub gave one.
pub fn append_summary(markdown: &str) -> std::io::Result<Option<String>> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(Path::new(&path))?;
    f.write_all(markdown.as_bytes())?;
    f.write_all(b"\n")?;
    Ok(Some(Path::new(&path).display().to_string()))
}
