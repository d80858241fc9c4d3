//! `pagination.bounds` and `pagination.page-size`: the limits of page and pageSize (maximum
//! 100, greater than 0) and pages of the size asked for.

use super::*;
use linkcert_registry::check_id;

/// `pagination.bounds`: page and pageSize outside their bounds, or not integers, are rejected.
pub(super) async fn bounds(l: &Lister<'_>) {
    let id = check_id!("pagination.bounds");
    let cases = bound_cases(l);
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
        if must_reject {
            rejected(l, &what, &x, o);
        } else {
            huge_page(l, &what, &x, o, items);
        }
    }
}

/// (parameter, value, must the target reject it?), each once.
fn bound_cases(l: &Lister<'_>) -> Vec<(String, String, bool)> {
    let mut cases: Vec<(String, String, bool)> = Vec::new();
    if let Some(p) = &l.page {
        for v in [
            l.page_min.saturating_sub(1).to_string(),
            "-1".to_string(),
            "abc".to_string(),
        ] {
            cases.push((p.clone(), v, true));
        }
        // Above 64 bits but greater than 0: valid per the spec, so answered as a page past the
        // last (there are not that many items), or rejected cleanly.
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
    cases
}

/// A value the spec makes invalid: rejected cleanly.
fn rejected(l: &Lister<'_>, what: &str, x: &Exchange, o: Outcome) {
    let id = check_id!("pagination.bounds");
    let got = match (o, x.resp()) {
        // Not this check's to judge: the transport failure is status's finding.
        (Outcome::Throttled | Outcome::Transport, _) => return,
        (Outcome::CleanRejection(_), _) => return l.ctx.rec.pass(id, &l.label),
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
        Some(x),
    );
}

/// A page number beyond 64 bits, valid per the spec: a clean rejection (its representation is
/// the target's), or what `past_end` allows past the last page. Which one is observed.
fn huge_page(l: &Lister<'_>, what: &str, x: &Exchange, o: Outcome, items: Option<Vec<Value>>) {
    let id = check_id!("pagination.bounds");
    let choices = check_id!("pagination.choices");
    let note = match (o, l.past_end(x)) {
        // Not this check's to judge: the transport failure is status's finding.
        (Outcome::Throttled | Outcome::Transport, _) => return,
        // Not an array: schema.response says so.
        (Outcome::Accepted, _) if items.is_none() => return,
        (Outcome::CleanRejection(s), _) => format!("{what}: rejected with {s}"),
        (_, Some(PastEnd::Empty)) => format!("{what}: accepted, an empty page"),
        (_, Some(PastEnd::NotFound)) => format!("{what}: 404 not_found, past the last page"),
        (_, past) => {
            let got = match (past, x.resp()) {
                (Some(PastEnd::Items(n)), _) => format!("{n} items"),
                (_, Some(r)) if !is_envelope(r) => r.without_envelope(),
                (_, Some(r)) => r.answered(),
                (_, None) => "no answer".into(),
            };
            let expected = format!(
                "for {what} (no list is that long): {}, or a clean rejection",
                past_end::EXPECTED
            );
            return l.ctx.rec.violation(id, &l.label, expected, got, Some(x));
        }
    };
    l.ctx.rec.pass(id, &l.label);
    l.ctx.rec.observe(choices, &l.label, note, Some(x));
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
/// the last page it is (the spec's 400 is for malformed requests), so the answer is what
/// `past_end` allows there: 200 with no items, or 404 in the envelope (which one,
/// `pagination.choices` observes). The last page + 1 and + 1000 (when the whole list was
/// read), and large integers a 32-bit or a JSON-safe integer holds; beyond 64 bits `bounds`
/// lets a target reject cleanly.
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
        let (x, o, _) = l.list(&params, Expect::Any).await;
        let what = format!("{page}={n}");
        let got = match (o, l.past_end(&x), x.resp()) {
            (Outcome::Throttled | Outcome::Transport, _, _) | (_, None, _) => continue,
            (_, Some(p), _) if p.allowed() => {
                l.ctx.rec.pass(id, &l.label);
                continue;
            }
            // Not an array: schema.response says so.
            (_, Some(PastEnd::NotAList), _) => continue,
            (_, Some(PastEnd::Items(n)), _) => format!("{n} items"),
            (_, _, Some(r)) if !is_envelope(r) => r.without_envelope(),
            (_, _, Some(r)) => r.answered(),
            (_, _, None) => "no answer".into(),
        };
        l.ctx.rec.violation(
            id,
            &l.label,
            format!(
                "for {what}, past the last page (valid: greater than 0): {}",
                past_end::EXPECTED
            ),
            got,
            Some(&x),
        );
    }
}
