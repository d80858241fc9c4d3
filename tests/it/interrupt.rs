//! A run interrupted as a user (Ctrl-C) or a CI runner (SIGTERM) interrupts it: the real
//! binary, `check` and `load` against the in-process reference, side by side, signalled
//! mid-run. Each stops within a bound, writes every report marked interrupted, and exits 3:
//! never a pass. A second signal quits at once.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::Words;

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");

/// From the signal to the exit, at most (measured): sending stops within about a second,
/// then the reports are written.
const STOPS_WITHIN: Duration = Duration::from_secs(10);
/// How long a child may take to start sending on a busy machine (a bound, not a schedule).
const STARTS_WITHIN: Duration = Duration::from_secs(120);

/// A `linkcert` child with its stderr read line by line as it comes.
struct Run {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stdout: Arc<Mutex<String>>,
    out: PathBuf,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("linkcert-interrupt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn start(command: &str, name: &str, words: Words) -> Run {
    let out = tempdir(name);
    let mut cmd = Command::new(BIN);
    words.apply(&mut cmd);
    let mut child = cmd
        .args([command, "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = channel();
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let text = stderr.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        while matches!(err.read_line(&mut line), Ok(n) if n > 0) {
            text.lock().unwrap().push_str(&line);
            let _ = tx.send(std::mem::take(&mut line));
        }
    });
    let stdout = Arc::new(Mutex::new(String::new()));
    let mut o = child.stdout.take().unwrap();
    let text = stdout.clone();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = o.read_to_string(&mut s);
        text.lock().unwrap().push_str(&s);
    });
    Run {
        child,
        lines,
        stderr,
        stdout,
        out,
    }
}

