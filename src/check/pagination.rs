//! `pagination.*`: the pages of `GET /tags`: bounds of page and pageSize, page sizes, walking
//! the pages, sort order, the ids filter, the search term, and the choices the spec leaves open.
//!
//! Parameters are found by their role in the spec (`x-linkcert-pagination`), not by name. The
//! reference document does not show the names of the sort, order, search and ids parameters:
//! ours are the real service's, and a target is judged with those.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::Ctx;
use super::conformance::{Expect, Outcome, error_code, is_envelope};
use super::probe::{Exchange, Req};
use crate::spec::Operation;
use crate::target::PlanKey;

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

    /// `params` plus the page size.
    fn sized(&self, params: &[(String, String)], size: u64) -> Params {
        let mut p = params.to_vec();
        if let Some(s) = &self.size {
            p.push((s.clone(), size.to_string()));
        }
        p
    }

    /// Every page in turn, until an empty page, a page smaller than `size`, or the bound.
    async fn walk(&self, params: &[(String, String)], size: u64) -> Result<Walk, String> {
        let mut items = Vec::new();
        let mut pages = 0;
        let mut page = self.page_min;
        loop {
            let mut p = self.sized(params, size);
            if let Some(name) = &self.page {
                p.push((name.clone(), page.to_string()));
            }
            let (x, o, got) = self.list(&p, Expect::Accept).await;
            let Some(got) = got else {
                return Err(format!("page {page} could not be read: {}", why(&x, o)));
            };
            pages += 1;
            let n = got.len();
            items.extend(got);
            let short = self.size.is_some() && (n as u64) < size;
            if n == 0 || short || self.page.is_none() {
                return Ok(Walk {
                    items,
                    complete: true,
                    pages,
                });
            }
            if pages >= MAX_PAGES || items.len() >= MAX_ITEMS {
                return Ok(Walk {
                    items,
                    complete: false,
                    pages,
                });
            }
            page = page.saturating_add(1);
        }
    }
}

