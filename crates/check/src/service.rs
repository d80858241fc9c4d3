//! The service as this run learned it, once, for every family to judge against: each
//! workspace's tag list (by the key that reads it). Families ask here rather than read the
//! list themselves, so a run reads it once per key and every family judges "the whole list"
//! by the same list. (`pagination` still walks the list page by page: that walk is what its
//! checks judge.)
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
