//! `pagination.walk`: walking every page with a small page size gives each item once, in the
//! same order as one large page.

use super::*;
use crate::registry::check_id;

/// `pagination.walk`: small pages, concatenated, are the big pages' sequence: every item once.
pub(super) async fn walk(
    l: &Lister<'_>,
    ordered: &[(String, String)],
    field: &str,
    baseline: &Walk,
) {
    let id = check_id!("pagination.walk");
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
            check_id!("pagination.choices"),
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