/// Why a list request gave no items.
fn why(x: &Exchange, o: Outcome) -> String {
    match (o, x.resp()) {
        (Outcome::Throttled, _) => "429 even after waiting".into(),
        (Outcome::Transport, _) => x.result.clone().err().unwrap_or_default(),
        (Outcome::Accepted, Some(r)) => format!("{} but the body is not a JSON array", r.status),
        (_, Some(r)) => format!("{} {}", r.status, error_code(r).unwrap_or_default()),
        (_, None) => "no answer".into(),
    }
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

/// Where two sequences disagree beyond what ties explain: definitely (the items cannot tie
/// under any plausible collation), or undecidably (an item has no sort key to tell).
#[derive(Debug, PartialEq, Eq)]
enum Diff {
    Definite(usize),
    Undecidable(usize),
}

/// A loose fold of a sort key: what two keys must share to plausibly tie under some
/// collation a target may use (case-insensitive, accent-insensitive as MySQL's `ai_ci`).
fn fold(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for c in key.chars().flat_map(char::to_lowercase) {
        let base = match c {
            'à'..='å' | 'ā' | 'ă' | 'ą' => "a",
            'æ' => "ae",
            'ç' | 'ć' | 'č' => "c",
            'è'..='ë' | 'ē' | 'ė' | 'ę' | 'ě' => "e",
            'ì'..='ï' | 'ī' | 'į' | 'ı' => "i",
            'ñ' | 'ń' | 'ň' => "n",
            'ò'..='ö' | 'ø' | 'ō' | 'ő' => "o",
            'œ' => "oe",
            'ù'..='ü' | 'ū' | 'ů' | 'ű' => "u",
            'ý' | 'ÿ' => "y",
            'ß' => "ss",
            'ﬁ' => "fi",
            'ﬂ' => "fl",
            '\u{300}'..='\u{36f}' => "",
            _ => {
                out.push(c);
                continue;
            }
        };
        out.push_str(base);
    }
    out
}

/// Compare `got` with `want` (the order expected) up to ties: both are cut into the smallest
/// blocks holding the same items; a block of more than one item is a tie group, whose items
/// must share their folded sort key. With `prefix_only`, a trailing unclosed block (where a
/// bounded walk was cut) is not judged.
fn tie_diff(
    got: &[(String, Option<String>)],
    want: &[(String, Option<String>)],
    prefix_only: bool,
) -> Option<Diff> {
    let n = got.len().min(want.len());
    let mut balance: HashMap<&str, i64> = HashMap::new();
    let mut unbalanced = 0usize;
    let mut start = 0;
    let mut undecidable = None;
    for i in 0..n {
        for (id, by) in [(got[i].0.as_str(), 1i64), (want[i].0.as_str(), -1)] {
            let e = balance.entry(id).or_insert(0);
            let was = *e;
            *e += by;
            match (was == 0, *e == 0) {
                (true, false) => unbalanced += 1,
                (false, true) => unbalanced -= 1,
                _ => {}
            }
        }
        if unbalanced > 0 {
            continue;
        }
        // A closed block: want[start..=i] holds the same items as got[start..=i].
        if i > start {
            let keys: Vec<Option<String>> = want[start..=i]
                .iter()
                .map(|e| e.1.as_deref().map(fold))
                .collect();
            if keys.iter().any(Option::is_none) {
                undecidable.get_or_insert(start);
            } else if keys.windows(2).any(|w| w[0] != w[1]) {
                return Some(Diff::Definite(start));
            }
        }
        start = i + 1;
    }
    if start < n && !prefix_only {
        return Some(Diff::Definite(start));
    }
    undecidable.map(Diff::Undecidable)
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

/// The sort parameters: (sort-by name, its values, sort-order name, asc value, desc value).
struct Sorting {
    by: String,
    fields: Vec<String>,
    order: String,
    asc: String,
    desc: String,
}

impl Sorting {
    fn from(op: &Operation) -> Option<Sorting> {
        let by = op.param_with_role("sort-by")?;
        let order = op.param_with_role("sort-order")?;
        let fields: Vec<String> = by.enum_values()?.iter().map(|s| s.to_string()).collect();
        let orders = order.enum_values()?;
        let find = |want: &str| {
            orders
                .iter()
                .find(|o| o.eq_ignore_ascii_case(want))
                .map(|s| s.to_string())
        };
        Some(Sorting {
            by: by.name.clone(),
            fields,
            order: order.name.clone(),
            asc: find("asc")?,
            desc: find("desc")?,
        })
    }
    fn params(&self, field: &str, desc: bool) -> Params {
        vec![
            (self.by.clone(), field.to_string()),
            (
                self.order.clone(),
                if desc { &self.desc } else { &self.asc }.clone(),
            ),
        ]
    }
    /// The field every walk sorts by: name when the spec offers it.
    fn main_field(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| *f == "name")
            .or(self.fields.first())
            .map(String::as_str)
    }
}

const ALL: [&str; 7] = [
    "pagination.bounds",
    "pagination.page-size",
    "pagination.walk",
    "pagination.sort",
    "pagination.ids",
    "pagination.search",
    "pagination.choices",
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

    if ctx.enabled("pagination.bounds") {
        bounds(&l).await;
    }
    if ctx.enabled("pagination.page-size") {
        page_size(&l).await;
    }
    let needs_baseline = ALL[2..].iter().any(|id| ctx.enabled(id));
    if !needs_baseline {
        return;
    }
    // The whole list in big pages, in a defined order: what the other checks compare with.
    let baseline = match l.walk(&ordered, l.size_max).await {
        Ok(w) => w,
        Err(why) => {
            for id in &ALL[2..] {
                ctx.rec.skip(
                    id,
                    &l.label,
                    format!(
                        "the list could not be read with pageSize={}: {why}",
                        l.size_max
                    ),
                );
            }
            return;
        }
    };
    if !baseline.complete {
        ctx.rec.observe(
            "pagination.choices",
            &l.label,
            format!(
                "more than {MAX_ITEMS} items or {MAX_PAGES} pages: the checks judge the first {}",
                baseline.items.len()
            ),
            None,
        );
    }
    if ctx.enabled("pagination.walk") {
        walk(&l, &ordered, &main_field, &baseline).await;
    }
    if ctx.enabled("pagination.sort") || ctx.enabled("pagination.choices") {
        match &sorting {
            Some(s) => sort(&l, s, &main_field, &baseline).await,
            None => ctx.rec.skip(
                "pagination.sort",
                &l.label,
                "the spec gives no sort-by/sort-order parameters with asc and desc",
            ),
        }
    }
    if ctx.enabled("pagination.ids") {
        ids(&l, &baseline).await;
    }
    if ctx.enabled("pagination.search") {
        search(&l, &baseline).await;
    }
    if ctx.enabled("pagination.choices") {
        choices(&l, &main_field, &baseline).await;
    }
}

/// `pagination.bounds`: page and pageSize outside their bounds, or not integers, are rejected.
async fn bounds(l: &Lister<'_>) {
    let id = "pagination.bounds";
    // (parameter, value, must the target reject it?)
    let mut cases: Vec<(String, String, bool)> = Vec::new();
    if let Some(p) = &l.page {
        for v in [
            l.page_min.saturating_sub(1).to_string(),
            "-1".to_string(),
            "abc".to_string(),
        ] {
            cases.push((p.clone(), v, true));
        }
        // Above 64 bits but greater than 0: valid per the spec, so accepted (as an empty
        // page: there are not that many items) or rejected cleanly.
        cases.push((p.clone(), HUGE.to_string(), false));
    }
    if let Some(s) = &l.size {
        for v in [
            l.size_min.saturating_sub(1).to_string(),
            "-1".to_string(),
            (l.size_max + 1).to_string(),
            HUGE.to_string(),
            "abc".to_string(),
        ] {
            cases.push((s.clone(), v, true));
        }
    }
    let mut seen = HashSet::new();
    cases.retain(|c| seen.insert((c.0.clone(), c.1.clone())));
    if cases.is_empty() {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no page/page-size parameters");
        return;
    }
    for (name, value, must_reject) in cases {
        let expect = if must_reject {
            Expect::Reject
        } else {
            Expect::AcceptOrReject
        };
        let params = vec![(name.clone(), value.clone())];
        let (x, o, items) = l.list(&params, expect).await;
        let what = format!("{name}={value}");
        match o {
            // Not this check's to judge: the transport failure is status's finding.
            Outcome::Throttled | Outcome::Transport => {}
            Outcome::CleanRejection(s) => {
                l.ctx.rec.pass(id, &l.label);
                if !must_reject {
                    l.ctx.rec.observe(
                        "pagination.choices",
                        &l.label,
                        format!("{what}: rejected with {s}"),
                        Some(&x),
                    );
                }
            }
            Outcome::Accepted if !must_reject => match items {
                Some(v) if v.is_empty() => {
                    l.ctx.rec.pass(id, &l.label);
                    l.ctx.rec.observe(
                        "pagination.choices",
                        &l.label,
                        format!("{what}: accepted, an empty page"),
                        Some(&x),
                    );
                }
                Some(v) => l.ctx.rec.violation(
                    id,
                    &l.label,
                    format!(
                        "for {what}: an empty page (no list is that long) or a clean rejection"
                    ),
                    format!("{} items", v.len()),
                    Some(&x),
                ),
                // Not an array: schema.response says so.
                None => {}
            },
            o => {
                let got = match (o, x.resp()) {
                    (Outcome::Accepted, Some(r)) => format!("{} (accepted)", r.status),
                    (_, Some(r)) if !is_envelope(r) => {
                        format!("{} without the error envelope", r.status)
                    }
                    (_, Some(r)) => {
                        format!("{} {}", r.status, error_code(r).unwrap_or_default())
                    }
                    (_, None) => "no answer".into(),
                };
                l.ctx.rec.violation(
                    id,
                    &l.label,
                    format!("400 or 422 in the error envelope for {what}"),
                    got,
                    Some(&x),
                );
            }
        }
    }
}

/// `pagination.page-size`: a page never holds more than pageSize items.
async fn page_size(l: &Lister<'_>) {
    let id = "pagination.page-size";
    let Some(name) = &l.size else {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no page-size parameter");
        return;
    };
    let mut sizes = vec![l.size_min, 7, l.size_max.saturating_sub(1), l.size_max];
    sizes.retain(|s| (l.size_min..=l.size_max).contains(s));
    sizes.sort_unstable();
    sizes.dedup();
    let mut judged = false;
    for n in sizes {
        let (x, _, items) = l
            .list(&[(name.clone(), n.to_string())], Expect::Accept)
            .await;
        // No items: status.valid-accepted or schema.response has judged the answer.
        let Some(items) = items else { continue };
        judged = true;
        if items.len() as u64 <= n {
            l.ctx.rec.pass(id, &l.label);
        } else {
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("at most {n} items for {name}={n}"),
                format!("{} items", items.len()),
                Some(&x),
            );
        }
    }
    if !judged {
        l.ctx.rec.skip(
            id,
            &l.label,
            "no page could be read (see status.valid-accepted and schema.response)",
        );
    }
}

