//! `pagination.*`: the pages of `GET /tags`: bounds of page and pageSize, page sizes, walking
//! the pages, sort order, the ids filter, the search term, and the choices the spec leaves open;
//! then, from a model of the list learned from the target (`model`), generated combinations of
//! every parameter and the relations where they meet (`relations`, `forms`).
//!
//! Parameters are found by their role in the spec (`x-linkcert-pagination`), not by name. The
//! reference document does not show the names of the sort, order, search and ids parameters:
//! ours are the real service's, and a target is judged with those.

use linkcert_registry::{Check, check_id};
use std::collections::{HashMap, HashSet};

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::Ctx;
use crate::recorder::Why;

use super::conformance::{Expect, Outcome};
use super::past_end::{self, PastEnd};
use linkcert_http::{error_code, is_envelope};

use super::probe::{Exchange, Req};

use linkcert_spec::Operation;

use linkcert_run::target::PlanKey;

mod bounds;
mod choices;
mod combos;
mod forms;
mod ids;
mod model;
mod relations;
mod search;
mod search_rule;
mod sort;
mod walk;

use bounds::*;
use choices::*;
use ids::*;
use search::*;
use sort::*;
use walk::*;

/// A walk stops after this many pages or items, and says so.
const MAX_PAGES: usize = 60;

const MAX_ITEMS: usize = 5000;

/// The small page size of the walk, at most (not a divisor of 100, so pages straddle).
const SMALL_PAGE: u64 = 23;

/// An id that no target has.
const MISSING_ID: &str = "tag_linkcert_does_not_exist";

/// A page number no target reaches, beyond 64 bits.
const HUGE: &str = "99999999999999999999";

type Params = Vec<(String, String)>;

/// The items of a walk over every page.
struct Walk {
    items: Vec<Value>,
    /// False when the walk stopped at its bound (MAX_PAGES / MAX_ITEMS) before the end.
    complete: bool,
    pages: usize,
    /// The exchange of each page read, lightened.
    exchanges: Vec<Exchange>,
}

impl Walk {
    fn describe(&self) -> String {
        format!(
            "{} items in {} pages{}",
            self.items.len(),
            self.pages,
            if self.complete {
                ""
            } else {
                " (walk stopped at its bound)"
            }
        )
    }
}

/// Sends list requests for one operation with one key.
struct Lister<'a> {
    ctx: &'a Ctx,
    op: &'a Operation,
    key: PlanKey,
    label: String,
    page: Option<String>,
    page_min: i64,
    size: Option<String>,
    size_min: u64,
    size_max: u64,
    /// Set when walking the pages was inconsistent: later comparisons of whole lists would
    /// only repeat that finding.
    inconsistent: AtomicBool,
}

