//! Shards of one run, by key: `--shard I/N` (or `--shards N` with the index in
//! `JOB_COMPLETION_INDEX`, as Kubernetes Indexed Jobs set it) gives this process a share of the
//! target's keys. A key, and every scenario on it, stays in one shard; a scenario over several
//! keys (two-keys) keeps them together; a fleet is split key by key, each key keeping the rate
//! it has in the whole fleet. The share depends only on the keys themselves, so every shard
//! computes the same split from the same key file, with no coordination. `merge` puts the
//! shards' results back together.

use std::collections::HashMap;

use super::resolved::Resolved;
use super::scenario::{Shape, Skip};
use linkcert_run::target::{PlanKey, Target};

/// The environment variable Kubernetes Indexed Jobs set to the pod's index (0-based).
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// This process's shard: `index` of `count`, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("--shard must be I/N with 1 <= I <= N (for example 2/3), got {0:?}")]
    Syntax(String),
    #[error("--shards {count} reads the shard's index from {INDEX_ENV} (0-based, as Kubernetes Indexed Jobs set it), which is {0}", count = .1)]
    Index(String, usize),
    #[error("--shards must be at least 1")]
    Count,
}

impl Shard {
    /// `I/N`, 1-based.
    pub fn parse(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::Syntax(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// `--shards N`: the index from `JOB_COMPLETION_INDEX` (0-based), given as read.
    pub fn from_index(count: usize, index: Option<&str>) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::Count);
        }
        let shown = index.map_or("not set".to_string(), |v| format!("{v:?}"));
        let i: usize = index
            .and_then(|v| v.trim().parse().ok())
            .filter(|i| *i < count)
            .ok_or(ShardError::Index(shown, count))?;
        Ok(Shard {
            index: i + 1,
            count,
        })
    }

    /// The directory this shard writes under the run's `out`.
    pub fn dir_name(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }

    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// FNV-1a, 64 bits: the same on every machine and build (std's hasher is seeded per process).
fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Which shard (1-based) each of the target's keys belongs to: keys a scenario loads together
/// are one group, owned by the shard its first key (by the keys' own text) hashes to.
pub fn owners(target: &Target, resolved: &[Result<Resolved, Skip>], count: usize) -> Vec<usize> {
    let n = target.keys.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for r in resolved.iter().flatten() {
        if r.scenario.shape == Shape::Fleet {
            continue;
        }
        let at: Vec<usize> = r.keys.iter().filter_map(|k| target.position(k)).collect();
        for w in at.windows(2) {
            let (a, b) = (root(&mut parent, w[0]), root(&mut parent, w[1]));
            parent[a] = b;
        }
    }
    // A group's name: the smallest key text in it.
    let mut name: HashMap<usize, &str> = HashMap::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        let k = target.keys[i].key.as_str();
        let e = name.entry(r).or_insert(k);
        if k < *e {
            *e = k;
        }
    }
    (0..n)
        .map(|i| {
            let r = root(&mut parent, i);
            (stable_hash(name[&r]) % count.max(1) as u64) as usize + 1
        })
        .collect()
}

/// Keep this shard's part of each scenario: a scenario on other shards' keys is not run
/// here (and says where it runs); a fleet keeps its keys of this shard.
pub fn take_share(target: &Target, resolved: &mut [Result<Resolved, Skip>], shard: Shard) {
    let owner = owners(target, resolved, shard.count);
    let mine = |k: &PlanKey| target.position(k).is_some_and(|p| owner[p] == shard.index);
    for slot in resolved.iter_mut() {
        let Ok(r) = slot else { continue };
        if r.scenario.shape == Shape::Fleet {
            let size = r.keys.len();
            let (positions, keys): (Vec<usize>, Vec<PlanKey>) = r
                .keys
                .iter()
                .enumerate()
                .filter(|(_, k)| mine(k))
                .map(|(i, k)| (i, k.clone()))
                .unzip();
            if keys.is_empty() {
                *slot = Err(elsewhere(shard));
                continue;
            }
            r.keys = keys;
            r.fleet_share = Some((positions, size));
        } else if !r.keys.first().is_some_and(mine) {
            *slot = Err(elsewhere(shard));
        }
    }
}

