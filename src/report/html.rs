//! `report.html`: the certificate a reviewer reads. One self-contained file: inline CSS, PNGs
//! as data URIs, no script and no network; `<details>` keeps passes folded and failures open,
//! printed or on a phone alike.

use std::fmt::Write as _;

use super::escape as esc;
use super::model::{CheckResult, ExchangeRecord, Finding, Report};
use super::{accepted_text, waiver_state};
use crate::registry;
use crate::verdict::Verdict;

const CSS: &str = "
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:12px;color:#1b1f24}
h1{font-size:1.6em;margin:.2em 0}h2{margin-top:1.6em;border-bottom:1px solid #ccd;padding-bottom:.2em}
.verdict{padding:10px 14px;border-radius:6px;font-size:1.15em;font-weight:600}
.ok{background:#e6f4ea;color:#0f5323}.ko{background:#fdecea;color:#8a1c12}.incomplete{background:#fff8c5;color:#7d4e00}
table{border-collapse:collapse;margin:.5em 0;max-width:100%;display:block;overflow-x:auto}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f7}.num{text-align:right}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px}dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}
details{border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:4px 10px}
details>summary{cursor:pointer;overflow-wrap:anywhere}
.v{display:inline-block;min-width:7.5em;font-weight:600}
.v-fail{color:#b42318}.v-pass{color:#1a7f37}.v-accepted{color:#9a6700}.v-non-strict{color:#8250df}.v-informational{color:#0969da}.v-skipped{color:#57606a}.v-not-judged{color:#9a6700}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:6px;border-radius:4px;font-size:.9em}
.qr{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}.qr img{max-width:260px;border:1px solid #ccd;image-rendering:pixelated}
@media print{details{break-inside:avoid}details:not([open])>*:not(summary){display:none}}
";

impl Report {
    pub fn html(&self) -> String {
        let mut h = String::with_capacity(64 * 1024);
        let passed = self.passed();
        let _ = writeln!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>linkcert certificate: {}</title><style>{CSS}</style></head><body>",
            esc(&self.run.target)
        );
        let t = &self.totals;
        let incomplete = self.incomplete.as_ref().filter(|_| passed);
        let words = if let Some(i) = incomplete {
            format!(
                "Incomplete: not certified, and no failure found. {} (not judged), {} passed. {}. \
                 What to do: {}.",
                t.not_judged, t.pass, i.reason, i.what_to_do
            )
        } else if passed {
            format!(
                "Certified: the target conforms to every check that ran ({} passed{}).",
                t.pass,
                if t.accepted > 0 {
                    format!(", {} accepted deviation(s)", t.accepted)
                } else {
                    String::new()
                }
            )
        } else {
            format!(
                "Not certified: {} check(s) failed, {} passed.{}",
                t.fail,
                t.pass,
                self.incomplete.as_ref().map_or(String::new(), |i| format!(
                    " Incomplete as well: {}. What to do: {}.",
                    i.reason, i.what_to_do
                ))
            )
        };
        let _ = writeln!(
            h,
            "<h1>linkcert certificate</h1>\n<p class=\"verdict {}\" id=\"verdict\">{}</p>",
            match (passed, incomplete) {
                (true, None) => "ok",
                (true, Some(_)) => "incomplete",
                _ => "ko",
            },
            esc(&words)
        );
        let _ = writeln!(
            h,
            "<dl class=\"meta\"><dt>Target</dt><dd>{}</dd><dt>Spec</dt><dd>{} {}</dd>\
             <dt>Date</dt><dd>{}</dd><dt>Seed</dt><dd>{}</dd><dt>Duration</dt><dd>{:.1} s</dd>\
             <dt>Requests</dt><dd>{} ({} throttled and retried)</dd><dt>Keys' plans</dt><dd>{}</dd>\
             <dt>linkcert</dt><dd>{}</dd><dt>Replay</dt><dd><code>{}</code></dd></dl>",
            esc(&self.run.target),
            esc(&self.run.spec_title),
            esc(&self.run.spec_version),
            esc(&self.run.started_at),
            self.seed,
            self.run.duration_secs,
            self.requests,
            self.throttled_and_retried,
            esc(&self.plans.join(", ")),
            esc(&self.run.tool_version),
            esc(&self.replay)
        );
        self.html_summary(&mut h);
        self.html_baseline(&mut h);
        h.push_str("<h2 id=\"checks\">Checks</h2>\n");
        for c in &self.checks {
            html_check(&mut h, c);
        }
        self.html_choices(&mut h);
        self.html_waivers(&mut h);
        h.push_str(&coverage_html(&self.coverage, registry::Command::Check));
        h.push_str("</body></html>\n");
        h
    }

    fn html_summary(&self, h: &mut String) {
        h.push_str(
            "<h2>Summary</h2>\n<table id=\"summary\"><tr><th>family</th><th>pass</th><th>fail</th>\
             <th>accepted</th><th>non-strict</th><th>informational</th><th>skipped</th>\
             <th>not judged</th></tr>\n",
        );
        let row = |h: &mut String, name: &str, r: [u64; 7]| {
            let _ = write!(h, "<tr><td>{}</td>", esc(name));
            for n in r {
                let _ = write!(h, "<td class=\"num\">{n}</td>");
            }
            h.push_str("</tr>\n");
        };
        for (f, t) in self.by_family() {
            row(h, f, t.row());
        }
        row(h, "total", self.totals.row());
        h.push_str("</table>\n");
    }

    fn html_baseline(&self, h: &mut String) {
        let Some(b) = &self.baseline else { return };
        let _ = writeln!(
            h,
            "<h2 id=\"baseline\">Against the baseline</h2>\n<p>Baseline <code>{}</code>.</p>\
             <table><tr><th>change</th><th>check</th><th>operation</th></tr>",
            esc(&b.file)
        );
        for (what, list) in b.changes() {
            for k in list {
                let _ = writeln!(
                    h,
                    "<tr><td>{what}</td><td><code>{}</code></td><td>{}</td></tr>",
                    esc(&k.id),
                    esc(&k.operation)
                );
            }
        }
        h.push_str("</table>\n");
    }

    fn html_choices(&self, h: &mut String) {
        h.push_str(
            "<h2 id=\"choices\">Choices this target made where the spec is silent</h2>\n\
             <p>Informational and non-strict findings: never failures.</p><ul>\n",
        );
        for c in &self.checks {
            for f in c
                .findings
                .iter()
                .filter(|f| matches!(f.verdict, Verdict::Informational | Verdict::NonStrict))
            {
                let _ = writeln!(
                    h,
                    "<li><span class=\"v v-{v}\">{v}</span> <code>{}</code> on {}: {}</li>",
                    esc(&c.id),
                    esc(&c.operation),
                    esc(&f.message),
                    v = f.verdict.as_str()
                );
            }
        }
        h.push_str("</ul>\n");
    }

    fn html_waivers(&self, h: &mut String) {
        let Some(w) = &self.waivers else { return };
        let _ = writeln!(
            h,
            "<h2 id=\"waivers\">Accepted deviations</h2>\n<p>Waivers from <code>{}</code>.</p>\
             <table><tr><th>check</th><th>operation</th><th>reason</th><th>ticket</th>\
             <th>expires</th><th>matched</th><th>state</th></tr>",
            esc(&w.file)
        );
        for u in &w.entries {
            let e = &u.entry;
            let _ = writeln!(
                h,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&e.check),
                esc(e.operation.as_deref().unwrap_or("any")),
                esc(&e.reason),
                esc(e.ticket.as_deref().unwrap_or("")),
                esc(e.expires.as_deref().unwrap_or("")),
                u.matched,
                esc(&waiver_state(u))
            );
        }
        h.push_str("</table>\n");
    }
}

