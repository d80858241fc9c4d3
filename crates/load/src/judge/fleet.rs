//! A fleet's figures summed up, so that reports stay one screen however many keys ran: per
//! group of keys (the noisy ones, the quiet ones) the spread of admitted-to-limit across keys,
//! the worst keys by label (never the key), and per second the percentile bands of what each
//! key was admitted. Computed from the per-key figures and the fleet's seconds alone, both of
//! which shards add up, so a merged run gets the same summary as one process would.

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

    /// Nearest-rank percentiles of `keys` values given as counts: `counts[c - 1]` keys had c,
    /// the rest of the keys 0.
    pub fn of_counts(keys: u64, counts: &[u64]) -> Spread {
        let total = keys.max(counts.iter().sum());
        if total == 0 {
            return Spread::default();
        }
        let zeros = total - counts.iter().sum::<u64>();
        // The value of the r-th smallest (1-based).
        let at_rank = |r: u64| -> f64 {
            let mut seen = zeros;
            if r <= seen {
                return 0.0;
            }
            for (i, n) in counts.iter().enumerate() {
                seen += n;
                if r <= seen {
                    return (i + 1) as f64;
                }
            }
            counts.len() as f64
        };
        let at = |q: f64| at_rank(((q * total as f64).ceil() as u64).clamp(1, total));
        Spread {
            min: at_rank(1),
            p10: at(0.10),
            p50: at(0.50),
            p90: at(0.90),
            max: at_rank(total),
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

/// The summary of a fleet; None for a scenario of a few keys. `rate_of` gives each key's rate
/// from its position in the scenario's keys.
pub fn summarise(s: &ScenarioResult, rate_of: impl Fn(usize) -> f64) -> Option<FleetSummary> {
    if !s.is_fleet() {
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
    let per_window = |k: &KeyStats| admitted_to_limit(k, s.limit);
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

/// A key's admissions per window it was loaded, over its limit (`scenario`'s where the key kept
/// none): 1 is a full window's worth.
pub fn admitted_to_limit(k: &KeyStats, scenario: u64) -> f64 {
    // A key's admissions all fall in at least one window: a quiet key with one or two sends
    // (a span of 0) is over one window, not over none.
    let windows = k.windows_loaded.max(1.0);
    let limit = if k.limit > 0 { k.limit } else { scenario };
    k.admitted as f64 / windows / limit.max(1) as f64
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

/// Per second, the spread across the fleet's keys of each key's admitted count (keys with none
/// that second count as 0: the band is over the whole fleet).
fn bands(s: &ScenarioResult) -> Vec<Band> {
    s.fleet_seconds
        .iter()
        .map(|sec| {
            let sp = Spread::of_counts(s.keys.len() as u64, &sec.admitting);
            Band {
                t: sec.t,
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

    /// Admitted per window loaded, over the limit: 90 over 1.5 windows of 60 is 1; a quiet
    /// key's two admissions (a span of no window) are over one window, not over none.
    #[test]
    fn admitted_to_limit_is_per_window_loaded() {
        let key = |admitted: u64, windows: f64| {
            KeyStats::of_test("free#1", admitted, admitted, windows, 1.0)
        };
        assert_eq!(admitted_to_limit(&key(90, 1.5), 60), 1.0);
        assert_eq!(admitted_to_limit(&key(120, 3.0), 60), 120.0 / 3.0 / 60.0);
        assert_eq!(admitted_to_limit(&key(2, 0.0), 60), 2.0 / 60.0);
    }

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

    #[test]
    fn spreads_from_counts_are_those_of_the_values() {
        // 100 keys: 60 with none, 30 admitted once, 10 three times.
        let mut v = vec![0.0; 60];
        v.extend([1.0; 30]);
        v.extend([3.0; 10]);
        assert_eq!(Spread::of_counts(100, &[30, 0, 10]), Spread::of(v));
        assert_eq!(Spread::of_counts(0, &[]), Spread::default());
        assert_eq!(Spread::of_counts(5, &[]).max, 0.0);
    }
}