/// `pagination.walk`: small pages, concatenated, are the big pages' sequence: every item once.
async fn walk(l: &Lister<'_>, ordered: &[(String, String)], field: &str, baseline: &Walk) {
    let id = "pagination.walk";
    let big = keyed(&baseline.items, field);
    if big.is_empty() {
        l.ctx.rec.skip(
            id,
            &l.label,
            "the list has no item with a string id: nothing to walk",
        );
        return;
    }
    if l.size.is_none() || l.page.is_none() {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no page/page-size parameters");
        return;
    }
    // Several pages: about six for a short list, pages of SMALL_PAGE for a long one.
    let small = ((big.len() as u64) / 6 + 1)
        .min(SMALL_PAGE)
        .min(l.size_max.saturating_sub(1).max(l.size_min))
        .max(l.size_min);
    let w = match l.walk(ordered, small).await {
        Ok(w) => w,
        Err(why) => {
            l.ctx.rec.skip(
                id,
                &l.label,
                format!("the walk with pageSize={small} broke off: {why}"),
            );
            return;
        }
    };
    if !w.complete || !baseline.complete {
        l.ctx.rec.observe(
            "pagination.choices",
            &l.label,
            format!(
                "the walk was bounded ({MAX_PAGES} pages / {MAX_ITEMS} items): only the common prefix is compared"
            ),
            None,
        );
    }
    let seq = keyed(&w.items, field);
    let mut ok = true;
    for (which, s, size) in [("small", &seq, small), ("big", &big, l.size_max)] {
        if let Some(dup) = first_duplicate(s) {
            ok = false;
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("every item once when walking pages of {size}"),
                format!("{dup} more than once ({which} pages)"),
                None,
            );
        }
    }
    let both_complete = w.complete && baseline.complete;
    let summary = format!(
        "pageSize={small}: {}; pageSize={}: {}",
        w.describe(),
        l.size_max,
        baseline.describe()
    );
    if both_complete && seq.len() != big.len() {
        ok = false;
        l.ctx.rec.violation(
            id,
            &l.label,
            "as many items walking small pages as big ones",
            summary.clone(),
            None,
        );
    } else if both_complete && id_set(&seq) != id_set(&big) {
        ok = false;
        let small_ids = id_set(&seq);
        let missing = big
            .iter()
            .find(|(i, _)| !small_ids.contains(i.as_str()))
            .map(|e| e.0.clone())
            .unwrap_or_default();
        l.ctx.rec.violation(
            id,
            &l.label,
            "the same items walking small pages as big ones",
            format!("{missing} missing with pageSize={small} ({summary})"),
            None,
        );
    }
    let diff = if ok {
        tie_diff(&seq, &big, !both_complete)
    } else {
        None
    };
    match diff {
        Some(Diff::Definite(i)) => {
            ok = false;
            l.ctx.rec.violation(
                id,
                &l.label,
                format!(
                    "the same sequence with pageSize={small} as with {}",
                    l.size_max
                ),
                format!(
                    "item {} is {} with pageSize={small}, {} with pageSize={}",
                    i + 1,
                    seq.get(i).map(show).unwrap_or_default(),
                    big.get(i).map(show).unwrap_or_default(),
                    l.size_max
                ),
                None,
            );
        }
        Some(Diff::Undecidable(i)) => l.ctx.rec.observe(
            id,
            &l.label,
            format!(
                "item {} differs between page sizes and has no {field} to tell a tie",
                i + 1
            ),
            None,
        ),
        None => {}
    }
    if ok {
        l.ctx.rec.pass(id, &l.label);
    } else {
        l.inconsistent.store(true, Ordering::Relaxed);
    }
}

