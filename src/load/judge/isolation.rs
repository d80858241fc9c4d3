//! load.isolation (two-keys): the key under its limit gets no 429 while the other is overloaded.

use super::*;

pub(super) fn judge(j: &mut Judge, view: &KeyView) {
    let KeyView { label: lbl, f, .. } = *view;
    if f.throttled == 0 {
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
            format!("{} of {} throttled", f.throttled, f.records),
        );
    }
}
