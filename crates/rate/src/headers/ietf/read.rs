//! Reading a target's RateLimit fields in whichever draft's form it sends, parsed as RFC 9651
//! Structured Fields with `sfv`, never by hand. Three forms are in the field:
//! - `-08` to `-11` (`Form::Lists`): `RateLimit-Policy: "default";q=60;w=60` and
//!   `RateLimit: "default";r=42;t=17`, Lists whose members name a policy;
//! - `-07` (`Form::Dictionary`): `RateLimit: limit=60, remaining=42, reset=17`, a Dictionary,
//!   and `RateLimit-Policy: 60;w=60`, a List of Integer quotas;
//! - up to `-06` (`Form::Separate`): `RateLimit-Limit: 60`, `RateLimit-Remaining: 42` and
//!   `RateLimit-Reset: 17`, Integer Items (the first drafts listed policies after the limit:
//!   `RateLimit-Limit: 60, 60;w=60`), and `RateLimit-Policy` as in -07.
//!
//! Each is recognised by its shape and read by its own draft's meaning: a -07 Dictionary is
//! never a malformed -11 List. In every draft the reset is seconds from now, never a date.
//! Parameters a draft does not define (`pk`, the partition key, among those it does) are
//! ignored, as the drafts ask of a client.

use sfv::{BareItem, Dictionary, Item, List, ListEntry, Parameters, Parser};

use super::{POLICY, RATELIMIT};

/// The separate fields of drafts up to -06.
pub const LIMIT_06: &str = "ratelimit-limit";
pub const REMAINING_06: &str = "ratelimit-remaining";
pub const RESET_06: &str = "ratelimit-reset";

/// Every field of every form, in the order a finding quotes them.
pub const NAMES: [&str; 5] = [POLICY, RATELIMIT, LIMIT_06, REMAINING_06, RESET_06];

/// Which draft's form an answer's current-quota fields take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `RateLimit` as a List of policies with `r` and `t` (-08 to -11).
    Lists,
    /// `RateLimit` as a Dictionary of `limit`, `remaining` and `reset` (-07).
    Dictionary,
    /// `RateLimit-Limit`, `-Remaining` and `-Reset` (up to -06).
    Separate,
}

impl Form {
    /// The draft a finding cites for this form.
    pub fn draft(self) -> &'static str {
        match self {
            Form::Lists => "draft-ietf-httpapi-ratelimit-headers-11",
            Form::Dictionary => "draft-ietf-httpapi-ratelimit-headers-07",
            Form::Separate => "draft-ietf-httpapi-ratelimit-headers-06",
        }
    }
}

/// One member of `RateLimit-Policy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Its name (-08 and later); the earlier drafts' policies have none.
    pub name: Option<String>,
    /// `q`, or the Integer itself in the earlier drafts.
    pub quota: u64,
    /// `w`: the window in seconds, when given.
    pub window: Option<u64>,
    /// The quota counts requests: `qu` absent or `"requests"` (not bytes, not concurrency).
    pub requests: bool,
}

/// What one member of `RateLimit` (or the separate fields, or the Dictionary) says now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Now {
    /// The form it came in: a finding cites that form's draft and names its field.
    pub form: Form,
    /// The policy it names (-08 and later).
    pub policy: Option<String>,
    /// The limit in force (-07's `limit`, -06's RateLimit-Limit); -08 and later say it in
    /// RateLimit-Policy's `q`.
    pub limit: Option<u64>,
    /// Units left: `r`, `remaining`, RateLimit-Remaining.
    pub remaining: Option<u64>,
    /// Seconds until the quota resets: `t`, `reset`, RateLimit-Reset.
    pub reset_in: Option<u64>,
}

/// An answer's RateLimit fields, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    pub policies: Vec<Policy>,
    pub now: Vec<Now>,
    /// Each field as sent (its values joined as a recipient combines them), for quoting.
    pub raw: Vec<(&'static str, String)>,
}

impl Fields {
    /// A field as sent, for a finding to quote.
    pub fn quoted(&self, name: &str) -> String {
        self.raw
            .iter()
            .find(|(n, _)| *n == name)
            .map_or_else(|| format!("{name} absent"), |(n, v)| format!("{n}: {v}"))
    }
}

/// A field that is none of the drafts' forms: its name, its value as sent, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {value} ({why})")]
pub struct Malformed {
    pub field: &'static str,
    pub value: String,
    pub why: String,
}

