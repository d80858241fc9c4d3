//! `pagination.bounds` and `pagination.page-size`: the limits of page and pageSize (maximum
//! 100, greater than 0) and pages of the size asked for.

use super::*;
use crate::registry::check_id;

/// `pagination.bounds`: page and pageSize outside their bounds, or not integers, are rejected.
pub(super) async fn bounds(l: &Lister<'_>) {
    let id = check_id!("pagination.bounds");
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
                        check_id!("pagination.choices"),
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
                        check_id!("pagination.choices"),
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
                    (_, Some(r)) if !is_envelope(r) => r.without_envelope(),
                    (_, Some(r)) => r.answered(),
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

/// `pagination.page-size`: a page never holds more than pageSize items, and a first page
/// holds exactly pageSize when the list (`baseline`, read whole) has that many. Sizes from the
/// smallest to the largest the spec allows: the bounds, next to them, and seeded sizes between.
pub(super) async fn page_size(l: &Lister<'_>, baseline: Option<&Walk>) {
    let id = check_id!("pagination.page-size");
    let Some(name) = &l.size else {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no page-size parameter");
        return;
    };
    let (lo, hi) = (l.size_min, l.size_max);
    let seed = l.ctx.opts.seed;
    let between =
        |salt: u64, a: u64, b: u64| a + pick(seed, salt, (b.saturating_sub(a) + 1) as usize) as u64;
    let mid = lo + (hi - lo) / 2;
    let mut sizes = vec![
        lo,
        lo + 1,
        7,
        between(500, lo + 2, mid),
        between(501, mid + 1, hi.saturating_sub(2)),
        hi.saturating_sub(1),
        hi,
    ];
    sizes.retain(|s| (lo..=hi).contains(s));
    sizes.sort_unstable();
    sizes.dedup();
    // The list's length, when it was read to the end.
    let total = baseline
        .filter(|b| b.complete)
        .map(|b| b.items.len() as u64);
    let mut judged = false;
    for n in sizes {
        let (x, _, items) = l
            .list(&[(name.clone(), n.to_string())], Expect::Accept)
            .await;
        // No items: status.valid-accepted or schema.response has judged the answer.
        let Some(items) = items else { continue };
        judged = true;
        let got = items.len() as u64;
        let full = total.is_some_and(|t| t >= n);
        if got > n {
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("at most {n} items for {name}={n}"),
                format!("{got} items"),
                Some(&x),
            );
        } else if full && got < n {
            l.ctx.rec.violation(
                id,
                &l.label,
                format!(
                    "{n} items for {name}={n}: the first page of a list of {} items is full",
                    total.unwrap_or_default()
                ),
                format!("{got} items"),
                Some(&x),
            );
        } else {
            l.ctx.rec.pass(id, &l.label);
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

/// `pagination.bounds`, past the end: a page number greater than 0 is valid however far past
/// the last page it is (the spec's 400 is for malformed requests), so the answer is a 200
/// with no items. The last page + 1 and + 1000 (when the whole list was read), and large
/// integers a 32-bit or a JSON-safe integer holds; beyond 64 bits `bounds` lets a target
/// reject cleanly.
pub(super) async fn past_end(l: &Lister<'_>, baseline: &Walk) {
    let id = check_id!("pagination.bounds");
    let Some(page) = &l.page else { return };
    let mut pages: Vec<u64> = Vec::new();
    if baseline.complete && l.size.is_some() {
        let last = (baseline.items.len() as u64).div_ceil(l.size_max).max(1);
        pages.extend([last + 1, last + 1000]);
    }
    pages.extend([i32::MAX as u64, 1u64 << 53]);
    for n in pages {
        let mut params = vec![(page.clone(), n.to_string())];
        if let Some(s) = &l.size {
            params.push((s.clone(), l.size_max.to_string()));
        }
        let (x, o, items) = l.list(&params, Expect::Any).await;
        let what = format!("{page}={n}");
        let got = match (o, items) {
            (Outcome::Throttled | Outcome::Transport, _) => continue,
            (Outcome::Accepted, Some(v)) if v.is_empty() => {
                l.ctx.rec.pass(id, &l.label);
                continue;
            }
            // Not an array: schema.response says so.
            (Outcome::Accepted, None) => continue,
            (Outcome::Accepted, Some(v)) => format!("{} items", v.len()),
            (_, _) => match x.resp() {
                Some(r) if !is_envelope(r) => r.without_envelope(),
                Some(r) => r.answered(),
                None => "no answer".into(),
            },
        };
        l.ctx.rec.violation(
            id,
            &l.label,
            format!("for {what}, past the last page (valid: greater than 0): 200 with no items"),
            got,
            Some(&x),
        );
    }
}
