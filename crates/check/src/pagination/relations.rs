//! Where parameters meet: generated combinations judged against the model
//! (`pagination.model`), and relations that hold whatever the model: pages concatenate to the
//! unpaged list (`pagination.concat`), filters intersect (`pagination.intersection`), every
//! form of an ids list means the same set (`pagination.ids-forms`), desc is asc reversed
//! under filters (`pagination.reverse`). A clean refusal of a combination is the target's
//! choice (observed); the relation is then not judged.

use super::combos::{self, Combo, Filter, IdsSpec, Judged, TermSpec};
use super::model::{Model, Reading, content_diff, duplicate, show_query};
use super::*;
use proptest::prelude::*;

/// Cases per property: a few hundred requests in all, with shrinking.
const MODEL_CASES: u32 = 24;
const RELATION_CASES: u32 = 10;

pub(super) async fn relations(l: &Lister<'_>, m: &Model) {
    let h = tokio::runtime::Handle::current();
    let on = |id: Check| l.ctx.enabled(id);
    // Each relation drives its own cases; they are independent, so they run side by side on
    // scoped threads that block on the runtime (proptest's runner is synchronous), and a far
    // target's round trips overlap.
    let mut jobs: Vec<Box<dyn Fn() + Send + Sync + '_>> = Vec::new();
    let h = &h;
    if on(check_id!("pagination.model")) {
        jobs.push(Box::new(move || {
            let judge = |c: &Combo| h.block_on(judge_combo(l, m, c));
            let s = combos::combo(l.size_max);
            combos::drive(l, check_id!("pagination.model"), 1, MODEL_CASES, s, &judge);
        }));
    }
    if on(check_id!("pagination.concat")) {
        jobs.push(Box::new(move || {
            let judge = |c: &(Filter, (usize, bool), u64)| h.block_on(concat(l, m, c));
            let s = (
                combos::filter(),
                (0usize..4, any::<bool>()),
                prop_oneof![3 => 1u64..=3, 1 => 1u64..=10],
            );
            combos::drive(
                l,
                check_id!("pagination.concat"),
                2,
                RELATION_CASES,
                s,
                &judge,
            );
        }));
    }
    if on(check_id!("pagination.intersection")) {
        jobs.push(Box::new(move || {
            let judge = |c: &(TermSpec, IdsSpec, bool)| h.block_on(intersection(l, m, c));
            let s = (combos::plain_term(), combos::ids(1, 5), any::<bool>());
            let id = check_id!("pagination.intersection");
            combos::drive(l, id, 3, RELATION_CASES, s, &judge);
        }));
    }
    if on(check_id!("pagination.ids-forms")) {
        jobs.push(Box::new(move || {
            let judge = |c: &(IdsSpec, u8)| h.block_on(ids_forms(l, m, c));
            // Half the cases in the other form (repeated or comma-separated).
            let s = (combos::ids(2, 5), prop_oneof![0u8..2, Just(2u8)]);
            let id = check_id!("pagination.ids-forms");
            combos::drive(l, id, 4, RELATION_CASES, s, &judge);
        }));
    }
    if on(check_id!("pagination.reverse")) {
        jobs.push(Box::new(move || {
            let judge = |c: &(Filter, usize)| h.block_on(reverse(l, m, c));
            let s = (combos::filter(), 0usize..4);
            combos::drive(
                l,
                check_id!("pagination.reverse"),
                5,
                RELATION_CASES,
                s,
                &judge,
            );
        }));
    }
    combos::side_by_side(l.ctx.opts.concurrency, &jobs);
}

/// A combination the target did not list: a clean refusal is observed, not judged.
pub(super) fn unlisted(l: &Lister<'_>, what: &str, x: &Exchange, o: Outcome) -> Judged {
    if let Outcome::CleanRejection(s) = o {
        l.ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!("{what}: rejected with {s}"),
            Some(x),
        );
    }
    Judged::Unjudged
}

