//! `report.html`: the certificate a reviewer reads, from `templates/report.html` (askama:
//! checked and embedded at compile time, so the binary needs no file at run time). What the
//! template shows is worked out here; the template only lays it out and escapes every value
//! (`super::Markup`).

use askama::Template;

use super::model::{CheckResult, ExchangeRecord, Finding, Report};
use super::{accepted_text, waiver_state};
use crate::gate::baseline::CheckKey;
use linkcert_registry::{self as registry, ClauseNote, Command, Coverage};
use linkcert_spec::verdict::Verdict;

#[derive(Template)]
#[template(path = "report.html", config = "askama.toml")]
struct Certificate<'a> {
    r: &'a Report,
    /// ok, incomplete or ko; and the verdict in words.
    verdict_class: &'static str,
    verdict_words: String,
    plans: String,
    clients: String,
    /// Per family, then the total: pass, fail, accepted, non-strict, informational, skipped,
    /// not judged.
    summary: Vec<(&'a str, [u64; 7])>,
    baseline_file: Option<&'a str>,
    baseline: Vec<(&'static str, &'a CheckKey)>,
    checks: Vec<CheckView<'a>>,
    /// Informational and non-strict findings: the target's choices where the spec is silent.
    choices: Vec<(&'a CheckResult, &'a Finding)>,
    waivers_file: Option<&'a str>,
    waivers: Vec<WaiverRow<'a>>,
    coverage: CoverageHtml<'a>,
}

/// One check's `<details>`: failures open, the rest folded.
struct CheckView<'a> {
    c: &'a CheckResult,
    open: bool,
    /// The clause ids it enforces, comma-separated.
    clauses: String,
    /// Why it was (partly) not judged.
    not_judged: Option<&'a str>,
    accepted: Option<String>,
    /// Violations, and how many of them are kept, when not all are.
    more: Option<(u64, usize)>,
    findings: Vec<FindingView<'a>>,
}

struct FindingView<'a> {
    f: &'a Finding,
    qr: Option<QrView<'a>>,
    exchange: Option<ExchangeView<'a>>,
}

/// What was asked (the query), and the image that came back.
struct QrView<'a> {
    asked: Vec<(String, String)>,
    png: Option<&'a str>,
}

/// The request, the answer and the curl line that reproduces it.
struct ExchangeView<'a> {
    request: String,
    answer: String,
    curl: &'a str,
}

struct WaiverRow<'a> {
    check: &'a str,
    operation: &'a str,
    reason: &'a str,
    ticket: &'a str,
    expires: &'a str,
    matched: u64,
    state: String,
}

/// The clause coverage section of a command's HTML report (`templates/coverage.html`, in
/// report.html and load.html): the figures, then the clauses not exercised and those no
/// check or rule enforces, each list under its title when it has any.
pub struct CoverageHtml<'a> {
    pub c: &'a Coverage,
    pub lists: Vec<(String, &'a [ClauseNote])>,
}

impl<'a> CoverageHtml<'a> {
    pub fn new(c: &'a Coverage, command: Command) -> CoverageHtml<'a> {
        let lists = [
            ("Not exercised in this run".to_string(), &c.skipped[..]),
            (format!("No {} enforces", command.noun()), &c.unenforced[..]),
        ];
        CoverageHtml {
            c,
            lists: lists.into_iter().filter(|(_, l)| !l.is_empty()).collect(),
        }
    }
}

impl Report {
    pub fn html(&self) -> String {
        let (verdict_class, verdict_words) = self.verdict_in_words();
        let choices = self
            .checks
            .iter()
            .flat_map(|c| c.findings.iter().map(move |f| (c, f)))
            .filter(|(_, f)| matches!(f.verdict, Verdict::Informational | Verdict::NonStrict))
            .collect();
        let page = Certificate {
            r: self,
            verdict_class,
            verdict_words,
            plans: self.plans.join(", "),
            clients: self.clients.join("; "),
            summary: self
                .by_family()
                .into_iter()
                .map(|(f, t)| (f, t.row()))
                .chain([("total", self.totals.row())])
                .collect(),
            baseline_file: self.baseline.as_ref().map(|b| b.file.as_str()),
            baseline: self.baseline.as_ref().map_or(Vec::new(), |b| {
                let changes = b.changes().into_iter();
                changes
                    .flat_map(|(what, l)| l.iter().map(move |k| (what, k)))
                    .collect()
            }),
            checks: self.checks.iter().map(CheckView::of).collect(),
            choices,
            waivers_file: self.waivers.as_ref().map(|w| w.file.as_str()),
            waivers: self.waiver_rows(),
            coverage: CoverageHtml::new(&self.coverage, Command::Check),
        };
        // Rendering into a String fails only if a value's Display does, and none here does.
        page.render().expect("report.html renders")
    }

    /// The verdict line's class (ok, incomplete, ko) and words.
    fn verdict_in_words(&self) -> (&'static str, String) {
        let t = &self.totals;
        let passed = self.passed();
        if let Some(i) = self.incomplete.as_ref().filter(|_| passed) {
            let words = format!(
                "Incomplete: not certified, and no failure found. {} (not judged), {} passed. {}. \
                 What to do: {}.",
                t.not_judged, t.pass, i.reason, i.what_to_do
            );
            return ("incomplete", words);
        }
        if passed {
            let accepted = if t.accepted > 0 {
                format!(", {} accepted deviation(s)", t.accepted)
            } else {
                String::new()
            };
            let words = format!(
                "Certified: the target conforms to every check that ran ({} passed{accepted}).",
                t.pass
            );
            return ("ok", words);
        }
        let also = self.incomplete.as_ref().map_or(String::new(), |i| {
            format!(
                " Incomplete as well: {}. What to do: {}.",
                i.reason, i.what_to_do
            )
        });
        let words = format!(
            "Not certified: {} check(s) failed, {} passed.{also}",
            t.fail, t.pass
        );
        ("ko", words)
    }

