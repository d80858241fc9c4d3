//! Scenario files (`scenarios/*.toml`): what to offer, to which plan, in what shape.
//! The format is documented in `scenarios/README.md`; the built-in ones are compiled in.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::LoadError;
use linkcert_spec::Spec;

/// Why a scenario does not run in this process: data, so that what follows (a shard that did
/// its part, an exit code) never depends on how the reason is worded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// It cannot run at this target; the words say why (a plan without a key, ...).
    Cannot(String),
    /// It runs in another shard of the same run (`load merge` puts it back); the words name
    /// this shard.
    Elsewhere(String),
}

impl Skip {
    pub fn ran_elsewhere(&self) -> bool {
        matches!(self, Skip::Elsewhere(_))
    }
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::Cannot(why) => f.write_str(why),
            Skip::Elsewhere(shard) => write!(f, "runs in another shard (this is shard {shard})"),
        }
    }
}

/// Each built-in scenario by name, its TOML embedded from `scenarios/NAME.toml`: a new one
/// is its file and one line in `BUILTIN`.
macro_rules! builtin {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../scenarios/", $name, ".toml")))),*]
    };
}

/// The built-in scenarios, in the order the default run uses (a key's scenarios run in this
/// order; scenarios on other keys alongside).
pub const BUILTIN: &[(&str, &str)] = builtin![
    "free-overload",
    "pro-overload",
    "boundary-straddle",
    "business-overload",
    "retry-after-honesty",
    "advanced-overload",
    "analytics-advanced-overload",
    "two-keys-isolation",
    "free-fleet",
    "tenants-fleet",
    "every-plan",
];

/// How arrivals are laid out over the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// `rate` from start to end.
    #[default]
    Steady,
    /// `burst` x N requests over `burst_span` of a window, then `rate`.
    BurstThenSteady,
    /// One request at 0, then `burst` x N just before one window later and as many just
    /// after it, then `rate` to the end.
    Straddle,
    /// Two keys of the plan at once: the first at `rate`, the second at `other_key_rate`.
    TwoKeys,
    /// `burst` x N requests over `burst_span`; the first throttled request waits its
    /// Retry-After and is retried once.
    RetryAfter,
    /// Every key of the plan given, each at its own rate: a share `noisy` of them at `rate`,
    /// the others at `other_key_rate` (under their limit).
    Fleet,
    /// One key of every plan given, at once, each at `rate` times its own plan's limit; a plan
    /// of custom limit (Enterprise) at `other_key_rate` times the limit its key states.
    Plans,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Steady => "steady",
            Shape::BurstThenSteady => "burst-then-steady",
            Shape::Straddle => "straddle",
            Shape::TwoKeys => "two-keys",
            Shape::RetryAfter => "retry-after",
            Shape::Fleet => "fleet",
            Shape::Plans => "plans",
        }
    }
    /// The shape `as_str` names.
    pub fn named(name: &str) -> Option<Shape> {
        [
            Shape::Steady,
            Shape::BurstThenSteady,
            Shape::Straddle,
            Shape::TwoKeys,
            Shape::RetryAfter,
            Shape::Fleet,
            Shape::Plans,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
    /// Shapes that keep the key over its limit for the whole run.
    pub fn sustained_overload(self) -> bool {
        matches!(
            self,
            Shape::Steady | Shape::BurstThenSteady | Shape::TwoKeys | Shape::Fleet | Shape::Plans
        )
    }
}

/// One operation of the mix.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OpMix {
    /// operationId in the spec (a GET without a body).
    pub operation: String,
    #[serde(default = "one")]
    pub weight: u32,
    /// Query parameters sent as given.
    #[serde(default)]
    pub query: BTreeMap<String, String>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Plan whose key is loaded (`plans`: every plan, `"every"`).
    pub plan: String,
    /// Rate class (default: the spec's default class).
    #[serde(default)]
    pub class: Option<String>,
    #[serde(default)]
    pub shape: Shape,
    /// Offered rate as a multiple of the plan's limit (N per window).
    pub rate: f64,
    /// Duration of the run in windows of the class.
    pub windows: f64,
    /// Burst size as a multiple of N (burst-then-steady, straddle, retry-after).
    #[serde(default)]
    pub burst: Option<f64>,
    /// Fraction of a window a burst is spread over.
    #[serde(default)]
    pub burst_span: Option<f64>,
    /// two-keys: the second key's rate as a multiple of N.
    #[serde(default)]
    pub other_key_rate: Option<f64>,
    /// Which key of the plan to load (1: the first given, the default); the first when the
    /// target has fewer. Lets scenarios alternate keys so windows clear between them.
    #[serde(default)]
    pub key: Option<usize>,
    /// fleet: the share of the plan's keys loaded at `rate` (noisy); at least one key.
    #[serde(default)]
    pub noisy: Option<f64>,
    /// fleet: the noisy keys come and go: bursts of `burst` x N over `burst_span` x W, each
    /// followed by `silence` x W without a request (below 1: a window still holds the burst
    /// before), while the quiet keys are served.
    #[serde(default)]
    pub silence: Option<f64>,
    /// Run only when named (`--scenario`), not in the default run of every built-in.
    #[serde(default)]
    pub only_when_named: bool,
    /// The share of each key's requests that carry a query the spec forbids
    /// (`Operation::forbidden_query`: a required parameter left out, one past its bound), never
    /// a bad key: a clean refusal is their expected answer, and the rate-limit fields it
    /// carries must follow from the key's history. Default `DEFAULT_FORBIDDEN_SHARE`; 0: none.
    #[serde(default)]
    pub forbidden: Option<f64>,
    pub operations: Vec<OpMix>,
}

