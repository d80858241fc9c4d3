//! The README's and the book's samples of program output, each against a real run of the
//! command it shows: a sample that is no longer what the binary prints fails here, naming the
//! file and the block, with what the program printed. A sample is read out of its markdown file,
//! so editing a doc without running the program fails too.
//!
//! A sample keeps realistic figures where a run's differ from the last (durations, request
//! counts, dates, report directories, how many checks an outage cut short): `placeholders()`
//! reads them as such. `...` in a sample leaves output out: on a line of its own any lines, within
//! a line any text on that line (snapbox's `...` and `[..]`). Every ```text block of the README
//! and the book is one of `SAMPLES`, so a new one cannot go unchecked. The main job runs once for
//! the samples that show it (`main_job`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::broken::{Answer, Defect, Impl, Incoming, Upstream};
use common::outage::{self, Mode};
use linkcert::registry;
use snapbox::{Assert, IntoData, Redactions};

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A ```text block of a markdown file: the file, from the repository root, and which of its
/// text blocks (from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sample {
    file: &'static str,
    nth: usize,
}

/// The tail of the main job's output (`cargo run --release -- check`).
const README_MAIN: Sample = Sample {
    file: "README.md",
    nth: 0,
};
/// The main job's whole output.
const INTRO_MAIN: Sample = Sample {
    file: "docs/src/introduction.md",
    nth: 0,
};
/// `$ linkcert check --accept ...`: every waiver unused against the reference.
const WAIVERS: Sample = Sample {
    file: "docs/src/gating.md",
    nth: 0,
};
/// `$ linkcert check --baseline ... --fail-on new`.
const BASELINE: Sample = Sample {
    file: "docs/src/gating.md",
    nth: 1,
};
/// A GitHub annotation of a failure.
const ANNOTATION: Sample = Sample {
    file: "docs/src/ci.md",
    nth: 0,
};
/// The end of a run whose target went away.
const OUTAGE: Sample = Sample {
    file: "docs/src/incomplete.md",
    nth: 0,
};

const SAMPLES: [Sample; 6] = [
    README_MAIN,
    INTRO_MAIN,
    WAIVERS,
    BASELINE,
    ANNOTATION,
    OUTAGE,
];

fn read(file: &str) -> String {
    let path = Path::new(ROOT).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fenced blocks of a markdown text whose language is `text` or `console`: the line of the
/// opening fence (from 1) and the block's text.
fn text_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match open.take() {
                Some((at, true, text)) => blocks.push((at, text)),
                Some(_) => {}
                None => {
                    let output = matches!(info.trim(), "text" | "console");
                    open = Some((i + 1, output, String::new()));
                }
            }
        } else if let Some((_, _, text)) = open.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    blocks
}

impl Sample {
    /// The line of its opening fence and its text, as the file has it now.
    fn read(self) -> (usize, String) {
        let blocks = text_blocks(&read(self.file));
        blocks.get(self.nth).cloned().unwrap_or_else(|| {
            panic!(
                "{} has {} ```text block(s), no block {} for this sample",
                self.file,
                blocks.len(),
                self.nth + 1
            )
        })
    }
}

/// What differs between runs of one command. Each doc keeps a realistic value; both the sample
/// and the output have it replaced by the placeholder before they are compared.
fn placeholders() -> Redactions {
    let mut r = Redactions::new();
    let mut add = |name: &'static str, re: &str| {
        r.insert(name, regex::Regex::new(re).unwrap()).unwrap();
    };
    // "PASSED in 8.0 s", "1.6 s into the run": the machine's speed and load.
    add("[SECONDS]", r"\b(?<redacted>\d+\.\d+) s\b");
    // Requests: how many rate-limit probes fit in a window; in an outage, when it struck.
    add("[REQUESTS]", r"\b(?<redacted>\d+) requests\b");
    // The default report directory, `reports/<timestamp>/`.
    add("[TIMESTAMP]", r"\breports/(?<redacted>\d{8}-\d{6})/");
    add("[DATE]", r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\b");
    // What an outage cuts short depends on when it strikes.
    add("[NOT_JUDGED]", r"\b(?<redacted>\d+) check\(s\) not judged");
    add("[FAILURES]", r"\bsure after (?<redacted>\d+) failures");
    r
}

