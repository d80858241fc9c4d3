//! `pagination.sort`: sort fields and orders, with ties and collation (how names compare) told
//! apart from disorder.

use super::*;
use linkcert_registry::check_id;

/// Where two sequences disagree beyond what ties explain: definitely (the items cannot tie
/// under any plausible collation), or undecidably (an item has no sort key to tell).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Diff {
    Definite(usize),
    Undecidable(usize),
}

/// A loose fold of a sort key: what two keys must share to plausibly tie under some
/// collation a target may use (case-insensitive, accent-insensitive as MySQL's `ai_ci`).
pub(super) fn fold(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for c in key.chars().flat_map(char::to_lowercase) {
        let base = match c {
            'à'..='å' | 'ā' | 'ă' | 'ą' => "a",
            'æ' => "ae",
            'ç' | 'ć' | 'č' => "c",
            'è'..='ë' | 'ē' | 'ė' | 'ę' | 'ě' => "e",
            'ì'..='ï' | 'ī' | 'į' | 'ı' => "i",
            'ñ' | 'ń' | 'ň' => "n",
            'ò'..='ö' | 'ø' | 'ō' | 'ő' => "o",
            'œ' => "oe",
            'ù'..='ü' | 'ū' | 'ů' | 'ű' => "u",
            'ý' | 'ÿ' => "y",
            'ß' => "ss",
            'ﬁ' => "fi",
            'ﬂ' => "fl",
            '\u{300}'..='\u{36f}' => "",
            _ => {
                out.push(c);
                continue;
            }
        };
        out.push_str(base);
    }
    out
}

/// Compare `got` with `want` (the order expected) up to ties: both are cut into the smallest
/// blocks holding the same items; a block of more than one item is a tie group, whose items
/// must share their folded sort key. With `prefix_only`, a trailing unclosed block (where a
/// bounded walk was cut) is not judged.
pub(super) fn tie_diff(
    got: &[(String, Option<String>)],
    want: &[(String, Option<String>)],
    prefix_only: bool,
) -> Option<Diff> {
    let n = got.len().min(want.len());
    let mut balance: HashMap<&str, i64> = HashMap::new();
    let mut unbalanced = 0usize;
    let mut start = 0;
    let mut undecidable = None;
    for i in 0..n {
        for (id, by) in [(got[i].0.as_str(), 1i64), (want[i].0.as_str(), -1)] {
            let e = balance.entry(id).or_insert(0);
            let was = *e;
            *e += by;
            match (was == 0, *e == 0) {
                (true, false) => unbalanced += 1,
                (false, true) => unbalanced -= 1,
                _ => {}
            }
        }
        if unbalanced > 0 {
            continue;
        }
        // A closed block: want[start..=i] holds the same items as got[start..=i].
        if i > start {
            let keys: Vec<Option<String>> = want[start..=i]
                .iter()
                .map(|e| e.1.as_deref().map(fold))
                .collect();
            if keys.iter().any(Option::is_none) {
                undecidable.get_or_insert(start);
            } else if keys.windows(2).any(|w| w[0] != w[1]) {
                return Some(Diff::Definite(start));
            }
        }
        start = i + 1;
    }
    if start < n && !prefix_only {
        return Some(Diff::Definite(start));
    }
    undecidable.map(Diff::Undecidable)
}

/// The sort parameters: (sort-by name, its values, sort-order name, asc value, desc value).
pub(super) struct Sorting {
    pub(super) by: String,
    pub(super) fields: Vec<String>,
    pub(super) order: String,
    pub(super) asc: String,
    pub(super) desc: String,
}

impl Sorting {
    pub(super) fn from(op: &Operation) -> Option<Sorting> {
        let by = op.param_with_role("sort-by")?;
        let order = op.param_with_role("sort-order")?;
        let fields: Vec<String> = by.enum_values()?.iter().map(|s| s.to_string()).collect();
        let orders = order.enum_values()?;
        let find = |want: &str| {
            orders
                .iter()
                .find(|o| o.eq_ignore_ascii_case(want))
                .map(|s| s.to_string())
        };
        Some(Sorting {
            by: by.name.clone(),
            fields,
            order: order.name.clone(),
            asc: find("asc")?,
            desc: find("desc")?,
        })
    }
    pub(super) fn params(&self, field: &str, desc: bool) -> Params {
        vec![
            (self.by.clone(), field.to_string()),
            (
                self.order.clone(),
                if desc { &self.desc } else { &self.asc }.clone(),
            ),
        ]
    }
    /// The field every walk sorts by: name when the spec offers it.
    pub(super) fn main_field(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| *f == "name")
            .or(self.fields.first())
            .map(String::as_str)
    }
}