impl<'a> Lister<'a> {
    fn new(ctx: &'a Ctx, op: &'a Operation, key: PlanKey) -> Lister<'a> {
        let page = op.param_with_role("page");
        let size = op.param_with_role("page-size");
        let size_min = size
            .and_then(|p| p.bound("minimum"))
            .map_or(1, |m| m.max(1.0) as u64);
        let size_max = size
            .and_then(|p| p.bound("maximum"))
            .map_or(100, |m| m.max(1.0) as u64)
            .max(size_min);
        Lister {
            ctx,
            op,
            key,
            label: op.label(),
            page: page.map(|p| p.name.clone()),
            page_min: page
                .and_then(|p| p.bound("minimum"))
                .map_or(1, |m| m as i64),
            size: size.map(|p| p.name.clone()),
            size_min,
            size_max,
            inconsistent: AtomicBool::new(false),
        }
    }

    fn req(&self, params: &[(String, String)]) -> Req {
        let mut r = Req::new(self.op.method.clone(), &self.op.path).key(&self.key);
        for (k, v) in params {
            r = r.query(k, v.clone());
        }
        r
    }

    /// One request; the items when the answer is a 2xx JSON array.
    async fn list(
        &self,
        params: &[(String, String)],
        expect: Expect,
    ) -> (Exchange, Outcome, Option<Vec<Value>>) {
        let (x, o) = self.ctx.exchange(self.op, self.req(params), expect).await;
        let items = match o {
            Outcome::Accepted => x.resp().and_then(|r| r.json()).and_then(|v| match v {
                Value::Array(a) => Some(a),
                _ => None,
            }),
            _ => None,
        };
        (x, o, items)
    }

    /// How an answer reads as one to a page that may lie past the last (`past_end`).
    fn past_end(&self, x: &Exchange) -> Option<PastEnd> {
        x.resp().map(PastEnd::of)
    }

    /// `params` plus the page size.
    fn sized(&self, params: &[(String, String)], size: u64) -> Params {
        let mut p = params.to_vec();
        if let Some(s) = &self.size {
            p.push((s.clone(), size.to_string()));
        }
        p
    }

    /// Every page in turn, until an empty page (or the 404 `past_end` allows past the last), a
    /// page smaller than `size`, or the bound.
    async fn walk(&self, params: &[(String, String)], size: u64) -> Result<Walk, Why> {
        match self
            .walk_first(params, size, Expect::Accept, MAX_PAGES)
            .await
        {
            Ok(w) => Ok(w),
            Err(Unwalked::Refused(s, x)) => Err(why(&x, Outcome::CleanRejection(s))),
            Err(Unwalked::Broke(why)) => Err(why),
        }
    }

    /// `walk`, the first page judged with `first` (a combination the target may refuse);
    /// once accepted, the next pages of the same request must be too. At most `max_pages`.
    async fn walk_first(
        &self,
        params: &[(String, String)],
        size: u64,
        first: Expect,
        max_pages: usize,
    ) -> Result<Walk, Unwalked> {
        let mut w = Walk {
            items: Vec::new(),
            complete: true,
            pages: 0,
            exchanges: Vec::new(),
        };
        let mut page = self.page_min;
        loop {
            let mut p = self.sized(params, size);
            if let Some(name) = &self.page {
                p.push((name.clone(), page.to_string()));
            }
            let expect = if w.pages == 0 { first } else { Expect::Accept };
            let (x, o, got) = self.list(&p, expect).await;
            let Some(got) = got else {
                // Past the last page, the target may answer 404 (`past_end`).
                if page > self.page_min && self.past_end(&x) == Some(PastEnd::NotFound) {
                    w.pages += 1;
                    return Ok(w);
                }
                return Err(match o {
                    Outcome::CleanRejection(s) if w.pages == 0 => Unwalked::Refused(s, Box::new(x)),
                    _ => Unwalked::Broke(
                        why(&x, o).context(|w| format!("page {page} could not be read: {w}")),
                    ),
                });
            };
            w.pages += 1;
            w.exchanges.push(x.lighten());
            let n = got.len();
            w.items.extend(got);
            let short = self.size.is_some() && (n as u64) < size;
            if n == 0 || short || self.page.is_none() {
                return Ok(w);
            }
            if w.pages >= max_pages.min(MAX_PAGES) || w.items.len() >= MAX_ITEMS {
                w.complete = false;
                return Ok(w);
            }
            page = page.saturating_add(1);
        }
    }
}

/// Why a walk gave no items.
enum Unwalked {
    /// The first page refused cleanly (400 or 422 in the envelope).
    Refused(u16, Box<Exchange>),
    Broke(Why),
}

/// Why a list request gave no items.
fn why(x: &Exchange, o: Outcome) -> Why {
    let words = match (o, x.resp()) {
        (Outcome::Throttled, _) => "429 even after waiting".into(),
        (Outcome::Transport, _) => x.failure_words(),
        (Outcome::Accepted, Some(r)) => format!("{} but the body is not a JSON array", r.status),
        (_, Some(r)) => format!("{} {}", r.status, error_code(r).unwrap_or_default()),
        (_, None) => "no answer".into(),
    };
    Why::after(x, words)
}

fn id_of(v: &Value) -> Option<&str> {
    v.get("id").and_then(Value::as_str)
}

