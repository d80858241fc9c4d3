//! What `check` and `load` aim at: the target's base URL, its keys by plan, fixtures, TLS
//! trust and window length, from flags and an optional TOML profile (flags win).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use linkcert_http::{BaseUrl, BaseUrlError, ClientConfig, HttpError};
use linkcert_spec::Spec;
use linkcert_spec::window::RateWindow;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("cannot read the profile {path}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("the profile is not valid TOML: {0}")]
    Toml(String),
    #[error("--key must be PLAN=KEY, got {0:?}")]
    KeySyntax(String),
    #[error("unknown plan {plan:?} in a key; plans: {known}")]
    UnknownPlan { plan: String, known: String },
    #[error("cannot read the key file {path}")]
    KeyFileIo {
        path: String,
        source: std::io::Error,
    },
    #[error("the key file {path}, line {line}: {problem}")]
    KeyFile {
        path: String,
        line: usize,
        problem: String,
    },
    #[error(transparent)]
    Url(#[from] BaseUrlError),
    #[error("cannot build the HTTP client")]
    Client(#[from] HttpError),
}

/// A fixture partner (by partnerId or tenantId) and, when the user bound it, the plan of the
/// key whose workspace owns it (`--partner advanced=pn_123`). Unbound, the runner finds the
/// owner among the keys whose plan may deactivate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    pub id: String,
    pub plan: Option<String>,
}

impl Fixture {
    /// `ID` or `PLAN=ID`: the part before `=` binds only when it names a plan, so ids that
    /// contain `=` stay whole.
    pub fn parse(s: &str, plans: &[&str]) -> Fixture {
        if let Some((plan, id)) = s.split_once('=') {
            let plan = plan.trim().to_ascii_lowercase();
            if !id.is_empty() && plans.contains(&plan.as_str()) {
                return Fixture {
                    id: id.to_string(),
                    plan: Some(plan),
                };
            }
        }
        Fixture {
            id: s.to_string(),
            plan: None,
        }
    }

    pub fn bound(id: impl Into<String>, plan: impl Into<String>) -> Fixture {
        Fixture {
            id: id.into(),
            plan: Some(plan.into()),
        }
    }
}

/// A secret the run was given and the shell variable reports write in its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    pub value: String,
    /// `LINKCERT_KEY_PRO`, `LINKCERT_KEY_FREE_2`: the plan, then the key's place among that
    /// plan's keys from the second on.
    pub var: String,
}

/// Who a key is in a run's reports, without the key: its place in the key list, its plan, and
/// its place among that plan's keys (from 1). `check` and `load` name keys by it alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyIdentity {
    pub index: usize,
    pub plan: String,
    pub nth: usize,
}

impl KeyIdentity {
    /// `free#2`: how `load`'s reports and the console name the key.
    pub fn label(&self) -> String {
        format!("{}#{}", self.plan, self.nth)
    }

    /// `LINKCERT_KEY_PRO`, `LINKCERT_KEY_FREE_2`: the shell variable reports write in the
    /// key's place (the plan, then its place among that plan's keys from the second on).
    pub fn variable(&self) -> String {
        let plan: String = self
            .plan
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        match self.nth {
            1 => format!("LINKCERT_KEY_{plan}"),
            n => format!("LINKCERT_KEY_{plan}_{n}"),
        }
    }
}

/// A key of the target and the plan its workspace is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanKey {
    pub plan: String,
    pub key: String,
}

impl PlanKey {
    /// The Authorization header's value that presents this key.
    pub fn authorization(&self) -> String {
        authorization(&self.key)
    }
}

/// Spec, "Authentication" (1): the Authorization header's value is "the word Bearer, a space,
/// and an API key". Every request of `check` and `load` that presents a key is built here;
/// `check`'s credential mutations start from it.
pub fn authorization(key: &str) -> String {
    format!("Bearer {key}")
}

