//! A target that goes away in the middle of `check` (connections reset, refused, or a stall
//! where nothing answers), in front of both implementations: the run notices within a few
//! request timeouts, stops, says when and how the target went away and what was not judged,
//! and ends INCOMPLETE with exit code 3, never FAILED with clause failures it could not judge.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::Words;
use common::broken::{BOTH, Impl, Upstream};
use common::outage::{self, Mode};

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");
/// Into the run when the proxy turns hostile (after its first connection).
const TURN_AFTER: Duration = Duration::from_millis(1500);
/// The whole run, outage included, ends within this (the bound for a stall at the
/// default 30 s request timeout, too).
const BOUND: Duration = Duration::from_secs(60);

/// `timeout`: `--request-timeout`, or None for the default (30 s).
fn run_into_outage(
    imp: Impl,
    mode: Mode,
    timeout: Option<&str>,
    words: Words,
) -> (std::process::Output, Duration, std::path::PathBuf) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let upstream = rt.block_on(Upstream::start(imp, 6.0));
    let proxy = rt.block_on(outage::start(upstream.base_url(), mode, TURN_AFTER));
    let dir = std::env::temp_dir().join(format!(
        "linkcert-test-outage-{imp:?}-{mode:?}-{}-{}",
        timeout.unwrap_or("default"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut args: Vec<String> = [
        "check",
        "--target",
        &proxy.url,
        "--insecure",
        "--rate-window",
        "6",
        "--ci",
        "github",
        "--out",
        dir.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for k in &upstream.target().keys {
        args.extend(["--key".into(), format!("{}={}", k.plan, k.key)]);
    }
    if let Some(t) = timeout {
        args.extend(["--request-timeout".into(), t.into()]);
    }
    let started = Instant::now();
    let _ = std::fs::create_dir_all(&dir);
    let mut cmd = Command::new(BIN);
    words.apply(&mut cmd);
    let out = cmd
        .args(&args)
        .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"))
        .output()
        .unwrap();
    let took = started.elapsed();
    drop(proxy);
    drop(upstream);
    (out, took, dir)
}

fn assert_incomplete_by_outage(
    imp: Impl,
    mode: Mode,
    timeout: Option<&str>,
    kind: &str,
    words: &str,
) {
    // In front of the second implementation every failure is worded otherwise: the same
    // outage, verdicts and exit code (nothing decides on words).
    let wording = match imp {
        Impl::Reference => Words::Plain,
        Impl::Variant => Words::Reworded,
    };
    let (out, took, dir) = run_into_outage(imp, mode, timeout, wording);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ctx = format!("{imp:?} {mode:?} after {took:?}:\n{stdout}");
    assert!(took < BOUND, "{ctx}");
    assert_eq!(out.status.code(), Some(3), "{ctx}");
    assert!(stdout.contains("INCOMPLETE in"), "{ctx}");
    assert!(!stdout.contains("FAILED"), "{ctx}");
    assert!(
        stdout.contains("OUTAGE the target stopped answering"),
        "{ctx}"
    );
    assert!(stdout.contains(words), "{ctx}");
    assert!(stdout.contains("check that the target is up"), "{ctx}");
    // GitHub: one error for the run, a warning per check not judged, no clause failure.
    assert!(
        stdout.contains("::error title=linkcert run incomplete::"),
        "{ctx}"
    );
    assert!(stdout.contains("::warning title=linkcert "), "{ctx}");
    assert_eq!(stdout.matches("::error").count(), 1, "{ctx}");
    let summary = std::fs::read_to_string(dir.join("step-summary.md")).unwrap();
    assert!(
        summary.starts_with("# linkcert report: INCOMPLETE"),
        "{summary}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["outcome"], "incomplete", "{ctx}");
    assert_eq!(
        report["totals"]["fail"], 0,
        "no clause failure it could not judge: {ctx}"
    );
    let outage = &report["incomplete"]["outage"];
    assert_eq!(outage["kind"], kind, "{outage}\n{ctx}");
    // When: not before the proxy turned, and noticed within a few request timeouts.
    let first = outage["first_failure_secs"].as_f64().unwrap();
    let detected = outage["detected_secs"].as_f64().unwrap();
    assert!(first >= 1.0, "{outage}");
    assert!(detected - first < 15.0, "{outage}");
    assert!(outage["first_failure_at"].as_str().unwrap().ends_with('Z'));
    let not_judged = report["incomplete"]["not_judged"].as_array().unwrap();
    assert!(!not_judged.is_empty(), "{ctx}");
    assert!(report["totals"]["not_judged"].as_u64().unwrap() > 0);
    // The certificate says it in words at its top; JUnit tells it apart from a failure.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let top = &html[html.find("id=\"verdict\"").unwrap()..];
    assert!(top[..600.min(top.len())].contains("Incomplete"), "{top}");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(junit.contains("type=\"not-judged\"") && !junit.contains("<failure"));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.starts_with("# linkcert report: INCOMPLETE"), "{md}");
}

/// Both implementations at once: each run mostly waits for its request timeouts (2 s).
fn both_at_once(mode: Mode, kind: &'static str, words: &'static str) {
    both_at_once_with(mode, Some("2"), kind, words);
}

fn both_at_once_with(
    mode: Mode,
    timeout: Option<&'static str>,
    kind: &'static str,
    words: &'static str,
) {
    std::thread::scope(|s| {
        for imp in BOTH {
            s.spawn(move || assert_incomplete_by_outage(imp, mode, timeout, kind, words));
        }
    });
}

#[test]
fn a_target_that_resets_every_connection_mid_run_is_an_outage_not_a_failure() {
    both_at_once(Mode::Reset, "reset", "connections reset");
}

#[test]
fn a_target_that_stops_listening_mid_run_is_an_outage_not_a_failure() {
    both_at_once(Mode::Refuse, "refused", "connections refused");
}

#[test]
fn a_target_that_stalls_mid_run_is_noticed_within_a_few_timeouts() {
    both_at_once(Mode::Stall, "timeout", "stalled");
}

/// At the default 30 s request timeout a stall is told by one timeout and a short probe on a
/// fresh connection (`outage::diagnose`), not by more full timeouts (it took 91 s: three in a
/// row): INCOMPLETE within a minute of the start.
#[test]
fn a_stall_at_the_default_request_timeout_ends_incomplete_within_a_minute() {
    both_at_once_with(Mode::Stall, None, "timeout", "stalled");
}
