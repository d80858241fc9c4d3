//! Other spellings of the same request: every lexical form of a typed value the target
//! accepts means that value (`pagination.lexical`), and a search term with characters that
//! mean something to storage, URL or shell layers is taken literally (`pagination.literal`).
//! Refusing a form cleanly is the target's choice, observed.

use super::combos::{self, Judged, TermSpec};
use super::model::{Model, content_diff, show_query};
use super::relations::unlisted;
use super::*;
use proptest::prelude::*;

/// A role's value in other spellings: `judged` are the same integer written with leading
/// zeros or a `+` (every common integer parser reads them as that integer); `other` are
/// strings that are no integer or enum member at all (`2.0`, `1e1`, `" 2"`, `DESC`): invalid
/// input a target may refuse or read as it likes (`parseInt("1e1")` is 1), observed only.
struct Spellings {
    role: String,
    value: String,
    judged: Vec<&'static str>,
    other: Vec<&'static str>,
}

fn spellings(l: &Lister<'_>, s: Option<&Sorting>) -> Vec<Spellings> {
    let mut v = Vec::new();
    let mut add = |role: &String, value: &str, judged: Vec<&'static str>, other| {
        v.push(Spellings {
            role: role.clone(),
            value: value.into(),
            judged,
            other,
        })
    };
    if let Some(p) = &l.page {
        add(
            p,
            "2",
            vec!["02", "+2", "0002"],
            vec!["2.0", "2e0", " 2", "2 "],
        );
    }
    if let Some(p) = &l.size {
        let other = vec!["10.0", "1e1", "1E1", " 10", "10 "];
        add(p, "10", vec!["010", "+10"], other);
    }
    if let Some(s) = s {
        if s.asc == "asc" && s.desc == "desc" {
            let other = vec!["DESC", "Desc", " desc", "desc "];
            add(&s.order, "desc", vec![], other);
            add(&s.order, "asc", vec![], vec!["ASC", "Asc", " asc"]);
        }
        if s.fields.iter().any(|f| f == "name") {
            add(&s.by, "name", vec![], vec!["NAME", "Name", " name"]);
        }
    }
    v
}

/// The plain request: page 2 of 10, by name ascending (each value off its likely default).
fn plain(l: &Lister<'_>, s: Option<&Sorting>) -> Params {
    let mut p = Vec::new();
    if let Some(s) = s {
        let field = s.main_field().unwrap_or("name");
        p.extend(s.params(field, false));
    }
    if let Some(n) = &l.size {
        p.push((n.clone(), "10".into()));
    }
    if let Some(n) = &l.page {
        p.push((n.clone(), "2".into()));
    }
    p
}

/// Where `got` differs from `want` beyond ties of the sort field (the model's rule: tied
/// items may come in any order, even between two identical requests); by position when the
/// list is not sorted by a field the spec names.
fn page_diff(got: &[Value], want: &[Value], field: Option<&str>) -> Option<usize> {
    let Some(field) = field else {
        let ids = |v: &[Value]| v.iter().filter_map(id_of).map(str::to_string).collect();
        let (g, w): (Vec<String>, Vec<String>) = (ids(got), ids(want));
        return (g != w).then(|| {
            g.iter()
                .zip(&w)
                .position(|(a, b)| a != b)
                .unwrap_or(g.len().min(w.len()))
        });
    };
    let (g, w) = (keyed(got, field), keyed(want, field));
    match tie_diff(&g, &w, false) {
        Some(Diff::Definite(i)) => Some(i),
        // Items without a sort key: nothing sure to tell.
        Some(Diff::Undecidable(_)) => None,
        None => (g.len() != w.len()).then(|| g.len().min(w.len())),
    }
}

/// `pagination.lexical`: each other spelling of a page or page size the target accepts
/// (leading zeros, a `+`) gives exactly the answer of the plain spelling, ties aside. Other
/// strings (a decimal, an exponent, blanks, another case of an enum member) are not integers
/// or members: accepted with another meaning, they are observed.
pub(super) async fn lexical(l: &Lister<'_>, m: &Model) {
    let id = check_id!("pagination.lexical");
    let s = m.names.sorting.as_ref();
    let field = s.and_then(|s| s.main_field().or(Some("name")));
    let mut refused = Vec::new();
    let mut judged = false;
    for sp in spellings(l, s) {
        let name = &sp.role;
        let mut base = plain(l, s);
        base.retain(|(k, _)| k != name);
        base.push((name.clone(), sp.value.clone()));
        let (_, _, Some(want)) = l.list(&base, Expect::Accept).await else {
            continue;
        };
        let forms = sp.judged.iter().map(|f| (f, true));
        for (form, strict) in forms.chain(sp.other.iter().map(|f| (f, false))) {
            let mut p = base.clone();
            p.retain(|(k, _)| k != name);
            p.push((name.clone(), form.to_string()));
            let (x, o, got) = l.list(&p, Expect::AcceptOrReject).await;
            let Some(got) = got else {
                if let Outcome::CleanRejection(st) = o {
                    refused.push(format!("{name}={form:?} ({st})"));
                }
                continue;
            };
            let diff = page_diff(&got, &want, field);
            if diff.is_none() && content_diff(m, &got).is_none() {
                if strict {
                    judged = true;
                    l.ctx.rec.pass(id, &l.label);
                }
                continue;
            }
            let (expected, actual) = describe(&p, &sp, form, &got, &want, diff);
            if strict {
                judged = true;
                l.ctx
                    .rec
                    .violation(id, &l.label, expected, actual, Some(&x));
            } else {
                l.ctx.rec.observe(
                    check_id!("pagination.choices"),
                    &l.label,
                    format!(
                        "{name}={form:?}, no {}, accepted and read otherwise",
                        sp.value
                    ),
                    Some(&x),
                );
            }
        }
    }
    if !refused.is_empty() {
        l.ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!("other spellings refused: {}", refused.join(", ")),
            None,
        );
    }
    if !judged {
        l.ctx.rec.skip(
            id,
            &l.label,
            "no other spelling of an integer (leading zeros, +) was accepted",
        );
    }
}