/// The RateLimit fields of an answer, `value_of` giving a field's value by its lower-case name
/// (several lines of one field joined with ", ", as RFC 9110 combines them: `combined`). None:
/// the answer carries none of them, which is the target's right (the spec names only
/// X-RateLimit-*).
pub fn read(value_of: impl Fn(&str) -> Option<String>) -> Result<Option<Fields>, Malformed> {
    let raw: Vec<(&'static str, String)> = NAMES
        .iter()
        .filter_map(|n| Some((*n, value_of(n)?.trim().to_string())))
        .collect();
    if raw.is_empty() {
        return Ok(None);
    }
    let value = |name: &str| raw.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
    let mut f = Fields::default();
    if let Some(v) = value(POLICY) {
        f.policies = policies(&v)?;
    }
    if let Some(v) = value(RATELIMIT) {
        f.now = ratelimit(&v)?;
    }
    let (limit, remaining, reset) = (value(LIMIT_06), value(REMAINING_06), value(RESET_06));
    if limit.is_some() || remaining.is_some() || reset.is_some() {
        let mut now = Now {
            form: Form::Separate,
            policy: None,
            limit: None,
            remaining: None,
            reset_in: None,
        };
        if let Some(v) = limit {
            let (l, mut more) = separate_limit(&v)?;
            now.limit = Some(l);
            f.policies.append(&mut more);
        }
        if let Some(v) = remaining {
            now.remaining = Some(integer_item(REMAINING_06, &v)?);
        }
        if let Some(v) = reset {
            now.reset_in = Some(integer_item(RESET_06, &v)?);
        }
        f.now.push(now);
    }
    f.raw = raw;
    Ok(Some(f))
}

/// The RateLimit fields among an answer's (name, value) pairs (`read`, each field `combined`).
pub fn read_pairs<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone,
) -> Result<Option<Fields>, Malformed> {
    read(|name| combined(pairs.clone(), name))
}