/// What kind of combination it is, for observations (one line per kind, not per case).
fn kind(m: &Model, p: &[(String, String)]) -> String {
    let has = |n: &Option<String>| n.as_ref().is_some_and(|n| p.iter().any(|(k, _)| k == n));
    let mut v = Vec::new();
    if has(&m.names.search) {
        v.push("a search term");
    }
    if let Some(n) = &m.names.ids {
        match p.iter().filter(|(k, _)| k == n).count() {
            0 => {}
            1 => v.push("ids comma-separated"),
            _ => v.push("ids repeated"),
        }
        if p.iter().any(|(k, v)| k == n && v.contains(MISSING_ID)) {
            v.push("an unknown id");
        }
    }
    format!(
        "a combination of {}",
        if v.is_empty() {
            "sort and page".into()
        } else {
            v.join(", ")
        }
    )
}

/// `pagination.model`: one page of a combination is the page the model predicts.
async fn judge_combo(l: &Lister<'_>, m: &Model, c: &Combo) -> Judged {
    let (term, ids) = c.filter.parts(m);
    // A small page size drawn below the number of tags the filters select (so there are
    // pages), the page among those they fill and one past them.
    let mut c = c.clone();
    if let Some(p) = m.predict(term.as_deref(), ids.as_deref()) {
        let n = p.may.len().max(1) as u64;
        c.size = c.size.map(|s| if s <= 10 { 1 + (s - 1) % n } else { s });
        let size = c
            .size
            .map(|s| s as usize)
            .or(m.default_size)
            .unwrap_or(usize::MAX);
        let pages = p.may.len().div_ceil(size.max(1)).max(1) as u64;
        c.page = c.page.map(|raw| 1 + (raw - 1) % (pages + 1));
    }
    let c = &c;
    let params = c.params(m, l.size.as_deref(), l.page.as_deref());
    let unknown = ids
        .as_ref()
        .is_some_and(|v| v.iter().any(|i| i == MISSING_ID));
    let page = c.page.filter(|_| l.page.is_some()).unwrap_or(1).max(1) as usize;
    let expect = if unknown || page > 1 {
        Expect::Any
    } else {
        Expect::AcceptOrReject
    };
    let (x, o, items) = l.list(&params, expect).await;
    let what = show_query(&params);
    let Some(items) = items else {
        return unlisted(l, &kind(m, &params), &x, o);
    };
    let Some(pred) = m.predict(term.as_deref(), ids.as_deref()) else {
        return Judged::Unjudged;
    };
    let fail = |e: String, a: String| Judged::broke(format!("for {what}: {e}"), a, Some(&x));
    if let Some(d) = content_diff(m, &items) {
        return fail("every tag as the whole list has it".into(), d);
    }
    if let Some(d) = duplicate(&items) {
        return fail("each tag once".into(), format!("{d} more than once"));
    }
    if let Some(s) = items
        .iter()
        .filter_map(id_of)
        .find(|i| !pred.may.contains(*i))
    {
        let name = m.name(s).unwrap_or_default();
        return fail(
            "only tags these filters select (as the model predicts them)".into(),
            format!("{s} ({name:?}), which they do not select"),
        );
    }
    if !pred.exact() {
        return Judged::Held;
    }
    let size = c
        .size
        .filter(|_| l.size.is_some())
        .map(|s| s as usize)
        .or(m.default_size)
        .unwrap_or(usize::MAX);
    let skip = (page - 1).saturating_mul(size);
    let want = pred.must.len().saturating_sub(skip).min(size);
    if items.len() != want {
        return fail(
            format!(
                "{want} tags: page {page} of the {} tags these filters select, {} a page",
                pred.must.len(),
                if size == usize::MAX {
                    "all".into()
                } else {
                    size.to_string()
                }
            ),
            format!("{} tags", items.len()),
        );
    }
    match in_order(m, c.sort, &pred, skip, &items) {
        Some((e, a)) => fail(e, a),
        None => Judged::Held,
    }
}

