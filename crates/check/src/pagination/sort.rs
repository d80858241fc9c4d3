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

/// `pagination.sort`: desc is asc reversed, up to ties, for every sort field. A target that
/// lists desc as asc for every field does not read the order parameter, whose name the spec
/// does not show: observed, never failed; one that reverses some fields and not others does.
pub(super) async fn sort(l: &Lister<'_>, s: &Sorting, main_field: &str, baseline: &Walk) {
    let id = check_id!("pagination.sort");
    // (field, its asc walk unless it is the baseline, its desc walk)
    let mut walks: Vec<(&str, Option<Walk>, Walk)> = Vec::new();
    for field in &s.fields {
        let asc = if field == main_field {
            None
        } else {
            match l.walk(&s.params(field, false), l.size_max).await {
                Ok(w) => Some(w),
                Err(why) => {
                    l.ctx
                        .rec
                        .skip(id, &l.label, why.context(|w| format!("{field} asc: {w}")));
                    continue;
                }
            }
        };
        match l.walk(&s.params(field, true), l.size_max).await {
            Ok(desc) => walks.push((field, asc, desc)),
            Err(why) => l
                .ctx
                .rec
                .skip(id, &l.label, why.context(|w| format!("{field} desc: {w}"))),
        }
    }
    let alike = |asc: &Walk, desc: &Walk| {
        asc.items.len() >= 2 && asc.items.iter().map(id_of).eq(desc.items.iter().map(id_of))
    };
    if !walks.is_empty()
        && walks
            .iter()
            .all(|(_, asc, desc)| alike(asc.as_ref().unwrap_or(baseline), desc))
    {
        l.ctx.rec.observe(
            id,
            &l.label,
            format!(
                "{}={} lists what {}={} lists, for every sort field: the order parameter is not read (the spec does not show its name); the order is not judged",
                s.order, s.desc, s.order, s.asc
            ),
            None,
        );
        return;
    }
    let mut name_reversed = false;
    for (field, asc, desc) in &walks {
        let asc = asc.as_ref().unwrap_or(baseline);
        collation_notes(l, field, asc);
        if reversed(l, s, field, asc, desc) && *field == "name" {
            name_reversed = true;
        }
    }
    if main_field == "name" && name_reversed {
        let others: Vec<&Walk> = walks
            .iter()
            .filter_map(|(_, asc, _)| asc.as_ref())
            .collect();
        by_name(l, s, baseline, &others);
    }
}

/// Sorted by name ascending, names go up. Judged only where the target reads both sort
/// parameters (by name, desc is asc reversed) and the sort field is honoured (another field
/// lists the same items in another order; a target whose parameter has another name lists
/// them alike). Compared: the first letters of names that begin with an ASCII letter, as bytes
/// or ignoring case. Collations move a few letters (Danish aa after z, Czech ch after h,
/// Lithuanian y before j): a few places out of order are observed; a listing that goes down
/// at a third or more of the places where its first letter changes is ordered by no
/// collation.
fn by_name(l: &Lister<'_>, s: &Sorting, asc: &Walk, others: &[&Walk]) {
    let id = check_id!("pagination.sort");
    let named = keyed(&asc.items, "name");
    let honoured = others.iter().any(|o| {
        let other = keyed(&o.items, "name");
        id_set(&other) == id_set(&named)
            && other.iter().map(|e| &e.0).ne(named.iter().map(|e| &e.0))
    });
    // `asc` is complete: `reversed` passed on it.
    if !honoured {
        return;
    }
    let names: Vec<Option<&str>> = named.iter().map(|(_, n)| n.as_deref()).collect();
    let Some(down) = names_go_down(&names) else {
        l.ctx.rec.pass(id, &l.label);
        return;
    };
    let (a, b) = down.first;
    let what = format!(
        "{}=name {}={}: {} of the {} places where the first letter changes go down, item {} {} then item {} {}",
        s.by,
        s.order,
        s.asc,
        down.places,
        down.changes,
        a + 1,
        named.get(a).map(show).unwrap_or_default(),
        b + 1,
        named.get(b).map(show).unwrap_or_default()
    );
    if down.places >= 3 && down.places * 3 >= down.changes {
        l.ctx.rec.violation(
            id,
            &l.label,
            format!(
                "{}=name {}={}: names going up, in some collation (the sort field and order being read)",
                s.by, s.order, s.asc
            ),
            what,
            None,
        );
    } else {
        l.ctx.rec.observe(
            id,
            &l.label,
            format!("{what}: as a collation may place a few letters"),
            None,
        );
    }
}