/// `pagination.sort`: desc is asc reversed, up to ties, for every sort field.
async fn sort(l: &Lister<'_>, s: &Sorting, main_field: &str, baseline: &Walk) {
    let id = "pagination.sort";
    for field in &s.fields {
        let asc_walk;
        let asc = if field == main_field {
            baseline
        } else {
            match l.walk(&s.params(field, false), l.size_max).await {
                Ok(w) => {
                    asc_walk = w;
                    &asc_walk
                }
                Err(why) => {
                    l.ctx.rec.skip(id, &l.label, format!("{field} asc: {why}"));
                    continue;
                }
            }
        };
        let desc = match l.walk(&s.params(field, true), l.size_max).await {
            Ok(w) => w,
            Err(why) => {
                l.ctx.rec.skip(id, &l.label, format!("{field} desc: {why}"));
                continue;
            }
        };
        collation_notes(l, field, asc);
        if !asc.complete || !desc.complete {
            l.ctx.rec.skip(
                id,
                &l.label,
                format!("sorting by {field}: the list is longer than the walk's bound"),
            );
            continue;
        }
        let a = keyed(&asc.items, field);
        let d = keyed(&desc.items, field);
        let what = format!("{}={field}", s.by);
        if (a.len() != d.len() || id_set(&a) != id_set(&d))
            && l.inconsistent.load(Ordering::Relaxed)
        {
            l.ctx.rec.observe(
                id,
                &l.label,
                format!(
                    "{what}: {} and {} list different items, but the pages are inconsistent already (pagination.walk): not judged here",
                    s.asc, s.desc
                ),
                None,
            );
            continue;
        }
        if a.len() != d.len() || id_set(&a) != id_set(&d) {
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("the same items with {}={} and {}", s.order, s.asc, s.desc),
                format!(
                    "{what}: {} with {}, {} with {}",
                    asc.describe(),
                    s.asc,
                    desc.describe(),
                    s.desc
                ),
                None,
            );
            continue;
        }
        let reversed: Vec<(String, Option<String>)> = a.iter().rev().cloned().collect();
        match tie_diff(&d, &reversed, false) {
            None => l.ctx.rec.pass(id, &l.label),
            Some(Diff::Definite(i)) => l.ctx.rec.violation(
                id,
                &l.label,
                format!(
                    "{what}: {} equal to {} reversed (ties in any order)",
                    s.desc, s.asc
                ),
                format!(
                    "item {} is {} with {}, but {} with {} reversed",
                    i + 1,
                    d.get(i).map(show).unwrap_or_default(),
                    s.desc,
                    reversed.get(i).map(show).unwrap_or_default(),
                    s.asc
                ),
                None,
            ),
            Some(Diff::Undecidable(i)) => l.ctx.rec.observe(
                id,
                &l.label,
                format!(
                    "{what}: {} is not {} reversed at item {}, and the items carry no {field} to tell whether they tie",
                    s.desc,
                    s.asc,
                    i + 1
                ),
                None,
            ),
        }
    }
}

