//! `pagination.search`: the search term narrows the list to names that match it; terms of
//! every length, sampled (a prefix of a name from one character, a name with text after it up
//! to thousands of characters), filter as the name does. Which rule the target matches by is
//! the model's to learn and observe (`model::Rule`), not judged here.

use super::*;
use linkcert_registry::check_id;

/// `pagination.search`: a search for an existing tag's name finds it, and only tags of the list.
pub(super) async fn search(l: &Lister<'_>, baseline: &Walk) {
    let id = check_id!("pagination.search");
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
    let s = Searched {
        l,
        param: &param,
        baseline,
        known: named.iter().copied().collect(),
    };
    let targets = search_targets(l.ctx.opts.seed, &named);
    // How the ASCII term was filtered: what a non-ASCII term, and a term of another length,
    // must match.
    let mut ascii_filter: Option<Filtered> = None;
    let ascii_name = targets.first().map(|t| t.1).filter(|n| n.is_ascii());
    for (tag_id, name) in targets {
        let w = match l
            .walk(&[(param.clone(), name.to_string())], l.size_max)
            .await
        {
            Ok(w) => w,
            Err(why) => {
                l.ctx.rec.skip(
                    id,
                    &l.label,
                    why.context(|w| format!("{param}={name:?}: {w}")),
                );
                continue;
            }
        };
        s.judge(tag_id, name, &w, &mut ascii_filter);
    }
    if let (Some(name), Some(f)) = (ascii_name, &ascii_filter)
        && f.strangers.is_empty()
    {
        term_lengths(l, &param, name).await;
    }
    no_match(l, &param, baseline).await;
    empty_term(l, &param, baseline).await;
}

/// The tags searched for by name, drawn with the run's seed: one with an ASCII name (any when
/// none is), then one whose name is not ASCII, when the list has one.
fn search_targets<'n>(seed: u64, named: &[(&'n str, &'n str)]) -> Vec<(&'n str, &'n str)> {
    type Named<'n> = Vec<(&'n str, &'n str)>;
    let (ascii, non_ascii): (Named, Named) = named.iter().copied().partition(|(_, n)| n.is_ascii());
    let first = if ascii.is_empty() { named } else { &ascii };
    let mut targets = vec![first[pick(seed, 200, first.len())]];
    if !non_ascii.is_empty() {
        targets.push(non_ascii[pick(seed, 201, non_ascii.len())]);
    }
    targets
}

/// A search for names, judged against the whole list.
struct Searched<'a, 'l> {
    l: &'a Lister<'l>,
    param: &'a str,
    baseline: &'a Walk,
    /// The list's tags: id to name.
    known: HashMap<&'a str, &'a str>,
}

impl Searched<'_, '_> {
    /// The search for `name` finds the tag `tag_id` so named, only tags of the list, and (not
    /// ASCII) filters as the ASCII term did; keeps the ASCII term's filtering in `ascii_filter`.
    fn judge(&self, tag_id: &str, name: &str, w: &Walk, ascii_filter: &mut Option<Filtered>) {
        let (l, param, baseline) = (self.l, self.param, self.baseline);
        let id = check_id!("pagination.search");
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
            && let Some(stranger) = got.iter().find(|i| !self.known.contains_key(*i))
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
        let f = Filtered::of(name, w, baseline);
        if name.is_ascii() {
            *ascii_filter = Some(f);
        } else if let Some(a) = ascii_filter
            && let Some((want, got)) = a.unlike(&f, w.complete && baseline.complete)
        {
            ok = false;
            l.ctx.rec.violation(
                id,
                &l.label,
                format!("{param}={name:?} (not ASCII) filters as an ASCII term does: {want}"),
                got,
                None,
            );
        }
        if ok {
            l.ctx.rec.pass(id, &l.label);
        }
    }
}

/// An empty term: accepted or rejected cleanly; what it means is the target's choice.
async fn empty_term(l: &Lister<'_>, param: &str, baseline: &Walk) {
    let params = l.sized(&[(param.to_string(), String::new())], l.size_max);
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
        .observe(check_id!("pagination.choices"), &l.label, note, Some(&x));
}

/// What a search returned, measured against the term and the whole list.
struct Filtered {
    /// Results whose name does not contain the term (folded: case and accents ignored).
    strangers: Vec<String>,
    /// Tags of the list whose name contains the term as given, left out of the results.
    missing: Vec<String>,
    results: usize,
}

