//! The service as this run learned it, once, for every family to judge against: each
//! workspace's tag list (by the key that reads it), and the choices the target made where the
//! spec shows no answer and more than one family asks (`Question`). Families ask here rather
//! than read the list themselves, so a run reads it once per key and every family judges "the
//! whole list" by the same list. (`pagination` still walks the list page by page: that walk is
//! what its checks judge.)
//!
//! Caching is sound for a run: no operation the spec shows changes tags (deactivating a
//! partner must not, `sequence.unaffected`).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::OnceCell;

use crate::Ctx;
use crate::auth::minimal_request;
use crate::conformance::Expect;
use crate::fixtures::Field;
use crate::probe::Req;
use linkcert_http::Resp;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

/// Tags as a set of (id, name), each as JSON text (a number id stays apart from a string one).
pub type TagSet = BTreeSet<(String, String)>;

/// Pages read to learn a list, at most: a longer list is not learned (None).
const MAX_PAGES: u64 = 10;

/// The tag list of each workspace, learned the first time a family asks.
#[derive(Default)]
pub struct Service {
    tags: Mutex<HashMap<String, Arc<OnceCell<Option<TagSet>>>>>,
    choices: Mutex<HashMap<Question, Choice>>,
}

/// A question about deactivation the spec shows no answer to, which `partners` and
/// `sequence` both ask: the target's choice, learned from whichever asks first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Question {
    /// A deactivation of a partner already deactivated, naming it by this field, or by both
    /// (None) (a target may answer a repeat by partnerId otherwise than one by tenantId).
    Repeat(Option<Field>),
    /// A deactivation naming two different active partners, one by each field.
    BothIds,
}

/// The target's answer to a `Question`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// 200 naming the partner again (a repeat: idempotent).
    Again,
    /// 200 naming the partner of this field (both ids).
    Wins(Field),
    /// Refused: a 4xx in the error envelope, the status of the answer it was seen in.
    Refused(u16),
}

impl Question {
    pub fn describe(self) -> String {
        match self {
            Question::Repeat(Some(f)) => format!("a repeat deactivation by {}", f.name()),
            Question::Repeat(None) => "a repeat deactivation by both ids".into(),
            Question::BothIds => "both ids of two active partners".into(),
        }
    }
}

impl Choice {
    pub fn describe(self) -> String {
        match self {
            Choice::Again => "200 naming the partner again".into(),
            Choice::Wins(f) => format!("the {} wins", f.name()),
            Choice::Refused(s) => format!("{s} in the error envelope"),
        }
    }
    /// A refusal of a deactivation the spec shows no answer for: any 4xx but 429 (the
    /// limit's) in the error envelope; which one is the target's choice.
    pub fn refusal(status: u16, in_envelope: bool) -> Option<Choice> {
        (in_envelope && (400..500).contains(&status) && status != 429)
            .then_some(Choice::Refused(status))
    }
    /// Refused: which 4xx is the target's choice too, so two refusals are one choice.
    pub fn refused(self) -> bool {
        matches!(self, Choice::Refused(_))
    }
    fn same(self, other: Choice) -> bool {
        self == other || (self.refused() && other.refused())
    }
}

impl Service {
    /// Every tag `key` may list with `op`, learned once per key: pages of the largest size
    /// the spec allows until a short one. None when the list could not be read whole (an
    /// answer not a list of tags, a page that repeats, more than `MAX_PAGES` pages).
    pub async fn tags(&self, ctx: &Ctx, op: &Operation, key: &PlanKey) -> Option<TagSet> {
        let cell = {
            let mut map = self.tags.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(key.key.clone()).or_default().clone()
        };
        cell.get_or_init(|| learn(ctx, op, key)).await.clone()
    }

    /// Whether `r` (an answer of `key`) holds every tag of its workspace, as far as known.
    pub async fn holds_all(&self, ctx: &Ctx, op: &Operation, key: &PlanKey, r: &Resp) -> bool {
        holds(r, self.tags(ctx, op, key).await.as_ref())
    }

