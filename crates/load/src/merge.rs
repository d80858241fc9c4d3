//! One verdict from the shards of a run (`linkcert load merge`): scenarios that ran in one
//! shard are taken as they are; a fleet split over shards is put back together exactly
//! (counts add, per-key figures are disjoint, latency histograms merge without loss, the
//! across-keys rules are judged again over every key). A shard missing, failed or started
//! late makes the run incomplete; shards of another run are refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::judge::histogram::Latencies;
use super::judge::{self, ScenarioResult, ScenarioVerdict};
use super::report::LoadReport;
use super::shard::{START_TOLERANCE_SECS, ShardMeta, ShardRecord};
use linkcert_run::target::Target;
use linkcert_spec::Spec;

/// The file a shard writes beside its reports.
pub const SHARD_FILE: &str = "shard.json";

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{dir}: {problem}")]
    Unreadable { dir: String, problem: String },
    #[error("{dir} is of another run than {first}: its {what} is {theirs}, not {ours}")]
    OtherRun {
        dir: String,
        first: String,
        what: &'static str,
        theirs: String,
        ours: String,
    },
    #[error("shard {shard} is given twice: {a} and {b}")]
    Twice { shard: String, a: String, b: String },
    #[error("no shard to merge: none of the directories holds a {SHARD_FILE}")]
    Nothing,
}