/// `pagination.sort`: desc is asc reversed, up to ties, for every sort field.
pub(super) async fn sort(l: &Lister<'_>, s: &Sorting, main_field: &str, baseline: &Walk) {
    let id = check_id!("pagination.sort");
    let mut others = Vec::new();
    for field in &s.fields {
        let asc_walk;
        let asc = if field == main_field {
            baseline
        } else {
            match l.walk(&s.params(field, false), l.size_max).await {
                Ok(w) => {
                    asc_walk = w;
                    others.push(asc_walk.items.clone());
                    &asc_walk
                }
                Err(why) => {
                    l.ctx
                        .rec
                        .skip(id, &l.label, why.context(|w| format!("{field} asc: {w}")));
                    continue;
                }
            }
        };
        let desc = match l.walk(&s.params(field, true), l.size_max).await {
            Ok(w) => w,
            Err(why) => {
                l.ctx
                    .rec
                    .skip(id, &l.label, why.context(|w| format!("{field} desc: {w}")));
                continue;
            }
        };
        collation_notes(l, field, asc);
        reversed(l, s, field, asc, &desc);
    }
    if main_field == "name" {
        by_name(l, s, baseline, &others);
    }
}

/// Sorted by name ascending, names go up: judged only where the target honours the sort
/// field (another field lists the same items in another order; a target whose parameter has
/// another name lists them alike), and only by the first character of names that begin with
/// an ASCII letter or digit, compared as bytes or ignoring case: every collation orders those
/// one of these two ways.
fn by_name(l: &Lister<'_>, s: &Sorting, asc: &Walk, others: &[Vec<Value>]) {
    let id = check_id!("pagination.sort");
    let named = keyed(&asc.items, "name");
    let honoured = others.iter().any(|o| {
        let other = keyed(o, "name");
        id_set(&other) == id_set(&named)
            && other.iter().map(|e| &e.0).ne(named.iter().map(|e| &e.0))
    });
    if !asc.complete || !honoured {
        return;
    }
    let names: Vec<Option<&str>> = named.iter().map(|(_, n)| n.as_deref()).collect();
    let Some((a, b)) = names_go_down(&names) else {
        l.ctx.rec.pass(id, &l.label);
        return;
    };
    l.ctx.rec.violation(
        id,
        &l.label,
        format!(
            "{}=name {}={}: names in ascending order (by their first letter, as bytes or ignoring case), the sort field being honoured (another field lists the same items in another order)",
            s.by, s.order, s.asc
        ),
        format!(
            "item {} is {}, item {} is {}",
            a + 1,
            named.get(a).map(show).unwrap_or_default(),
            b + 1,
            named.get(b).map(show).unwrap_or_default()
        ),
        None,
    );
}

/// Sorted by `field`, `desc` lists the items of `asc`, reversed up to ties.
fn reversed(l: &Lister<'_>, s: &Sorting, field: &str, asc: &Walk, desc: &Walk) {
    let id = check_id!("pagination.sort");
    if !asc.complete || !desc.complete {
        l.ctx.rec.skip(
            id,
            &l.label,
            format!("sorting by {field}: the list is longer than the walk's bound"),
        );
        return;
    }
    let a = keyed(&asc.items, field);
    let d = keyed(&desc.items, field);
    let what = format!("{}={field}", s.by);
    if (a.len() != d.len() || id_set(&a) != id_set(&d)) && l.inconsistent.load(Ordering::Relaxed) {
        l.ctx.rec.observe(
            id,
            &l.label,
            format!(
                "{what}: {} and {} list different items, but the pages are inconsistent already (pagination.walk): not judged here",
                s.asc, s.desc
            ),
            None,
        );
        return;
    }
    if a.len() != d.len() || id_set(&a) != id_set(&d) {
        l.ctx.rec.violation(
            id,
            &l.label,
            format!("the same items with {}={} and {}", s.order, s.asc, s.desc),
            format!(
                "{what}: {} with {}, {} with {}",
                asc.describe(),
                s.asc,
                desc.describe(),
                s.desc
            ),
            None,
        );
        return;
    }
    let reversed: Vec<(String, Option<String>)> = a.iter().rev().cloned().collect();
    match tie_diff(&d, &reversed, false) {
        None => l.ctx.rec.pass(id, &l.label),
        Some(Diff::Definite(i)) => l.ctx.rec.violation(
            id,
            &l.label,
            format!(
                "{what}: {} equal to {} reversed (ties in any order)",
                s.desc, s.asc
            ),
            format!(
                "item {} is {} with {}, but {} with {} reversed",
                i + 1,
                d.get(i).map(show).unwrap_or_default(),
                s.desc,
                reversed.get(i).map(show).unwrap_or_default(),
                s.asc
            ),
            None,
        ),
        Some(Diff::Undecidable(i)) => l.ctx.rec.observe(
            id,
            &l.label,
            format!(
                "{what}: {} is not {} reversed at item {}, and the items carry no {field} to tell whether they tie",
                s.desc,
                s.asc,
                i + 1
            ),
            None,
        ),
    }
}

