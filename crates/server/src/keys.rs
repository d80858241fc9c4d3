//! Workspaces, their plans and API keys: from a TOML keys file, or the development set.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::path::Path;

use serde::Deserialize;
use subtle::ConstantTimeEq;

use linkcert_spec::{Limit, Spec};

#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("cannot read the keys file {path}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("the keys file is not valid TOML: {0}")]
    Toml(String),
    #[error("workspace {workspace}: {problem}")]
    Workspace { workspace: String, problem: String },
    #[error("the keys file defines no workspace")]
    Empty,
}

#[derive(Deserialize)]
struct KeysFile {
    #[serde(default)]
    workspace: Vec<WorkspaceEntry>,
}

/// The keys-file field holding a workspace's own limit in a rate class, and its value.
fn custom_limit(w: &WorkspaceEntry, class: &str) -> (&'static str, Option<u64>) {
    match class {
        "standard" => ("rate_limit_per_minute", w.rate_limit_per_minute),
        "analytics" => ("analytics_per_second", w.analytics_per_second),
        _ => ("a limit (the keys file has no field for this class)", None),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkspaceEntry {
    name: String,
    plan: String,
    keys: Vec<String>,
    rate_limit_per_minute: Option<u64>,
    analytics_per_second: Option<u64>,
}

/// A workspace as the server knows it: its plan, its keys, its limit per rate class.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub name: String,
    pub plan: String,
    pub keys: Vec<String>,
    /// Resolved limits: Custom is replaced by the workspace's own numbers.
    pub limits: BTreeMap<String, Limit>,
}

/// Every key the server accepts, in the order they were declared.
#[derive(Clone, Debug)]
pub struct KeySet {
    pub workspaces: Vec<Workspace>,
    /// (key, workspace index); the key index is the position here.
    keys: Vec<(String, usize)>,
    /// Key indices by a keyed hash of the key (`lookup`).
    index: KeyIndex,
}

/// Finds a key without comparing every key in turn, and without timing that depends on the
/// keys' contents: buckets are chosen by SipHash under a key drawn at start (an attacker
/// cannot steer a guess into a real key's bucket), and the few keys in a bucket are compared
/// in constant time, all of them.
#[derive(Clone, Debug)]
struct KeyIndex {
    hasher: RandomState,
    buckets: HashMap<u64, Vec<usize>>,
}

impl KeyIndex {
    fn new(keys: &[(String, usize)]) -> KeyIndex {
        let hasher = RandomState::new();
        let mut buckets: HashMap<u64, Vec<usize>> = HashMap::with_capacity(keys.len());
        for (i, (k, _)) in keys.iter().enumerate() {
            buckets
                .entry(hasher.hash_one(k.as_bytes()))
                .or_default()
                .push(i);
        }
        KeyIndex { hasher, buckets }
    }

    fn find(&self, keys: &[(String, usize)], presented: &str) -> Option<usize> {
        let bucket = self
            .buckets
            .get(&self.hasher.hash_one(presented.as_bytes()))?;
        let mut found = None;
        for &i in bucket {
            let eq: bool = keys[i].0.as_bytes().ct_eq(presented.as_bytes()).into();
            if eq {
                found = Some(i);
            }
        }
        found
    }
}

impl KeySet {
    pub fn from_file(spec: &Spec, path: &Path) -> Result<KeySet, KeysError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeysError::Io {
            path: path.display().to_string(),
            source,
        })?;
        KeySet::from_toml(spec, &text)
    }

    pub fn from_toml(spec: &Spec, text: &str) -> Result<KeySet, KeysError> {
        let file: KeysFile = toml::from_str(text).map_err(|e| KeysError::Toml(e.to_string()))?;
        if file.workspace.is_empty() {
            return Err(KeysError::Empty);
        }
        let mut workspaces = Vec::new();
        for w in file.workspace {
            let problem = |p: String| KeysError::Workspace {
                workspace: w.name.clone(),
                problem: p,
            };
            let plan = spec.plan(&w.plan).ok_or_else(|| {
                let names: Vec<&str> = spec.plans.iter().map(|p| p.name.as_str()).collect();
                problem(format!(
                    "unknown plan {:?}; plans: {}",
                    w.plan,
                    names.join(", ")
                ))
            })?;
            let mut limits = BTreeMap::new();
            for class in spec.rate_classes.keys() {
                let (field, own) = custom_limit(&w, class);
                let limit = match (plan.limit(class), own) {
                    (Limit::Custom, Some(n)) => Limit::Fixed(n),
                    (Limit::Custom, None) => {
                        return Err(problem(format!(
                            "plan {} has a custom {class} limit: set {field}",
                            plan.name
                        )));
                    }
                    (fixed, Some(_)) => {
                        return Err(problem(format!(
                            "{field} is only for plans with a custom limit; {} has {fixed:?}",
                            plan.name
                        )));
                    }
                    (fixed, None) => fixed,
                };
                limits.insert(class.clone(), limit);
            }
            if w.keys.is_empty() {
                return Err(problem("lists no key".into()));
            }
            if let Some(bad) = w.keys.iter().find(|k| !is_token(k)) {
                return Err(problem(format!(
                    "a key must be 1-256 visible ASCII characters without spaces ({} characters given)",
                    bad.len()
                )));
            }
            workspaces.push(Workspace {
                name: w.name,
                plan: plan.name.clone(),
                keys: w.keys,
                limits,
            });
        }
        KeySet::new(workspaces)
    }

    fn new(workspaces: Vec<Workspace>) -> Result<KeySet, KeysError> {
        let mut keys = Vec::new();
        let mut seen = HashSet::new();
        let mut seen_keys = HashSet::new();
        for (i, w) in workspaces.iter().enumerate() {
            if !seen.insert(w.name.clone()) {
                return Err(KeysError::Workspace {
                    workspace: w.name.clone(),
                    problem: "is defined twice".into(),
                });
            }
            for k in &w.keys {
                if !seen_keys.insert(k.as_str()) {
                    return Err(KeysError::Workspace {
                        workspace: w.name.clone(),
                        problem: "reuses a key of another workspace".into(),
                    });
                }
                keys.push((k.clone(), i));
            }
        }
        let index = KeyIndex::new(&keys);
        Ok(KeySet {
            workspaces,
            keys,
            index,
        })
    }

    /// The development set: one workspace per plan, and two keys on Free (limits are per key).
    pub fn development(spec: &Spec) -> KeySet {
        let text = DEVELOPMENT_KEYS;
        // The development set is ours and tested; a failure here is a bug in this file.
        KeySet::from_toml(spec, text).unwrap_or_else(|e| panic!("development keys: {e}"))
    }

    /// The development set with `n` keys per plan, `lk_<plan>_1` to `lk_<plan>_<n>`, for
    /// fleets: the development set's workspaces and limits, its keys first (Free keeps at
    /// least its two).
    pub fn development_fleet(spec: &Spec, n: usize) -> KeySet {
        let mut set = KeySet::development(spec);
        for w in &mut set.workspaces {
            let count = n.max(w.keys.len());
            w.keys = (1..=count).map(|i| format!("lk_{}_{i}", w.plan)).collect();
        }
        // The names follow one pattern per plan, and plans are distinct: no key repeats.
        KeySet::new(set.workspaces).unwrap_or_else(|e| panic!("development fleet: {e}"))
    }

    /// Find a key without timing that depends on the keys' contents (`KeyIndex`).
    /// Returns (key index, workspace index).
    pub fn lookup(&self, presented: &str) -> Option<(usize, usize)> {
        let i = self.index.find(&self.keys, presented)?;
        Some((i, self.keys[i].1))
    }

    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Keys with their workspace, in declaration order.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &Workspace)> {
        self.keys
            .iter()
            .map(|(k, w)| (k.as_str(), &self.workspaces[*w]))
    }
}