/// Every value of the field `name` among `fields` (name, value), joined with ", " as RFC 9110
/// combines the lines of one field; None when it has none.
pub fn combined<'a>(
    fields: impl Iterator<Item = (&'a str, &'a str)>,
    name: &str,
) -> Option<String> {
    let values: Vec<&str> = fields
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

fn malformed(field: &'static str, value: &str, why: impl Into<String>) -> Malformed {
    Malformed {
        field,
        value: value.to_string(),
        why: why.into(),
    }
}

/// A count: a non-negative Integer (RFC 9651 Integers may be negative; no count is).
fn count(field: &'static str, value: &str, what: &str, item: &BareItem) -> Result<u64, Malformed> {
    let n = item
        .as_integer()
        .map(i64::from)
        .ok_or_else(|| malformed(field, value, format!("{what} is not an Integer")))?;
    u64::try_from(n).map_err(|_| malformed(field, value, format!("{what} is negative")))
}

/// A parameter's count, when the parameter is there.
fn param(
    field: &'static str,
    value: &str,
    params: &Parameters,
    key: &str,
) -> Result<Option<u64>, Malformed> {
    params
        .iter()
        .find(|(k, _)| k.as_str() == key)
        .map(|(_, v)| count(field, value, key, v))
        .transpose()
}

/// The members of a List field, each an Item (no Inner Lists in any draft).
fn items(field: &'static str, value: &str) -> Result<Vec<Item>, Malformed> {
    let list: List = Parser::new(value)
        .parse()
        .map_err(|e| malformed(field, value, format!("not a Structured Field List: {e}")))?;
    list.into_iter()
        .map(|m| match m {
            ListEntry::Item(i) => Ok(i),
            ListEntry::InnerList(_) => Err(malformed(field, value, "an Inner List member")),
        })
        .collect()
}

/// A policy's name: a String (-08 on), or a Token as some servers write it.
fn name(item: &BareItem) -> Option<String> {
    match item {
        BareItem::String(s) => Some(s.as_str().to_string()),
        BareItem::Token(t) => Some(t.as_str().to_string()),
        _ => None,
    }
}

/// `RateLimit-Policy`: named policies (-08 on) or Integer quotas (-06, -07), member by member.
fn policies(value: &str) -> Result<Vec<Policy>, Malformed> {
    items(POLICY, value)?
        .iter()
        .map(|m| {
            let window = param(POLICY, value, &m.params, "w")?;
            if let Some(name) = name(&m.bare_item) {
                let quota = param(POLICY, value, &m.params, "q")?.ok_or_else(|| {
                    malformed(POLICY, value, format!("policy \"{name}\" has no q"))
                })?;
                let requests = match m.params.iter().find(|(k, _)| k.as_str() == "qu") {
                    None => true,
                    Some((_, BareItem::String(u))) => u.as_str() == "requests",
                    Some(_) => return Err(malformed(POLICY, value, "qu is not a String")),
                };
                return Ok(Policy {
                    name: Some(name),
                    quota,
                    window,
                    requests,
                });
            }
            Ok(Policy {
                name: None,
                quota: count(POLICY, value, "a policy", &m.bare_item)?,
                window,
                requests: true,
            })
        })
        .collect()
}

/// `RateLimit`: a List of policies (-08 to -11), or else a Dictionary (-07).
fn ratelimit(value: &str) -> Result<Vec<Now>, Malformed> {
    let list: Result<List, _> = Parser::new(value).parse();
    if let Ok(list) = list
        && list
            .iter()
            .all(|m| matches!(m, ListEntry::Item(i) if name(&i.bare_item).is_some()))
    {
        return list
            .iter()
            .filter_map(|m| match m {
                ListEntry::Item(i) => Some(i),
                ListEntry::InnerList(_) => None,
            })
            .map(|i| {
                let policy = name(&i.bare_item);
                let remaining = param(RATELIMIT, value, &i.params, "r")?;
                if remaining.is_none() {
                    return Err(malformed(
                        RATELIMIT,
                        value,
                        format!("policy \"{}\" has no r", policy.clone().unwrap_or_default()),
                    ));
                }
                Ok(Now {
                    form: Form::Lists,
                    policy,
                    limit: None,
                    remaining,
                    reset_in: param(RATELIMIT, value, &i.params, "t")?,
                })
            })
            .collect();
    }
    let dict: Dictionary = Parser::new(value).parse().map_err(|_| {
        malformed(
            RATELIMIT,
            value,
            "neither a List of policies with r and t (draft -08 to -11) nor a Dictionary of limit, remaining and reset (-07)",
        )
    })?;
    let member = |key: &str| -> Result<Option<u64>, Malformed> {
        match dict.iter().find(|(k, _)| k.as_str() == key) {
            None => Ok(None),
            Some((_, ListEntry::Item(i))) => count(RATELIMIT, value, key, &i.bare_item).map(Some),
            Some((_, ListEntry::InnerList(_))) => Err(malformed(
                RATELIMIT,
                value,
                format!("{key} is an Inner List"),
            )),
        }
    };
    let now = Now {
        form: Form::Dictionary,
        policy: None,
        limit: member("limit")?,
        remaining: member("remaining")?,
        reset_in: member("reset")?,
    };
    if now.limit.is_none() && now.remaining.is_none() && now.reset_in.is_none() {
        return Err(malformed(
            RATELIMIT,
            value,
            "a Dictionary without limit, remaining or reset (-07)",
        ));
    }
    Ok(vec![now])
}

/// -06's RateLimit-Limit: the limit, then (in the first drafts) the policies behind it.
fn separate_limit(value: &str) -> Result<(u64, Vec<Policy>), Malformed> {
    let members = items(LIMIT_06, value)?;
    let Some((first, rest)) = members.split_first() else {
        return Err(malformed(LIMIT_06, value, "empty"));
    };
    let limit = count(LIMIT_06, value, "the limit", &first.bare_item)?;
    let policies = rest
        .iter()
        .map(|m| {
            Ok(Policy {
                name: None,
                quota: count(LIMIT_06, value, "a policy", &m.bare_item)?,
                window: param(LIMIT_06, value, &m.params, "w")?,
                requests: true,
            })
        })
        .collect::<Result<_, Malformed>>()?;
    Ok((limit, policies))
}

/// -06's RateLimit-Remaining or -Reset: an Integer Item.
fn integer_item(field: &'static str, value: &str) -> Result<u64, Malformed> {
    let item: Item = Parser::new(value)
        .parse()
        .map_err(|e| malformed(field, value, format!("not a Structured Field Item: {e}")))?;
    count(field, value, "the value", &item.bare_item)
}