fn html_check(h: &mut String, c: &CheckResult) {
    let open = if c.verdict == Verdict::Fail {
        " open"
    } else {
        ""
    };
    let ids = registry::check(&c.id).map_or(&[][..], |d| d.enforces.clauses());
    let _ = writeln!(
        h,
        "<details class=\"check\" data-verdict=\"{v}\" data-id=\"{id}\" data-operation=\"{op}\"{open}>\
         <summary><span class=\"v v-{v}\">{v}</span> <code>{id}</code> on {op}: {title} \
         ({cases} case(s))</summary>\n<p>Clause: {clause}{ids}</p>",
        v = c.verdict.as_str(),
        id = esc(&c.id),
        op = esc(&c.operation),
        title = esc(&c.title),
        cases = c.cases,
        clause = esc(&c.clause),
        ids = if ids.is_empty() {
            String::new()
        } else {
            format!(" [{}]", esc(&ids.join(", ")))
        }
    );
    if let Some(why) = c.skipped.as_deref().or(c.partly_skipped.as_deref()) {
        let _ = writeln!(h, "<p>Not judged: {}</p>", esc(why));
    }
    if c.accepted.is_some() {
        let _ = writeln!(
            h,
            "<p class=\"accepted\">Accepted: {}</p>",
            esc(&accepted_text(c))
        );
    }
    if c.violations > c.findings.len() as u64 {
        let _ = writeln!(
            h,
            "<p>{} violations; the first {} follow.</p>",
            c.violations,
            c.findings.len()
        );
    }
    for f in &c.findings {
        html_finding(h, c, f);
    }
    h.push_str("</details>\n");
}

