//! A scenario made concrete for one target (`Scenario::resolve`): its keys and their limits,
//! its requests (and their forbidden forms), its window.

use std::time::Duration;

use crate::scenario::{EVERY_PLAN, Scenario, Shape};
use linkcert_run::target::{PlanKey, Target};
use linkcert_spec::{Limit, Spec};

/// A scenario made concrete for one target: its limit, window and keys.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub scenario: Scenario,
    pub class: String,
    /// N: requests per window (`plans`: the first key's; each key's is `key_limit`).
    pub limit: u64,
    /// Each key's N (the plan's limit; a custom one as its key states it, read as the run
    /// begins: until then the highest fixed one, and 0 if its key states none).
    pub limits: Vec<u64>,
    /// The keys whose plan's limit is custom (`plans`): loaded at `other_key_rate` of what
    /// they state.
    pub custom: Vec<usize>,
    pub window: Duration,
    /// One key, two for `two-keys`, every key of the plan for `fleet`.
    pub keys: Vec<PlanKey>,
    /// Per operation of the mix: path with query, and a report label; then the forbidden forms
    /// of those that have one.
    pub requests: Vec<(String, String)>,
    /// Per operation of the mix, the index in `requests` of its forbidden form, if it has one.
    pub forbidden: Vec<Option<usize>>,
    /// Whether every operation of the mix is one of linkcert's stand-ins (404 = absent).
    pub extension_only: bool,
    /// The code a 429's envelope carries (the spec's error table).
    pub throttled_code: String,
    /// The class is the spec's standard (per-minute) one.
    pub standard: bool,
    /// A fleet's share in a shard: each key's position in the whole fleet, and its size
    /// (`load::shard`), so that a key's rate is the one it has in the whole run.
    pub fleet_share: Option<(Vec<usize>, usize)>,
    /// The target's clock less ours, in seconds, from its Date header when the run began:
    /// the header rules compare its Reset with our clock allowing for it.
    pub clock_offset: Option<f64>,
}

impl Resolved {
    /// The `key`-th key's N.
    pub fn key_limit(&self, key: usize) -> u64 {
        self.limits.get(key).copied().unwrap_or(self.limit)
    }

    /// The rate of the `key`-th key, as a multiple of its limit.
    pub fn key_rate(&self, key: usize) -> f64 {
        if self.custom.contains(&key) {
            return self.scenario.other_key_rate.unwrap_or(0.5);
        }
        let (at, size) = self.fleet_position(key);
        self.scenario.key_rate(at, size)
    }

    /// The `key`-th key's place in the whole fleet, and the fleet's size (a shard's keys are
    /// part of one).
    pub fn fleet_position(&self, key: usize) -> (usize, usize) {
        match &self.fleet_share {
            Some((positions, size)) => (positions.get(key).copied().unwrap_or(key), *size),
            None => (key, self.keys.len()),
        }
    }
}

impl Scenario {
    /// Make it concrete for a target, or say why it cannot run there.
    pub fn resolve(&self, spec: &Spec, target: &Target) -> Result<Resolved, String> {
        let class = self.class(spec);
        let (keys, limits, custom) = if self.shape == Shape::Plans {
            self.every_plan(spec, target, &class)?
        } else {
            self.plan_keys(spec, target, &class)?
        };
        let plan_name = if self.shape == Shape::Plans {
            EVERY_PLAN
        } else {
            self.plan.as_str()
        };
        let mut requests = Vec::new();
        let mut forbidden_forms = Vec::new();
        let mut extension_only = true;
        for o in &self.operations {
            let op = spec
                .operation(&o.operation)
                .ok_or_else(|| format!("unknown operation {}", o.operation))?;
            extension_only &= op.extension;
            let query: Vec<(String, String)> = o
                .query
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let label = format!("{plan_name} {}", op.label());
            requests.push((with_query(&op.path, &query), label.clone()));
            forbidden_forms.push(op.forbidden_query(&query).map(|f| {
                (
                    with_query(&op.path, &f.query),
                    format!("{label} ({})", f.why),
                )
            }));
        }
        let mut forbidden = Vec::new();
        for form in forbidden_forms {
            forbidden.push(form.map(|f| {
                requests.push(f);
                requests.len() - 1
            }));
        }
        Ok(Resolved {
            scenario: self.clone(),
            class: class.clone(),
            limit: limits.iter().copied().find(|n| *n > 0).unwrap_or(0),
            limits,
            custom,
            window: target.window(spec, &class),
            keys,
            requests,
            forbidden,
            extension_only,
            throttled_code: spec.errors.code(429).unwrap_or_default().to_string(),
            standard: class == spec.default_rate_class,
            fleet_share: None,
            clock_offset: None,
        })
    }
}

