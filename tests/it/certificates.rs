//! What `check` hands to people and to CI: report.html (parsed, and rendered in a real
//! browser), accepted deviations (waivers), baselines with `--fail-on new`, GitHub Actions
//! annotations, and clause coverage. Broken targets are small proxies in front of both
//! implementations on 127.0.0.1 (`common::broken`).

use crate::common;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use base64::Engine;
use common::broken::{Answer, BOTH, Broken, Defect, Impl, Incoming, broken_on, failed, run_check};
use common::browser::browser;
use linkcert::gate::{FailOn, accept::WaiverFile, baseline::Baseline};
use linkcert::registry::{self, Command};
use linkcert::report::Report;
use linkcert::verdict::Verdict;
use scraper::{Html, Selector};

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("linkcert-cert-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn small_png_answer(inc: &Incoming, ans: &Answer) -> bool {
    inc.path == "/qr"
        && ans.status == 200
        && url::form_urlencoded::parse(inc.query.as_bytes())
            .any(|(k, v)| k == "size" && v.parse::<f64>().is_ok_and(|s| (1.0..=400.0).contains(&s)))
}

/// Two independent defects: QR colours off by 8 in every channel (a readable code, the wrong
/// colours: qr.colours) and, when `codes` is set, 401s with the code `forbidden`
/// (envelope.code).
fn defect(codes: bool) -> Defect {
    Defect::after(move |inc, ans| {
        if small_png_answer(inc, ans)
            && let Ok(img) = image::load_from_memory(&ans.body)
        {
            let mut img = img.to_rgb8();
            for p in img.pixels_mut() {
                for c in p.0.iter_mut() {
                    *c ^= 0x08;
                }
            }
            let mut out = Vec::new();
            img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
                .unwrap();
            ans.body = out;
        }
        if codes && ans.status == 401 {
            ans.body = br#"{"error":{"code":"forbidden","message":"no"}}"#.to_vec();
        }
    })
}