impl Run {
    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for a stderr line that contains `text`.
    fn until_line(&mut self, text: &str, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(text) => return,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no line with {text:?} within {within:?}:\n{}",
                        self.stderr()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "stderr closed before a line with {text:?} ({:?}):\n{}",
                    self.child.try_wait(),
                    self.stderr()
                ),
            }
        }
    }

    fn signal(&self, signal: libc::c_int) -> Instant {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on our own child's pid, which it keeps until we wait on it.
        let r = unsafe { libc::kill(pid, signal) };
        assert_eq!(r, 0, "kill {pid}");
        Instant::now()
    }

    /// The exit status and how long after `since` it came (polled; the bound is asserted by
    /// the caller, the wait goes on past it so a late exit is measured, not abandoned).
    fn exit(&mut self, since: Instant) -> (ExitStatus, Duration) {
        let deadline = since + STOPS_WITHIN * 6;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return (s, since.elapsed());
            }
            assert!(
                Instant::now() < deadline,
                "still running {:?} after the signal:\n{}",
                since.elapsed(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Console and stderr, for failure messages (stdout is complete once the child exited).
    fn console(&self) -> String {
        format!("{}{}", self.stdout.lock().unwrap(), self.stderr())
    }
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap()
}

/// What every interrupted run's `interrupted` object says.
fn assert_interrupted(v: &serde_json::Value, signal: &str, console: &str) {
    let i = &v["interrupted"];
    assert_eq!(i["signal"], signal, "{i}\n{console}");
    let at = i["at"].as_str().unwrap_or_default();
    assert!(at.len() == 20 && at.ends_with('Z'), "RFC 3339: {i}");
    assert!(i["after_secs"].as_f64().is_some_and(|s| s > 0.0), "{i}");
}

/// `check` (SIGNAL `check_signal`) and `load` (`load_signal`) side by side, each signalled a
/// few seconds after it started sending, their failures worded `words`.
fn interrupted_runs(
    check_signal: (libc::c_int, &str),
    load_signal: (libc::c_int, &str),
    words: Words,
) {
    let mut check = start("check", &format!("check-{}", check_signal.1), words);
    let mut load = start("load", &format!("load-{}", load_signal.1), words);
    // `check` sends right after its header, `load` right after its plan.
    check.until_line("linkcert check:", STARTS_WITHIN);
    load.until_line("plan (", STARTS_WITHIN);
    std::thread::sleep(Duration::from_secs(3));
    let check_sent = check.signal(check_signal.0);
    let load_sent = load.signal(load_signal.0);
    let (check_status, check_took) = check.exit(check_sent);
    let (load_status, load_took) = load.exit(load_sent);

    let console = check.console();
    assert_eq!(check_status.code(), Some(3), "{console}");
    assert!(check_took <= STOPS_WITHIN, "{check_took:?}:\n{console}");
    for f in ["report.json", "junit.xml", "report.md", "report.html"] {
        assert!(check.out.join(f).is_file(), "{f}:\n{console}");
    }
    assert!(console.contains("reports: "), "{console}");
    let report = json(&check.out.join("report.json"));
    assert_interrupted(&report, check_signal.1, &console);
    assert_eq!(report["outcome"], "incomplete", "{console}");
    assert!(report["requests"].as_u64() > Some(0), "it was mid-run");
    // Where the time went: every family that ran, the one cut short included, and no request
    // counted twice or lost (the reachability probe and the served-only probe come before).
    let families = report["families"].as_array().expect("families");
    assert!(!families.is_empty(), "{console}");
    let spent: u64 = families.iter().filter_map(|f| f["requests"].as_u64()).sum();
    assert!(
        spent > 0 && spent <= report["requests"].as_u64().unwrap_or(0),
        "{families:?}"
    );
    let why = format!("interrupted by {}", check_signal.1);
    let checks = report["checks"].as_array().unwrap();
    assert!(
        checks.iter().any(|c| c["verdict"] == "not-judged"
            && c["not_judged"].as_str().unwrap_or("").contains(&why)),
        "checks cut short or not reached are not judged:\n{console}"
    );
    let md = std::fs::read_to_string(check.out.join("report.md")).unwrap();
    assert!(md.starts_with("# linkcert report: INCOMPLETE"), "{md}");
    assert!(
        md.contains(&format!("Interrupted: {}", check_signal.1)),
        "{md}"
    );
    assert!(console.contains(&why), "the summary says so:\n{console}");

    let console = load.console();
    assert_eq!(load_status.code(), Some(3), "{console}");
    assert!(load_took <= STOPS_WITHIN, "{load_took:?}:\n{console}");
    for f in ["load.json", "load.md", "load.html"] {
        assert!(load.out.join(f).is_file(), "{f}:\n{console}");
    }
    assert!(
        console.contains("load.json"),
        "the paths are printed:\n{console}"
    );
    let report = json(&load.out.join("load.json"));
    assert_interrupted(&report, load_signal.1, &console);
    assert_eq!(report["verdict"], "incomplete", "{console}");
    let why = format!("interrupted by {}", load_signal.1);
    let scenarios = report["scenarios"].as_array().unwrap();
    for s in scenarios {
        let reason = s["skipped"].as_str().unwrap_or("");
        assert!(
            matches!(s["verdict"].as_str(), Some("incomplete" | "skipped"))
                && reason.contains(&why),
            "cut short or not run, never judged: {}:\n{console}",
            s["name"]
        );
    }
    assert!(
        scenarios.iter().any(|s| s["verdict"] == "incomplete"),
        "a scenario was running, and is cut short:\n{console}"
    );
    let md = std::fs::read_to_string(load.out.join("load.md")).unwrap();
    assert!(md.starts_with("# linkcert load: incomplete"), "{md}");
    assert!(md.contains(&why), "{md}");
    let _ = std::fs::remove_dir_all(&check.out);
    let _ = std::fs::remove_dir_all(&load.out);
}

#[test]
fn sigint_to_check_and_sigterm_to_load_stop_them_with_their_reports_and_exit_3() {
    interrupted_runs(
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        Words::Plain,
    );
}

/// With every failure worded otherwise: the same exit codes and reports (what a stop cut short
/// is not judged, whatever its failures say).
#[test]
fn sigterm_to_check_and_sigint_to_load_stop_them_with_their_reports_and_exit_3() {
    interrupted_runs(
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGINT, "SIGINT"),
        Words::Reworded,
    );
}

/// The second SIGINT, once the first was taken, quits at once with 130. The first run's
/// reports take a moment to write; a run that finished before the second signal landed says
/// nothing about it, and is tried again.
#[test]
fn a_second_sigint_quits_at_once() {
    for attempt in 1..=3 {
        let mut load = start("load", &format!("second-{attempt}"), Words::Plain);
        load.until_line("plan (", STARTS_WITHIN);
        std::thread::sleep(Duration::from_secs(1));
        load.signal(libc::SIGINT);
        load.until_line("linkcert: SIGINT: stopping", STOPS_WITHIN);
        let second = load.signal(libc::SIGINT);
        let (status, took) = load.exit(second);
        let console = load.console();
        let _ = std::fs::remove_dir_all(&load.out);
        if status.code() == Some(3) && !console.contains("again") {
            eprintln!("attempt {attempt}: the run ended before the second signal landed");
            continue;
        }
        assert_eq!(status.code(), Some(130), "{console}");
        assert!(took <= Duration::from_secs(2), "{took:?}:\n{console}");
        assert!(
            console.contains("linkcert: SIGINT again: quitting at once"),
            "{console}"
        );
        return;
    }
    panic!("three runs ended before their second signal landed");
}