/// Which collation an ascending listing follows: recorded, never judged.
fn collation_notes(l: &Lister<'_>, field: &str, asc: &Walk) {
    let keys: Vec<String> = asc.items.iter().filter_map(|v| key_of(v, field)).collect();
    if keys.len() < 2 {
        return;
    }
    let sorted_by = |f: &dyn Fn(&str, &str) -> bool| keys.windows(2).all(|w| f(&w[0], &w[1]));
    if field != "name" {
        let note = if sorted_by(&|a, b| a <= b) {
            "non-decreasing as text"
        } else {
            "not non-decreasing as text (another format, or not sorted by it)"
        };
        l.ctx.rec.observe(
            "pagination.choices",
            &l.label,
            format!("{field} ascending: the values are {note}"),
            None,
        );
        return;
    }
    let note = if sorted_by(&|a, b| a <= b) {
        "code-point (byte) order"
    } else if sorted_by(&|a, b| a.to_lowercase() <= b.to_lowercase()) {
        "case-insensitive order"
    } else if sorted_by(&|a, b| fold(a) <= fold(b)) {
        "case- and accent-insensitive order"
    } else {
        "neither code-point nor case-insensitive order (a locale collation?)"
    };
    l.ctx.rec.observe(
        "pagination.choices",
        &l.label,
        format!("{field} ascending follows {note}"),
        None,
    );
}

