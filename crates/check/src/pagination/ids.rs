//! `pagination.ids`: the ids filter returns exactly the tags asked for, in list order; and
//! lists of every length, from one id to every tag of the list (up to 300), sampled: the spec
//! sets no bound on the list, so a target may refuse a long one cleanly, but every id of a
//! list it accepts must be in the answer (over as many pages as it takes).

use super::*;
use linkcert_http::refused_cleanly;
use linkcert_registry::check_id;

/// `pagination.ids`: the ids filter returns exactly the requested existing tags.
pub(super) async fn ids(l: &Lister<'_>, baseline: &Walk) {
    let id = check_id!("pagination.ids");
    let Some(param) = l.op.param_with_role("ids").map(|p| p.name.clone()) else {
        l.ctx
            .rec
            .skip(id, &l.label, "the spec gives no ids parameter");
        return;
    };
    let pool = id_pool(baseline);
    if pool.is_empty() {
        l.ctx
            .rec
            .skip(id, &l.label, "the list has no item with an id to filter by");
        return;
    }
    lengths(l, &param, &pool, baseline.complete).await;
    let chosen = chosen_ids(l.ctx.opts.seed, &pool);
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
        match items {
            Some(items) => exactly(l, &what, &want, &items, &x),
            None if with_missing => no_list_with_missing(l, &param, &what, &x, o),
            // Without the missing id, status.valid-accepted has judged the answer.
            None => {}
        }
    }
}

/// Ids a comma-separated list can carry, each once, sorted.
fn id_pool(baseline: &Walk) -> Vec<&str> {
    let mut pool: Vec<&str> = baseline
        .items
        .iter()
        .filter_map(id_of)
        .filter(|i| !i.is_empty() && !i.contains(','))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    pool.sort_unstable();
    pool
}

/// Up to three distinct ids of the pool, drawn with the run's seed.
fn chosen_ids(seed: u64, pool: &[&str]) -> Vec<String> {
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
    chosen
}

/// A list with an unknown id answered without a list: a clean rejection or a 404 in the
/// envelope is the target's choice (observed), anything else a violation.
fn no_list_with_missing(l: &Lister<'_>, param: &str, what: &str, x: &Exchange, o: Outcome) {
    match (o, x.resp()) {
        (Outcome::Throttled | Outcome::Transport, _) => {}
        (Outcome::CleanRejection(s), _) => l.ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!("an unknown id in {param}: rejected with {s}"),
            Some(x),
        ),
        (_, Some(r)) if refused_cleanly(r, &[404]) => l.ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!(
                "an unknown id in {param}: 404 {}",
                error_code(r).unwrap_or_default()
            ),
            Some(x),
        ),
        (Outcome::Accepted, _) => {} // not an array: schema.response
        (_, r) => l.ctx.rec.violation(
            check_id!("pagination.ids"),
            &l.label,
            format!("for {what}: 200 with the existing tags, or a clean rejection"),
            r.map_or("no answer".into(), |r| {
                format!("{} {}", r.status, error_code(r).unwrap_or_default())
            }),
            Some(x),
        ),
    }
}

/// The answer to `what` holds exactly the existing tags asked for (`want`), each once.
fn exactly(l: &Lister<'_>, what: &str, want: &HashSet<&str>, items: &[Value], x: &Exchange) {
    let id = check_id!("pagination.ids");
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
        return;
    }
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
    let mut w: Vec<&str> = want.iter().copied().collect();
    w.sort_unstable();
    l.ctx.rec.violation(
        id,
        &l.label,
        format!("for {what}: exactly {}", w.join(", ")),
        actual,
        Some(x),
    );
}

/// The longest list of ids asked for.
const MAX_IDS: usize = 300;

/// The list lengths asked for: one, two, the edges of 50 and 100 (common limits) and of the
/// page size, every id of the list, and seeded lengths between.
fn sample_lengths(seed: u64, n: usize, page: usize) -> Vec<usize> {
    let between =
        |salt: u64, lo: usize, hi: usize| lo + pick(seed, salt, hi.saturating_sub(lo) + 1);
    let mut v = vec![
        1,
        2,
        between(300, 3, 49),
        50,
        51,
        between(301, 52, 99),
        100,
        101,
        page,
        page + 1,
        between(302, 102, n.saturating_sub(1).max(102)),
        n,
    ];
    v.retain(|&k| (1..=n).contains(&k));
    v.sort_unstable();
    v.dedup();
    v
}