fn is_token(k: &str) -> bool {
    !k.is_empty() && k.len() <= 256 && k.bytes().all(|b| b.is_ascii_graphic())
}

/// Documented in docs/src/server.md; `linkcert serve` prints them at start.
pub const DEVELOPMENT_KEYS: &str = r#"
[[workspace]]
name = "free-ws"
plan = "free"
keys = ["lk_free_1", "lk_free_2"]

[[workspace]]
name = "pro-ws"
plan = "pro"
keys = ["lk_pro_1"]

[[workspace]]
name = "business-ws"
plan = "business"
keys = ["lk_business_1"]

[[workspace]]
name = "advanced-ws"
plan = "advanced"
keys = ["lk_advanced_1"]

[[workspace]]
name = "enterprise-ws"
plan = "enterprise"
keys = ["lk_enterprise_1"]
rate_limit_per_minute = 100000
analytics_per_second = 100
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn development_set_has_every_plan_and_two_free_keys() {
        let spec = Spec::embedded().unwrap();
        let set = KeySet::development(&spec);
        for plan in &spec.plans {
            assert!(
                set.workspaces.iter().any(|w| w.plan == plan.name),
                "{}",
                plan.name
            );
        }
        assert_eq!(set.keys().filter(|(_, w)| w.plan == "free").count(), 2);
        let (_, ws) = set.lookup("lk_enterprise_1").unwrap();
        assert_eq!(set.workspaces[ws].limits["standard"], Limit::Fixed(100000));
        assert!(set.lookup("lk_enterprise_").is_none());
        assert!(set.lookup("").is_none());
    }

    #[test]
    fn a_fleet_keeps_the_development_keys_first_and_finds_every_key() {
        let spec = Spec::embedded().unwrap();
        let dev = KeySet::development(&spec);
        let fleet = KeySet::development_fleet(&spec, 3000);
        assert_eq!(fleet.key_count(), 5 * 3000);
        for (k, w) in dev.keys() {
            let (_, ws) = fleet.lookup(k).unwrap();
            assert_eq!(fleet.workspaces[ws].plan, w.plan, "{k}");
        }
        for (i, (k, w)) in fleet.keys().enumerate() {
            assert_eq!(
                fleet.lookup(k),
                Some((i, fleet.keys[i].1)),
                "{k} of {}",
                w.plan
            );
        }
        for miss in [
            "lk_free_0",
            "lk_free_3001",
            "lk_pro_1 ",
            "LK_PRO_1",
            "lk_pro_10000",
        ] {
            assert!(fleet.lookup(miss).is_none(), "{miss}");
        }
        // Free keeps its two development keys even in a fleet of one.
        let one = KeySet::development_fleet(&spec, 1);
        assert_eq!(one.keys().filter(|(_, w)| w.plan == "free").count(), 2);
        assert_eq!(one.key_count(), 6);
    }

    #[test]
    fn keys_file_mistakes_are_reported_by_workspace() {
        let spec = Spec::embedded().unwrap();
        let err = |t: &str| KeySet::from_toml(&spec, t).unwrap_err().to_string();
        assert!(err("[[workspace]]\nname='a'\nplan='gold'\nkeys=['k']").contains("unknown plan"));
        assert!(err("[[workspace]]\nname='a'\nplan='enterprise'\nkeys=['k']").contains("_per_"));
        assert!(
            err("[[workspace]]\nname='a'\nplan='pro'\nkeys=['k']\nrate_limit_per_minute=5")
                .contains("only for plans with a custom limit")
        );
        assert!(err("[[workspace]]\nname='a'\nplan='pro'\nkeys=['k']\n[[workspace]]\nname='b'\nplan='pro'\nkeys=['k']")
            .contains("reuses a key"));
        assert!(
            err("[[workspace]]\nname='a'\nplan='pro'\nkeys=['has space']")
                .contains("visible ASCII")
        );
        assert!(err("").contains("no workspace"));
    }
}

#[cfg(test)]
mod example_tests {
    #[test]
    fn the_shipped_example_keys_file_loads() {
        let spec = linkcert_spec::Spec::embedded().unwrap();
        let set = super::KeySet::from_file(
            &spec,
            std::path::Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/keys.toml"
            )),
        )
        .unwrap();
        assert_eq!(set.workspaces.len(), 3);
        assert!(set.lookup("lk_globex_adv_2").is_some());
    }
}