const ONLY: &[&str] = &["qr.colours", "auth.required", "envelope.code"];

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// report.html holds every check of report.json, with the same verdict, and the text of every
/// finding; failures are open and passes folded; a QR failure shows the PNG the target sent.
fn assert_html_matches_json(dir: &Path) {
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let doc = Html::parse_document(&html);
    assert!(
        doc.select(&sel("script")).next().is_none(),
        "no JavaScript needed"
    );
    for attr in ["src", "href"] {
        for e in doc.select(&sel(&format!("[{attr}]"))) {
            let v = e.value().attr(attr).unwrap();
            assert!(
                v.starts_with("data:") || v.starts_with('#'),
                "self-contained: {attr}={v}"
            );
        }
    }
    let checks = json["checks"].as_array().unwrap();
    for c in checks {
        let (id, op, verdict) = (
            c["id"].as_str().unwrap(),
            c["operation"].as_str().unwrap(),
            c["verdict"].as_str().unwrap(),
        );
        let details = doc
            .select(&sel("details.check"))
            .find(|d| {
                d.value().attr("data-id") == Some(id)
                    && d.value().attr("data-operation") == Some(op)
            })
            .unwrap_or_else(|| panic!("{id} on {op} is in report.html"));
        assert_eq!(
            details.value().attr("data-verdict"),
            Some(verdict),
            "{id} {op}"
        );
        assert_eq!(
            details.value().attr("open").is_some(),
            verdict == "fail",
            "{id} {op}: failures open, the rest folded"
        );
        let text: String = details.text().collect();
        if verdict == "fail" {
            // The exchange behind a failure: request, answer with its status, and the curl.
            let answers: Vec<String> = details
                .select(&sel("pre.answer"))
                .map(|p| p.text().collect())
                .collect();
            let statuses: Vec<String> = c["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|f| f["exchange"]["status"].as_u64())
                .map(|s| s.to_string())
                .collect();
            assert!(
                !statuses.is_empty(),
                "{id} {op}: a failure comes with its exchange"
            );
            for s in &statuses {
                assert!(
                    answers.iter().any(|a| a.starts_with(s.as_str())),
                    "{id} {op}: answer {s} shown"
                );
            }
            assert!(details.select(&sel("pre.request")).next().is_some());
        }
        for f in c["findings"].as_array().unwrap() {
            let msg = f["message"].as_str().unwrap();
            assert!(text.contains(msg), "{id} {op}: finding {msg:?} shown");
            if let Some(curl) = f["exchange"]["curl"].as_str() {
                assert!(text.contains(curl), "{id} {op}: its curl line");
            }
        }
    }
}

/// The inline PNGs of qr.colours failures decode to images.
fn inline_pngs(dir: &Path, check: &str) -> Vec<image::DynamicImage> {
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let doc = Html::parse_document(&html);
    let mut out = Vec::new();
    for d in doc.select(&sel("details.check")) {
        if d.value().attr("data-id") != Some(check) {
            continue;
        }
        for img in d.select(&sel("img")) {
            let src = img.value().attr("src").unwrap();
            let b64 = src.strip_prefix("data:image/png;base64,").unwrap();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap();
            out.push(image::load_from_memory(&bytes).expect("a real PNG"));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_html_shows_every_finding_and_the_png_of_a_qr_failure() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, defect(true)).await;
        let r = run_check(b.target(), ONLY).await;
        let f = failed(&r);
        assert!(
            f.contains(&"qr.colours".to_string()),
            "{imp:?}: {}",
            r.summary()
        );
        let dir = tempdir(&format!("html-{imp:?}"));
        r.write(&dir).unwrap();
        assert_html_matches_json(&dir);
        let pngs = inline_pngs(&dir, "qr.colours");
        assert!(!pngs.is_empty(), "{imp:?}: the target's image is shown");
        // What it shows is what the target sent: colours off by 8 (not pure black/white).
        let px = pngs[0].to_rgb8().get_pixel(0, 0).0;
        assert!(px.iter().all(|c| *c & 0x08 == 0x08 || *c == 0xF7), "{px:?}");
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(html.contains("Not certified"), "verdict in words");
        browser_renders(&dir.join("report.html"), "Not certified", None);

        assert!(html.contains("Clause coverage"));
        assert!(
            !b.target().keys.iter().any(|k| html.contains(&k.key)),
            "keys never appear"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_against_the_reference_writes_a_certificate() {
    let up = common::broken::Upstream::start(Impl::Reference, 6.0).await;
    let r = run_check(up.target(), &["qr", "auth", "pagination.choices"]).await;
    assert!(r.passed(), "{}", r.summary());
    let dir = tempdir("html-reference");
    r.write(&dir).unwrap();
    assert_html_matches_json(&dir);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Certified: the target conforms"));
    // Informational findings are listed as the target's choices.
    let doc = Html::parse_document(&html);
    let choices: String = doc
        .select(&sel("h2#choices + p + ul"))
        .flat_map(|u| u.text())
        .collect();
    let informational = r
        .checks
        .iter()
        .flat_map(|c| &c.findings)
        .filter(|f| f.verdict == Verdict::Informational)
        .count();
    assert!(informational > 0);
    for f in r.checks.iter().flat_map(|c| &c.findings) {
        if f.verdict == Verdict::Informational {
            assert!(choices.contains(&f.message), "{}", f.message);
        }
    }
    browser_renders(
        &dir.join("report.html"),
        "Certified: the target conforms",
        None,
    );
}

/// Open the report in headless Chromium and read the DOM it built; with `screenshot`, also
/// save a picture of it.
fn browser_renders(html: &Path, expect: &str, screenshot: Option<&Path>) {
    if let Some(png) = screenshot {
        browser(html, Some(png));
        return;
    }
    let Some(dom) = browser(html, None) else {
        return;
    };
    let doc = Html::parse_document(&dom);
    let verdict: String = doc
        .select(&sel("#verdict"))
        .flat_map(|e| e.text())
        .collect();
    assert!(verdict.contains(expect), "the browser shows {verdict:?}");
    assert!(doc.select(&sel("details.check")).count() > 0);
}

/// The waiver file of these tests: qr.colours accepted with a reason, entries for what the
/// code defect breaks (envelope.code, auth.required), expired or not, and one for a check that
/// will not fail.
fn waivers(expired_envelope: bool) -> String {
    format!(
        r#"
[[accept]]
check = "qr.colours"
reason = "colour rendering is off by a shade; fix planned"
ticket = "QR-12"
expires = 2099-12-31

[[accept]]
check = "envelope"
reason = "old error codes"
expires = {until}

[[accept]]
check = "auth.required"
reason = "old error codes"
expires = {until}

[[accept]]
check = "pagination.walk"
reason = "stale: fixed long ago"
"#,
        until = if expired_envelope {
            "2001-01-01"
        } else {
            "2099-01-01"
        }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waivers_accept_failures_expired_ones_do_not_and_unused_ones_are_reported() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, defect(true)).await;
        let base = run_check(b.target(), ONLY).await;
        let failing = failed(&base);
        assert!(
            failing.contains(&"qr.colours".into()) && failing.contains(&"envelope.code".into()),
            "{imp:?}: {}",
            base.summary()
        );
        // Live waivers for both: nothing fails, the gate passes.
        let mut r = base.clone();
        let w = WaiverFile::parse(&waivers(false), "accept.toml").unwrap();
        r.apply_waivers(&w, "2026-11-23");
        assert!(failed(&r).is_empty(), "{imp:?}: {}", r.summary());
        assert!(r.passed() && !r.fails(FailOn::Any));
        assert!(r.totals.accepted >= 2);
        let qr = r.checks.iter().find(|c| c.id == "qr.colours").unwrap();
        assert_eq!(qr.verdict, Verdict::Accepted);
        assert_eq!(
            qr.accepted.as_ref().unwrap().ticket.as_deref(),
            Some("QR-12")
        );
        let uses = &r.waivers.as_ref().unwrap().entries;
        assert_eq!(uses[3].matched, 0, "the stale entry matched nothing");
        assert!(r.summary().contains("unused"), "{}", r.summary());
        // Every format says it: JUnit as skipped with the reason, markdown and HTML too.
        let dir = tempdir(&format!("waived-{imp:?}"));
        r.write(&dir).unwrap();
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        assert!(junit.contains("<skipped message=\"colour rendering is off by a shade; fix planned (ticket QR-12, until 2099-12-31)\""), "{junit}");
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("## Accepted deviations") && md.contains("unused"));
        assert_html_matches_json(&dir);

        // The envelope entry expired: it no longer matches, and says so.
        let mut r = base.clone();
        let w = WaiverFile::parse(&waivers(true), "accept.toml").unwrap();
        r.apply_waivers(&w, "2026-11-23");
        let mut now = failed(&r);
        now.sort();
        assert_eq!(
            now,
            vec!["auth.required".to_string(), "envelope.code".to_string()],
            "{imp:?}"
        );
        assert!(r.fails(FailOn::Any));
        let env = &r.waivers.as_ref().unwrap().entries[1];
        assert!(env.expired && env.matched == 0 && env.would_match > 0);
        assert!(r.summary().contains("expired"), "{}", r.summary());
    }
}

#[test]
fn waiver_files_without_a_reason_or_with_a_bad_date_are_refused() {
    let e =
        WaiverFile::parse("[[accept]]\ncheck = \"qr\"\nreason = \" \"\n", "a.toml").unwrap_err();
    assert!(e.to_string().contains("reason"), "{e}");
    let e = WaiverFile::parse(
        "[[accept]]\ncheck = \"qr\"\nreason = \"x\"\nexpires = \"soon\"\n",
        "a.toml",
    )
    .unwrap_err();
    assert!(e.to_string().contains("YYYY-MM-DD"), "{e}");
    let ok = WaiverFile::parse(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/accept-real-service.toml"
        ))
        .unwrap(),
        "examples/accept-real-service.toml",
    )
    .unwrap();
    assert!(ok.entries.len() >= 3);
}