/// Sorted: the page holds, position by position, tags of the sort key the whole list's order
/// (as the target gave it) puts there; ties (equal folded keys) in any order.
fn in_order(
    m: &Model,
    sort: Option<(usize, bool)>,
    pred: &super::model::Predicted,
    skip: usize,
    items: &[Value],
) -> Option<(String, String)> {
    let (field, desc) = m.sort_of(sort)?;
    let order = m.orders.get(&(field.clone(), desc))?;
    let set: HashSet<&str> = pred.must.iter().map(String::as_str).collect();
    let want: Vec<&str> = order
        .iter()
        .map(String::as_str)
        .filter(|i| set.contains(i))
        .skip(skip)
        .collect();
    for (i, (got, want)) in items.iter().filter_map(id_of).zip(want).enumerate() {
        let (gk, wk) = (m.key(got, &field), m.key(want, &field));
        let same = match (&gk, &wk) {
            (Some(a), Some(b)) => a == b,
            _ => got == want,
        };
        if !same && (gk.is_some() || wk.is_some()) {
            let dir = if desc { "descending" } else { "ascending" };
            return Some((
                format!("tags by {field} {dir}, as the whole list is (ties in any order)"),
                format!(
                    "item {} is {got} ({:?}) where {want} ({:?}) belongs",
                    i + 1,
                    gk.unwrap_or_default(),
                    wk.unwrap_or_default()
                ),
            ));
        }
    }
    None
}

/// The sort parameters of a pick.
fn sorted(m: &Model, pick: (usize, bool)) -> Option<(Params, String)> {
    let (field, desc) = m.sort_of(Some(pick))?;
    Some((m.names.sorting.as_ref()?.params(&field, desc), field))
}

/// A filtered list walked whole: None (observed when refused) when it is not.
async fn walked(l: &Lister<'_>, m: &Model, p: &Params, size: u64) -> Option<Walk> {
    walked_up_to(l, m, p, size, MAX_PAGES)
        .await
        .filter(|w| w.complete)
}

/// A filtered list walked to its end or `max_pages`; None (observed when refused) when it
/// could not be.
async fn walked_up_to(
    l: &Lister<'_>,
    m: &Model,
    p: &Params,
    size: u64,
    max_pages: usize,
) -> Option<Walk> {
    let unknown = p.iter().any(|(_, v)| v.contains(MISSING_ID));
    let first = if unknown {
        Expect::Any
    } else {
        Expect::AcceptOrReject
    };
    match l.walk_first(p, size, first, max_pages).await {
        Ok(w) => Some(w),
        Err(Unwalked::Broke(_)) => None,
        Err(Unwalked::Refused(s, x)) => {
            unlisted(l, &kind(m, p), &x, Outcome::CleanRejection(s));
            None
        }
    }
}

/// `pagination.concat`: pages of a small size, concatenated, are the list in the largest
/// pages, under the same filters and sort.
async fn concat(l: &Lister<'_>, m: &Model, c: &(Filter, (usize, bool), u64)) -> Judged {
    let (f, pick, small) = c;
    let (Some(_), Some(_), Some((sort, field))) = (&l.size, &l.page, sorted(m, *pick)) else {
        return Judged::Unjudged;
    };
    let mut p = f.params(m);
    p.extend(sort);
    let Some(big) = walked(l, m, &p, l.size_max).await else {
        return Judged::Unjudged;
    };
    // Below the list's length (so there are pages), at most about eight pages.
    let small = (1 + (*small - 1) % (big.items.len() as u64).saturating_sub(1).max(1))
        .max((big.items.len() as u64).div_ceil(8))
        .clamp(l.size_min, l.size_max);
    // One page more than the list needs: a target that pages past its end shows it.
    let need = (big.items.len() as u64).div_ceil(small.max(1)) as usize + 1;
    let Some(pages) = walked_up_to(l, m, &p, small, need.max(2)).await else {
        return Judged::Unjudged;
    };
    if !pages.complete && pages.items.len() <= big.items.len() {
        return Judged::Unjudged;
    }
    let (a, b) = (keyed(&pages.items, &field), keyed(&big.items, &field));
    let what = format!("{} with pageSize={small}", show_query(&p));
    let x = |i: usize| {
        pages
            .exchanges
            .get(i / small.max(1) as usize)
            .or(pages.exchanges.last())
    };
    let expected = format!(
        "for {what}: the pages, one after another, are the list in pages of {}",
        l.size_max
    );
    if let Some(d) = first_duplicate(&a) {
        return Judged::broke(expected, format!("{d} on two pages"), x(0));
    }
    if a.len() != b.len() || id_set(&a) != id_set(&b) {
        let missing = b.iter().position(|e| !id_set(&a).contains(e.0.as_str()));
        return Judged::broke(
            expected,
            format!(
                "{} in pages of {small}, {} in pages of {}{}",
                pages.describe(),
                big.describe(),
                l.size_max,
                missing.map_or(String::new(), |i| format!("; {} missing", b[i].0))
            ),
            x(missing.unwrap_or(0)),
        );
    }
    match tie_diff(&a, &b, false) {
        Some(Diff::Definite(i)) => Judged::broke(
            expected,
            format!(
                "item {} is {} in pages of {small}, {} in pages of {}",
                i + 1,
                a.get(i).map(show).unwrap_or_default(),
                b.get(i).map(show).unwrap_or_default(),
                l.size_max
            ),
            x(i),
        ),
        Some(Diff::Undecidable(_)) => Judged::Unjudged,
        None => Judged::Held,
    }
}

