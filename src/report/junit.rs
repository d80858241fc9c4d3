//! `junit.xml`: one testcase per check and operation, suites per family; a check not judged
//! is an `<error type="not-judged">` (neither a failure of the target nor a skip), and the
//! clause coverage rides along as a suite's properties.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::model::CheckResult;
use super::{Report, accepted_text, escape, finding_text};
use crate::verdict::Verdict;

impl Report {
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
            "<testsuites name=\"linkcert\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            self.checks.len(),
            self.totals.fail,
            self.totals.not_judged,
            self.totals.skipped + self.totals.accepted,
            self.run.duration_secs
        );
        for (family, checks) in by_family {
            let fails = checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
            let skipped = checks
                .iter()
                .filter(|c| matches!(c.verdict, Verdict::Skipped | Verdict::Accepted))
                .count();
            let errors = checks
                .iter()
                .filter(|c| c.verdict == Verdict::NotJudged)
                .count();
            let _ = writeln!(
                x,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fails}\" errors=\"{errors}\" skipped=\"{skipped}\">",
                escape(family),
                checks.len()
            );
            for c in checks {
                let _ = write!(
                    x,
                    "    <testcase classname=\"{}\" name=\"{} {}\">",
                    escape(&c.id),
                    escape(&c.id),
                    escape(&c.operation)
                );
                match c.verdict {
                    Verdict::Fail => {
                        let first = c.findings.first();
                        let _ = write!(
                            x,
                            "<failure message=\"{}\">{}</failure>",
                            escape(first.map_or("failed", |f| f.message.as_str())),
                            escape(&finding_text(c))
                        );
                    }
                    // Not a failure of the target, not a skip: the run could not judge it.
                    Verdict::NotJudged => {
                        let _ = write!(
                            x,
                            "<error type=\"not-judged\" message=\"not judged: {}\"/>",
                            escape(c.not_judged.as_deref().unwrap_or("not judged"))
                        );
                    }
                    Verdict::Skipped => {
                        let _ = write!(
                            x,
                            "<skipped message=\"{}\"/>",
                            escape(c.skipped.as_deref().unwrap_or("skipped"))
                        );
                    }
                    Verdict::Accepted => {
                        let _ = write!(
                            x,
                            "<skipped message=\"{}\">{}</skipped>",
                            escape(&accepted_text(c)),
                            escape(&finding_text(c))
                        );
                    }
                    Verdict::NonStrict | Verdict::Informational => {
                        let _ = write!(
                            x,
                            "<system-out>{}: {}</system-out>",
                            c.verdict.as_str(),
                            escape(&finding_text(c))
                        );
                    }
                    Verdict::Pass => {}
                }
                x.push_str("</testcase>\n");
            }
            x.push_str("  </testsuite>\n");
        }
        // Clause coverage, where JUnit readers show it: a suite's properties and output.
        let c = &self.coverage;
        let _ = writeln!(
            x,
            "  <testsuite name=\"clause-coverage\" tests=\"0\"><properties>\
             <property name=\"clauses.exercised\" value=\"{}\"/>\
             <property name=\"clauses.enforceable\" value=\"{}\"/>\
             <property name=\"clauses.total\" value=\"{}\"/></properties>\
             <system-out>{}</system-out></testsuite>",
            c.exercised,
            c.enforceable,
            c.total,
            escape(&self.coverage_markdown())
        );
        x.push_str("</testsuites>\n");
        x
    }
}
