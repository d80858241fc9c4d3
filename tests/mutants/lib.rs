//! The mutation measure's record and its page (issue 41). `benches/mutants` leaves
//! cargo-mutants' output under `target/mutants/`; `mutants-page record` keeps what a run found
//! (each mutant's outcome, and the checks that failed on the ones caught) in
//! `tests/mutants/record/`, and `mutants-page` writes `docs/src/mutants.md` from those records
//! and from `fates.toml`, the fate of every mutant the first run left alive.

use std::fmt::Write as _;
use std::path::Path;

use regex::Regex;
use serde::Deserialize;
use thiserror::Error;

mod record;
use record::read_runs;
pub use record::{Mutant, Outcome, Run, Shard};

/// The command that writes the page, named in its header.
pub const PAGE_COMMAND: &str = "cargo run -p linkcert-mutants --bin mutants-page";

#[derive(Debug, Error)]
pub enum MeasureError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not cargo-mutants' outcomes: {source}")]
    Outcomes {
        path: String,
        source: serde_json::Error,
    },
    #[error("record line {line}: {why}")]
    Record { line: usize, why: String },
    #[error("fates.toml: {0}")]
    Fates(String),
    #[error("{0}")]
    Page(String),
}

pub(crate) fn read(path: &Path) -> Result<String, MeasureError> {
    std::fs::read_to_string(path).map_err(|source| MeasureError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// What became of a mutant the first run left alive, when no later run caught it.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Fate {
    /// No request can observe it.
    Equivalent,
    /// A request observes it, but what it answers is another answer the spec allows: a check
    /// that failed it would fail a conforming target.
    Legal,
    /// Observable and not allowed, and no check sees it yet.
    Open,
}

impl Fate {
    fn word(self) -> &'static str {
        match self {
            Fate::Equivalent => "equivalent",
            Fate::Legal => "legal",
            Fate::Open => "open",
        }
    }
}

/// A class of survivors: the mutants its patterns match, one fate, one reason.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    pub name: String,
    pub fate: Fate,
    pub why: String,
    /// Regular expressions over cargo-mutants' mutant names.
    pub matches: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fates {
    #[serde(rename = "class")]
    pub classes: Vec<Class>,
}

impl Fates {
    pub fn parse(text: &str) -> Result<Fates, MeasureError> {
        toml::from_str(text).map_err(|e| MeasureError::Fates(e.to_string()))
    }
}

/// Every survivor of the first run and what became of it.
pub struct Measure<'a> {
    pub first: &'a Run,
    /// Later runs over some of them, oldest first: a later outcome overrides an earlier one.
    pub later: &'a [(&'a str, Run)],
    pub fates: &'a Fates,
}

enum Became<'a> {
    /// By a later run (its name), failing these checks.
    Caught(&'a str, &'a [String]),
    Fated(usize),
}

