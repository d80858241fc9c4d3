//! `pagination.walk`: walking every page with a small page size gives each item once, in the
//! same order as one large page.

use super::*;
use linkcert_registry::check_id;

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
    let small = small_page_size(l, big.len());
    let w = match l.walk(ordered, small).await {
        Ok(w) => w,
        Err(why) => {
            l.ctx.rec.skip(
                id,
                &l.label,
                why.context(|w| format!("the walk with pageSize={small} broke off: {w}")),
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
    let walks = Walks {
        l,
        small,
        seq: keyed(&w.items, field),
        big,
        small_walk: &w,
        baseline,
    };
    let mut ok = walks.every_item_once();
    let same_items = walks.same_items();
    ok = ok && same_items;
    if ok {
        ok = walks.same_sequence(field);
    }
    if ok {
        l.ctx.rec.pass(id, &l.label);
    } else {
        l.inconsistent.store(true, Ordering::Relaxed);
    }
}

/// Several pages: about six for a short list of `items`, pages of SMALL_PAGE for a long one.
fn small_page_size(l: &Lister<'_>, items: usize) -> u64 {
    ((items as u64) / 6 + 1)
        .min(SMALL_PAGE)
        .min(l.size_max.saturating_sub(1).max(l.size_min))
        .max(l.size_min)
}

/// The same list walked in small pages and in the largest.
struct Walks<'a, 'l> {
    l: &'a Lister<'l>,
    small: u64,
    /// The small pages' items, keyed.
    seq: Vec<(String, Option<String>)>,
    /// The largest pages' items (the baseline), keyed.
    big: Vec<(String, Option<String>)>,
    small_walk: &'a Walk,
    baseline: &'a Walk,
}

impl Walks<'_, '_> {
    fn complete(&self) -> bool {
        self.small_walk.complete && self.baseline.complete
    }

    /// No item twice, in either walk; false after a violation.
    fn every_item_once(&self) -> bool {
        let l = self.l;
        let mut ok = true;
        for (which, s, size) in [
            ("small", &self.seq, self.small),
            ("big", &self.big, l.size_max),
        ] {
            if let Some(dup) = first_duplicate(s) {
                ok = false;
                l.ctx.rec.violation(
                    check_id!("pagination.walk"),
                    &l.label,
                    format!("every item once when walking pages of {size}"),
                    format!("{dup} more than once ({which} pages)"),
                    None,
                );
            }
        }
        ok
    }

    /// As many items, and the same ones, in both walks when both ran to the end; false after a
    /// violation.
    fn same_items(&self) -> bool {
        let (l, small, seq, big) = (self.l, self.small, &self.seq, &self.big);
        let id = check_id!("pagination.walk");
        let summary = format!(
            "pageSize={small}: {}; pageSize={}: {}",
            self.small_walk.describe(),
            l.size_max,
            self.baseline.describe()
        );
        if self.complete() && seq.len() != big.len() {
            l.ctx.rec.violation(
                id,
                &l.label,
                "as many items walking small pages as big ones",
                summary,
                None,
            );
            return false;
        }
        if self.complete() && id_set(seq) != id_set(big) {
            let small_ids = id_set(seq);
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
            return false;
        }
        true
    }

    /// The same sequence in both walks, ties (items equal in `field`) in any order; an item
    /// without `field` that differs is observed. False after a violation.
    fn same_sequence(&self, field: &str) -> bool {
        let (l, small, seq, big) = (self.l, self.small, &self.seq, &self.big);
        let id = check_id!("pagination.walk");
        match tie_diff(seq, big, !self.complete()) {
            Some(Diff::Definite(i)) => {
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
                return false;
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
        true
    }
}