/// The value of the sort field, as text (strings as they are, numbers as JSON).
fn key_of(v: &Value, field: &str) -> Option<String> {
    match v.get(field)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// (id, sort key) of the items that have a string id; items without one are the schema's
/// business (schema.response reports them) and are left out here.
fn keyed(items: &[Value], field: &str) -> Vec<(String, Option<String>)> {
    items
        .iter()
        .filter_map(|v| id_of(v).map(|id| (id.to_string(), key_of(v, field))))
        .collect()
}

/// The first id seen twice.
fn first_duplicate(seq: &[(String, Option<String>)]) -> Option<&str> {
    let mut seen = HashSet::new();
    seq.iter()
        .map(|(id, _)| id.as_str())
        .find(|id| !seen.insert(*id))
}

fn show(e: &(String, Option<String>)) -> String {
    match &e.1 {
        Some(k) => format!("{} ({k:?})", e.0),
        None => e.0.clone(),
    }
}

fn id_set(seq: &[(String, Option<String>)]) -> HashSet<&str> {
    seq.iter().map(|(id, _)| id.as_str()).collect()
}

/// A deterministic index in 0..n from the run's seed (n > 0).
fn pick(seed: u64, salt: u64, n: usize) -> usize {
    let mut z = seed
        .wrapping_add(salt.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % n.max(1) as u64) as usize
}

/// The checks that judge combinations against the model of the list.
const MODELLED: [Check; 7] = [
    check_id!("pagination.model"),
    check_id!("pagination.concat"),
    check_id!("pagination.intersection"),
    check_id!("pagination.ids-forms"),
    check_id!("pagination.reverse"),
    check_id!("pagination.lexical"),
    check_id!("pagination.literal"),
];

const ALL: [Check; 7] = [
    check_id!("pagination.bounds"),
    check_id!("pagination.page-size"),
    check_id!("pagination.walk"),
    check_id!("pagination.sort"),
    check_id!("pagination.ids"),
    check_id!("pagination.search"),
    check_id!("pagination.choices"),
];

pub async fn run(ctx: &Ctx) {
    let Some(op) = ctx.op("getTags") else {
        ctx.skip_family("pagination", "the spec has no getTags operation");
        return;
    };
    let Some(key) = ctx.key_for(op).cloned() else {
        ctx.skip_family("pagination", "no key of a plan that may call GET /tags");
        return;
    };
    let l = Lister::new(ctx, op, key);
    let sorting = Sorting::from(op);
    let main_field = sorting
        .as_ref()
        .and_then(Sorting::main_field)
        .unwrap_or("name")
        .to_string();
    let ordered = sorting
        .as_ref()
        .map_or_else(Vec::new, |s| s.params(&main_field, false));

    if ctx.enabled(check_id!("pagination.bounds")) {
        bounds(&l).await;
    }
    // pagination.bounds and page-size too: a page past the last, and a full page, need the
    // list's length.
    let needs_baseline = ALL.iter().chain(&MODELLED).any(|c| ctx.enabled(*c));
    if !needs_baseline {
        return;
    }
    // The whole list in big pages, in a defined order: what the other checks compare with.
    let baseline = match l.walk(&ordered, l.size_max).await {
        Ok(w) => w,
        Err(why) => {
            if ctx.enabled(check_id!("pagination.page-size")) {
                page_size(&l, None).await;
            }
            for id in ALL[2..]
                .iter()
                .chain(&MODELLED)
                .copied()
                .filter(|c| ctx.enabled(*c))
            {
                ctx.rec.skip(
                    id,
                    &l.label,
                    why.clone().context(|w| {
                        format!(
                            "the list could not be read with pageSize={}: {w}",
                            l.size_max
                        )
                    }),
                );
            }
            return;
        }
    };
    if !baseline.complete {
        ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!(
                "more than {MAX_ITEMS} items or {MAX_PAGES} pages: the checks judge the first {}",
                baseline.items.len()
            ),
            None,
        );
    }
    // First, alone: the walk (it says whether the pages are consistent, which `sort` reads
    // before judging lists against each other), then the target's choices of sort and paging,
    // which lead `pagination.choices`, whose findings are kept in the order they come.
    if ctx.enabled(check_id!("pagination.walk")) {
        walk(&l, &ordered, &main_field, &baseline).await;
    }
    if ctx.enabled(check_id!("pagination.sort")) || ctx.enabled(check_id!("pagination.choices")) {
        match &sorting {
            Some(s) => sort(&l, s, &main_field, &baseline).await,
            None => ctx.rec.skip(
                check_id!("pagination.sort"),
                &l.label,
                "the spec gives no sort-by/sort-order parameters with asc and desc",
            ),
        }
    }
    if ctx.enabled(check_id!("pagination.choices")) {
        choices(&l, &main_field, &baseline).await;
    }
    beside(&l, &baseline);
}

