//! `pagination.search`: the search term narrows the list to names that match it.

use super::*;

/// `pagination.search`: a search for an existing tag's name finds it, and only tags of the list.
pub(super) async fn search(l: &Lister<'_>, baseline: &Walk) {
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