/// `pagination.ids`: the ids filter returns exactly the requested existing tags.
async fn ids(l: &Lister<'_>, baseline: &Walk) {
    let id = "pagination.ids";
    let Some(param) = l.op.param_with_role("ids").map(|p| p.name.clone()) else {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no ids parameter");
        return;
    };
    // Ids a comma-separated list can carry.
    let pool: Vec<&str> = baseline
        .items
        .iter()
        .filter_map(id_of)
        .filter(|i| !i.is_empty() && !i.contains(','))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut pool = pool;
    pool.sort_unstable();
    if pool.is_empty() {
        l.ctx
            .rec
            .skip(id, &l.label, "the list has no item with an id to filter by");
        return;
    }
    let seed = l.ctx.opts.seed;
    let mut chosen: Vec<String> = Vec::new();
    for salt in 0..12 {
        if chosen.len() == 3 {
            break;
        }
        let c = pool[pick(seed, 100 + salt, pool.len())].to_string();
        if !chosen.contains(&c) {
            chosen.push(c);
        }
    }
    let requests: Vec<(Vec<String>, bool)> = vec![
        (chosen.clone(), false),
        (
            chosen
                .iter()
                .take(2)
                .cloned()
                .chain([MISSING_ID.to_string()])
                .collect(),
            true,
        ),
    ];
    for (ask, with_missing) in requests {
        let want: HashSet<&str> = ask
            .iter()
            .map(String::as_str)
            .filter(|i| *i != MISSING_ID)
            .collect();
        let params = l.sized(&[(param.clone(), ask.join(","))], l.size_max);
        let expect = if with_missing {
            Expect::Any
        } else {
            Expect::Accept
        };
        let (x, o, items) = l.list(&params, expect).await;
        let what = format!("{param}={}", ask.join(","));
        let Some(items) = items else {
            match (o, x.resp()) {
                (Outcome::Throttled | Outcome::Transport, _) => {}
                // Without the missing id, status.valid-accepted has judged the answer.
                _ if !with_missing => {}
                (Outcome::CleanRejection(s), _) => l.ctx.rec.observe(
                    "pagination.choices",
                    &l.label,
                    format!("an unknown id in {param}: rejected with {s}"),
                    Some(&x),
                ),
                (_, Some(r)) if r.status == 404 && is_envelope(r) => l.ctx.rec.observe(
                    "pagination.choices",
                    &l.label,
                    format!(
                        "an unknown id in {param}: 404 {}",
                        error_code(r).unwrap_or_default()
                    ),
                    Some(&x),
                ),
                (Outcome::Accepted, _) => {} // not an array: schema.response
                (_, r) => l.ctx.rec.violation(
                    id,
                    &l.label,
                    format!("for {what}: 200 with the existing tags, or a clean rejection"),
                    r.map_or("no answer".into(), |r| {
                        format!("{} {}", r.status, error_code(r).unwrap_or_default())
                    }),
                    Some(&x),
                ),
            }
            continue;
        };
        let got: Vec<&str> = items.iter().filter_map(id_of).collect();
        let got_set: HashSet<&str> = got.iter().copied().collect();
        let extra: Vec<&str> = got
            .iter()
            .copied()
            .filter(|i| !want.contains(i))
            .take(3)
            .collect();
        let missing: Vec<&str> = want
            .iter()
            .copied()
            .filter(|i| !got_set.contains(i))
            .collect();
        if extra.is_empty() && missing.is_empty() && got.len() == got_set.len() {
            l.ctx.rec.pass(id, &l.label);
        } else {
            let mut actual = format!("{} items", items.len());
            if !missing.is_empty() {
                actual.push_str(&format!("; missing {}", missing.join(", ")));
            }
            if !extra.is_empty() {
                actual.push_str(&format!("; not requested {}", extra.join(", ")));
            }
            if got.len() != got_set.len() {
                actual.push_str("; duplicates");
            }
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("for {what}: exactly {}", {
                    let mut w: Vec<&str> = want.iter().copied().collect();
                    w.sort_unstable();
                    w.join(", ")
                }),
                actual,
                Some(&x),
            );
        }
    }
}

