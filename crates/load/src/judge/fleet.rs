//! A fleet's figures summed up, so that reports stay one screen however many keys ran: per
//! group of keys (the noisy ones, the quiet ones) the spread of admitted-to-limit across keys,
//! the worst keys by label (never the key), and per second the percentile bands of what each
//! key was admitted. Computed from the per-key figures alone, so a merged run gets the same
//! summary as one process would.

use std::collections::BTreeMap;

use super::result::{Band, FleetSummary, Group, KeyStats, ScenarioResult, Spread, Worst};
use linkcert_spec::verdict::Verdict;

/// Scenarios over more keys than this are summed up rather than listed key by key.
pub const LISTED_KEYS: usize = 4;

/// The worst keys named, at most.
const WORST: usize = 10;

impl Spread {
    /// Nearest-rank percentiles of the values (sorted here).
    pub fn of(mut v: Vec<f64>) -> Spread {
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Spread {
            min: v[0],
            p10: at(0.10),
            p50: at(0.50),
            p90: at(0.90),
            max: v[v.len() - 1],
        }
    }
}

/// Key labels as people read them: every one for a few keys, the first and last and the
/// count for a fleet.
pub fn labels(keys: &[String]) -> String {
    match keys {
        [first, .., last] if keys.len() > LISTED_KEYS => {
            format!("{first} … {last} ({} keys)", keys.len())
        }
        all => all.join(", "),
    }
}

/// The summary of a scenario over more than `LISTED_KEYS` keys; None for fewer. `rate_of`
/// gives each key's rate from its position in the scenario's keys.
pub fn summarise(s: &ScenarioResult, rate_of: impl Fn(usize) -> f64) -> Option<FleetSummary> {
    if s.keys.len() <= LISTED_KEYS {
        return None;
    }
    let mut groups: BTreeMap<u64, (f64, Vec<&KeyStats>)> = BTreeMap::new();
    for (i, k) in s.keys.iter().enumerate() {
        let rate = rate_of(i);
        groups
            .entry(rate.to_bits())
            .or_insert((rate, Vec::new()))
            .1
            .push(k);
    }
    let per_window = |k: &KeyStats| {
        let windows = k.windows_loaded.max(f64::MIN_POSITIVE);
        k.admitted as f64 / windows / s.limit.max(1) as f64
    };
    let mut groups: Vec<Group> = groups
        .into_values()
        .map(|(rate, keys)| Group {
            rate,
            keys: keys.len(),
            throttled_keys: keys.iter().filter(|k| k.throttled > 0).count(),
            admitted_to_limit: Spread::of(keys.iter().map(|k| per_window(k)).collect()),
        })
        .collect();
    groups.sort_by(|a, b| b.rate.total_cmp(&a.rate));
    Some(FleetSummary {
        keys: s.keys.len(),
        groups,
        worst: worst(s, &rate_of),
        bands: bands(s),
    })
}

/// Keys with failed rules (most first), then quiet keys throttled (most 429s first).
fn worst(s: &ScenarioResult, rate_of: &impl Fn(usize) -> f64) -> Vec<Worst> {
    let mut failed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in s.findings.iter().filter(|f| f.verdict == Verdict::Fail) {
        if let Some(k) = f.key.as_deref() {
            failed.entry(k).or_default().push(&f.check);
        }
    }
    let mut scored: Vec<(u64, u64, Worst)> = s
        .keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let rules = failed.get(k.label.as_str());
            let quiet_hit = rate_of(i) < 1.0 && k.throttled > 0;
            if rules.is_none() && !quiet_hit {
                return None;
            }
            let mut why = Vec::new();
            if let Some(r) = rules {
                why.push(format!("failed {}", r.join(", ")));
            }
            if quiet_hit {
                why.push(format!(
                    "throttled {} of {} under its limit",
                    k.throttled,
                    k.records()
                ));
            }
            let n = rules.map_or(0, |r| r.len() as u64);
            let label = k.label.clone();
            Some((
                n,
                k.throttled,
                Worst {
                    label,
                    why: why.join("; "),
                },
            ))
        })
        .collect();
    scored.sort_by_key(|w| std::cmp::Reverse((w.0, w.1)));
    scored.into_iter().take(WORST).map(|(_, _, w)| w).collect()
}

/// Per second, the spread across keys of each key's admitted count (keys with nothing due
/// that second count as 0: the band is over the whole fleet).
fn bands(s: &ScenarioResult) -> Vec<Band> {
    let mut by_t: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for sec in &s.seconds {
        by_t.entry(sec.t).or_default().push(sec.admitted as f64);
    }
    by_t.into_iter()
        .map(|(t, mut v)| {
            v.resize(s.keys.len().max(v.len()), 0.0);
            let sp = Spread::of(v);
            Band {
                t,
                p10: sp.p10,
                p50: sp.p50,
                p90: sp.p90,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_are_nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Spread::of(v);
        assert_eq!(
            (s.min, s.p10, s.p50, s.p90, s.max),
            (1.0, 10.0, 50.0, 90.0, 100.0)
        );
        assert_eq!(Spread::of(vec![]), Spread::default());
        assert_eq!(Spread::of(vec![0.5]).p90, 0.5);
    }
}