/// (expected, actual) of a spelling read otherwise.
fn describe(
    p: &Params,
    sp: &Spellings,
    form: &str,
    got: &[Value],
    want: &[Value],
    at: Option<usize>,
) -> (String, String) {
    let ids = |v: &[Value]| {
        v.iter()
            .filter_map(id_of)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (g, w) = (ids(got), ids(want));
    let name = &sp.role;
    let expected = format!(
        "for {} ({name}={form:?} accepted): the answer to {name}={}, {} tags from {}",
        show_query(p),
        sp.value,
        w.len(),
        w.first().map_or("-", String::as_str)
    );
    let mut actual = format!(
        "{} tags from {}",
        g.len(),
        g.first().map_or("-", String::as_str)
    );
    if let Some(at) = at {
        actual.push_str(&format!(
            "; item {} is {} where {} belongs",
            at + 1,
            g.get(at).map_or("nothing", String::as_str),
            w.get(at).map_or("nothing", String::as_str)
        ));
    }
    (expected, actual)
}

/// Cases of `pagination.literal`.
const LITERAL_CASES: u32 = 10;

/// `pagination.literal`: a term with meta characters finds what the learned rule finds for it
/// taken literally, when the learning saw each of its characters taken literally
/// (`Model::literal`); otherwise unjudged (a wildcard or a word-by-word search is a choice).
pub(super) async fn literal(l: &Lister<'_>, m: &Model) {
    let id = check_id!("pagination.literal");
    let Some(param) = m.names.search.clone() else {
        return l
            .ctx
            .rec
            .skip(id, &l.label, "the spec gives no search parameter");
    };
    if m.rules.is_empty() {
        return l.ctx.rec.skip(
            id,
            &l.label,
            "the target's search rule is none the model knows (pagination.choices)",
        );
    }
    let h = tokio::runtime::Handle::current();
    let judge = |t: &TermSpec| h.block_on(literally(l, m, &param, t));
    let strategy = Strategy::prop_map(
        (
            combos::term(),
            0usize..64,
            // `%` and `_` (the first two) the most often: SQL's wildcards.
            prop_oneof![1 => 0usize..2, 1 => 0usize..model::META.len()],
        ),
        |(mut t, pos, which)| {
            t.meta = Some((pos, which));
            t
        },
    );
    combos::drive(l, id, 6, LITERAL_CASES, strategy, &judge);
}

async fn literally(l: &Lister<'_>, m: &Model, param: &str, t: &TermSpec) -> Judged {
    let Some(term) = t.render(m) else {
        return Judged::Unjudged;
    };
    let Some(pred) = m.predict(Some(&term), None) else {
        return Judged::Unjudged;
    };
    let p = vec![(param.to_string(), term.clone())];
    let w = match l
        .walk_first(&p, l.size_max, Expect::AcceptOrReject, MAX_PAGES)
        .await
    {
        Ok(w) if w.complete => w,
        Ok(_) | Err(Unwalked::Broke(_)) => return Judged::Unjudged,
        Err(Unwalked::Refused(s, x)) => {
            return unlisted(
                l,
                "a search term with meta characters",
                &x,
                Outcome::CleanRejection(s),
            );
        }
    };
    let got: HashSet<&str> = w.items.iter().filter_map(id_of).collect();
    let extra: Vec<&str> = got
        .iter()
        .copied()
        .filter(|i| !pred.may.contains(*i))
        .collect();
    let missing: Vec<&str> = pred
        .must
        .iter()
        .map(String::as_str)
        .filter(|i| !got.contains(i))
        .collect();
    let content = content_diff(m, &w.items);
    if extra.is_empty() && missing.is_empty() && content.is_none() {
        return Judged::Held;
    }
    let wild = (term.contains('%') || term.contains('_')) && !extra.is_empty();
    let show = |v: &[&str]| {
        v.iter()
            .take(3)
            .map(|i| format!("{i} ({:?})", m.name(i).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut actual = format!("{} tags", got.len());
    if !extra.is_empty() {
        actual.push_str(&format!(
            "; {} the term taken literally does not find: {}",
            extra.len(),
            show(&extra)
        ));
    }
    if !missing.is_empty() {
        actual.push_str(&format!("; {} missing: {}", missing.len(), show(&missing)));
    }
    if let Some(c) = content {
        actual.push_str(&format!("; {c}"));
    }
    if wild {
        actual.push_str(" (% or _ acting as a wildcard)");
    }
    Judged::broke(
        format!(
            "for {}: the {} tags the term finds taken literally",
            show_query(&p),
            pred.must.len()
        ),
        actual,
        w.exchanges.first(),
    )
}