fn elsewhere(shard: Shard) -> Skip {
    Skip::Elsewhere(shard.label())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use linkcert_spec::Spec;

    fn fleet_target(n: usize) -> Target {
        let mut keys = vec![];
        for i in 1..=n {
            for plan in ["free", "pro", "business", "advanced"] {
                keys.push(PlanKey {
                    plan: plan.into(),
                    key: format!("lk_{plan}_{i}"),
                });
            }
        }
        Target {
            base_url: linkcert_http::BaseUrl::parse("https://x").unwrap(),
            keys,
            ..Target::default()
        }
    }

    #[test]
    fn shards_parse_from_flags_and_the_job_index() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Shard::from_index(3, Some("0")),
            Ok(Shard { index: 1, count: 3 })
        );
        assert!(Shard::from_index(3, Some("3")).is_err());
        let e = Shard::from_index(3, None).unwrap_err().to_string();
        assert!(
            e.contains("JOB_COMPLETION_INDEX") && e.contains("not set"),
            "{e}"
        );
        assert_eq!(Shard::from_index(0, Some("0")), Err(ShardError::Count));
    }

    /// Every key in exactly one shard, a scenario's keys together, a fleet split with each key
    /// keeping its rate in the whole fleet, and the shares roughly even.
    #[test]
    fn every_key_and_scenario_lands_in_exactly_one_shard() {
        let spec = Spec::embedded().unwrap();
        let t = fleet_target(300);
        let names = [
            "free-overload",
            "two-keys-isolation",
            "pro-overload",
            "free-fleet",
        ];
        let scenarios: Vec<Scenario> = names.iter().map(|n| Scenario::load(n).unwrap()).collect();
        let whole: Vec<_> = scenarios
            .iter()
            .map(|s| s.resolve(&spec, &t).map_err(Skip::Cannot))
            .collect();
        let fleet = whole[3].as_ref().unwrap();
        let mut fleet_keys = 0;
        let mut ran = [0usize; 4];
        for index in 1..=3 {
            let mut part = whole.clone();
            take_share(&t, &mut part, Shard { index, count: 3 });
            for (i, r) in part.iter().enumerate() {
                match r {
                    Ok(r) if i == 3 => {
                        fleet_keys += r.keys.len();
                        assert!(r.keys.len() > 50 && r.keys.len() < 250, "{}", r.keys.len());
                        for (j, k) in r.keys.iter().enumerate() {
                            let at = fleet.keys.iter().position(|f| f == k).unwrap();
                            assert_eq!(r.key_rate(j), fleet.key_rate(at));
                        }
                        ran[i] += 1;
                    }
                    Ok(_) => ran[i] += 1,
                    Err(e) => assert!(e.ran_elsewhere(), "{e}"),
                }
            }
        }
        assert_eq!(fleet_keys, 300);
        assert_eq!(
            ran,
            [1, 1, 1, 3],
            "each scenario once, the fleet in every shard"
        );
        // The two-keys scenario shares lk_free_1 with free-overload: they run in one shard.
        let owner = owners(&t, &whole, 3);
        let p = |k: &str| t.keys.iter().position(|x| x.key == k).unwrap();
        assert_eq!(owner[p("lk_free_1")], owner[p("lk_free_2")]);
    }
}

/// A shard of a run as it writes it beside its reports (`shard.json`): who it was, when it
/// started against the agreed time, and its scenarios' results, which `merge` reads.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ShardRecord {
    pub meta: ShardMeta,
    pub verdict: super::ScenarioVerdict,
    /// Why this shard's part is incomplete (an outage, an interrupt, a late start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Labels of the target's keys, by position (`plan#n`).
    pub labels: Vec<String>,
    /// How long the shard ran, seconds.
    #[serde(default)]
    pub duration_secs: f64,
    pub scenarios: Vec<super::ScenarioResult>,
}

/// What names a shard and its run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardMeta {
    pub run_id: String,
    pub shard: Shard,
    pub host: String,
    pub target: String,
    /// The run's scenarios, in order: every shard of a run is given the same.
    pub scenarios: Vec<String>,
    /// How many keys the run has (every shard reads the same key file).
    pub keys: usize,
    /// The agreed start, UTC epoch seconds.
    pub start_at: f64,
    /// When this shard started, seconds after `start_at` (None: it refused to start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset_secs: Option<f64>,
    /// The target's clock (its Date header) minus this machine's, seconds (Date has whole
    /// seconds: +-0.5 s); None when the target sent no Date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_secs: Option<f64>,
}

/// How late a shard may start and still be part of the run.
pub const START_TOLERANCE_SECS: f64 = 2.0;

/// The run id when none is given: from what every shard of the run shares.
pub fn derive_run_id(start_at: f64, target: &str, scenarios: &[String], count: usize) -> String {
    let text = format!("{start_at}|{target}|{}|{count}", scenarios.join(","));
    format!("run-{:016x}", stable_hash(&text))
}

/// This machine's name, for the merged report (`HOSTNAME`, else the kernel's).
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// `--start-at`: epoch seconds, or RFC 3339 (`2026-11-26T03:00:00Z`, offsets allowed).
pub fn parse_start_at(s: &str) -> Result<f64, String> {
    let s = s.trim();
    if let Ok(v) = s.parse::<f64>() {
        return if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{s:?} is not a time"))
        };
    }
    linkcert_spec::clock::parse_rfc3339(s).ok_or_else(|| {
        format!("{s:?} is neither epoch seconds nor RFC 3339 (like 2026-11-26T03:00:00Z)")
    })
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn start_times_read_as_epoch_seconds_or_rfc_3339() {
        assert_eq!(parse_start_at("1764126000"), Ok(1_764_126_000.0));
        assert_eq!(parse_start_at("2025-11-26T03:00:00Z"), Ok(1_764_126_000.0));
        assert_eq!(
            parse_start_at("2025-11-26T04:00:00+01:00"),
            Ok(1_764_126_000.0)
        );
        assert_eq!(
            parse_start_at("2025-11-26T03:00:00.25Z"),
            Ok(1_764_126_000.25)
        );
        assert_eq!(parse_start_at("1970-01-01T00:00:00Z"), Ok(0.0));
        assert_eq!(parse_start_at("2000-02-29T00:00:00Z"), Ok(951_782_400.0));
        for bad in [
            "tomorrow",
            "2025-13-01T00:00:00Z",
            "2025-11-26 03:00",
            "-5",
            "NaN",
        ] {
            assert!(parse_start_at(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_derived_run_id_changes_with_what_the_shards_share() {
        let s = vec!["free-fleet".to_string()];
        let a = derive_run_id(1.0, "https://x", &s, 3);
        assert_eq!(a, derive_run_id(1.0, "https://x", &s, 3));
        assert_ne!(a, derive_run_id(2.0, "https://x", &s, 3));
        assert_ne!(a, derive_run_id(1.0, "https://y", &s, 3));
        assert_ne!(a, derive_run_id(1.0, "https://x", &s, 2));
        assert_ne!(a, derive_run_id(1.0, "https://x", &[], 3));
    }
}
