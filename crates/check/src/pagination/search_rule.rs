//! The search rules the model of the tag list tells apart (`model::Model::learn`): where a
//! term may match in a name (anywhere, at its start, at a word's start) and how the two are
//! compared (as written, ASCII-case-folded, lower-cased, accent-folded). The spec says only
//! that search filters by name: which rule is the target's choice.

use std::collections::HashSet;

use super::sort::fold;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Anchor {
    Contains,
    Prefix,
    WordPrefix,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fold {
    Exact,
    Ascii,
    Lower,
    Accents,
}

/// Characters and strings that mean something to a storage, URL or shell layer: a target must
/// take each literally (or refuse the term cleanly).
pub(super) const META: &[&str] = &[
    "%", "_", "'", "\"", "\\", "*", "?", "&", "#", "+", ";", "$(", "`", "..", "%25", "\\%", "%_",
    "[a]", "=", "é", "漢", "🙂",
];

/// A way a name may match a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rule(Anchor, Fold);

impl Rule {
    pub(super) fn all() -> Vec<Rule> {
        let mut v = Vec::new();
        for a in [Anchor::Contains, Anchor::Prefix, Anchor::WordPrefix] {
            for f in [Fold::Exact, Fold::Ascii, Fold::Lower, Fold::Accents] {
                v.push(Rule(a, f));
            }
        }
        v
    }

    pub(super) fn matches(self, name: &str, term: &str) -> bool {
        let norm = |s: &str| match self.1 {
            Fold::Exact => s.to_string(),
            Fold::Ascii => s.to_ascii_lowercase(),
            Fold::Lower => s.to_lowercase(),
            Fold::Accents => fold(s),
        };
        let (n, t) = (norm(name), norm(term));
        match self.0 {
            Anchor::Contains => n.contains(&t),
            Anchor::Prefix => n.starts_with(&t),
            Anchor::WordPrefix => n.match_indices(&t).any(|(i, _)| {
                n[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !c.is_alphanumeric())
            }),
        }
    }

    /// Of `rules`, those under which a search for `term` over the tags `named` (id, name)
    /// selects exactly the ids `got`: what one complete answer shows of the target's rule.
    pub(super) fn consistent<'n>(
        rules: &mut Vec<Rule>,
        named: impl Iterator<Item = (&'n str, &'n str)> + Clone,
        term: &str,
        got: &HashSet<&str>,
    ) {
        rules.retain(|r| {
            let want: HashSet<&str> = named
                .clone()
                .filter(|(_, n)| r.matches(n, term))
                .map(|(i, _)| i)
                .collect();
            want == *got
        });
    }

    /// The rules, said: "contains, as written or prefix, as written", or that none fits.
    pub(super) fn say(rules: &[Rule]) -> String {
        if rules.is_empty() {
            return "none of the rules the model knows".into();
        }
        let d: Vec<String> = rules.iter().map(|r| r.describe()).collect();
        d.join(" or ")
    }

    fn describe(self) -> String {
        let a = match self.0 {
            Anchor::Contains => "contains",
            Anchor::Prefix => "prefix",
            Anchor::WordPrefix => "word prefix",
        };
        let f = match self.1 {
            Fold::Exact => "as written",
            Fold::Ascii => "ASCII case folded",
            Fold::Lower => "case folded",
            Fold::Accents => "case and accents folded",
        };
        format!("{a}, {f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_tell_anchors_and_foldings_apart() {
        let r = |a, f| Rule(a, f);
        let name = "Éclair summer-Sale";
        assert!(r(Anchor::Contains, Fold::Exact).matches(name, "mmer"));
        assert!(!r(Anchor::Prefix, Fold::Exact).matches(name, "mmer"));
        assert!(r(Anchor::WordPrefix, Fold::Exact).matches(name, "Sale"));
        assert!(!r(Anchor::WordPrefix, Fold::Exact).matches(name, "ale"));
        assert!(!r(Anchor::Prefix, Fold::Ascii).matches(name, "écl"));
        assert!(r(Anchor::Prefix, Fold::Lower).matches(name, "écl"));
        assert!(!r(Anchor::Prefix, Fold::Lower).matches(name, "ecl"));
        assert!(r(Anchor::Prefix, Fold::Accents).matches(name, "ECL"));
        // A literal `%` is no wildcard under any rule.
        assert!(Rule::all().iter().all(|r| !r.matches(name, "%")));
    }

    /// One complete answer keeps the rules it is consistent with: "mer" found only in
    /// "summer" (not at its start) rules out prefixes; none kept is said as such.
    #[test]
    fn an_answer_keeps_the_rules_it_is_consistent_with() {
        let named = [("1", "summer sale"), ("2", "Merch")];
        let got: HashSet<&str> = ["1"].into();
        let mut rules = Rule::all();
        Rule::consistent(&mut rules, named.iter().copied(), "mer", &got);
        assert!(!rules.is_empty());
        assert!(
            rules
                .iter()
                .all(|r| r.0 == Anchor::Contains && r.1 == Fold::Exact)
        );
        assert_eq!(Rule::say(&rules), "contains, as written");
        Rule::consistent(&mut rules, named.iter().copied(), "sum", &HashSet::new());
        assert_eq!(Rule::say(&rules), "none of the rules the model knows");
    }
}