/// `pagination.search`: a search for an existing tag's name finds it, and only tags of the list.
async fn search(l: &Lister<'_>, baseline: &Walk) {
    let id = "pagination.search";
    let Some(param) = l.op.param_with_role("search").map(|p| p.name.clone()) else {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no search parameter");
        return;
    };
    let named: Vec<(&str, &str)> = baseline
        .items
        .iter()
        .filter_map(|v| Some((id_of(v)?, v.get("name")?.as_str()?)))
        .filter(|(_, n)| !n.trim().is_empty())
        .collect();
    if named.is_empty() {
        l.ctx
            .rec
            .skip(id, &l.label, "the list has no tag with an id and a name");
        return;
    }
    let known: HashMap<&str, &str> = named.iter().copied().collect();
    let seed = l.ctx.opts.seed;
    let mut targets = vec![named[pick(seed, 200, named.len())]];
    let non_ascii: Vec<(&str, &str)> = named
        .iter()
        .copied()
        .filter(|(_, n)| !n.is_ascii())
        .collect();
    if !non_ascii.is_empty() {
        targets.push(non_ascii[pick(seed, 201, non_ascii.len())]);
    }
    for (tag_id, name) in targets {
        let w = match l
            .walk(&[(param.clone(), name.to_string())], l.size_max)
            .await
        {
            Ok(w) => w,
            Err(why) => {
                l.ctx
                    .rec
                    .skip(id, &l.label, format!("{param}={name:?}: {why}"));
                continue;
            }
        };
        let got: Vec<&str> = w.items.iter().filter_map(id_of).collect();
        let mut ok = true;
        if !got.contains(&tag_id) && w.complete {
            ok = false;
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("{param}={name:?} finds the tag {tag_id} named so"),
                format!("{} without it", w.describe()),
                None,
            );
        }
        if baseline.complete
            && let Some(stranger) = got.iter().find(|i| !known.contains_key(*i))
        {
            ok = false;
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("{param}={name:?}: only tags of the list"),
                format!("{stranger}, which the list does not have"),
                None,
            );
        }
        if ok {
            l.ctx.rec.pass(id, &l.label);
        }
        // How the target matches: recorded, not judged (the spec does not say).
        let names: Vec<&str> = w
            .items
            .iter()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .collect();
        let note = if names.iter().all(|n| n.contains(name)) {
            "every result contains the term as given"
        } else if names
            .iter()
            .all(|n| n.to_lowercase().contains(&name.to_lowercase()))
        {
            "every result contains the term, ignoring case"
        } else {
            "some results do not contain the term (fuzzy or word matching?)"
        };
        l.ctx.rec.observe(
            "pagination.choices",
            &l.label,
            format!("search: {note}"),
            None,
        );
    }
    // An empty term: accepted or rejected cleanly; what it means is the target's choice.
    let params = l.sized(&[(param.clone(), String::new())], l.size_max);
    let (x, o, items) = l.list(&params, Expect::AcceptOrReject).await;
    let note = match (o, items) {
        (Outcome::CleanRejection(s), _) => format!("an empty {param}: rejected with {s}"),
        (Outcome::Accepted, Some(items)) => {
            let first_page = baseline.items.len().min(l.size_max as usize);
            if items.is_empty() {
                format!("an empty {param}: accepted, no tags")
            } else if items.len() == first_page {
                format!("an empty {param}: accepted, as no filter")
            } else {
                format!("an empty {param}: accepted, {} tags", items.len())
            }
        }
        _ => return,
    };
    l.ctx
        .rec
        .observe("pagination.choices", &l.label, note, Some(&x));
}