/// Where names listed in ascending order go down in every collation: two positions whose
/// first characters (ASCII letters and digits only; other names are left out) are out of
/// order both as bytes and ignoring case. None when they go up either way.
pub(super) fn names_go_down(names: &[Option<&str>]) -> Option<(usize, usize)> {
    let firsts: Vec<(usize, char)> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| Some((i, name.as_ref()?.chars().next()?)))
        .filter(|(_, c)| c.is_ascii_alphanumeric())
        .collect();
    let inversion = |key: fn(char) -> char| {
        firsts
            .windows(2)
            .find(|w| key(w[1].1) < key(w[0].1))
            .map(|w| (w[0].0, w[1].0))
    };
    inversion(|c| c)?;
    inversion(|c| c.to_ascii_lowercase())
}

/// Which collation an ascending listing follows: recorded, never judged.
pub(super) fn collation_notes(l: &Lister<'_>, field: &str, asc: &Walk) {
    let keys: Vec<String> = asc.items.iter().filter_map(|v| key_of(v, field)).collect();
    if keys.len() < 2 {
        return;
    }
    let sorted_by = |f: &dyn Fn(&str, &str) -> bool| keys.windows(2).all(|w| f(&w[0], &w[1]));
    if field != "name" {
        let note = if sorted_by(&|a, b| a <= b) {
            "non-decreasing as text"
        } else {
            "not non-decreasing as text (another format, or not sorted by it)"
        };
        l.ctx.rec.observe(
            check_id!("pagination.choices"),
            &l.label,
            format!("{field} ascending: the values are {note}"),
            None,
        );
        return;
    }
    let note = if sorted_by(&|a, b| a <= b) {
        "code-point (byte) order"
    } else if sorted_by(&|a, b| a.to_lowercase() <= b.to_lowercase()) {
        "case-insensitive order"
    } else if sorted_by(&|a, b| fold(a) <= fold(b)) {
        "case- and accent-insensitive order"
    } else {
        "neither code-point nor case-insensitive order (a locale collation?)"
    };
    l.ctx.rec.observe(
        check_id!("pagination.choices"),
        &l.label,
        format!("{field} ascending follows {note}"),
        None,
    );
}

#[cfg(test)]
mod tests {
    use super::names_go_down;

    fn down(names: &[&str]) -> Option<(usize, usize)> {
        names_go_down(&names.iter().map(|n| Some(*n)).collect::<Vec<_>>())
    }

    #[test]
    fn names_go_up_as_bytes_or_ignoring_case_and_other_first_characters_are_left_out() {
        // Bytes (C, PostgreSQL "C"): capitals first.
        assert_eq!(down(&["Banana", "SPRING", "apple", "cherry"]), None);
        // Ignoring case (ICU, glibc locales, MySQL _ci).
        assert_eq!(down(&["apple", "Banana", "cherry", "SPRING"]), None);
        // Digits before letters in both; accented, non-Latin and punctuation first characters
        // sort differently from one collation to the next: left out.
        assert_eq!(
            down(&["1st", "Été", "apple", "-x", "日本", "banana", "zeta"]),
            None
        );
        assert_eq!(down(&["zeta", "Été", "alpha"]), Some((0, 2)));
        // Neither: the order of another field.
        assert_eq!(down(&["spring", "Autumn", "beta", "apple"]), Some((0, 1)));
    }
}