/// The CLI: a baseline with one failure and a run with two: `--fail-on new` exits 1 naming
/// only the new one; against the same failure only, 0. A waiver for the new one makes the
/// exit code 0. With GITHUB_ACTIONS=true, one ::error per failure and the summary appended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_on_new_waivers_and_github_annotations_from_the_command_line() {
    let dir = tempdir("cli");
    // The baseline: only qr.colours fails.
    let one = broken_on(Impl::Variant, 6.0, defect(false)).await;
    let (code, _, err) = cli(&one, &dir.join("base"), &[], &[]).await;
    assert_eq!(code, 1, "{err}");
    let base_json = dir.join("base/report.json");
    let base = Baseline::read(&base_json).unwrap();
    // The README's screenshot comes from here: LINKCERT_SCREENSHOT=path.png.
    if let Ok(shot) = std::env::var("LINKCERT_SCREENSHOT") {
        browser_renders(&dir.join("base/report.html"), "", Some(Path::new(&shot)));
    }
    assert!(
        base.failing.iter().all(|k| k.id == "qr.colours"),
        "{:?}",
        base.failing
    );
    drop(one);

    // Now both defects: envelope.code is new.
    let two = broken_on(Impl::Variant, 6.0, defect(true)).await;
    let b = base_json.display().to_string();
    let summary = dir.join("step-summary.md");
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let (code, out, err) = cli(
        &two,
        &dir.join("two"),
        &["--baseline", &b, "--fail-on", "new"],
        &env,
    )
    .await;
    assert_eq!(code, 1, "{out}{err}");
    let news: Vec<&str> = out.lines().filter(|l| l.starts_with("NEW FAIL")).collect();
    // New: what the code defect broke; qr.colours failed in the baseline already.
    assert!(news.iter().any(|l| l.contains("envelope.code")), "{out}");
    assert!(
        news.iter()
            .all(|l| l.contains("envelope.code") || l.contains("auth.required")),
        "{out}"
    );
    let errors: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("::error title="))
        .collect();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("two/report.json")).unwrap()).unwrap();
    // The replay command names the run's own flags, keys as their variables.
    let replay = report["replay"].as_str().unwrap();
    for part in [
        "--target http://127.0.0.1:",
        "--seed 7",
        "--cases 24",
        "--only 'qr.colours'",
        "--key free=\"$LINKCERT_KEY_FREE_2\"",
    ] {
        assert!(replay.contains(part), "{part} in {replay}");
    }
    let fails = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .count();
    assert_eq!(errors.len(), fails, "one annotation per failure:\n{out}");
    assert!(
        errors
            .iter()
            .any(|l| l.contains("linkcert envelope.code on")),
        "{out}"
    );
    assert!(
        errors.iter().any(|l| l.contains("linkcert qr.colours on")),
        "{out}"
    );
    let step = std::fs::read_to_string(&summary).unwrap();
    assert!(step.contains("# linkcert report: FAILED") && step.contains("Against the baseline"));
    for k in two.target().keys {
        assert!(
            !out.contains(&k.key) && !step.contains(&k.key),
            "keys never appear"
        );
    }

    // The same failure as the baseline only: exit 0 with --fail-on new.
    drop(two);
    let same = broken_on(Impl::Variant, 6.0, defect(false)).await;
    let (code, out, err) = cli(
        &same,
        &dir.join("same"),
        &["--baseline", &b, "--fail-on", "new"],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("NEW FAIL"), "{out}");
    // And with --fail-on any (the default) the old failure still fails the run...
    let (code, _, _) = cli(&same, &dir.join("same-any"), &["--baseline", &b], &[]).await;
    assert_eq!(code, 1);
    // ...unless a waiver accepts it.
    let accept = dir.join("accept.toml");
    std::fs::write(&accept, waivers(false)).unwrap();
    let (code, out, err) = cli(
        &same,
        &dir.join("same-accepted"),
        &["--accept", accept.to_str().unwrap()],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ACCEPTED qr.colours"), "{out}");
    let md = std::fs::read_to_string(dir.join("same-accepted/report.md")).unwrap();
    let junit = std::fs::read_to_string(dir.join("same-accepted/junit.xml")).unwrap();
    assert!(
        md.contains("## Clause coverage") && junit.contains("clauses.exercised"),
        "coverage in every report"
    );
    // An expired waiver does not accept: exit 1, and the summary says it expired.
    let expired = dir.join("expired.toml");
    std::fs::write(
        &expired,
        "[[accept]]\ncheck = \"qr.colours\"\nreason = \"fine last year\"\nexpires = 2001-01-01\n",
    )
    .unwrap();
    let (code, out, err) = cli(
        &same,
        &dir.join("same-expired"),
        &["--accept", expired.to_str().unwrap()],
        &[],
    )
    .await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("WAIVER qr.colours: expired"), "{out}");
    // The same from a profile's `accept = "FILE"` (relative to the profile).
    let t = same.target();
    let keys: Vec<String> = t
        .keys
        .iter()
        .map(|k| format!("{} = {:?}", k.plan, k.key))
        .collect();
    let profile = dir.join("profile.toml");
    std::fs::write(
        &profile,
        format!(
            "base_url = {:?}\naccept = \"accept.toml\"\n[keys]\n{}\n",
            t.base_url.as_str(),
            dedup_plans(&keys).join("\n")
        ),
    )
    .unwrap();
    let (code, out, err) = cli(
        &same,
        &dir.join("same-profile"),
        &["--profile", profile.to_str().unwrap()],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ACCEPTED qr.colours"), "{out}");
}

