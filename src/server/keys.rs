//! Workspaces, their plans and API keys: from a TOML keys file, or the development set.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Deserialize;
use subtle::ConstantTimeEq;

use crate::spec::{Limit, Spec};

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
        for (i, w) in workspaces.iter().enumerate() {
            if !seen.insert(w.name.clone()) {
                return Err(KeysError::Workspace {
                    workspace: w.name.clone(),
                    problem: "is defined twice".into(),
                });
            }
            for k in &w.keys {
                if keys.iter().any(|(other, _)| other == k) {
                    return Err(KeysError::Workspace {
                        workspace: w.name.clone(),
                        problem: "reuses a key of another workspace".into(),
                    });
                }
                keys.push((k.clone(), i));
            }
        }
        Ok(KeySet { workspaces, keys })
    }

    /// The development set: one workspace per plan, and two keys on Free (limits are per key).
    pub fn development(spec: &Spec) -> KeySet {
        let text = DEVELOPMENT_KEYS;
        // The development set is ours and tested; a failure here is a bug in this file.
        KeySet::from_toml(spec, text).unwrap_or_else(|e| panic!("development keys: {e}"))
    }

    /// Find a key in constant time with respect to the keys' contents: every key is compared.
    /// Returns (key index, workspace index).
    pub fn lookup(&self, presented: &str) -> Option<(usize, usize)> {
        let mut found: Option<usize> = None;
        for (i, (k, _)) in self.keys.iter().enumerate() {
            let eq: bool = k.as_bytes().ct_eq(presented.as_bytes()).into();
            if eq {
                found = Some(i);
            }
        }
        found.map(|i| (i, self.keys[i].1))
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
        let spec = crate::spec::Spec::embedded().unwrap();
        let set =
            super::KeySet::from_file(&spec, std::path::Path::new("examples/keys.toml")).unwrap();
        assert_eq!(set.workspaces.len(), 3);
        assert!(set.lookup("lk_globex_adv_2").is_some());
    }
}