/// `pagination.choices`: the default page size and order, and a page past the end.
async fn choices(l: &Lister<'_>, main_field: &str, baseline: &Walk) {
    let id = "pagination.choices";
    let (x, _, items) = l.list(&[], Expect::Accept).await;
    if let Some(items) = items {
        let total = baseline.items.len();
        let note = if items.len() >= total && baseline.complete {
            format!(
                "default page size: {} items (the whole list of {total})",
                items.len()
            )
        } else {
            format!("default page size: {} items", items.len())
        };
        l.ctx.rec.observe(id, &l.label, note, Some(&x));
        let default_ids: Vec<&str> = items.iter().filter_map(id_of).collect();
        let base_ids: Vec<&str> = baseline.items.iter().filter_map(id_of).collect();
        let same = !default_ids.is_empty()
            && base_ids.len() >= default_ids.len()
            && base_ids.iter().zip(&default_ids).all(|(a, b)| a == b);
        l.ctx.rec.observe(
            id,
            &l.label,
            if same {
                format!("default order: {main_field} ascending")
            } else {
                format!("default order: not {main_field} ascending")
            },
            None,
        );
    }
    // Past the end: an empty page, or an error; the spec does not say.
    if let (Some(page), Some(size), true) = (&l.page, &l.size, baseline.complete) {
        let last = baseline.items.len().div_ceil(l.size_max.max(1) as usize) as i64;
        let past = l.page_min.saturating_add(last);
        let params = vec![
            (size.clone(), l.size_max.to_string()),
            (page.clone(), past.to_string()),
        ];
        let (x, o, items) = l.list(&params, Expect::Any).await;
        let note = match (o, items, x.resp()) {
            (_, Some(v), _) if v.is_empty() => "a page past the end: 200 with no items".to_string(),
            (_, Some(v), _) => format!("a page past the end: 200 with {} items", v.len()),
            (Outcome::Throttled | Outcome::Transport, _, _) | (_, _, None) => return,
            (_, None, Some(r)) => format!(
                "a page past the end: {} {}",
                r.status,
                error_code(r).unwrap_or_default()
            ),
        };
        l.ctx.rec.observe(id, &l.label, note, Some(&x));
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
