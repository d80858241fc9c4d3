//! `pagination.ids`: the ids filter returns exactly the tags asked for, in list order.

use super::*;

/// `pagination.ids`: the ids filter returns exactly the requested existing tags.
pub(super) async fn ids(l: &Lister<'_>, baseline: &Walk) {
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
