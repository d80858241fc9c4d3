//! `linkcert load` in front of `common::hostile`: a hostile target never passes, for the whole
//! built-in suite and for one scenario alone, and the run says what the target did, in bounded
//! time and memory measured on the process.

use crate::common::Words;
use crate::common::hostile::{self, Mode, Row};

/// The reference's window behind each hostile server, and `load`'s: the whole suite in a few
/// tens of seconds.
const WINDOW: f64 = 2.0;

/// The scenario run alone: alone, it once passed (exit 0) in front of a body that never ends.
const ALONE: &str = "free-overload";

/// The modes `load` is held to, and what its report must say in front of each
/// (case-insensitive), as `check`'s first finding does.
const MODES: [(Mode, &str); 4] = [
    (Mode::EndlessBody, "still arriving after"),
    (Mode::Trickle, "trickl"),
    (Mode::HugeHeaders, "headers"),
    (Mode::NotHttp, "not http"),
];

/// A hostile target is never a pass (exit 0), for the suite or one scenario alone, and the
/// report names what it did: in the first failing rule's finding, or, when no rule failed,
/// anywhere in load.md. Within 120 s and 300 MB. Side by side, each run in front of its own
/// reference, beside the control (one scenario through the same server turning nothing),
/// which must pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_never_passes_a_hostile_target_and_names_what_it_did_in_bounded_time_and_memory() {
    let mut runs = vec![load_in_front_of(
        Mode::Faithful,
        Some(ALONE),
        None,
        Words::Plain,
    )];
    // The suite with every failure worded otherwise: the same verdicts and exit codes (what
    // the target did is read on the scenario alone, worded as users read it).
    for (mode, phrase) in MODES {
        runs.push(load_in_front_of(mode, None, Some(phrase), Words::Reworded));
        runs.push(load_in_front_of(
            mode,
            Some(ALONE),
            Some(phrase),
            Words::Plain,
        ));
    }
    let rows = futures::future::join_all(runs).await;
    let failing = rows.iter().filter(|r| !r.problems.is_empty()).count();
    let title = format!(
        "linkcert load in front of hostile targets: {failing} of {} runs fail",
        rows.len()
    );
    let table = hostile::table(&title, &rows);
    // The figures of every run, also when all hold (`--nocapture` shows them).
    println!("{table}");
    assert_eq!(failing, 0, "{table}");
}

/// `linkcert load` with every key of the reference behind `mode`: the built-in suite, or
/// `scenario` alone. `phrase`: what its report must say (None: the control, which must pass).
async fn load_in_front_of(
    mode: Mode,
    scenario: Option<&str>,
    phrase: Option<&str>,
    words: Words,
) -> Row {
    let h = hostile::start(mode, WINDOW).await;
    let name = format!("{} / {}", mode.name(), scenario.unwrap_or("suite"));
    let name = match words {
        Words::Plain => name,
        Words::Reworded => format!("{name} (reworded)"),
    };
    let dir = hostile::run_dir("load", &name);
    let out = dir.join("out");
    let mut args = vec!["load".to_string()];
    args.extend(h.target_args());
    if let Some(s) = scenario {
        args.extend(["--scenario".into(), s.into()]);
    }
    args.extend(["--out".into(), out.display().to_string()]);
    let measured = hostile::run_binary(args, dir, words).await;
    drop(h);
    let report: Option<serde_json::Value> = std::fs::read(out.join("load.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let md = std::fs::read_to_string(out.join("load.md")).unwrap_or_default();
    let verdict = report
        .as_ref()
        .and_then(|r| r["verdict"].as_str())
        .unwrap_or("no report")
        .to_string();
    let first = report.as_ref().and_then(first_failing_finding);
    let mut problems = measured.over_bounds();
    match phrase {
        None => {
            if measured.exit != Some(0) || verdict != "pass" {
                problems.push(format!(
                    "the control: exit {}, verdict {verdict}; expected 0, pass",
                    measured.exit_text()
                ));
            }
        }
        Some(phrase) => {
            if measured.exit == Some(0) || verdict == "pass" {
                problems.push(format!(
                    "passed: exit {}, verdict {verdict}",
                    measured.exit_text()
                ));
            }
            if measured.killed.is_none() && report.is_none() {
                problems.push("no load.json".into());
            }
            let says = words == Words::Reworded
                || match &first {
                    Some((_, text)) => text.to_lowercase().contains(phrase),
                    None => md.to_lowercase().contains(phrase),
                };
            if !says {
                let place = if first.is_some() {
                    "the first failing finding"
                } else {
                    "load.md (no rule failed)"
                };
                problems.push(format!("{place} does not say {phrase:?}"));
            }
        }
    }
    let finding = match (&first, &report) {
        (Some((rule, text)), _) => format!("{rule}: {text}"),
        (None, Some(r)) => match r["outage"].as_object() {
            Some(o) => format!(
                "no failing rule; outage: {} {:.1} s in (first: {})",
                o["kind"], o["first_failure_secs"], o["first_error"]
            ),
            None => "no failing rule".into(),
        },
        (None, None) => {
            let stderr = measured.stderr();
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            format!("no load.json; stderr: {}", last.unwrap_or(""))
        }
    };
    Row {
        name,
        measured,
        verdict,
        finding,
        problems,
    }
}

/// The first failing rule's finding (scenarios and their findings in the report's order), as
/// the scenario and rule, and the text a user reads: message, expected and actual.
fn first_failing_finding(report: &serde_json::Value) -> Option<(String, String)> {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    report["scenarios"].as_array()?.iter().find_map(|sc| {
        let f = sc["findings"]
            .as_array()?
            .iter()
            .find(|f| f["verdict"] == "fail")?;
        Some((
            format!("{} {}", s(&sc["name"]), s(&f["check"])),
            format!(
                "{} | expected: {} | actual: {}",
                s(&f["message"]),
                s(&f["expected"]),
                s(&f["actual"])
            ),
        ))
    })
}
