//! The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11, May 2026):
//! `RateLimit-Policy` names a quota policy and states its quota (`q`) and window (`w`, whole
//! seconds); `RateLimit` names the policy in force and states what is left of it (`r`) and
//! the seconds until it resets (`t`). Both are Lists of Structured Field Items (RFC 9651),
//! built and read with `sfv`, never by hand. The spec names only `X-RateLimit-*`: the fields
//! are a target's choice, and the reference sends them only when asked (`serve
//! --ratelimit-fields`), beside the spec's headers and saying the same.
//!
//! Here: building them (the reference); `read`: reading them in any draft's form; `judge`:
//! whether one answer's fields say the truth (`check`'s ratelimit.fields, `load`'s load.fields).

use std::time::Duration;

mod judge;
mod read;

pub use judge::{Beside, Quota, Untrue, judge_answer, remaining};
pub use read::{
    Fields, Form, LIMIT_06, Malformed, NAMES, Now, Policy, REMAINING_06, RESET_06, combined, read,
    read_pairs,
};

use sfv::{Integer, KeyRef, ListSerializer, StringRef};

pub const POLICY: &str = "ratelimit-policy";
pub const RATELIMIT: &str = "ratelimit";

/// A value the field's Integer holds (RFC 9651 3.3.1: at most 15 digits).
fn integer(n: u64) -> Option<Integer> {
    Integer::try_from(i64::try_from(n).ok()?).ok()
}

/// `"<policy>";q=<quota>;w=<seconds>`. `w` only for a window of whole seconds: the field has
/// no fractions, and a shortened development window's per-second class has less than one.
/// None: a name or number the field cannot carry.
pub fn policy_field(policy: &str, quota: u64, window: Duration) -> Option<String> {
    let mut params = vec![(KeyRef::constant("q"), integer(quota)?)];
    if window.subsec_nanos() == 0 && window.as_secs() > 0 {
        params.push((KeyRef::constant("w"), integer(window.as_secs())?));
    }
    member(policy, params)
}

/// `"<policy>";r=<remaining>;t=<seconds until the reset>`.
pub fn ratelimit_field(policy: &str, remaining: u64, reset_in: u64) -> Option<String> {
    member(
        policy,
        vec![
            (KeyRef::constant("r"), integer(remaining)?),
            (KeyRef::constant("t"), integer(reset_in)?),
        ],
    )
}

/// A List of one member: the policy's name, a String, with `params`.
fn member(policy: &str, params: Vec<(&KeyRef, Integer)>) -> Option<String> {
    let mut list = ListSerializer::new();
    _ = list
        .bare_item(StringRef::from_str(policy).ok()?)
        .parameters(params);
    list.finish()
}

#[cfg(test)]
mod tests;