fn html_finding(h: &mut String, c: &CheckResult, f: &Finding) {
    let _ = writeln!(
        h,
        "<div class=\"finding\"><p><span class=\"v v-{v}\">{v}</span> {}</p>\n\
         <table><tr><th>expected</th><td>{}</td></tr><tr><th>actual</th><td>{}</td></tr></table>",
        esc(&f.message),
        esc(&f.expected),
        esc(&f.actual),
        v = f.verdict.as_str()
    );
    if let Some(x) = &f.exchange {
        if c.family() == "qr" || x.png_base64.is_some() {
            html_qr(h, x, f);
        }
        html_exchange(h, x);
    }
    h.push_str("</div>\n");
}

/// What was asked (the query), the image that came back, and what was read from it.
fn html_qr(h: &mut String, x: &ExchangeRecord, f: &Finding) {
    h.push_str("<div class=\"qr\"><table><tr><th colspan=\"2\">asked</th></tr>\n");
    if let Ok(u) = url::Url::parse(&x.url) {
        for (k, v) in u.query_pairs() {
            let v: String = v.chars().take(120).collect();
            let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", esc(&k), esc(&v));
        }
    }
    h.push_str("</table>\n");
    if let Some(png) = &x.png_base64 {
        let _ = writeln!(
            h,
            "<figure><img alt=\"the PNG the target returned\" src=\"data:image/png;base64,{png}\">\
             <figcaption>what the target returned</figcaption></figure>"
        );
    }
    let _ = writeln!(
        h,
        "<table><tr><th>read from the image</th></tr><tr><td>{}</td></tr></table></div>",
        esc(&f.actual)
    );
}

fn html_exchange(h: &mut String, x: &ExchangeRecord) {
    let mut req = format!("{} {}\n", x.method, x.url);
    for (k, v) in &x.request_headers {
        let _ = writeln!(req, "{k}: {v}");
    }
    if let Some(b) = &x.request_body {
        let _ = write!(req, "\n{b}");
    }
    let mut ans = match (&x.status, &x.error) {
        (Some(s), _) => format!("{s}\n"),
        (None, Some(e)) => format!("no answer: {e}\n"),
        _ => "no answer\n".into(),
    };
    for (k, v) in &x.response_headers {
        let _ = writeln!(ans, "{k}: {v}");
    }
    if !x.response_body.is_empty() {
        let _ = write!(ans, "\n{}", x.response_body);
    }
    let _ = writeln!(
        h,
        "<p>Request</p><pre class=\"request\">{}</pre><p>Answer</p><pre class=\"answer\">{}</pre>\
         <p>Reproduce</p><pre class=\"curl\">{}</pre>",
        esc(&req),
        esc(&ans),
        esc(&x.curl)
    );
}

/// The clause coverage section of a command's HTML report (report.html, load.html).
pub fn coverage_html(c: &registry::Coverage, command: registry::Command) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<h2 id=\"coverage\">Clause coverage</h2>\n<table><tr><th>exercised</th>\
         <th>enforceable</th><th>total</th></tr><tr><td class=\"num\">{}</td>\
         <td class=\"num\">{}</td><td class=\"num\">{}</td></tr></table>\n\
         <p>Clauses are the normative statements of the spec document \
         (<code>linkcert catalogue</code> lists them).</p>",
        c.exercised, c.enforceable, c.total
    );
    let unenforced = format!("No {} enforces", command.noun());
    for (title, list) in [
        ("Not exercised in this run", &c.skipped),
        (unenforced.as_str(), &c.unenforced),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<h3>{title}</h3><ul>");
        for n in list {
            let _ = writeln!(
                h,
                "<li><code>{}</code>: {}</li>",
                esc(&n.clause),
                esc(&n.why)
            );
        }
        h.push_str("</ul>\n");
    }
    h
}
