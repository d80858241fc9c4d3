//! load.isolation (two-keys, fleet, plans): no key under its limit gets a 429 while others are
//! overloaded. Judged from each key's own figures, so a fleet of thousands costs one pass.

use linkcert_registry::rule_id;
use super::rule::{Across, Judge, Rule};
use crate::scenario::Shape;

/// load.isolation, across the keys of a two-keys, fleet or plans scenario.
pub(super) struct Isolation;

/// The worst quiet keys named in a failure, at most.
const WORST: usize = 5;

impl Rule for Isolation {
    fn across(&self, s: &Across, j: &mut Judge) {
        if !matches!(s.shape(), Shape::TwoKeys | Shape::Fleet | Shape::Plans) {
            return;
        }
        // The keys kept under their limit.
        let mut quiet: Vec<_> = s.keys.iter().filter(|k| k.rate < 1.0).collect();
        if quiet.is_empty() {
            return;
        }
        let label = (quiet.len() == 1).then(|| quiet[0].label.clone());
        let lbl = label.as_deref();
        let hit: u64 = quiet.iter().filter(|k| k.throttled > 0).count() as u64;
        if hit == 0 {
            j.pass(
                rule_id!("load.isolation"),
                lbl,
                format!(
                    "{} under their limit, never throttled while others were overloaded",
                    keys(quiet.len())
                ),
            );
            return;
        }
        quiet.sort_by_key(|k| std::cmp::Reverse(k.throttled));
        let worst: Vec<String> = quiet
            .iter()
            .filter(|k| k.throttled > 0)
            .take(WORST)
            .map(|k| format!("{}: {} of {}", k.label, k.throttled, k.records()))
            .collect();
        j.fail(
            rule_id!("load.isolation"),
            lbl,
            format!(
                "others' overload throttled {hit} of {} under their limit: limits must be per key",
                keys(quiet.len())
            ),
            "no 429 for a key under its limit".into(),
            format!("throttled (worst first): {}", worst.join(", ")),
        );
    }
}

fn keys(n: usize) -> String {
    if n == 1 {
        "the key".into()
    } else {
        format!("{n} keys")
    }
}