/// Sorted by `field`, `desc` lists the items of `asc`, reversed up to ties.
/// Whether it passed.
fn reversed(l: &Lister<'_>, s: &Sorting, field: &str, asc: &Walk, desc: &Walk) -> bool {
    let id = check_id!("pagination.sort");
    if !asc.complete || !desc.complete {
        l.ctx.rec.skip(
            id,
            &l.label,
            format!("sorting by {field}: the list is longer than the walk's bound"),
        );
        return false;
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
        return false;
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
        return false;
    }
    let reversed: Vec<(String, Option<String>)> = a.iter().rev().cloned().collect();
    match tie_diff(&d, &reversed, false) {
        None => {
            l.ctx.rec.pass(id, &l.label);
            return true;
        }
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
    false
}

/// Where names listed in ascending order go down.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Down {
    /// Places (adjacent names, their first letters differing) where the letter goes down.
    pub(super) places: usize,
    /// Places where the first letter changes.
    pub(super) changes: usize,
    /// The first place down: its two positions.
    pub(super) first: (usize, usize),
}

/// Names listed in ascending order, by the first letter of those that begin with an ASCII
/// letter (digits sort naturally in some collations, other letters differently in each), as
/// bytes and ignoring case: the way with fewer places down, or None when one has none.
pub(super) fn names_go_down(names: &[Option<&str>]) -> Option<Down> {
    let firsts: Vec<(usize, char)> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| Some((i, name.as_ref()?.chars().next()?)))
        .filter(|(_, c)| c.is_ascii_alphabetic())
        .collect();
    let down = |key: fn(char) -> char| {
        let changes: Vec<(usize, usize, bool)> = firsts
            .windows(2)
            .filter(|w| key(w[0].1) != key(w[1].1))
            .map(|w| (w[0].0, w[1].0, key(w[1].1) < key(w[0].1)))
            .collect();
        let places = changes.iter().filter(|c| c.2).count();
        let first = changes.iter().find(|c| c.2).map(|c| (c.0, c.1))?;
        Some(Down {
            places,
            changes: changes.len(),
            first,
        })
    };
    let bytes = down(|c| c)?;
    let folded = down(|c| c.to_ascii_lowercase())?;
    Some(if folded.places <= bytes.places {
        folded
    } else {
        bytes
    })
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
    use super::{Down, names_go_down};

    fn down(names: &[&str]) -> Option<Down> {
        names_go_down(&names.iter().map(|n| Some(*n)).collect::<Vec<_>>())
    }

    #[test]
    fn names_go_up_as_bytes_or_ignoring_case_and_other_first_characters_are_left_out() {
        // Bytes (C, PostgreSQL "C"): capitals first.
        assert_eq!(down(&["Banana", "SPRING", "apple", "cherry"]), None);
        // Ignoring case (ICU, glibc locales, MySQL _ci).
        assert_eq!(down(&["apple", "Banana", "cherry", "SPRING"]), None);
        // Digits (natural sort puts 9 before 10), accented, non-Latin and punctuation first
        // characters sort differently from one collation to the next: left out.
        assert_eq!(
            down(&[
                "9 lives", "10 tips", "Été", "apple", "-x", "日本", "banana", "zeta"
            ]),
            None
        );
    }

    #[test]
    fn a_few_places_down_are_counted_against_the_places_the_letter_changes() {
        // Danish: aa after z, one place down of three changes.
        let danish = down(&["beta", "cheese", "zeta", "Aalborg"]).expect("down");
        assert_eq!(
            (danish.places, danish.changes, danish.first),
            (1, 3, (2, 3))
        );
        // The order of another field: half the changes go down.
        let other = down(&[
            "spring", "Autumn", "beta", "apple", "winter", "cold", "hot", "dew",
        ])
        .expect("down");
        assert_eq!((other.places, other.changes), (4, 7));
        // Reversed: every change goes down.
        let reversed = down(&["zeta", "winter", "spring", "hot", "cold", "beta"]).expect("down");
        assert_eq!((reversed.places, reversed.changes), (5, 5));
    }
}