/// `plan = "key"` lines, one per plan (a profile's table keys are unique; the CLI's --key
/// flags carry every key anyway).
fn dedup_plans(lines: &[String]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    lines
        .iter()
        .filter(|l| seen.insert(l.split(' ').next().unwrap_or("").to_string()))
        .cloned()
        .collect()
}

/// `linkcert check` at a broken target, in a child process; the proxy keeps serving meanwhile.
async fn cli(
    b: &Broken,
    out: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let t = b.target();
    let mut cmd = std::process::Command::new(BIN);
    cmd.args([
        "check",
        "--target",
        t.base_url.as_str(),
        "--seed",
        "7",
        "--cases",
        "24",
        "--out",
    ])
    .arg(out);
    for only in ONLY {
        cmd.args(["--only", only]);
    }
    for k in &t.keys {
        cmd.arg("--key").arg(format!("{}={}", k.plan, k.key));
    }
    cmd.args(extra)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    let run = tokio::task::spawn_blocking(move || cmd.output());
    let o = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("check finishes within 2 minutes")
        .expect("the waiting thread")
        .expect("linkcert runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn catalogue_lists_every_check_and_clause() {
    let o = std::process::Command::new(BIN)
        .arg("catalogue")
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for d in registry::CHECKS {
        assert!(text.contains(d.id), "{}", d.id);
    }
    for r in registry::RULES {
        assert!(text.contains(r.id), "{}", r.id);
        for c in r.enforces.clauses() {
            assert!(text.contains(c), "{} {c}", r.id);
        }
    }
    for c in linkcert::spec::clauses::clauses().unwrap() {
        assert!(text.contains(&c.id), "{}", c.id);
        if enforced_by_none(&c.id) {
            assert!(text.contains(c.reason.as_deref().unwrap()), "{}", c.id);
        }
    }
}

#[test]
fn every_clause_is_quoted_from_the_document_and_every_check_enforces_one() {
    let doc = include_str!("../../specs/link-attribution-service.md");
    let clauses = linkcert::spec::clauses::clauses().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for c in &clauses {
        assert!(seen.insert(c.id.clone()), "duplicate clause id {}", c.id);
        assert!(
            doc.contains(&c.text),
            "{}: not quoted word for word: {:?}",
            c.id,
            c.text
        );
        assert!(
            !enforced_by_none(&c.id) || c.reason.as_deref().is_some_and(|r| !r.trim().is_empty()),
            "{}: neither a check nor a reason",
            c.id
        );
    }
    // Every clause the registry names is in the document's list.
    for command in [Command::Check, Command::Load] {
        for (id, e) in registry::of(command) {
            for k in e.clauses() {
                assert!(
                    clauses.iter().any(|c| c.id == *k),
                    "{id} names {k}, which is not a clause"
                );
            }
        }
    }
    // Every check and rule enforces a clause, or says why it enforces none (and only such).
    for command in [Command::Check, Command::Load] {
        for (id, e) in registry::of(command) {
            match e {
                registry::Enforces::Clauses(c) => assert!(!c.is_empty(), "{id} enforces no clause"),
                registry::Enforces::Nothing(why) => {
                    assert!(
                        !why.trim().is_empty(),
                        "{id} enforces no clause and says not why"
                    )
                }
                // A document beyond the spec, cited by name and revision.
                registry::Enforces::Beyond(cite) => {
                    assert!(cite.starts_with("draft-"), "{id} cites {cite:?}")
                }
            }
        }
    }
}

/// No check and no load rule enforces the clause.
fn enforced_by_none(clause: &str) -> bool {
    registry::enforcing(Command::Check, clause).is_empty()
        && registry::enforcing(Command::Load, clause).is_empty()
}

#[test]
fn coverage_counts_exercised_skipped_and_unenforced_clauses() {
    let clauses = linkcert::spec::clauses::clauses().unwrap();
    let report: Report = {
        // A report with one judged check, one skipped and nothing else.
        let mut r = empty_report();
        r.checks = vec![
            result("qr.size", 3, Verdict::Pass, None),
            result(
                "ratelimit.per-key",
                0,
                Verdict::Skipped,
                Some("needs a second key"),
            ),
        ];
        r
    };
    let cov = registry::coverage::over(&clauses, Command::Check, &report.checks);
    assert_eq!(cov.total, clauses.len());
    assert_eq!(cov.exercised, 1, "qr.params.size only");
    assert_eq!(
        cov.enforceable,
        clauses
            .iter()
            .filter(|c| !registry::enforcing(Command::Check, &c.id).is_empty())
            .count()
    );
    let per_key = cov
        .skipped
        .iter()
        .find(|n| n.clause == "limits.standard")
        .unwrap();
    assert_eq!(per_key.why, "needs a second key");
    assert!(
        cov.skipped
            .iter()
            .any(|n| n.clause == "tags.search" && n.why.starts_with("not selected"))
    );
    assert!(
        cov.unenforced
            .iter()
            .any(|n| n.clause == "events.webhooks" && n.why.contains("webhooks"))
    );
}

fn result(
    id: &str,
    cases: u64,
    verdict: Verdict,
    skipped: Option<&str>,
) -> linkcert::report::model::CheckResult {
    linkcert::report::model::CheckResult {
        id: id.into(),
        title: id.into(),
        clause: String::new(),
        operation: "*".into(),
        verdict,
        cases,
        violations: 0,
        findings: Vec::new(),
        skipped: skipped.map(str::to_string),
        partly_skipped: None,
        accepted: None,
        not_judged: None,
    }
}

fn empty_report() -> Report {
    let spec = common::spec();
    let target = linkcert::target::Target {
        base_url: "https://example.test".parse().unwrap(),
        ..linkcert::target::Target::default()
    };
    Report::new(
        &spec,
        &target,
        1,
        linkcert::clock::now_epoch_secs(),
        std::time::Duration::ZERO,
        0,
        0,
        Vec::new(),
        registry::Coverage::default(),
    )
}