    /// Records the target's answer to `q`, and says it: as the run's first answer to it, the
    /// same choice again, or a change from the answer seen before (the family judges whether
    /// the change contradicts the spec).
    pub fn chose(&self, q: Question, c: Choice) -> Chosen {
        let mut seen = self.choices.lock().unwrap_or_else(|p| p.into_inner());
        let what = format!("{}: {}", q.describe(), c.describe());
        let before = seen.get(&q).copied();
        if before.is_some_and(|b| b.same(c)) {
            return Chosen { what, new: false };
        }
        seen.insert(q, c);
        let what = match before {
            Some(b) => format!("{what} after {} earlier in the run", b.describe()),
            None => what,
        };
        Chosen { what, new: true }
    }
}

/// A choice as `Service::chose` says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub what: String,
    /// The run's first answer to the question, or a change.
    pub new: bool,
}

/// Whether `r` holds every tag of `all` (the whole list, when known).
pub fn holds(r: &Resp, all: Option<&TagSet>) -> bool {
    all.is_some_and(|all| tags_of(r).as_ref() == Some(all))
}

async fn learn(ctx: &Ctx, op: &Operation, key: &PlanKey) -> Option<TagSet> {
    let (size_name, max) = largest_page(op)?;
    let page = op.param_with_role("page").map(|p| p.name.clone());
    let mut all = TagSet::new();
    for n in 1..=MAX_PAGES {
        let mut req = minimal_request(op)
            .key(key)
            .query(size_name, max.to_string());
        if let Some(page) = &page {
            req = req.query(page, n.to_string());
        }
        let (x, _) = ctx.exchange(op, req, Expect::Any).await;
        let items = tags_of(x.resp().filter(|r| r.is_success())?)?;
        let got = items.len() as u64;
        let before = all.len();
        all.extend(items);
        if (all.len() - before) as u64 != got {
            // A page that repeats what came before: paging is not what the list can be read by.
            return None;
        }
        if got < max {
            return Some(all);
        }
        page.as_ref()?;
    }
    None
}

/// The (id, name) of each tag of an answer that is a JSON array of tags with both; None
/// otherwise.
pub fn tags_of(r: &Resp) -> Option<TagSet> {
    let v = r.json()?;
    v.as_array()?
        .iter()
        .map(|t| {
            let s = |k: &str| t.get(k).map(Value::to_string);
            Some((s("id")?, s("name")?))
        })
        .collect()
}

/// The page-size parameter and the largest page the spec allows (its maximum).
pub fn largest_page(op: &Operation) -> Option<(&str, u64)> {
    let p = op.param_with_role("page-size")?;
    let max = p.bound("maximum").filter(|m| *m >= 1.0)?;
    Some((p.name.as_str(), max as u64))
}

/// `req` asking for the largest page, where the spec has a page size.
pub fn on_largest_page(op: &Operation, req: Req) -> Req {
    match largest_page(op) {
        Some((name, max)) => req.query(name, max.to_string()),
        None => req,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run's first answer to a question is new; the same choice again (any refusal is
    /// one choice) is not; a change is, naming what came before. Questions are apart.
    #[test]
    fn a_choice_is_new_the_first_time_and_when_it_changes() {
        let s = Service::default();
        let by_id = Question::Repeat(Some(Field::PartnerId));
        let first = s.chose(by_id, Choice::Refused(409));
        assert!(first.new);
        assert_eq!(
            first.what,
            "a repeat deactivation by partnerId: 409 in the error envelope"
        );
        assert!(!s.chose(by_id, Choice::Refused(422)).new);
        let other = s.chose(Question::Repeat(Some(Field::TenantId)), Choice::Again);
        assert!(other.new);
        let changed = s.chose(by_id, Choice::Again);
        assert!(changed.new);
        assert_eq!(
            changed.what,
            "a repeat deactivation by partnerId: 200 naming the partner again after 409 in the error envelope earlier in the run"
        );
        assert!(!s.chose(by_id, Choice::Again).new);
        let both = s.chose(Question::BothIds, Choice::Wins(Field::TenantId));
        assert_eq!(
            both.what,
            "both ids of two active partners: the tenantId wins"
        );
        assert_eq!(Choice::refusal(429, true), None);
        assert_eq!(Choice::refusal(404, false), None);
        assert_eq!(Choice::refusal(404, true), Some(Choice::Refused(404)));
    }
}