/// `pagination.intersection`: a search and an ids filter together give the tags both give
/// alone. `named`: the ids include the tag the term was drawn from, so the meet is not empty.
async fn intersection(l: &Lister<'_>, m: &Model, c: &(TermSpec, IdsSpec, bool)) -> Judged {
    let (term, ids, named) = c;
    let mut ids = IdsSpec {
        picks: ids.picks.clone(),
        repeated: false,
    };
    if *named {
        ids.picks.push(term.name % m.named.len().max(1));
    }
    let only_term = Filter {
        term: Some(term.clone()),
        ids: None,
    };
    let only_ids = Filter {
        term: None,
        ids: Some(ids.clone()),
    };
    let both = Filter {
        term: Some(term.clone()),
        ids: Some(ids),
    };
    let (pa, pb, pc) = (only_term.params(m), only_ids.params(m), both.params(m));
    if pa.is_empty() || pb.is_empty() || pc.len() < 2 {
        return Judged::Unjudged;
    }
    let mut walks = Vec::new();
    for p in [&pa, &pb, &pc] {
        match walked(l, m, p, l.size_max).await {
            Some(w) => walks.push(w),
            None => return Judged::Unjudged,
        }
    }
    let set = |w: &Walk| {
        w.items
            .iter()
            .filter_map(id_of)
            .map(str::to_string)
            .collect::<HashSet<_>>()
    };
    let (a, b, got) = (set(&walks[0]), set(&walks[1]), set(&walks[2]));
    let want: HashSet<String> = a.intersection(&b).cloned().collect();
    if want == got && duplicate(&walks[2].items).is_none() {
        return Judged::Held;
    }
    let sample = |s: Vec<&String>| {
        s.into_iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let extra = sample(got.difference(&want).collect());
    let missing = sample(want.difference(&got).collect());
    Judged::broke(
        format!(
            "for {}: the tags both {} and {} give ({} tags)",
            show_query(&pc),
            show_query(&pa),
            show_query(&pb),
            want.len()
        ),
        format!(
            "{} tags{}{}",
            walks[2].items.len(),
            if extra.is_empty() {
                String::new()
            } else {
                format!("; not in both: {extra}")
            },
            if missing.is_empty() {
                String::new()
            } else {
                format!("; missing: {missing}")
            }
        ),
        walks[2].exchanges.first(),
    )
}

/// `pagination.ids-forms`: in a form the target honours (learned from two ids), the ids in
/// another order or each twice select the same tags; in the other form (repeated, or
/// comma-separated), the list is read as the target read it when learning: the whole list,
/// its first or last value (a framework reading one value of a repeated name), or one id
/// nobody has. Only a form read one way for two ids and another way here fails.
async fn ids_forms(l: &Lister<'_>, m: &Model, c: &(IdsSpec, u8)) -> Judged {
    let (spec, form) = c;
    let Some(base) = m.ids_repeated(false) else {
        return Judged::Unjudged;
    };
    let Some(name) = &m.names.ids else {
        return Judged::Unjudged;
    };
    let render = |picks: &[usize], repeated: bool| -> Params {
        let ids = IdsSpec {
            picks: picks.to_vec(),
            repeated,
        }
        .ids(m);
        if repeated {
            ids.into_iter().map(|i| (name.clone(), i)).collect()
        } else {
            vec![(name.clone(), ids.join(","))]
        }
    };
    let mut picks = spec.picks.clone();
    let (how, other_form) = match form {
        0 => {
            picks.reverse();
            ("in reverse order", base)
        }
        1 => {
            picks = picks.iter().flat_map(|p| [*p, *p]).collect();
            ("each twice", base)
        }
        _ if base => ("comma-separated", false),
        _ => ("repeated", true),
    };
    let (pa, pb) = (render(&spec.picks, base), render(&picks, other_form));
    if pa.is_empty() || pa == pb {
        return Judged::Unjudged;
    }
    let (Some(a), Some(b)) = (
        walked(l, m, &pa, l.size_max).await,
        walked(l, m, &pb, l.size_max).await,
    ) else {
        return Judged::Unjudged;
    };
    let set = |w: &Walk| {
        w.items
            .iter()
            .filter_map(id_of)
            .map(str::to_string)
            .collect::<HashSet<_>>()
    };
    let (want, got) = (set(&a), set(&b));
    let learned = match (other_form == base, other_form) {
        (true, _) => Reading::All,
        (false, true) => m.repeated,
        (false, false) => m.comma,
    };
    let readings = Reading::of(&got, &want, &spec.ids(m));
    let dup = duplicate(&b.items);
    if learned == Reading::Unsettled {
        return Judged::Unjudged;
    }
    if readings.contains(&learned) && dup.is_none() {
        return Judged::Held;
    }
    let mut got: Vec<String> = got.into_iter().collect();
    got.sort();
    let mut want: Vec<String> = want.into_iter().collect();
    want.sort();
    Judged::broke(
        format!(
            "for {} (ids {how}): read as two ids {how} were ({learned:?}), against {} ({})",
            show_query(&pb),
            show_query(&pa),
            want.join(", ")
        ),
        format!(
            "{} tags: {}{}",
            b.items.len(),
            got.join(", "),
            dup.map_or(String::new(), |d| format!("; {d} twice"))
        ),
        b.exchanges.first(),
    )
}

/// `pagination.reverse`: under the same filters, desc lists the tags of asc in reverse,
/// ties in any order.
async fn reverse(l: &Lister<'_>, m: &Model, c: &(Filter, usize)) -> Judged {
    let (f, field) = c;
    let (Some((asc_p, field)), Some((desc_p, _))) =
        (sorted(m, (*field, false)), sorted(m, (*field, true)))
    else {
        return Judged::Unjudged;
    };
    let base = f.params(m);
    let (mut pa, mut pd) = (base.clone(), base);
    pa.extend(asc_p);
    pd.extend(desc_p);
    let (Some(a), Some(d)) = (
        walked(l, m, &pa, l.size_max).await,
        walked(l, m, &pd, l.size_max).await,
    ) else {
        return Judged::Unjudged;
    };
    let (ka, kd) = (keyed(&a.items, &field), keyed(&d.items, &field));
    let rev: Vec<(String, Option<String>)> = ka.iter().rev().cloned().collect();
    let expected = format!(
        "for {}: the tags of {} in reverse (ties in any order)",
        show_query(&pd),
        show_query(&pa)
    );
    if ka.len() != kd.len() || id_set(&ka) != id_set(&kd) {
        return Judged::broke(
            expected,
            format!("{} with desc, {} with asc", d.describe(), a.describe()),
            d.exchanges.first(),
        );
    }
    match tie_diff(&kd, &rev, false) {
        Some(Diff::Definite(i)) => Judged::broke(
            expected,
            format!(
                "item {} is {}, where {} belongs",
                i + 1,
                kd.get(i).map(show).unwrap_or_default(),
                rev.get(i).map(show).unwrap_or_default()
            ),
            d.exchanges
                .get(i / l.size_max.max(1) as usize)
                .or(d.exchanges.first()),
        ),
        Some(Diff::Undecidable(_)) => Judged::Unjudged,
        None => Judged::Held,
    }
}