/// The checks that only read the list, once its baseline is read: side by side on scoped
/// threads (the generated ones block on the runtime), so a far target's round trips overlap.
/// Each records in its own order.
fn beside(l: &Lister<'_>, baseline: &Walk) {
    let (ctx, h) = (l.ctx, tokio::runtime::Handle::current());
    let h = &h;
    let pages = move || {
        h.block_on(async {
            if ctx.enabled(check_id!("pagination.page-size")) {
                page_size(l, Some(baseline)).await;
            }
            if ctx.enabled(check_id!("pagination.bounds")) {
                past_end(l, baseline).await;
            }
        })
    };
    let filtered = move || {
        h.block_on(async {
            if ctx.enabled(check_id!("pagination.ids")) {
                ids(l, baseline).await;
            }
            if ctx.enabled(check_id!("pagination.search")) {
                search(l, baseline).await;
            }
        })
    };
    let model = move || h.block_on(modelled(l, baseline));
    let jobs: [Box<dyn Fn() + Send + Sync + '_>; 3] =
        [Box::new(model), Box::new(pages), Box::new(filtered)];
    combos::side_by_side(jobs.len(), &jobs);
}

/// The checks of combinations, once the model is learned from the whole list.
async fn modelled(l: &Lister<'_>, baseline: &Walk) {
    let ctx = l.ctx;
    let enabled: Vec<Check> = MODELLED
        .iter()
        .copied()
        .filter(|c| ctx.enabled(*c))
        .collect();
    if enabled.is_empty() {
        return;
    }
    let Some(m) = model::Model::learn(l, baseline).await else {
        for id in enabled {
            ctx.rec
                .skip(id, &l.label, "the list was not read whole: no model of it");
        }
        return;
    };
    relations::relations(l, &m).await;
    if ctx.enabled(check_id!("pagination.lexical")) {
        forms::lexical(l, &m).await;
    }
    if ctx.enabled(check_id!("pagination.literal")) {
        forms::literal(l, &m).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(items: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
        items
            .iter()
            .map(|(i, k)| (i.to_string(), Some(k.to_string())))
            .collect()
    }

    #[test]
    fn ties_may_come_in_any_order_but_nothing_else_may() {
        let asc = seq(&[("1", "a"), ("2", "B"), ("3", "b"), ("4", "c")]);
        let rev: Vec<_> = asc.iter().rev().cloned().collect();
        assert_eq!(tie_diff(&rev, &rev, false), None);
        // Case-insensitive ties, tie-break not reversed.
        let d = seq(&[("4", "c"), ("2", "B"), ("3", "b"), ("1", "a")]);
        assert_eq!(tie_diff(&d, &rev, false), None);
        // Ignored order: the same as asc.
        assert_eq!(tie_diff(&asc, &rev, false), Some(Diff::Definite(0)));
        // A swap of items that cannot tie.
        let d = seq(&[("4", "c"), ("3", "b"), ("1", "a"), ("2", "B")]);
        assert_eq!(tie_diff(&d, &rev, false), Some(Diff::Definite(2)));
        // Without keys, a swap cannot be judged.
        let nk = |v: &[&str]| -> Vec<(String, Option<String>)> {
            v.iter().map(|i| (i.to_string(), None)).collect()
        };
        assert_eq!(
            tie_diff(&nk(&["2", "1"]), &nk(&["1", "2"]), false),
            Some(Diff::Undecidable(0))
        );
        // A cut prefix leaves its last block unjudged.
        assert_eq!(tie_diff(&nk(&["1", "3"]), &nk(&["1", "2"]), true), None);
        assert_eq!(fold("Café ŒUVRE Straße"), "cafe oeuvre strasse");
    }

    #[test]
    fn picks_stay_in_range_and_vary_with_the_seed() {
        assert!((0..50).all(|s| pick(s, 3, 7) < 7));
        assert!(
            (0..20)
                .map(|s| pick(s, 1, 1000))
                .collect::<HashSet<_>>()
                .len()
                > 10
        );
        assert_eq!(pick(1, 1, 0), 0);
    }
}