#[derive(Clone, Debug, Default)]
pub struct Target {
    pub base_url: BaseUrl,
    /// In the order given; a plan may have several keys.
    pub keys: Vec<PlanKey>,
    /// Length of the target's standard window (the spec's minute, unless shortened).
    pub rate_window: RateWindow,
    /// Partners that may be deactivated, by partnerId and by tenantId.
    pub partner_ids: Vec<Fixture>,
    pub tenant_ids: Vec<Fixture>,
    pub allow_destructive: bool,
    /// Accept any certificate (self-signed targets).
    pub insecure: bool,
    /// A certificate to trust besides the system's (the in-process reference's).
    pub trust_pem: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub base_url: Option<String>,
    pub rate_window_secs: Option<f64>,
    pub allow_destructive: Option<bool>,
    /// Accepted deviations (`check --accept`), relative to the profile's folder.
    pub accept: Option<String>,
    #[serde(default)]
    pub keys: BTreeMap<String, OneOrMany>,
    #[serde(default)]
    pub fixtures: Fixtures,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Fixtures {
    #[serde(default)]
    pub partner_ids: Vec<String>,
    #[serde(default)]
    pub tenant_ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl Profile {
    pub fn from_file(path: &Path) -> Result<Profile, TargetError> {
        let text = std::fs::read_to_string(path).map_err(|source| TargetError::Io {
            path: path.display().to_string(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| TargetError::Toml(e.to_string()))
    }

    /// The profile's keys as (plan, key) pairs.
    pub fn plan_keys(&self) -> Vec<PlanKey> {
        let mut out = Vec::new();
        for (plan, keys) in &self.keys {
            let list = match keys {
                OneOrMany::One(k) => vec![k.clone()],
                OneOrMany::Many(ks) => ks.clone(),
            };
            for key in list {
                out.push(PlanKey {
                    plan: plan.clone(),
                    key,
                });
            }
        }
        out
    }
}

/// `PLAN=KEY` as given to `--key`.
pub fn parse_key_flag(s: &str) -> Result<PlanKey, TargetError> {
    let (plan, key) = s
        .split_once('=')
        .filter(|(p, k)| !p.is_empty() && !k.is_empty())
        .ok_or_else(|| TargetError::KeySyntax(redact_flag(s)))?;
    Ok(PlanKey {
        plan: plan.trim().to_ascii_lowercase(),
        key: key.to_string(),
    })
}

/// `--key-file`: one `PLAN=KEY` a line, the format of the Action's `keys` input; blank lines
/// and lines starting with `#` are skipped. A malformed line, an unknown plan or a key given
/// twice is refused with its line number; the key itself is never part of the error.
pub fn read_key_file(path: &std::path::Path, plans: &[&str]) -> Result<Vec<PlanKey>, TargetError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TargetError::KeyFileIo {
        path: shown.clone(),
        source,
    })?;
    parse_key_file(&text, plans).map_err(|(line, problem)| TargetError::KeyFile {
        path: shown,
        line,
        problem,
    })
}

/// The keys of a key file's text, or the first bad line's number and what is wrong with it.
fn parse_key_file(text: &str, plans: &[&str]) -> Result<Vec<PlanKey>, (usize, String)> {
    let mut keys = Vec::new();
    let mut first_seen: std::collections::HashMap<&str, usize> = Default::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let n = i + 1;
        let k = parse_key_flag(line).map_err(|_| (n, "not PLAN=KEY".to_string()))?;
        if !plans.contains(&k.plan.as_str()) {
            return Err((
                n,
                format!("unknown plan {:?}; plans: {}", k.plan, plans.join(", ")),
            ));
        }
        let key = line.split_once('=').map_or("", |(_, key)| key);
        if let Some(first) = first_seen.insert(key, n) {
            return Err((n, format!("the same key as line {first}")));
        }
        keys.push(k);
    }
    Ok(keys)
}

/// A malformed `--key` value may still hold a secret: show only its shape.
fn redact_flag(s: &str) -> String {
    match s.split_once('=') {
        Some((p, _)) => format!("{p}=…"),
        None => format!("<{} characters>", s.len()),
    }
}

impl Target {
    /// Where a key sits in the key list (labels and per-key totals go by position).
    pub fn position(&self, key: &PlanKey) -> Option<usize> {
        self.keys.iter().position(|k| k == key)
    }