impl Filtered {
    fn of(term: &str, w: &Walk, baseline: &Walk) -> Filtered {
        let folded = fold(term);
        let name_of = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_string);
        let strangers = w
            .items
            .iter()
            .filter_map(name_of)
            .filter(|n| !fold(n).contains(&folded))
            .collect();
        let got: HashSet<&str> = w.items.iter().filter_map(id_of).collect();
        let missing = baseline
            .items
            .iter()
            .filter(|v| name_of(v).is_some_and(|n| n.contains(term)))
            .filter_map(id_of)
            .filter(|i| !got.contains(i))
            .map(str::to_string)
            .collect();
        Filtered {
            strangers,
            missing,
            results: w.items.len(),
        }
    }

    /// How `other` (a non-ASCII term) was filtered unlike `self` (the ASCII one): only what
    /// the ASCII search did is asked of it, so any matching rule (prefix, contains, folding)
    /// passes as long as it is applied to both. `whole`: both lists were read to the end.
    fn unlike(&self, other: &Filtered, whole: bool) -> Option<(String, String)> {
        let sample = |v: &[String]| v.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        if self.strangers.is_empty() && !other.strangers.is_empty() {
            return Some((
                "every result contains the term".into(),
                format!(
                    "{} of {} results do not ({})",
                    other.strangers.len(),
                    other.results,
                    sample(&other.strangers)
                ),
            ));
        }
        if whole && self.missing.is_empty() && !other.missing.is_empty() {
            return Some((
                "every tag whose name contains the term is found".into(),
                format!(
                    "{} missing ({})",
                    other.missing.len(),
                    sample(&other.missing)
                ),
            ));
        }
        None
    }
}

/// A term no name contains, in ASCII and not: where the ASCII one finds nothing, so must the
/// other (a search that drops characters it does not know, or ignores such a term, finds more).
async fn no_match(l: &Lister<'_>, param: &str, baseline: &Walk) {
    let id = check_id!("pagination.search");
    let terms = ["zqxjlinkcertnone", "zqxjŀinkcértñoneЖ✓"];
    let names: Vec<String> = baseline
        .items
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(fold))
        .collect();
    if !baseline.complete
        || names
            .iter()
            .any(|n| terms.iter().any(|t| n.contains(&fold(t))))
    {
        return;
    }
    let mut counts = Vec::new();
    for term in terms {
        let params = l.sized(&[(param.to_string(), term.to_string())], l.size_max);
        let (x, o, items) = l.list(&params, Expect::AcceptOrReject).await;
        match (o, items) {
            (Outcome::Accepted, Some(items)) => counts.push((term, items.len(), x)),
            _ => return,
        }
    }
    let [(_, 0, _), (term, n, x)] = counts.as_slice() else {
        return;
    };
    if *n == 0 {
        l.ctx.rec.pass(id, &l.label);
    } else {
        l.ctx.rec.violation(
            id,
            &l.label,
            format!(
                "{param}={term:?}, which no name contains, finds nothing (as {param}={:?} does)",
                terms[0]
            ),
            format!("{n} tags"),
            Some(x),
        );
    }
}

/// Terms of sampled lengths from `name`, an ASCII name whose search returned only names
/// containing it: prefixes of it (one character, and seeded), and the name followed by text no
/// name has, to lengths around common limits (255, 256, 257) and beyond, plus a long non-ASCII
/// term. The spec bounds no term, so a target may refuse one cleanly; one it accepts must
/// filter as the name did: every result contains the term (for a long term, no result).
async fn term_lengths(l: &Lister<'_>, param: &str, name: &str) {
    let id = check_id!("pagination.search");
    let seed = l.ctx.opts.seed;
    let n = name.len();
    let mut terms: Vec<String> = vec![name[..1].to_string()];
    if n > 2 {
        terms.push(name[..2 + pick(seed, 210, n - 2)].to_string());
    }
    let mut lens = vec![
        n + 1 + pick(seed, 211, 64usize.saturating_sub(n).max(1)),
        255,
        256,
        257,
        258 + pick(seed, 212, 1024 - 258),
        2048,
    ];
    lens.retain(|&k| k > n);
    lens.dedup();
    for len in lens {
        terms.push(padded(name, len));
    }
    terms.push("Éclair漢字ß✓ ".repeat(30));
    let mut refused = Vec::new();
    for term in terms {
        let chars = term.chars().count();
        let params = l.sized(&[(param.to_string(), term.clone())], l.size_max);
        let (x, o, items) = l.list(&params, Expect::AcceptOrReject).await;
        let items = match (o, items) {
            (Outcome::Accepted, Some(items)) => items,
            (Outcome::CleanRejection(s), _) => {
                refused.push(format!("{chars} ({s})"));
                continue;
            }
            // status.* and schema.* judged the answer; a 429 says nothing.
            _ => continue,
        };
        let folded = fold(&term);
        let strangers: Vec<&str> = items
            .iter()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .filter(|nm| !fold(nm).contains(&folded))
            .collect();
        if strangers.is_empty() {
            l.ctx.rec.pass(id, &l.label);
        } else {
            l.ctx.rec.violation(
                id,
                &l.label,
                format!(
                    "a {chars}-character {param} filters as {param}={name:?} does: every result contains the term"
                ),
                format!(
                    "{} of {} results do not ({})",
                    strangers.len(),
                    items.len(),
                    strangers.iter().take(3).copied().collect::<Vec<_>>().join(", ")
                ),
                Some(&x),
            );
        }
    }
    if !refused.is_empty() {
        l.ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!(
                "{param} terms refused, by length in characters: {}",
                refused.join(", ")
            ),
            None,
        );
    }
}

/// `name`, a space and letters no tag name has, to `len` characters (ASCII).
fn padded(name: &str, len: usize) -> String {
    let mut t = format!("{name} ");
    let filler = b"zqxjkvw";
    let mut i = 0;
    while t.len() < len {
        t.push(filler[i % filler.len()] as char);
        i += 1;
    }
    t.truncate(len.max(name.len()));
    t
}
