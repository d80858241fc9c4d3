//! `pagination.choices`: what the target chose where the spec is silent (default order, page
//! size) or leaves two answers (past the last page: `past_end`), recorded as observations.

use super::*;
use linkcert_registry::check_id;

/// `pagination.choices`: the default page size and order, and a page past the end.
pub(super) async fn choices(l: &Lister<'_>, main_field: &str, baseline: &Walk) {
    let id = check_id!("pagination.choices");
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
    // Past the end: an empty page or a 404, as the target chooses (`past_end`).
    if let (Some(page), Some(size), true) = (&l.page, &l.size, baseline.complete) {
        let last = baseline.items.len().div_ceil(l.size_max.max(1) as usize) as i64;
        let past = l.page_min.saturating_add(last);
        let params = vec![
            (size.clone(), l.size_max.to_string()),
            (page.clone(), past.to_string()),
        ];
        let (x, o, _) = l.list(&params, Expect::Any).await;
        let answer = match (o, l.past_end(&x), x.resp()) {
            (Outcome::Throttled | Outcome::Transport, _, _) | (_, _, None) => return,
            (_, Some(PastEnd::Empty), _) => "200 with no items".to_string(),
            (_, Some(PastEnd::NotFound), _) => "404 not_found in the error envelope".to_string(),
            // Not the target's to choose: pagination.bounds fails these.
            (_, Some(PastEnd::Items(n)), _) => format!("200 with {n} items"),
            (_, _, Some(r)) => format!("{} {}", r.status, error_code(r).unwrap_or_default()),
        };
        l.ctx.rec.observe(
            id,
            &l.label,
            format!("a page past the end: {answer}"),
            Some(&x),
        );
    }
}