    /// Checks plans against the spec and the URL's shape.
    pub fn validate(&self, spec: &Spec) -> Result<(), TargetError> {
        for k in &self.keys {
            if spec.plan(&k.plan).is_none() {
                let known: Vec<&str> = spec.plans.iter().map(|p| p.name.as_str()).collect();
                return Err(TargetError::UnknownPlan {
                    plan: k.plan.clone(),
                    known: known.join(", "),
                });
            }
        }
        Ok(())
    }

    /// Keys of a plan, in order.
    pub fn keys_of<'a>(&'a self, plan: &'a str) -> impl Iterator<Item = &'a PlanKey> + 'a {
        self.keys.iter().filter(move |k| k.plan == plan)
    }

    /// The key of the highest-ranked plan: functional checks use it so they meet few 429s.
    pub fn strongest_key(&self, spec: &Spec) -> Option<&PlanKey> {
        self.keys
            .iter()
            .max_by_key(|k| spec.plan(&k.plan).map_or(0, |p| p.rank))
    }

    /// The window of a rate class at this target: the spec's, scaled like the standard one.
    pub fn window(&self, spec: &Spec, class: &str) -> Duration {
        let standard = spec.standard_window().unwrap_or(Duration::from_secs(60));
        let w = spec.window(class).unwrap_or(standard);
        self.rate_window.scale(w, standard)
    }

    pub fn is_https(&self) -> bool {
        self.base_url.is_https()
    }

    /// The client settings both `check` and `load` use: this target's trust, bounded in time.
    pub fn client_config(&self, timeout: Duration, pool: usize) -> ClientConfig {
        ClientConfig {
            trust_pem: self.trust_pem.clone(),
            insecure: self.insecure,
            plain_http: !self.is_https(),
            ..ClientConfig::new(timeout, pool)
        }
    }

    /// The target's clock less ours, in seconds, from the Date header of one answer (any
    /// status), taken at the middle of the exchange (`rate_headers::clock_offset`); None when
    /// it sends none or does not answer.
    pub async fn clock_offset(&self) -> Option<f64> {
        let client = self.client(Duration::from_secs(10), 1).ok()?;
        let before = linkcert_spec::clock::now_epoch();
        let answer = client.get(self.base_url.join("/")).send().await.ok()?;
        let after = linkcert_spec::clock::now_epoch();
        let date = answer.headers().get(http::header::DATE)?.to_str().ok()?;
        linkcert_rate::headers::clock_offset([(before, after, date)])
    }

    /// The limit a key states (X-RateLimit-Limit, a whole number above 0) on one GET of `path`:
    /// how a plan of custom limit (Enterprise) is loaded under what its key says. None when it
    /// states none.
    pub async fn stated_limit(&self, key: &str, path: &str) -> Option<u64> {
        let client = self.client(Duration::from_secs(10), 1).ok()?;
        let answer = client
            .get(self.base_url.join(path))
            .bearer_auth(key)
            .send()
            .await
            .ok()?;
        let v = answer.headers().get(linkcert_rate::headers::LIMIT)?;
        linkcert_rate::headers::parse_count(v.to_str().ok()).filter(|n| *n > 0)
    }

    /// The client `check` sends with.
    pub fn client(&self, timeout: Duration, pool: usize) -> Result<reqwest::Client, TargetError> {
        Ok(self.client_config(timeout, pool).build()?)
    }

    /// Each key's identity, in the order given: the one place its label and its reports'
    /// variable are made.
    pub fn identities(&self) -> Vec<KeyIdentity> {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        self.keys
            .iter()
            .enumerate()
            .map(|(index, k)| {
                let n = seen.entry(k.plan.as_str()).or_insert(0);
                *n += 1;
                KeyIdentity {
                    index,
                    plan: k.plan.clone(),
                    nth: *n,
                }
            })
            .collect()
    }

    /// Every key with the shell variable that stands for it in reports, in the order given.
    pub fn secrets(&self) -> Vec<Secret> {
        self.keys
            .iter()
            .zip(self.identities())
            .map(|(k, id)| Secret {
                value: k.key.clone(),
                var: id.variable(),
            })
            .collect()
    }

