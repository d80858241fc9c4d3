//! A kept run: cargo-mutants' outcomes of one run (`target/mutants/<name>/`), as
//! `tests/mutants/record/<name>.tsv` keeps them, each mutant with the checks that caught it.

use std::fmt::Write as _;
use std::path::Path;

use linkcert_spec::clock::parse_rfc3339;
use serde::Deserialize;

use crate::{MeasureError, read};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Caught,
    /// Ended by cargo-mutants' timeout: the mutant hung the server, and counts as caught.
    Timeout,
    Missed,
    /// Does not compile.
    Unviable,
}

impl Outcome {
    fn word(self) -> &'static str {
        match self {
            Outcome::Caught => "caught",
            Outcome::Timeout => "timeout",
            Outcome::Missed => "missed",
            Outcome::Unviable => "unviable",
        }
    }
    fn from_word(w: &str) -> Option<Outcome> {
        [
            Outcome::Caught,
            Outcome::Timeout,
            Outcome::Missed,
            Outcome::Unviable,
        ]
        .into_iter()
        .find(|o| o.word() == w)
    }
    pub fn caught(self) -> bool {
        matches!(self, Outcome::Caught | Outcome::Timeout)
    }
}

/// One shard of a run, as cargo-mutants ended it.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    pub label: String,
    pub commit: String,
    pub mutants: usize,
    pub seconds: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mutant {
    pub outcome: Outcome,
    /// The checks that failed, when caught (empty for a timeout).
    pub checks: Vec<String>,
    pub name: String,
}

/// A run: its shards and every mutant it tried.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    pub shards: Vec<Shard>,
    pub mutants: Vec<Mutant>,
}

#[derive(Deserialize)]
struct Outcomes {
    outcomes: Vec<OutcomeJson>,
    total_mutants: usize,
    start_time: String,
    end_time: String,
}

#[derive(Deserialize)]
struct OutcomeJson {
    scenario: serde_json::Value,
    summary: String,
    log_path: Option<String>,
}

/// Why a test failed that names no check (`!` and this in the record): `check` refused to run
/// or could not reach the reference, or the reference crashed.
fn failure_without_check(log: &str) -> String {
    let mut lines = log.lines();
    let said = if lines.any(|l| l.contains("panicked at")) {
        lines.next().unwrap_or("a panic")
    } else if log.contains("memory allocation of") {
        "the reference ran out of memory"
    } else {
        "the test failed"
    };
    said.chars()
        .filter(|c| !matches!(c, ',' | '\t'))
        .take(80)
        .collect()
}

impl Run {
    /// A shard from cargo-mutants' output directory (`…/mutants.out`), ran at `commit`; the
    /// checks that caught a mutant are the FAIL lines of its log (the test prints the report).
    pub fn add_shard(&mut self, label: &str, commit: &str, out: &Path) -> Result<(), MeasureError> {
        let path = out.join("outcomes.json");
        let o: Outcomes =
            serde_json::from_str(&read(&path)?).map_err(|source| MeasureError::Outcomes {
                path: path.display().to_string(),
                source,
            })?;
        for x in o.outcomes {
            let Some(name) = x.scenario.pointer("/Mutant/name").and_then(|n| n.as_str()) else {
                continue; // the baseline
            };
            let outcome = match x.summary.as_str() {
                "CaughtMutant" => Outcome::Caught,
                "MissedMutant" => Outcome::Missed,
                "Timeout" => Outcome::Timeout,
                "Unviable" => Outcome::Unviable,
                other => {
                    return Err(MeasureError::Page(format!(
                        "{}: {name}: an outcome this record does not know: {other}",
                        path.display()
                    )));
                }
            };
            let mut checks = Vec::new();
            if outcome == Outcome::Caught
                && let Some(log) = x.log_path
            {
                let log = read(&out.join(log))?;
                for line in log.lines() {
                    if let Some(id) = line.strip_prefix("FAIL ").and_then(|r| r.split(' ').next())
                        && !checks.iter().any(|c| c == id)
                    {
                        checks.push(id.to_string());
                    }
                }
                if checks.is_empty() {
                    checks.push(format!("!{}", failure_without_check(&log)));
                }
            }
            self.mutants.push(Mutant {
                outcome,
                checks,
                name: name.to_string(),
            });
        }
        self.shards.push(Shard {
            label: label.to_string(),
            commit: commit.to_string(),
            mutants: o.total_mutants,
            seconds: parse_rfc3339(&o.end_time)
                .zip(parse_rfc3339(&o.start_time))
                .map_or(0, |(end, start)| (end - start).max(0.0).round() as u64),
        });
        Ok(())
    }

    /// The record's text: a `shard` line a shard, a line a mutant, tab-separated.
    pub fn to_text(&self) -> String {
        let mut s = String::from(
            "# Written by `mutants-page record`: shard<TAB>label<TAB>commit<TAB>mutants<TAB>seconds, \
             then outcome<TAB>checks that failed<TAB>mutant.\n",
        );
        for sh in &self.shards {
            let _ = writeln!(
                s,
                "shard\t{}\t{}\t{}\t{}",
                sh.label, sh.commit, sh.mutants, sh.seconds
            );
        }
        for m in &self.mutants {
            let _ = writeln!(
                s,
                "{}\t{}\t{}",
                m.outcome.word(),
                m.checks.join(","),
                m.name
            );
        }
        s
    }

    pub fn parse(text: &str) -> Result<Run, MeasureError> {
        let mut run = Run::default();
        for (i, line) in text.lines().enumerate() {
            let bad = |why: &str| MeasureError::Record {
                line: i + 1,
                why: why.to_string(),
            };
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["shard", label, commit, mutants, seconds] => run.shards.push(Shard {
                    label: label.to_string(),
                    commit: commit.to_string(),
                    mutants: mutants.parse().map_err(|_| bad("mutants: not a count"))?,
                    seconds: seconds.parse().map_err(|_| bad("seconds: not a count"))?,
                }),
                [word, checks, name] => run.mutants.push(Mutant {
                    outcome: Outcome::from_word(word).ok_or_else(|| bad("unknown outcome"))?,
                    checks: checks
                        .split(',')
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect(),
                    name: name.to_string(),
                }),
                _ => return Err(bad("neither a shard nor a mutant")),
            }
        }
        Ok(run)
    }

    pub fn count(&self, o: Outcome) -> usize {
        self.mutants.iter().filter(|m| m.outcome == o).count()
    }
}

/// The kept runs, in name order.
pub(crate) fn read_runs(root: &Path) -> Result<Vec<(String, Run)>, MeasureError> {
    let dir = root.join("tests/mutants/record");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|source| MeasureError::Io {
            path: dir.display().to_string(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "tsv"))
        .collect();
    names.sort();
    let mut runs = Vec::new();
    for p in &names {
        let name = p.file_stem().and_then(|n| n.to_str()).unwrap_or("run");
        runs.push((name.to_string(), Run::parse(&read(p)?)?));
    }
    Ok(runs)
}