    fn waiver_rows(&self) -> Vec<WaiverRow<'_>> {
        let Some(w) = &self.waivers else {
            return Vec::new();
        };
        w.entries
            .iter()
            .map(|u| WaiverRow {
                check: &u.entry.check,
                operation: u.entry.operation.as_deref().unwrap_or("any"),
                reason: &u.entry.reason,
                ticket: u.entry.ticket.as_deref().unwrap_or(""),
                expires: u.entry.expires.as_deref().unwrap_or(""),
                matched: u.matched,
                state: waiver_state(u),
            })
            .collect()
    }
}

impl<'a> CheckView<'a> {
    fn of(c: &'a CheckResult) -> CheckView<'a> {
        let ids = registry::check(&c.id).map_or(&[][..], |d| d.enforces.clauses());
        let shown = c.findings.len();
        CheckView {
            c,
            open: c.verdict == Verdict::Fail,
            clauses: ids.join(", "),
            not_judged: c.skipped.as_deref().or(c.partly_skipped.as_deref()),
            accepted: c.accepted.is_some().then(|| accepted_text(c)),
            more: (c.violations > shown as u64).then_some((c.violations, shown)),
            findings: c
                .findings
                .iter()
                .map(|f| FindingView {
                    f,
                    qr: f
                        .exchange
                        .as_ref()
                        .filter(|x| c.family() == "qr" || x.png_base64.is_some())
                        .map(QrView::of),
                    exchange: f.exchange.as_ref().map(ExchangeView::of),
                })
                .collect(),
        }
    }
}

impl<'a> QrView<'a> {
    fn of(x: &'a ExchangeRecord) -> QrView<'a> {
        let asked = url::Url::parse(&x.url).map_or(Vec::new(), |u| {
            u.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.chars().take(120).collect()))
                .collect()
        });
        QrView {
            asked,
            png: x.png_base64.as_deref(),
        }
    }
}

impl<'a> ExchangeView<'a> {
    fn of(x: &'a ExchangeRecord) -> ExchangeView<'a> {
        let mut request = format!("{} {}\n", x.method, x.url);
        for (k, v) in &x.request_headers {
            request.push_str(&format!("{k}: {v}\n"));
        }
        if let Some(b) = &x.request_body {
            request.push_str(&format!("\n{b}"));
        }
        let mut answer = match (&x.status, &x.error) {
            (Some(s), _) => format!("{s}\n"),
            (None, Some(e)) => format!("no answer: {e}\n"),
            _ => "no answer\n".into(),
        };
        for (k, v) in &x.response_headers {
            answer.push_str(&format!("{k}: {v}\n"));
        }
        if !x.response_body.is_empty() {
            answer.push_str(&format!("\n{}", x.response_body));
        }
        ExchangeView {
            request,
            answer,
            curl: &x.curl,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ExchangeRecord, Finding};

    /// Markup, quotes and control characters as a hostile target would send them.
    const EVIL: &str = "<script>alert(\"x\")</script> & 'q'";

    fn failed_check() -> CheckResult {
        let exchange = ExchangeRecord {
            method: "GET".into(),
            url: "https://example.test/qr?url=<script>".into(),
            request_headers: Vec::new(),
            request_body: None,
            status: Some(200),
            response_headers: vec![("x-evil".into(), EVIL.into())],
            response_body: format!("{EVIL}\u{1}"),
            error: None,
            curl: "curl -sS 'https://example.test/qr'".into(),
            png_base64: None,
        };
        CheckResult {
            id: "qr.colours".into(),
            title: "colours".into(),
            clause: String::new(),
            operation: "GET /qr".into(),
            verdict: Verdict::Fail,
            cases: 1,
            violations: 1,
            findings: vec![Finding {
                verdict: Verdict::Fail,
                message: format!("got {EVIL}"),
                expected: "a PNG".into(),
                actual: EVIL.into(),
                exchange: Some(exchange),
            }],
            skipped: None,
            partly_skipped: None,
            accepted: None,
            not_judged: None,
        }
    }

    /// What a target answered ends up in the certificate as text, never as markup: no script
    /// element, and the answer reads back as it was sent (control characters as U+FFFD).
    #[test]
    fn a_script_in_a_targets_answer_is_escaped_in_report_html() {
        let spec = linkcert_spec::Spec::embedded().expect("the embedded spec loads");
        let report = Report::new(
            &spec,
            &linkcert_run::target::Target::default(),
            1,
            0,
            std::time::Duration::ZERO,
            1,
            0,
            vec![failed_check()],
            Coverage::default(),
        );
        let html = report.html();
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;")
        );
        let doc = scraper::Html::parse_document(&html);
        let sel = |s| scraper::Selector::parse(s).expect("a selector");
        assert!(doc.select(&sel("script")).next().is_none());
        let answer: String = doc
            .select(&sel("pre.answer"))
            .flat_map(|e| e.text())
            .collect();
        assert!(answer.contains(&format!("x-evil: {EVIL}\n")), "{answer}");
        assert!(answer.ends_with(&format!("{EVIL}\u{fffd}")), "{answer}");
        let asked = doc
            .select(&sel("div.qr table"))
            .next()
            .expect("what was asked");
        let asked: String = asked.select(&sel("td")).flat_map(|e| e.text()).collect();
        assert_eq!(asked, "url<script>");
        let details = doc.select(&sel("details.check[open]")).count();
        assert_eq!(details, 1, "a failure is open");
    }
}
