//! How code names a check of `CHECKS`: by a `Check`, never by a bare id. `check_id!("qr.size")`
//! is looked up while the program is compiled (an id the table lacks does not compile), and
//! `Check::find` looks up an id read at run time and says when there is none. So a check the
//! registry does not declare can neither be recorded nor reach a report. The families are read
//! off the ids (`FAMILIES`): declaring a family's first check declares the family.

use super::checks::CHECKS;
use super::rules::RULES;
use super::{CheckDef, RuleDef};

/// A check this table declares: the only way code names one (the recorder takes nothing
/// else). Made by `check_id!` (while compiling) or `Check::find` (an `Option`); the field is
/// private, so no other `CheckDef` passes for one.
#[derive(Clone, Copy, Debug)]
pub struct Check(&'static CheckDef);

impl Check {
    /// The declared check of that id. A `const fn` so that `check_id!` runs it while the
    /// program is compiled.
    pub const fn find(id: &str) -> Option<Check> {
        let mut i = 0;
        while i < CHECKS.len() {
            if same(CHECKS[i].id, id) {
                return Some(Check(&CHECKS[i]));
            }
            i += 1;
        }
        None
    }

    /// Every declared check, in report order.
    pub fn all() -> impl Iterator<Item = Check> {
        CHECKS.iter().map(Check)
    }

    pub fn def(self) -> &'static CheckDef {
        self.0
    }

    pub fn id(self) -> &'static str {
        self.0.id
    }

    /// Its family (`qr` for `qr.size`).
    pub fn family(self) -> &'static str {
        family_of(self.0.id)
    }

    /// Its place in reports (this table's order).
    pub fn rank(self) -> usize {
        CHECKS
            .iter()
            .position(|d| d.id == self.0.id)
            .unwrap_or(CHECKS.len())
    }
}

impl PartialEq for Check {
    fn eq(&self, other: &Check) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Check {}

impl PartialOrd for Check {
    fn partial_cmp(&self, other: &Check) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Check {
    fn cmp(&self, other: &Check) -> std::cmp::Ordering {
        self.0.id.cmp(other.0.id)
    }
}

/// The declared check of a literal id, checked while the program is compiled: an id the
/// registry lacks is a compile error naming it, not a failure found in a report.
#[macro_export]
macro_rules! check_id {
    ($id:literal) => {
        const {
            match $crate::Check::find($id) {
                Some(c) => c,
                None => panic!(concat!(
                    "no check `",
                    $id,
                    "` in crates/registry/src/checks.rs"
                )),
            }
        }
    };
}

/// The families of check ids, in the order their first check appears: read off `CHECKS`, so
/// no list of names is kept beside it.
pub const FAMILIES: [&str; family_count()] = families();

/// The part of an id before its dot (the whole id when it has none).
pub const fn family_of(id: &str) -> &str {
    let b = id.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] != b'.' {
        i += 1;
    }
    id.split_at(i).0
}

/// Byte-wise equality, as `const fn` allows.
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether a check before the `i`th has the same family (the `i`th's is not new).
const fn family_seen_before(i: usize) -> bool {
    let mut j = 0;
    while j < i {
        if same(family_of(CHECKS[j].id), family_of(CHECKS[i].id)) {
            return true;
        }
        j += 1;
    }
    false
}

const fn family_count() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < CHECKS.len() {
        if !family_seen_before(i) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn families<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < CHECKS.len() {
        if !family_seen_before(i) {
            out[n] = family_of(CHECKS[i].id);
            n += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read off the ids: each family once, in the order of its first check, each with checks.
    #[test]
    fn families_are_read_off_the_ids() {
        assert_eq!(FAMILIES[0], "transport");
        for (i, f) in FAMILIES.iter().enumerate() {
            assert!(!FAMILIES[..i].contains(f), "{f} twice");
            assert!(CHECKS.iter().any(|d| family_of(d.id) == *f), "{f}");
        }
        for d in CHECKS {
            assert!(FAMILIES.contains(&family_of(d.id)), "{}", d.id);
        }
        assert_eq!(family_of("qr.size"), "qr");
        assert_eq!(family_of("qr"), "qr");
    }

    /// `Check::find` (what `check_id!` runs while compiling) knows every declared id and no
    /// other.
    #[test]
    fn a_check_is_found_by_its_id_and_only_then() {
        for d in CHECKS {
            assert_eq!(Check::find(d.id).map(Check::id), Some(d.id));
        }
        assert!(Check::find("qr.no-such-check").is_none());
        assert!(Check::find("qr.siz").is_none());
        assert!(Check::find("").is_none());
        let size = check_id!("qr.size");
        assert_eq!((size.id(), size.family()), ("qr.size", "qr"));
        assert_eq!(
            size.rank(),
            CHECKS.iter().position(|d| d.id == "qr.size").unwrap()
        );
    }
}

/// A rule of `RULES`, as `Check` is a check: the only way `load` names one. Made by
/// `rule_id!` (while compiling: an id the table lacks does not compile) or `Rule::find`.
#[derive(Clone, Copy, Debug)]
pub struct Rule(&'static RuleDef);

impl Rule {
    /// The declared rule of that id; a `const fn` for `rule_id!`.
    pub const fn find(id: &str) -> Option<Rule> {
        let mut i = 0;
        while i < RULES.len() {
            if same(RULES[i].id, id) {
                return Some(Rule(&RULES[i]));
            }
            i += 1;
        }
        None
    }

    pub fn def(self) -> &'static RuleDef {
        self.0
    }

    pub fn id(self) -> &'static str {
        self.0.id
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Rule {}

/// The declared rule of a literal id, checked while the program is compiled.
#[macro_export]
macro_rules! rule_id {
    ($id:literal) => {
        const {
            match $crate::Rule::find($id) {
                Some(r) => r,
                None => panic!(concat!(
                    "no rule `",
                    $id,
                    "` in crates/registry/src/rules.rs"
                )),
            }
        }
    };
}