/// `path` with `query` (in its order), form-encoded.
fn with_query(path: &str, query: &[(String, String)]) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in query {
        q.append_pair(k, v);
    }
    let q = q.finish();
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{q}")
    }
}

/// Keys, their limits and the custom ones, as `resolve` makes them.
type Keyed = (Vec<PlanKey>, Vec<u64>, Vec<usize>);

impl Scenario {
    /// The keys of the scenario's plan: one (two for `two-keys`, every one for `fleet`), each
    /// with the plan's limit.
    fn plan_keys(&self, spec: &Spec, target: &Target, class: &str) -> Result<Keyed, String> {
        let plan = spec
            .plan(&self.plan)
            .ok_or_else(|| format!("unknown plan {}", self.plan))?;
        let limit = match plan.limit(class) {
            Limit::Fixed(n) if n > 0 => n,
            Limit::Fixed(_) | Limit::Unavailable => {
                return Err(format!("the {} plan has no {class} access", plan.name));
            }
            Limit::Custom => {
                return Err(format!(
                    "the {} plan's {class} limit is custom: not known in advance",
                    plan.name
                ));
            }
        };
        let mut keys: Vec<PlanKey> = target.keys_of(&plan.name).cloned().collect();
        let preferred = self.key.unwrap_or(1).saturating_sub(1);
        if self.keys_needed() == 1 && preferred < keys.len() {
            keys.rotate_left(preferred);
        }
        if self.shape != Shape::Fleet {
            keys.truncate(self.keys_needed());
        }
        if keys.len() < self.keys_needed() {
            return Err(format!(
                "needs {} key(s) of the {} plan, {} given (--key {}=...)",
                self.keys_needed(),
                plan.name,
                keys.len(),
                plan.name
            ));
        }
        let limits = vec![limit; keys.len()];
        Ok((keys, limits, Vec::new()))
    }

    /// `plans`: the first key of every plan given with access to the class, in rank order; a
    /// custom limit is read from what its key states as the run begins.
    fn every_plan(&self, spec: &Spec, target: &Target, class: &str) -> Result<Keyed, String> {
        let mut plans: Vec<_> = spec.plans.iter().collect();
        plans.sort_by_key(|p| p.rank);
        let (mut keys, mut limits, mut custom) = (Vec::new(), Vec::new(), Vec::new());
        for plan in plans {
            let limit = match plan.limit(class) {
                Limit::Fixed(n) if n > 0 => n,
                Limit::Custom => 0,
                Limit::Fixed(_) | Limit::Unavailable => continue,
            };
            let Some(key) = target.keys_of(&plan.name).next() else {
                continue;
            };
            if limit == 0 {
                custom.push(keys.len());
            }
            keys.push(key.clone());
            limits.push(limit);
        }
        if keys.len() < 2 {
            return Err(format!(
                "needs keys of two plans or more with {class} access, {} given",
                keys.len()
            ));
        }
        // Until its key states its own, a custom limit is taken as the highest fixed one: the
        // plan's estimate counts its requests (loaded no faster than the fastest other key).
        let highest = limits.iter().copied().max().unwrap_or(0);
        for k in &custom {
            limits[*k] = highest;
        }
        Ok((keys, limits, custom))
    }
}