/// Lists of ids of sampled lengths: a clean rejection, or every id asked for in the answer,
/// nothing else, once.
async fn lengths(l: &Lister<'_>, param: &str, pool: &[&str], whole: bool) {
    let id = check_id!("pagination.ids");
    let seed = l.ctx.opts.seed;
    // The pool in a seeded order, so a list of k ids is not the first k of the list.
    let mut order: Vec<&str> = pool.to_vec();
    for i in (1..order.len()).rev() {
        order.swap(i, pick(seed, 400 + i as u64, i + 1));
    }
    // Hundreds, not thousands: a list of every id of a big workspace would only measure how
    // long a query string the target takes.
    for k in sample_lengths(seed, order.len().min(MAX_IDS), l.size_max as usize) {
        let ask = &order[..k];
        let what = format!("{param} with {k} ids");
        // A short list every target must take; past a few, the length is the target's choice.
        let first = if k <= 3 {
            Expect::Accept
        } else {
            Expect::AcceptOrReject
        };
        let got = match walk_ids(l, param, ask, first).await {
            Listed::Items(items, complete) => (items, complete),
            Listed::Refused(s, x) => {
                l.ctx.rec.observe(
                    check_id!("pagination.choices"),
                    &l.label,
                    format!("{what}: rejected with {s}"),
                    Some(&x),
                );
                continue;
            }
            // status.* judged it; a 429 or a lost answer says nothing about the ids.
            Listed::Unjudged => continue,
        };
        let (items, complete) = got;
        let want: HashSet<&str> = ask.iter().copied().collect();
        let ids: Vec<&str> = items.iter().filter_map(id_of).collect();
        let seen: HashSet<&str> = ids.iter().copied().collect();
        let missing: Vec<&str> = ask.iter().copied().filter(|i| !seen.contains(i)).collect();
        let extra: Vec<&str> = ids.iter().copied().filter(|i| !want.contains(i)).collect();
        let dup = ids.len() != seen.len();
        // A walk cut at its bound may miss ids; a list read partly may hold strangers.
        let missing = if complete && whole {
            missing
        } else {
            Vec::new()
        };
        if missing.is_empty() && extra.is_empty() && !dup {
            l.ctx.rec.pass(id, &l.label);
            continue;
        }
        let mut actual = format!("{} items", ids.len());
        if !missing.is_empty() {
            actual.push_str(&format!(
                "; {} missing ({}{})",
                missing.len(),
                missing
                    .iter()
                    .take(3)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", "),
                if missing.len() > 3 { ", ..." } else { "" }
            ));
        }
        if !extra.is_empty() {
            actual.push_str(&format!(
                "; not requested {}",
                extra.iter().take(3).copied().collect::<Vec<_>>().join(", ")
            ));
        }
        if dup {
            actual.push_str("; duplicates");
        }
        l.ctx.rec.violation(
            id,
            &l.label,
            format!("for {what} (accepted): each of the {k} tags, once, and no other"),
            actual,
            None,
        );
    }
}

enum Listed {
    /// Every page's items, and whether the walk reached the end.
    Items(Vec<Value>, bool),
    Refused(u16, Box<Exchange>),
    Unjudged,
}

/// Every page of the list filtered by `ask`, in pages of the largest size: the first page
/// judged with `first`; once accepted, the next pages of the same request must be too, or be
/// what `past_end` allows past the last page.
async fn walk_ids(l: &Lister<'_>, param: &str, ask: &[&str], first: Expect) -> Listed {
    let mut items = Vec::new();
    let mut page = l.page_min;
    for n in 0..MAX_PAGES {
        let mut p = l.sized(&[(param.to_string(), ask.join(","))], l.size_max);
        if let Some(name) = &l.page {
            p.push((name.clone(), page.to_string()));
        }
        let expect = if n == 0 { first } else { Expect::Accept };
        let (x, o, got) = l.list(&p, expect).await;
        let Some(got) = got else {
            return match o {
                Outcome::CleanRejection(s) if n == 0 => Listed::Refused(s, Box::new(x)),
                // Past the last page, the target may answer 404 (`past_end`).
                _ if n > 0 && l.past_end(&x) == Some(PastEnd::NotFound) => {
                    Listed::Items(items, true)
                }
                _ => Listed::Unjudged,
            };
        };
        let len = got.len();
        items.extend(got);
        let last = len == 0 || l.page.is_none() || (l.size.is_some() && (len as u64) < l.size_max);
        if last {
            return Listed::Items(items, true);
        }
        page = page.saturating_add(1);
    }
    Listed::Items(items, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_run_from_one_to_every_id() {
        let v = sample_lengths(1, 250, 100);
        assert_eq!(v.first(), Some(&1));
        assert_eq!(v.last(), Some(&250));
        for k in [2, 50, 51, 100, 101] {
            assert!(v.contains(&k), "{k} in {v:?}");
        }
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sample_lengths(1, 3, 100), vec![1, 2, 3]);
    }
}
