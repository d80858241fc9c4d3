//! load.isolation (two-keys): the key under its limit gets no 429 while the other is overloaded.

use super::rule::{Across, Judge, Rule};
use crate::load::scenario::Shape;

/// load.isolation, across the keys of a two-keys scenario.
pub(super) struct Isolation;

impl Rule for Isolation {
    fn across(&self, s: &Across, j: &mut Judge) {
        if s.shape() != Shape::TwoKeys {
            return;
        }
        // The second key is the one kept under its limit.
        let Some(k) = s.keys.get(1) else { return };
        let lbl = Some(k.label.as_str());
        if k.throttled == 0 {
            j.pass(
                "load.isolation",
                lbl,
                "the key under its limit was never throttled while the other was overloaded".into(),
            );
        } else {
            j.fail(
                "load.isolation",
                lbl,
                "one key's overload throttled another key: limits must be per key".into(),
                "no 429 for the key under its limit".into(),
                format!("{} of {} throttled", k.throttled, k.records()),
            );
        }
    }
}
