//! `junit.xml`, written with `quick-junit` (as cargo-nextest writes it): one testcase per check
//! and operation, suites per family; a check not judged is an `<error type="not-judged">`
//! (neither a failure of the target nor a skip), and the clause coverage rides along as a
//! suite's properties. quick-junit escapes the text and drops what XML 1.0 cannot hold
//! (control characters, ANSI colour codes) from what a target sent.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::model::CheckResult;
use super::{Report, accepted_text, finding_text};
use linkcert_spec::verdict::Verdict;

impl Report {
    pub fn junit(&self) -> String {
        let mut by_family: BTreeMap<&str, Vec<&CheckResult>> = BTreeMap::new();
        for c in &self.checks {
            by_family
                .entry(c.id.split('.').next().unwrap_or(""))
                .or_default()
                .push(c);
        }
        let mut report = quick_junit::Report::new("linkcert");
        // Durations of a run are never negative nor infinite; a bad one is no duration.
        report.set_time(Duration::try_from_secs_f64(self.run.duration_secs).unwrap_or_default());
        for (family, checks) in by_family {
            let mut suite = TestSuite::new(family);
            suite.add_test_cases(checks.into_iter().map(test_case));
            report.add_test_suite(suite);
        }
        report.add_test_suite(self.coverage_suite());
        // Into memory, from Rust strings: no write can fail and the bytes are UTF-8.
        report
            .to_string()
            .expect("JUnit XML of UTF-8 text, in memory")
    }

    /// Clause coverage, where JUnit readers show it: a suite's properties and output.
    fn coverage_suite(&self) -> TestSuite {
        let c = &self.coverage;
        let mut suite = TestSuite::new("clause-coverage");
        suite.add_properties([
            Property::new("clauses.exercised", c.exercised.to_string()),
            Property::new("clauses.enforceable", c.enforceable.to_string()),
            Property::new("clauses.total", c.total.to_string()),
        ]);
        suite.set_system_out(self.coverage_markdown());
        suite
    }
}

/// One check on one operation, with what its verdict means to a JUnit reader.
fn test_case(c: &CheckResult) -> TestCase {
    let status = match c.verdict {
        Verdict::Fail => {
            let first = c.findings.first();
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(first.map_or("failed", |f| f.message.as_str()))
                .set_description(finding_text(c));
            s
        }
        // Not a failure of the target, not a skip: the run could not judge it.
        Verdict::NotJudged => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_type("not-judged").set_message(format!(
                "not judged: {}",
                c.not_judged.as_deref().unwrap_or("not judged")
            ));
            s
        }
        Verdict::Skipped => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(c.skipped.as_deref().unwrap_or("skipped"));
            s
        }
        Verdict::Accepted => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(accepted_text(c))
                .set_description(finding_text(c));
            s
        }
        Verdict::NonStrict | Verdict::Informational | Verdict::Pass => TestCaseStatus::success(),
    };
    let mut t = TestCase::new(format!("{} {}", c.id, c.operation), status);
    t.set_classname(c.id.as_str());
    if matches!(c.verdict, Verdict::NonStrict | Verdict::Informational) {
        t.set_system_out(format!("{}: {}", c.verdict.as_str(), finding_text(c)));
    }
    t
}