/// The share of a key's requests the spec forbids, unless a scenario says otherwise: one in 50,
/// so a run learns how the target counts refusals while its limits are still judged on the rest.
pub const DEFAULT_FORBIDDEN_SHARE: f64 = 0.02;

impl Scenario {
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, LoadError> {
        toml::from_str(text).map_err(|e| LoadError::Scenario {
            origin: origin.to_string(),
            problem: e.to_string(),
        })
    }

    /// Whether this is a built-in scenario as shipped (its name and every field): those send
    /// only what every conformant target must accept.
    pub fn is_builtin(&self) -> bool {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == self.name)
            .and_then(|(n, text)| Scenario::from_toml(text, n).ok())
            .is_some_and(|b| serde_json::to_value(&b).ok() == serde_json::to_value(self).ok())
    }

    pub fn builtin() -> Result<Vec<Scenario>, LoadError> {
        BUILTIN
            .iter()
            .map(|(name, text)| Scenario::from_toml(text, name))
            .collect()
    }

    /// The built-in scenarios a run without `--scenario` runs.
    pub fn default_run() -> Result<Vec<Scenario>, LoadError> {
        Ok(Scenario::builtin()?
            .into_iter()
            .filter(|s| !s.only_when_named)
            .collect())
    }

    /// The rate of the scenario's `key`-th key of `keys`, as a multiple of the limit (a key
    /// that comes and goes: its average over a burst and the silence after it).
    pub fn key_rate(&self, key: usize, keys: usize) -> f64 {
        let other = self.other_key_rate.unwrap_or(0.5);
        match self.shape {
            Shape::TwoKeys if key == 1 => other,
            Shape::Fleet if !self.noisy_key(key, keys) => other,
            Shape::Fleet if self.comes_and_goes(key, keys) => {
                let (burst, span, silence) = self.bursts();
                burst / (span + silence).max(f64::MIN_POSITIVE)
            }
            _ => self.rate,
        }
    }

    /// fleet with `silence`: whether the `key`-th of `keys` comes and goes (the noisy ones).
    pub fn comes_and_goes(&self, key: usize, keys: usize) -> bool {
        self.shape == Shape::Fleet && self.silence.is_some() && self.noisy_key(key, keys)
    }

    /// A key that comes and goes: its burst (x N), the burst's span and the silence after it
    /// (x W).
    pub fn bursts(&self) -> (f64, f64, f64) {
        (
            self.burst.unwrap_or(1.0),
            self.burst_span.unwrap_or(0.05),
            self.silence.unwrap_or(0.0),
        )
    }

    /// fleet: whether the `key`-th of `keys` is one of the noisy ones: `noisy` x keys of them
    /// (at least one), spread evenly over the keys, the first among them.
    pub fn noisy_key(&self, key: usize, keys: usize) -> bool {
        let keys = keys.max(1);
        let m = ((self.noisy.unwrap_or(0.1) * keys as f64).round() as usize).clamp(1, keys);
        // Key i is noisy when the count of noisy keys up to it steps up there.
        (key * m).div_ceil(keys) < ((key + 1) * m).div_ceil(keys)
    }

    /// A path to a file, a built-in name, or a name in `scenarios/` of the working directory.
    pub fn load(name_or_path: &str) -> Result<Scenario, LoadError> {
        let path = Path::new(name_or_path);
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| LoadError::Scenario {
                origin: p.display().to_string(),
                problem: e.to_string(),
            })
        };
        if path.is_file() {
            return Scenario::from_toml(&read(path)?, name_or_path);
        }
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Scenario::from_toml(text, name);
        }
        let local = Path::new("scenarios").join(format!("{name_or_path}.toml"));
        if local.is_file() {
            return Scenario::from_toml(&read(&local)?, name_or_path);
        }
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        Err(LoadError::Scenario {
            origin: name_or_path.to_string(),
            problem: format!(
                "no such file, built-in or scenarios/<name>.toml; built-in: {}",
                names.join(", ")
            ),
        })
    }

    fn bad(&self, problem: impl Into<String>) -> LoadError {
        LoadError::Scenario {
            origin: self.name.clone(),
            problem: problem.into(),
        }
    }

    /// Checks the scenario against the spec (plan, class, operations, numbers).
    pub fn validate(&self, spec: &Spec) -> Result<(), LoadError> {
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(self.bad("name must be letters, digits, - or _"));
        }
        if (self.shape == Shape::Plans) != (self.plan == EVERY_PLAN) {
            return Err(self.bad(format!(
                "plan = \"{EVERY_PLAN}\" goes with shape = \"plans\" (one key of every plan), and only with it"
            )));
        }
        if self.shape != Shape::Plans && spec.plan(&self.plan).is_none() {
            return Err(self.bad(format!("unknown plan {:?}", self.plan)));
        }
        if self.shape == Shape::Plans && self.other_key_rate.is_none_or(|r| r >= 1.0) {
            return Err(self.bad(
                "plans needs other_key_rate below 1: a custom limit's key is loaded under what it states",
            ));
        }
        let class = self.class(spec);
        if spec.window(&class).is_none() {
            return Err(self.bad(format!("unknown rate class {class:?}")));
        }
        let finite = |v: f64, lo: f64, hi: f64| v.is_finite() && v >= lo && v <= hi;
        if !finite(self.rate, 0.0, 100.0) {
            return Err(self.bad("rate must be a multiple of the limit in 0..=100"));
        }
        if !finite(self.windows, 0.01, 1000.0) {
            return Err(self.bad("windows must be in 0.01..=1000"));
        }
        for (what, v, lo, hi) in [
            ("burst", self.burst, 0.0, 100.0),
            ("burst_span", self.burst_span, 0.0, 1.0),
            ("other_key_rate", self.other_key_rate, 0.0, 100.0),
            ("silence", self.silence, 0.01, 0.99),
        ] {
            if let Some(v) = v
                && !finite(v, lo, hi)
            {
                return Err(self.bad(format!("{what} must be in {lo}..={hi}")));
            }
        }
        if self.shape == Shape::TwoKeys && self.other_key_rate.is_none_or(|r| r >= 1.0) {
            return Err(self.bad("two-keys needs other_key_rate below 1 (the key under its limit)"));
        }
        if self.shape == Shape::Fleet
            && (self.other_key_rate.is_none_or(|r| r >= 1.0)
                || self.noisy.is_none_or(|f| !(0.0..=1.0).contains(&f)))
        {
            return Err(self.bad(
                "fleet needs other_key_rate below 1 (the quiet keys) and noisy, the share of keys at rate, in 0..=1",
            ));
        }
        if self.silence.is_some() && self.shape != Shape::Fleet {
            return Err(self.bad(
                "silence is for fleet: its noisy keys come and go (burst, burst_span, silence)",
            ));
        }
        if self.operations.is_empty() || self.operations.iter().all(|o| o.weight == 0) {
            return Err(self.bad("needs at least one operation with a weight above 0"));
        }
        for o in &self.operations {
            let op = spec
                .operation(&o.operation)
                .ok_or_else(|| self.bad(format!("unknown operation {:?}", o.operation)))?;
            if op.method != http::Method::GET || op.body.is_some() {
                return Err(self.bad(format!(
                    "{}: only GET operations without a body can be loaded",
                    o.operation
                )));
            }
            if op.rate_class != class {
                return Err(self.bad(format!(
                    "{} counts against {}, not {class}",
                    o.operation, op.rate_class
                )));
            }
        }
        Ok(())
    }

    pub fn class(&self, spec: &Spec) -> String {
        self.class
            .clone()
            .unwrap_or_else(|| spec.default_rate_class.clone())
    }

    /// Every how many requests of a key one is forbidden (0: none): the scenario's share.
    pub fn forbidden_every(&self) -> u64 {
        let share = self.forbidden.unwrap_or(DEFAULT_FORBIDDEN_SHARE);
        if share > 0.0 && share.is_finite() {
            (1.0 / share).round().max(2.0) as u64
        } else {
            0
        }
    }

    /// Keys needed: two for `two-keys`.
    pub fn keys_needed(&self) -> usize {
        if self.shape == Shape::TwoKeys { 2 } else { 1 }
    }
}

/// The `plan` of a `plans` scenario: every plan given.
pub const EVERY_PLAN: &str = "every";

/// A target of a test: a 6 s window and one key per plan named, `k0`, `k1`, ... in order.
#[cfg(test)]
pub(crate) fn test_target<'a>(
    plans: impl IntoIterator<Item = &'a str>,
) -> linkcert_run::target::Target {
    use linkcert_run::target::{PlanKey, Target};
    Target {
        base_url: linkcert_http::BaseUrl::parse("https://x").unwrap(),
        rate_window: linkcert_spec::window::RateWindow::from_secs(6.0).unwrap(),
        keys: plans
            .into_iter()
            .enumerate()
            .map(|(i, p)| PlanKey {
                plan: p.to_string(),
                key: format!("k{i}"),
            })
            .collect(),
        ..Target::default()
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