/// The sample as snapbox's pattern: `...` within a line becomes `[..]`.
fn pattern(sample: &str) -> String {
    sample
        .lines()
        .map(|l| {
            if l == "..." {
                l.to_string()
            } else {
                l.replace("...", "[..]")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The request counts a text gives, in order.
fn request_counts(text: &str) -> Vec<u64> {
    let re = regex::Regex::new(r"\b(\d+) requests\b").unwrap();
    re.captures_iter(text)
        .map(|c| c[1].parse().unwrap())
        .collect()
}

/// A run of the binary: what it printed and how it ended.
struct Run {
    /// As a reader would type it, `linkcert check ...`.
    command: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Its working directory, where `reports/` went.
    cwd: PathBuf,
}

/// `linkcert args` in `cwd`, outside GitHub (no annotations, no step summary) unless `env`
/// says so.
fn run(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    Run {
        command: format!("linkcert {}", args.join(" ")),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        cwd: cwd.to_path_buf(),
    }
}

/// An empty working directory of this test process.
fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("linkcert-samples-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The main job, `cargo run --release -- check`: the reference certified in-process, reports
/// under `reports/<timestamp>/` of its working directory. One run for every sample of it.
fn main_job() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| run(&workdir("main"), &["check"], &[]))
}

/// Why the sample and the run differ, if they do: the file and block, a diff, what the program
/// printed. `requests_within`: how far (a fraction) the sample's request counts may lie from the
/// run's, so a placeholder still holds a figure of today's runs.
fn compare(
    sample: Sample,
    text: &str,
    line: usize,
    run: &Run,
    requests_within: Option<f64>,
) -> Result<(), String> {
    let redactions = placeholders();
    let expected = redactions.redact(&pattern(text));
    let ctx = || {
        format!(
            "{}, ```text block {} (line {line}), is not what `{}` printed now (exit {:?}).\n\
             Run it and paste its output there; figures that vary may keep a realistic value.",
            sample.file,
            sample.nth + 1,
            run.command,
            run.code
        )
    };
    let printed = || {
        format!(
            "It printed:\n{}\nand on stderr:\n{}",
            run.stdout, run.stderr
        )
    };
    if let Err(diff) = Assert::new().redact_with(redactions).try_eq(
        Some(&run.command),
        run.stdout.clone().into_data(),
        expected.into_data(),
    ) {
        return Err(format!("{}\n{diff}\n{}", ctx(), printed()));
    }
    if let Some(within) = requests_within {
        let (shown, now) = (request_counts(text), request_counts(&run.stdout));
        for (s, n) in shown.iter().zip(&now) {
            if (*s as f64 - *n as f64).abs() > within * *n as f64 {
                return Err(format!(
                    "{}\nIt shows {s} requests, and today's run sent {n}: more than {}% apart.\n{}",
                    ctx(),
                    within * 100.0,
                    printed()
                ));
            }
        }
    }
    Ok(())
}

fn assert_sample(sample: Sample, run: &Run, requests_within: Option<f64>) {
    let (line, text) = sample.read();
    if let Err(e) = compare(sample, &text, line, run, requests_within) {
        panic!("{e}");
    }
}

/// A sample that begins with the command it shows (`$ linkcert check ...`): the arguments,
/// and the output the rest of the block shows.
fn shown_command(sample: Sample) -> (Vec<String>, usize, String) {
    let (line, text) = sample.read();
    let (first, rest) = text.split_once('\n').unwrap();
    let args = first
        .strip_prefix("$ linkcert ")
        .unwrap_or_else(|| panic!("{sample:?} does not begin with `$ linkcert `: {first}"));
    let args = args.split_whitespace().map(str::to_string).collect();
    (args, line, rest.to_string())
}

/// A run of a sample's own command line, in `cwd`.
fn run_shown(sample: Sample, cwd: &Path) -> (Run, usize, String) {
    let (args, line, text) = shown_command(sample);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (run(cwd, &args, &[]), line, text)
}

#[test]
fn the_main_job_prints_the_readme_and_introduction_samples() {
    let r = main_job();
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    // The same seed and targets each run: only these counts move, by a few requests. Both
    // samples are compared before failing, so one run of the test names every stale one.
    let stale: Vec<String> = [README_MAIN, INTRO_MAIN]
        .into_iter()
        .filter_map(|s| {
            let (line, text) = s.read();
            compare(s, &text, line, r, Some(0.05)).err()
        })
        .collect();
    assert!(stale.is_empty(), "{}", stale.join("\n\n"));
    // The reports are where the run says, under its working directory.
    let first = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("reports: "))
        .and_then(|l| l.split(", ").next())
        .unwrap_or_else(|| panic!("no reports line in:\n{}", r.stdout));
    assert!(
        r.cwd.join(first).is_file(),
        "{first} in {}",
        r.cwd.display()
    );
}

/// The main job's report directory, `reports/<timestamp>/` under its working directory.
fn main_job_reports() -> PathBuf {
    let mut dirs = std::fs::read_dir(main_job().cwd.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path());
    dirs.next().expect("the main job wrote its reports")
}

/// The clause coverage the book states for the main job is the run's, and load's is the
/// registry's.
#[test]
fn the_coverage_page_states_the_main_jobs_clause_coverage() {
    let r = main_job();
    let re = regex::Regex::new(
        r"clauses exercised (\d+)/(\d+) enforceable \((\d+) in the spec document\)",
    )
    .unwrap();
    let c = re
        .captures(&r.stdout)
        .unwrap_or_else(|| panic!("no coverage line in:\n{}", r.stdout));
    // Compared as words: a reflowed paragraph says the same.
    let page = read("docs/src/coverage.md");
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!(
        "Against the reference with its development keys: {} of {} enforceable clauses \
         exercised, {} in the document",
        &c[1], &c[2], &c[3]
    );
    assert!(
        page.contains(&said),
        "docs/src/coverage.md does not say what `linkcert check` printed now ({}): {said}",
        &c[0]
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(main_job_reports().join("report.json")).unwrap())
            .unwrap();
    for s in report["coverage"]["skipped"].as_array().unwrap() {
        let clause = format!("`{}`", s["clause"].as_str().unwrap());
        assert!(
            page.contains(&clause),
            "docs/src/coverage.md does not name {clause}, which the main job did not exercise"
        );
    }
    let load = linkcert::spec::clauses::clauses()
        .unwrap()
        .iter()
        .filter(|c| !registry::enforcing(registry::Command::Load, &c.id).is_empty())
        .count();
    let said = format!("a `load` run counts the {load} clauses its rules enforce");
    assert!(
        page.contains(&said),
        "docs/src/coverage.md does not say `{said}`, as `linkcert catalogue` counts them"
    );
}

#[test]
fn check_with_the_real_services_waivers_prints_the_waiver_sample() {
    let cwd = workdir("waivers");
    std::fs::create_dir_all(cwd.join("examples")).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("examples/accept-real-service.toml"),
        cwd.join("examples/accept-real-service.toml"),
    )
    .unwrap();
    let (r, line, text) = run_shown(WAIVERS, &cwd);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    if let Err(e) = compare(WAIVERS, &text, line, &r, Some(0.05)) {
        panic!("{e}");
    }
}

#[test]
fn check_against_a_baseline_prints_the_baseline_sample() {
    // The baseline: the main job's report, where the sample's command finds it.
    let cwd = workdir("baseline");
    let dir = main_job_reports();
    std::fs::create_dir_all(cwd.join("reports/last")).unwrap();
    std::fs::copy(
        dir.join("report.json"),
        cwd.join("reports/last/report.json"),
    )
    .unwrap();
    let (r, line, text) = run_shown(BASELINE, &cwd);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    if let Err(e) = compare(BASELINE, &text, line, &r, Some(0.05)) {
        panic!("{e}");
    }
}

/// The reference behind a proxy that answers 401 with the code `forbidden`: `envelope.code`
/// fails, and on GitHub each failure is an annotation.
#[test]
fn a_failure_on_github_prints_the_annotation_sample() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let wrong_code = Defect::after(|_: &Incoming, ans: &mut Answer| {
        if ans.status == 401 {
            ans.body = br#"{"error":{"code":"forbidden","message":"no","doc_url":"https://d/errors#forbidden"}}"#.to_vec();
        }
    });
    let b = rt.block_on(common::broken::broken_on(Impl::Reference, 6.0, wrong_code));
    let cwd = workdir("annotation");
    let mut args = vec![
        "check".to_string(),
        "--target".into(),
        b.url.clone(),
        "--rate-window".into(),
        "6".into(),
        "--ci".into(),
        "github".into(),
        "--only".into(),
        "auth".into(),
        "--only".into(),
        "envelope".into(),
    ];
    for k in &b.target().keys {
        args.extend(["--key".into(), format!("{}={}", k.plan, k.key)]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let summary = cwd.join("step-summary.md");
    let r = run(&cwd, &args, &[("GITHUB_STEP_SUMMARY", &summary)]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert_sample(ANNOTATION, &r, None);
    drop(b);
}

/// The target goes away 1.5 s into the run (its port refuses, as a process that died): the run
/// ends INCOMPLETE, saying when and how.
#[test]
fn a_target_that_goes_away_prints_the_outage_sample() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let upstream = rt.block_on(Upstream::start(Impl::Reference, 6.0));
    let proxy = rt.block_on(outage::start(
        upstream.base_url(),
        Mode::Refuse,
        std::time::Duration::from_millis(1500),
    ));
    let cwd = workdir("outage");
    let mut args = vec![
        "check".to_string(),
        "--target".into(),
        proxy.url.clone(),
        "--insecure".into(),
        "--rate-window".into(),
        "6".into(),
    ];
    for k in &upstream.target().keys {
        args.extend(["--key".into(), format!("{}={}", k.plan, k.key)]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&cwd, &args, &[]);
    assert_eq!(r.code, Some(3), "{}\n{}", r.stdout, r.stderr);
    // When the outage strikes moves the request count too much to hold it to the sample's.
    assert_sample(OUTAGE, &r, None);
    drop(proxy);
    drop(upstream);
}

/// The install page shows `--version`'s answer in a comment.
#[test]
fn version_prints_what_the_install_page_shows() {
    let page = read("docs/src/install.md");
    let shown = page
        .lines()
        .find_map(|l| l.strip_prefix("linkcert --version"))
        .and_then(|rest| rest.split_once("# "))
        .map(|(_, answer)| answer.trim())
        .expect("docs/src/install.md shows `linkcert --version     # <its answer>`");
    let out = Command::new(BIN).arg("--version").output().unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        shown,
        printed.trim(),
        "docs/src/install.md shows another answer than `linkcert --version` prints"
    );
}

/// The synopses of `load`, `serve` and sharded `load` (hand-written, not output) name only
/// flags the commands take: a flag renamed or removed fails here.
#[test]
fn the_synopses_name_only_flags_the_commands_take() {
    let mut checked = 0;
    for file in [
        "docs/src/load.md",
        "docs/src/server.md",
        "docs/src/sharding.md",
    ] {
        let page = read(file);
        let block = page
            .lines()
            .skip_while(|l| *l != "```sh")
            .skip(1)
            .take_while(|l| *l != "```");
        // Each `linkcert <subcommand>` line with the lines that continue it.
        let mut shown: Vec<(Vec<&str>, Vec<&str>)> = Vec::new();
        for line in block {
            if let Some(rest) = line.strip_prefix("linkcert ") {
                let command = rest
                    .split_whitespace()
                    .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
                    .collect();
                shown.push((command, Vec::new()));
            }
            let (_, flags) = shown
                .last_mut()
                .unwrap_or_else(|| panic!("{file}: its synopsis does not begin `linkcert `"));
            flags.extend(
                line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .filter(|w| w.starts_with("--")),
            );
        }
        for (command, flags) in shown {
            let out = Command::new(BIN)
                .args(&command)
                .arg("--help")
                .output()
                .unwrap();
            let help = String::from_utf8(out.stdout).unwrap();
            let known: Vec<&str> = help
                .split(|c: char| c.is_whitespace() || "[],=<>".contains(c))
                .collect();
            let command = command.join(" ");
            for flag in flags {
                assert!(
                    known.contains(&flag),
                    "{file} shows `linkcert {command} {flag}`, which `linkcert {command} --help` \
                     does not list"
                );
                checked += 1;
            }
        }
    }
    // The synopses were found and read: load's 11 flags, serve's 7, sharding's 8.
    assert!(checked >= 20, "only {checked} flags in the synopses");
}

/// Every output block of the README and the book is a sample this file checks.
#[test]
fn every_text_block_of_the_readme_and_the_book_is_a_checked_sample() {
    let mut files = vec!["README.md".to_string()];
    let mut stack = vec![Path::new(ROOT).join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(ROOT).unwrap();
                files.push(rel.display().to_string());
            }
        }
    }
    let mut found = 0;
    for file in &files {
        for (nth, (line, _)) in text_blocks(&read(file)).iter().enumerate() {
            found += 1;
            assert!(
                SAMPLES.iter().any(|s| s.file == file && s.nth == nth),
                "{file}:{line}: a ```text block that tests/it/samples.rs does not check; \
                 add it to SAMPLES with a run that prints it"
            );
        }
    }
    assert_eq!(
        found,
        SAMPLES.len(),
        "a sample's block is gone from its file"
    );
}