impl Measure<'_> {
    /// What became of each survivor; an error names a survivor no class (or two) takes, a
    /// class that takes none, and a pattern that is no regex.
    fn fates(&self) -> Result<Vec<(&Mutant, Became<'_>)>, MeasureError> {
        let mut res = Vec::new();
        for c in &self.fates.classes {
            let mut rs = Vec::new();
            for p in &c.matches {
                rs.push(
                    Regex::new(p).map_err(|e| MeasureError::Fates(format!("{}: {e}", c.name)))?,
                );
            }
            res.push(rs);
        }
        let mut used = vec![false; res.len()];
        let mut out = Vec::new();
        let mut problems = Vec::new();
        for m in self
            .first
            .mutants
            .iter()
            .filter(|m| m.outcome == Outcome::Missed)
        {
            let later = self.later.iter().rev().find_map(|(run, r)| {
                r.mutants
                    .iter()
                    .find(|x| x.name == m.name)
                    .map(|x| (*run, x))
            });
            let classes: Vec<usize> = (0..res.len())
                .filter(|&i| res[i].iter().any(|r| r.is_match(&m.name)))
                .collect();
            for &i in &classes {
                used[i] = true;
            }
            match (later, classes.as_slice()) {
                (Some((run, x)), _) if x.outcome.caught() => {
                    out.push((m, Became::Caught(run, x.checks.as_slice())))
                }
                (_, [i]) => out.push((m, Became::Fated(*i))),
                (_, []) => problems.push(format!("no class in fates.toml takes {}", m.name)),
                (_, many) => problems.push(format!(
                    "{} is taken by {} classes: {}",
                    m.name,
                    many.len(),
                    many.iter()
                        .map(|&i| self.fates.classes[i].name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        for (i, u) in used.iter().enumerate() {
            if !u {
                problems.push(format!(
                    "class \"{}\" takes no survivor of the first run",
                    self.fates.classes[i].name
                ));
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(MeasureError::Page(problems.join("\n")))
        }
    }

    /// `docs/src/mutants.md`.
    pub fn page(&self) -> Result<String, MeasureError> {
        let fated = self.fates()?;
        let first = self.first;
        let (caught, timeout, missed, unviable) = (
            first.count(Outcome::Caught),
            first.count(Outcome::Timeout),
            first.count(Outcome::Missed),
            first.count(Outcome::Unviable),
        );
        let since = fated
            .iter()
            .filter(|(_, b)| matches!(b, Became::Caught(..)))
            .count();
        let of = |f: Fate| {
            fated
                .iter()
                .filter(|(_, b)| matches!(b, Became::Fated(i) if self.fates.classes[*i].fate == f))
                .count()
        };
        let (equivalent, legal, open) = (of(Fate::Equivalent), of(Fate::Legal), of(Fate::Open));
        let viable = caught + timeout + missed;
        let caught_now = caught + timeout + since;
        let pct = |n: usize, d: usize| {
            if d == 0 {
                0.0
            } else {
                100.0 * n as f64 / d as f64
            }
        };
        let minutes = first.shards.iter().map(|s| s.seconds).sum::<u64>() as f64 / 60.0;
        let mut s = String::new();
        let _ = writeln!(s, "# Mutation testing\n");
        let _ = writeln!(
            s,
            "*Generated by `{PAGE_COMMAND}` from `tests/mutants/record/` and \
             `tests/mutants/fates.toml`; do not edit.*\n"
        );
        s.push_str(INTRO);
        let _ = writeln!(s, "\n## Score\n");
        let _ = writeln!(s, "| Mutants | Count |\n|---|---:|");
        for (what, n) in [
            ("tried by the first run", first.mutants.len()),
            ("unviable (do not compile)", unviable),
            ("caught by the first run", caught),
            ("ended by the timeout (caught)", timeout),
            ("left alive by the first run", missed),
            ("of those, caught since by a check added", since),
            ("of those, equivalent: no request observes them", equivalent),
            ("of those, legal: another answer the spec allows", legal),
            (
                "of those, open: observable, allowed by no clause, seen by no check",
                open,
            ),
        ] {
            let _ = writeln!(s, "| {what} | {n} |");
        }
        let _ = writeln!(
            s,
            "\nCaught, of the viable mutants that are not equivalent: **{:.1}%** ({caught_now} of \
             {}). Counting the legal ones out as well (no check may fail a conforming answer): \
             **{:.1}%** ({caught_now} of {}).\n",
            pct(caught_now, viable - equivalent),
            viable - equivalent,
            pct(caught_now, viable - equivalent - legal),
            viable - equivalent - legal,
        );
        // What the first figure can reach at most: every survivor but the legal ones caught.
        // A check that caught a legal one would fail a conforming target.
        let _ = writeln!(
            s,
            "With every open survivor caught as well, the first figure would be **{:.1}%** \
             ({} of {}): the legal survivors ({legal}) are the rest of it, and only a check that \
             failed a conforming answer could catch them.\n",
            pct(caught_now + open, viable - equivalent),
            caught_now + open,
            viable - equivalent,
        );
        let _ = writeln!(
            s,
            "The first run took {minutes:.0} minutes in {} shards:\n",
            first.shards.len()
        );
        let _ = writeln!(
            s,
            "| Shard | Commit | Mutants | Caught | Timeout | Missed | Unviable | Minutes |\n\
             |---|---|---:|---:|---:|---:|---:|---:|"
        );
        let mut at = 0;
        for sh in &first.shards {
            let part = first.mutants.get(at..at + sh.mutants).unwrap_or(&[]);
            at += sh.mutants;
            let n = |o: Outcome| part.iter().filter(|m| m.outcome == o).count();
            let _ = writeln!(
                s,
                "| {} | `{}` | {} | {} | {} | {} | {} | {:.1} |",
                sh.label,
                sh.commit.get(..7).unwrap_or(&sh.commit),
                sh.mutants,
                n(Outcome::Caught),
                n(Outcome::Timeout),
                n(Outcome::Missed),
                n(Outcome::Unviable),
                sh.seconds as f64 / 60.0
            );
        }
        for (run, r) in self.later {
            let _ = writeln!(
                s,
                "\nLater run `{run}`, over survivors of the first: {} mutants, {} caught, {} \
                 missed, {:.0} minutes.",
                r.mutants.len(),
                r.mutants.iter().filter(|m| m.outcome.caught()).count(),
                r.count(Outcome::Missed),
                r.shards.iter().map(|s| s.seconds).sum::<u64>() as f64 / 60.0
            );
        }
        let _ = writeln!(s, "\n## Survivors of the first run\n");
        let caught_since: Vec<_> = fated
            .iter()
            .filter_map(|(m, b)| match b {
                Became::Caught(run, checks) => Some((m, run, checks)),
                Became::Fated(_) => None,
            })
            .collect();
        if !caught_since.is_empty() {
            let _ = writeln!(s, "### Caught since\n");
            for (m, run, checks) in caught_since {
                let _ = writeln!(
                    s,
                    "- `{}`: caught by `{}` (run `{run}`)",
                    m.name,
                    if checks.is_empty() {
                        "the timeout".to_string()
                    } else {
                        checks.join("`, `").replace('!', "")
                    }
                );
            }
            s.push('\n');
        }
        for fate in [Fate::Open, Fate::Legal, Fate::Equivalent] {
            for (i, c) in self.fates.classes.iter().enumerate() {
                if c.fate != fate {
                    continue;
                }
                let ms: Vec<_> = fated
                    .iter()
                    .filter(|(_, b)| matches!(b, Became::Fated(j) if *j == i))
                    .map(|(m, _)| m)
                    .collect();
                if ms.is_empty() {
                    continue;
                }
                let _ = writeln!(s, "### {}: {} ({})\n", fate.word(), c.name, ms.len());
                let _ = writeln!(s, "{}\n", c.why.trim());
                for m in ms {
                    let _ = writeln!(s, "- `{}`", m.name);
                }
                s.push('\n');
            }
        }
        Ok(s.trim_end().to_string() + "\n")
    }
}

const INTRO: &str = "\
How much of the reference implementation `check` pins down. cargo-mutants changes the \
reference's own code (the server, `crates/server`, and the QR encoder, `crates/qr-encode`) one \
small step at a time, and the test of each mutant is `check` against it: the main job, in \
process (`tests/mutants/mutants.rs`), the reference sending its optional IETF RateLimit fields \
(`serve --ratelimit-fields`, judged by `ratelimit.fields`) so that what it says there is measured \
too, and listening on 127.0.0.2 (on Linux), an address its self-signed certificate names only \
because the reference listens there, as a user's `serve --listen` would. Any outcome but PASSED catches the mutant; a mutant that hangs the server is ended by the \
timeout and counts as caught.

Code the reference shares with the tester is outside the measure: the spec (`crates/spec`), the \
rate-header rules and the limiter's model (`crates/rate`), the window and the clock. A mutant \
there changes what `check` expects as well as what the reference answers, so surviving it says \
nothing about `check`. Nothing else is excluded.

A survivor is one of three things. **Equivalent**: no request can observe it (a capacity hint, \
a test hook of the in-process server). **Legal**: a request observes it, but the answer is one \
the spec allows (a QR mask, the look of a logo, the data a workspace is seeded with): a check \
that failed it would fail a conforming target, and a false verdict costs as much as a missed \
bug. **Open**: a gap in `check`.

Run it: `benches/mutants` (every mutant, in four shards one after another), \
`benches/mutants --shard 1/4` (one), or the mutants of a change only: \
`git diff main > /tmp/d && benches/mutants --in-diff /tmp/d`. After closing a gap, try again \
the survivors that have no fate yet: \
`benches/mutants --re \"$(cargo run -q -p linkcert-mutants --bin mutants-page -- unfated)\"`. \
Keep a run, `cargo run -p linkcert-mutants --bin mutants-page -- record NAME` (records are \
read in name order: the first is the run whose survivors are listed, a later one says which \
of them a check catches now), and write this page again: \
`cargo run -p linkcert-mutants --bin mutants-page`.
";

/// The first run's survivors that no later run caught and no class of fates.toml takes, as
/// one regex for `benches/mutants --re`: what to try again after closing a gap.
pub fn unfated_regex(root: &Path) -> Result<Option<String>, MeasureError> {
    let runs = read_runs(root)?;
    let Some(((_, first), later)) = runs.split_first() else {
        return Ok(None);
    };
    let fates = Fates::parse(&read(&root.join("tests/mutants/fates.toml"))?)?;
    let mut patterns = Vec::new();
    for c in &fates.classes {
        for p in &c.matches {
            patterns
                .push(Regex::new(p).map_err(|e| MeasureError::Fates(format!("{}: {e}", c.name)))?);
        }
    }
    let caught_later = |name: &str| {
        later.iter().any(|(_, r)| {
            r.mutants
                .iter()
                .any(|x| x.name == name && x.outcome.caught())
        })
    };
    let names: Vec<String> = first
        .mutants
        .iter()
        .filter(|m| m.outcome == Outcome::Missed)
        .filter(|m| !patterns.iter().any(|p| p.is_match(&m.name)) && !caught_later(&m.name))
        .map(|m| regex::escape(&m.name))
        .collect();
    Ok((!names.is_empty()).then(|| format!("^({})$", names.join("|"))))
}

/// The page from the records and fates under `root` (the repository).
pub fn page_from(root: &Path) -> Result<String, MeasureError> {
    let runs = read_runs(root)?;
    let Some(((_, first), later)) = runs.split_first() else {
        return Err(MeasureError::Page(
            "no record under tests/mutants/record".to_string(),
        ));
    };
    let later: Vec<(&str, Run)> = later.iter().map(|(n, r)| (n.as_str(), r.clone())).collect();
    let fates = Fates::parse(&read(&root.join("tests/mutants/fates.toml"))?)?;
    Measure {
        first,
        later: &later,
        fates: &fates,
    }
    .page()
}