    /// The plans of the keys, each once, in the order first given.
    pub fn plans(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for k in &self.keys {
            if !out.contains(&k.plan) {
                out.push(k.plan.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_flags_and_profiles_parse_and_never_echo_secrets() {
        assert_eq!(
            parse_key_flag("Free=abc=def").unwrap(),
            PlanKey {
                plan: "free".into(),
                key: "abc=def".into()
            }
        );
        let e = parse_key_flag("lk_secret_value").unwrap_err().to_string();
        assert!(!e.contains("lk_secret_value"), "{e}");
        let p: Profile = toml::from_str(
            "base_url='https://x'\n[keys]\nfree=['a','b']\npro='c'\n[fixtures]\npartner_ids=['p']",
        )
        .unwrap();
        let keys = p.plan_keys();
        assert_eq!(keys.len(), 3);
        assert_eq!(keys.iter().filter(|k| k.plan == "free").count(), 2);
        assert!(toml::from_str::<Profile>("typo_field = 1").is_err());
    }

    #[test]
    fn a_key_file_is_refused_at_its_bad_line_without_showing_the_key() {
        let plans = ["free", "pro"];
        let ok = parse_key_file("# fleet\nfree=sk_a\n\n PRO=sk_b \nfree=sk_c\n", &plans).unwrap();
        let got: Vec<(&str, &str)> = ok
            .iter()
            .map(|k| (k.plan.as_str(), k.key.as_str()))
            .collect();
        assert_eq!(got, [("free", "sk_a"), ("pro", "sk_b"), ("free", "sk_c")]);
        for (text, line, says) in [
            ("free=sk_a\nsk_secret_no_plan\n", 2, "not PLAN=KEY"),
            ("free=sk_a\n\ngold=sk_secret\n", 3, "unknown plan \"gold\""),
            (
                "free=sk_secret\npro=sk_secret\n",
                2,
                "the same key as line 1",
            ),
            ("free=\n", 1, "not PLAN=KEY"),
        ] {
            let (n, problem) = parse_key_file(text, &plans).unwrap_err();
            assert_eq!((n, problem.contains(says)), (line, true), "{problem}");
            assert!(!problem.contains("sk_"), "{problem}");
        }
    }

    #[test]
    fn fixtures_bind_to_a_plan_only_when_the_prefix_names_one() {
        let plans = ["free", "advanced"];
        assert_eq!(
            Fixture::parse("Advanced=pn_123", &plans),
            Fixture::bound("pn_123", "advanced")
        );
        assert_eq!(Fixture::parse("pn_123", &plans).plan, None);
        let odd = Fixture::parse("a=b", &plans);
        assert_eq!((odd.id.as_str(), odd.plan), ("a=b", None));
    }

    #[test]
    fn each_key_gets_its_own_variable_and_plans_are_listed_once() {
        let t = Target {
            keys: ["free=a", "free=b", "pro=c"]
                .iter()
                .map(|s| parse_key_flag(s).unwrap())
                .collect(),
            ..Target::default()
        };
        let vars: Vec<String> = t.secrets().into_iter().map(|s| s.var).collect();
        assert_eq!(
            vars,
            [
                "LINKCERT_KEY_FREE",
                "LINKCERT_KEY_FREE_2",
                "LINKCERT_KEY_PRO"
            ]
        );
        assert_eq!(t.plans(), ["free", "pro"]);
        // The label `load` and the console name a key by, from the same identity.
        let labels: Vec<String> = t.identities().iter().map(|i| i.label()).collect();
        assert_eq!(labels, ["free#1", "free#2", "pro#1"]);
        assert_eq!(t.identities()[1].index, 1);
    }

    #[test]
    fn windows_scale_with_the_standard_one() {
        let spec = Spec::embedded().unwrap();
        let t = Target {
            rate_window: linkcert_spec::window::RateWindow::from_secs(6.0).unwrap(),
            ..Target::default()
        };
        assert_eq!(t.window(&spec, "standard"), Duration::from_secs(6));
        assert_eq!(t.window(&spec, "analytics"), Duration::from_millis(100));
    }
}

#[cfg(test)]
mod example_tests {
    #[test]
    fn the_shipped_example_profile_parses() {
        let p = super::Profile::from_file(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/profile.toml"
        )))
        .unwrap();
        assert_eq!(p.plan_keys().iter().filter(|k| k.plan == "free").count(), 2);
        assert_eq!(p.fixtures.partner_ids, ["advanced=pn_123"]);
    }
}