/// What a user who edits a sample by hand gets: the file, the block, and what was printed;
/// and figures that vary are placeholders, but a stale request count is not.
#[test]
fn an_edited_sample_fails_naming_the_file_and_block_and_showing_the_output() {
    let run = Run {
        command: "linkcert check".into(),
        code: Some(0),
        stdout: "total          141     0\nPASSED in 10.5 s, 1570 requests, seed 1\nreports: reports/20261127-073732/report.json\n".into(),
        stderr: String::new(),
        cwd: PathBuf::new(),
    };
    let s = README_MAIN;
    let today = "...\nPASSED in 8.0 s, 1568 requests, seed 1\nreports: reports/20261126-101010/report.json\n";
    compare(s, today, 3, &run, Some(0.05)).unwrap();
    let edited = "total          113     0\n...\n";
    let e = compare(s, edited, 3, &run, Some(0.05)).unwrap_err();
    assert!(e.contains("README.md, ```text block 1 (line 3)"), "{e}");
    assert!(e.contains("`linkcert check`"), "{e}");
    assert!(e.contains("It printed:\ntotal          141"), "{e}");
    let stale = "...\nPASSED in 6.3 s, 903 requests, seed 1\n...\n";
    let e = compare(s, stale, 3, &run, Some(0.05)).unwrap_err();
    assert!(
        e.contains("It shows 903 requests, and today's run sent 1570"),
        "{e}"
    );
    let other_seed = "...\nPASSED in 8.0 s, 1568 requests, seed 2\n...\n";
    assert!(compare(s, other_seed, 3, &run, None).is_err());
}