/// A shard directory as read: its record, or why it has none (killed before writing it).
pub fn read(dir: &Path) -> Result<Option<ShardRecord>, MergeError> {
    let path = dir.join(SHARD_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir.is_dir() => return Ok(None),
        Err(e) => {
            return Err(MergeError::Unreadable {
                dir: dir.display().to_string(),
                problem: format!("cannot read {SHARD_FILE}: {e}"),
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| MergeError::Unreadable {
            dir: dir.display().to_string(),
            problem: format!("{SHARD_FILE} is not a linkcert shard record: {e}"),
        })
}

/// Merge the shards read from `dirs` (None: a directory without a record) into one report.
pub fn merge(
    spec: &Spec,
    shards: Vec<(PathBuf, Option<ShardRecord>)>,
) -> Result<LoadReport, MergeError> {
    let mut problems: Vec<String> = Vec::new();
    let mut records: Vec<(PathBuf, ShardRecord)> = Vec::new();
    for (dir, rec) in shards {
        match rec {
            Some(r) => records.push((dir, r)),
            None => problems.push(format!(
                "{} holds no {SHARD_FILE}: the shard was killed or failed before it finished",
                dir.display()
            )),
        }
    }
    let Some((first_dir, first)) = records.first().cloned() else {
        return Err(MergeError::Nothing);
    };
    let mut by_index: BTreeMap<usize, PathBuf> = BTreeMap::new();
    for (dir, r) in &records {
        same_run(&first_dir, &first.meta, dir, &r.meta)?;
        if let Some(a) = by_index.insert(r.meta.shard.index, dir.clone()) {
            return Err(MergeError::Twice {
                shard: r.meta.shard.label(),
                a: a.display().to_string(),
                b: dir.display().to_string(),
            });
        }
    }
    let count = first.meta.shard.count;
    let missing: Vec<String> = (1..=count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        problems.push(format!("shard {} not given", missing.join(", ")));
    }
    for (dir, r) in &records {
        if let Some(why) = part_incomplete(r) {
            problems.push(format!(
                "shard {} ({}): {why}",
                r.meta.shard.label(),
                dir.display()
            ));
        }
    }
    Ok(report(spec, &first.meta, records, problems))
}

/// Why a shard's part does not count as run, if it does not.
fn part_incomplete(r: &ShardRecord) -> Option<String> {
    if let Some(why) = &r.incomplete {
        return Some(why.clone());
    }
    match r.meta.start_offset_secs {
        None => Some("did not start".into()),
        Some(late) if late > START_TOLERANCE_SECS => Some(format!(
            "started {late:.1} s after --start-at (tolerance {START_TOLERANCE_SECS} s)"
        )),
        _ => (r.verdict == ScenarioVerdict::Incomplete)
            .then(|| "its run is incomplete (see its own load.md)".into()),
    }
}

/// Shards of one run share the run id, the target, the scenarios, the keys and the count.
fn same_run(first_dir: &Path, a: &ShardMeta, dir: &Path, b: &ShardMeta) -> Result<(), MergeError> {
    let differ = |what: &'static str, ours: String, theirs: String| {
        (ours != theirs).then(|| MergeError::OtherRun {
            dir: dir.display().to_string(),
            first: first_dir.display().to_string(),
            what,
            theirs,
            ours,
        })
    };
    let checks = [
        differ("run id", a.run_id.clone(), b.run_id.clone()),
        differ("target", a.target.clone(), b.target.clone()),
        differ(
            "scenario set",
            a.scenarios.join(", "),
            b.scenarios.join(", "),
        ),
        differ(
            "shard count",
            a.shard.count.to_string(),
            b.shard.count.to_string(),
        ),
        differ("key count", a.keys.to_string(), b.keys.to_string()),
        differ("start time", a.start_at.to_string(), b.start_at.to_string()),
    ];
    match checks.into_iter().flatten().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The merged report: each scenario from the shards that ran it, in the run's order.
fn report(
    spec: &Spec,
    meta: &ShardMeta,
    records: Vec<(PathBuf, ShardRecord)>,
    problems: Vec<String>,
) -> LoadReport {
    let target = Target {
        base_url: meta.target.parse().unwrap_or_default(),
        ..Target::default()
    };
    let mut report = LoadReport::new(spec, &target, meta.start_at.max(0.0) as u64);
    let labels = records
        .iter()
        .map(|(_, r)| r.labels.clone())
        .max_by_key(Vec::len)
        .unwrap_or_default();
    report.window_secs = records
        .iter()
        .flat_map(|(_, r)| &r.scenarios)
        .find(|s| s.class == spec.default_rate_class && s.window_secs > 0.0)
        .map_or(report.window_secs, |s| s.window_secs);
    let mut shards: Vec<ShardMeta> = records.iter().map(|(_, r)| r.meta.clone()).collect();
    shards.sort_by_key(|m| m.shard.index);
    for name in &meta.scenarios {
        let parts: Vec<ScenarioResult> = records
            .iter()
            .flat_map(|(_, r)| &r.scenarios)
            .filter(|s| &s.name == name && !ran_elsewhere(s))
            .cloned()
            .collect();
        if let Some(s) = join(parts) {
            report.scenarios.push(s);
        }
    }
    report.incomplete = (!problems.is_empty()).then(|| problems.join("; "));
    report.run.duration_secs = records
        .iter()
        .map(|(_, r)| r.duration_secs)
        .fold(0.0, f64::max);
    report.shards = shards;
    report.finish(&labels);
    report.coverage = linkcert_registry::coverage::of(
        linkcert_registry::Command::Load,
        &super::report::rule_judgements(&report.scenarios),
    );
    report
}

fn ran_elsewhere(s: &ScenarioResult) -> bool {
    s.verdict == ScenarioVerdict::Skipped && s.elsewhere
}

/// One scenario from its parts: as it is when one shard ran it, put back together when a
/// fleet was split.
fn join(mut parts: Vec<ScenarioResult>) -> Option<ScenarioResult> {
    if parts.len() <= 1 {
        return parts.pop();
    }
    let mut all = parts.remove(0);
    let mut lat = Latencies::deserialize(&all.latency_histogram).ok();
    for p in parts {
        let offset = all.keys.len();
        all.keys.extend(p.keys);
        all.seconds.extend(p.seconds.into_iter().map(|mut s| {
            s.key += offset;
            s
        }));
        for sec in p.fleet_seconds {
            let t = sec.t as usize;
            while all.fleet_seconds.len() <= t {
                let t = all.fleet_seconds.len() as u64;
                all.fleet_seconds.push(judge::FleetSecond {
                    t,
                    ..Default::default()
                });
            }
            all.fleet_seconds[t].add(&sec);
        }
        all.trace.extend(p.trace.into_iter().map(|mut t| {
            t.key += offset;
            t
        }));
        all.findings.extend(p.findings);
        all.goose_reports.extend(p.goose_reports);
        all.generator = match (all.generator.take(), p.generator) {
            (Some(a), Some(b)) => Some(judge::merge_generators(a, &b)),
            (a, b) => a.or(b),
        };
        lat = match (lat, Latencies::deserialize(&p.latency_histogram).ok()) {
            (Some(mut a), Some(b)) => {
                a.add(&b);
                Some(a)
            }
            _ => None,
        };
        all.behaviour = all.behaviour.or(p.behaviour);
        all.limiter = all.limiter.or(p.limiter);
        if p.verdict == ScenarioVerdict::Incomplete {
            all.verdict = ScenarioVerdict::Incomplete;
            all.skipped = all.skipped.or(p.skipped);
        }
    }
    // Keys in the target's order, as one process lists them.
    let order: Vec<usize> = {
        let mut idx: Vec<usize> = (0..all.keys.len()).collect();
        idx.sort_by_key(|i| all.keys[*i].target_key);
        idx
    };
    judge::reorder_keys(&mut all, &order);
    if let Some(l) = lat {
        all.latency_ms = l.percentiles();
        all.latency_histogram = l.serialize().unwrap_or_default();
    }
    judge::rejudge_across(&mut all);
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{Finding, FleetSecond, KeyStats};
    use crate::scenario::Scenario;
    use crate::shard::Shard;
    use linkcert_spec::verdict::Verdict;

    fn key(label: &str, target_key: usize, rate: f64, admitted: u64, throttled: u64) -> KeyStats {
        KeyStats {
            target_key,
            admitted_bounds: [0.0, 200.0],
            ..KeyStats::of_test(label, admitted + throttled, admitted, 1.5, rate)
        }
    }

    /// A shard's part of the free-fleet scenario: its keys (label, position, rate, admitted,
    /// throttled), one second each, and latencies.
    fn part(keys: &[(&str, usize, f64, u64, u64)], latencies: &[f64]) -> ScenarioResult {
        let mut s = ScenarioResult::of(&Scenario::load("free-fleet").unwrap(), "standard");
        s.limit = 60;
        s.window_secs = 6.0;
        for (l, p, r, a, t) in keys {
            s.keys.push(key(l, *p, *r, *a, *t));
            let mut sec = FleetSecond::default();
            sec.n.admitted = *a;
            sec.admitting(*a as usize);
            match s.fleet_seconds.first_mut() {
                Some(first) => first.add(&sec),
                None => s.fleet_seconds.push(sec),
            }
        }
        let mut h = Latencies::new();
        for ms in latencies {
            h.record(*ms);
        }
        s.latency_histogram = h.serialize().unwrap();
        s.findings.push(Finding {
            check: "load.isolation".into(),
            verdict: Verdict::Pass,
            key: None,
            message: "this shard's quiet keys".into(),
            expected: String::new(),
            actual: String::new(),
        });
        s
    }

    fn record(index: usize, count: usize, scenarios: Vec<ScenarioResult>) -> ShardRecord {
        ShardRecord {
            meta: ShardMeta {
                run_id: "run-1".into(),
                shard: Shard { index, count },
                host: format!("host-{index}"),
                target: "https://x".into(),
                scenarios: vec!["free-fleet".into()],
                keys: 5,
                start_at: 1000.0,
                start_offset_secs: Some(0.01),
                clock_offset_secs: Some(0.2),
            },
            verdict: ScenarioVerdict::Pass,
            incomplete: None,
            labels: (1..=5).map(|i| format!("free#{i}")).collect(),
            duration_secs: 9.0,
            scenarios,
        }
    }

    fn two_shards() -> Vec<(PathBuf, Option<ShardRecord>)> {
        let a = part(
            &[("free#1", 0, 3.0, 120, 150), ("free#3", 2, 0.5, 45, 0)],
            &[1.0, 2.0, 3.0],
        );
        let b = part(
            &[
                ("free#2", 1, 0.5, 44, 1),
                ("free#4", 3, 0.5, 45, 0),
                ("free#5", 4, 0.5, 45, 0),
            ],
            &[10.0, 20.0],
        );
        vec![
            ("s1".into(), Some(record(1, 2, vec![a]))),
            ("s2".into(), Some(record(2, 2, vec![b]))),
        ]
    }

    /// Counts add, keys come back in the target's order, the histograms add without loss,
    /// and isolation is judged once over every key: a quiet key throttled in one shard fails
    /// the merged scenario, named.
    #[test]
    fn a_split_fleet_merges_exactly_and_is_judged_over_every_key() {
        let spec = Spec::embedded().unwrap();
        let r = merge(&spec, two_shards()).unwrap();
        assert_eq!(r.incomplete, None);
        let s = &r.scenarios[0];
        let order: Vec<&str> = s.keys.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(order, ["free#1", "free#2", "free#3", "free#4", "free#5"]);
        // The fleet's seconds add up: every key's admissions, and each key's count (three
        // keys admitted 45 times, one 44, one 120).
        let sec = &s.fleet_seconds[0];
        assert_eq!(sec.n.admitted, 120 + 45 + 44 + 45 + 45);
        assert_eq!(
            (sec.admitting[44], sec.admitting[43], sec.admitting[119]),
            (3, 1, 1)
        );
        let band = &s.fleet.as_ref().unwrap().bands[0];
        assert_eq!((band.p10, band.p50, band.p90), (44.0, 45.0, 120.0));
        let mut all = Latencies::new();
        for ms in [1.0, 2.0, 3.0, 10.0, 20.0] {
            all.record(ms);
        }
        let merged = Latencies::deserialize(&s.latency_histogram).unwrap();
        assert_eq!(merged.len(), 5);
        assert_eq!(s.latency_ms.p99, all.percentiles().p99);
        assert_eq!(s.latency_ms.p50, all.percentiles().p50);
        let iso: Vec<_> = s
            .findings
            .iter()
            .filter(|f| f.check == "load.isolation")
            .collect();
        assert_eq!(iso.len(), 1, "{iso:?}");
        assert_eq!(iso[0].verdict, Verdict::Fail);
        assert!(iso[0].actual.contains("free#2"), "{}", iso[0].actual);
        assert_eq!(r.verdict, ScenarioVerdict::Fail);
        assert_eq!(r.shards.len(), 2);
        let fl = s.fleet.as_ref().unwrap();
        assert_eq!(fl.keys, 5);
        assert_eq!(fl.worst[0].label, "free#2");
    }

    #[test]
    fn missing_killed_or_late_shards_make_the_run_incomplete() {
        let spec = Spec::embedded().unwrap();
        let mut one = two_shards();
        one.pop();
        let r = merge(&spec, one).unwrap();
        assert_eq!(r.verdict, ScenarioVerdict::Incomplete);
        assert!(
            r.incomplete
                .as_deref()
                .unwrap()
                .contains("shard 2/2 not given")
        );
        let mut killed = two_shards();
        killed[1].1 = None;
        let r = merge(&spec, killed).unwrap();
        assert!(
            r.incomplete
                .as_deref()
                .unwrap()
                .contains("killed or failed"),
            "{:?}",
            r.incomplete
        );
        let mut late = two_shards();
        if let Some(rec) = late[1].1.as_mut() {
            rec.meta.start_offset_secs = Some(7.0);
        }
        let r = merge(&spec, late).unwrap();
        assert_eq!(r.verdict, ScenarioVerdict::Incomplete);
        assert!(
            r.incomplete
                .as_deref()
                .unwrap()
                .contains("started 7.0 s after")
        );
    }

    #[test]
    fn shards_of_other_runs_or_given_twice_are_refused() {
        let spec = Spec::embedded().unwrap();
        type Change = fn(&mut ShardMeta);
        let cases: [(&str, Change); 5] = [
            ("run id", |m| m.run_id = "run-2".into()),
            ("target", |m| m.target = "https://y".into()),
            ("scenario set", |m| m.scenarios.push("pro-overload".into())),
            ("shard count", |m| m.shard.count = 3),
            ("start time", |m| m.start_at = 2000.0),
        ];
        for (what, change) in cases {
            let mut s = two_shards();
            if let Some(rec) = s[1].1.as_mut() {
                change(&mut rec.meta);
            }
            let e = merge(&spec, s).unwrap_err().to_string();
            assert!(
                e.contains(&format!("its {what} is")) && e.contains("s2"),
                "{e}"
            );
        }
        let mut twice = two_shards();
        twice[1] = ("s1-again".into(), twice[0].1.clone());
        let e = merge(&spec, twice).unwrap_err().to_string();
        assert!(e.contains("shard 1/2 is given twice"), "{e}");
    }
}
