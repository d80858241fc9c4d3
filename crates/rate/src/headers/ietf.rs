//! The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11, May 2026):
//! `RateLimit-Policy` names a quota policy and states its quota (`q`) and window (`w`, whole
//! seconds); `RateLimit` names the policy in force and states what is left of it (`r`) and
//! the seconds until it resets (`t`). Both are Lists of Structured Field Items (RFC 9651),
//! built here with `sfv`, never by hand. The spec names only `X-RateLimit-*`: the fields are
//! a target's choice, and the reference sends them only when asked (`serve
//! --ratelimit-fields`), beside the spec's headers and saying the same.

use std::time::Duration;

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
mod tests {
    use super::*;
    use sfv::{BareItem, List, ListEntry, Parser};

    /// (policy, parameter values by key) of a field's one member, as RFC 9651 parses it.
    fn parsed(field: &str) -> (String, Vec<(String, i64)>) {
        let list: List = Parser::new(field).parse().expect("a well-formed List");
        assert_eq!(list.len(), 1, "{field}");
        let ListEntry::Item(item) = &list[0] else {
            panic!("an Item: {field}")
        };
        let BareItem::String(name) = &item.bare_item else {
            panic!("a String names the policy: {field}")
        };
        let params = item
            .params
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    i64::from(v.as_integer().expect("integers")),
                )
            })
            .collect();
        (name.as_str().to_string(), params)
    }

    #[test]
    fn the_fields_parse_as_the_draft_writes_them() {
        let policy = policy_field("standard", 600, Duration::from_secs(60)).unwrap();
        assert_eq!(policy, r#""standard";q=600;w=60"#);
        assert_eq!(
            parsed(&policy),
            ("standard".into(), vec![("q".into(), 600), ("w".into(), 60)])
        );
        let now = ratelimit_field("standard", 42, 17).unwrap();
        assert_eq!(now, r#""standard";r=42;t=17"#);
        assert_eq!(
            parsed(&now),
            ("standard".into(), vec![("r".into(), 42), ("t".into(), 17)])
        );
    }

    #[test]
    fn a_window_of_less_than_whole_seconds_has_no_w() {
        let policy = policy_field("analytics", 4, Duration::from_millis(100)).unwrap();
        assert_eq!(parsed(&policy).1, vec![("q".into(), 4)]);
        let policy = policy_field("standard", 60, Duration::from_millis(6_500)).unwrap();
        assert_eq!(parsed(&policy).1, vec![("q".into(), 60)]);
    }

    #[test]
    fn what_the_field_cannot_carry_is_not_sent() {
        assert_eq!(
            policy_field("standard", u64::MAX, Duration::from_secs(60)),
            None
        );
        assert_eq!(ratelimit_field("stänدard", 1, 1), None);
        assert_eq!(ratelimit_field("standard", 1_000_000_000_000_000, 1), None);
    }
}
