//! The model of the tag list, learned from the target then held: the whole list (the
//! baseline), the search rule it follows (among plausible ones: contains, prefix or word
//! prefix, compared as written, ASCII-case-folded, lower-cased or accent-folded), each sort
//! order of the whole list, and the default page size. From it, the exact set (and where
//! sorted, the order up to ties) any combination of parameters must give.

pub(super) use super::search_rule::{META, Rule};
use super::*;

/// The parameter names (the spec's roles).
pub(super) struct Names {
    pub(super) search: Option<String>,
    pub(super) ids: Option<String>,
    pub(super) sorting: Option<Sorting>,
}

/// How the target read a list of two ids in one form (comma-separated, repeated): the spec
/// shows neither the form nor the parameter's name, so each is the target's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reading {
    /// As the list: honoured.
    All,
    /// As its first value, or its last (a framework reading one value of a repeated name).
    First,
    Last,
    /// As one id no tag has (`a,b` taken whole).
    Nothing,
    /// Refused, not read whole, or read some other way: not settled.
    Unsettled,
}

impl Reading {
    /// The readings an answer `got` is consistent with, for ids asked in order whose whole
    /// list selects `all`.
    pub(super) fn of(got: &HashSet<String>, all: &HashSet<String>, asked: &[String]) -> Vec<Self> {
        let one = |i: Option<&String>| -> HashSet<String> {
            all.iter().filter(|a| Some(*a) == i).cloned().collect()
        };
        let mut v = Vec::new();
        for (r, want) in [
            (Reading::All, all.clone()),
            (Reading::First, one(asked.first())),
            (Reading::Last, one(asked.last())),
            (Reading::Nothing, HashSet::new()),
        ] {
            if *got == want {
                v.push(r);
            }
        }
        v
    }
}

/// The list as learned.
pub(super) struct Model {
    /// (id, name) of every tag with both, in list order: the pools cases draw from.
    pub(super) named: Vec<(String, String)>,
    /// Every item of the list by id.
    pub(super) by_id: HashMap<String, Value>,
    /// List order (the baseline's), by id.
    order: Vec<String>,
    /// The search rules consistent with what the target did; empty: search is not modelled.
    pub(super) rules: Vec<Rule>,
    /// The whole list's order per (field, desc), as the target gave it.
    pub(super) orders: HashMap<(String, bool), Vec<String>>,
    /// The default page size; None when the default page held the whole list.
    pub(super) default_size: Option<usize>,
    pub(super) names: Names,
    /// How two ids comma-separated, and repeated, were read.
    pub(super) comma: Reading,
    pub(super) repeated: Reading,
    /// Characters other than letters and digits seen taken literally by the search (the
    /// rules are learned on letters and digits only); a blank among them when a term with
    /// one was seen matched as one string, not word by word. Terms with others are not
    /// predicted: wildcards, tokenising or stripping are the target's choice.
    pub(super) literal: HashSet<char>,
}

/// The tags a filter selects: `must` under every consistent rule (in list order), `may` under
/// some. Equal sets: the prediction is exact.
pub(super) struct Predicted {
    pub(super) must: Vec<String>,
    pub(super) may: HashSet<String>,
}

impl Predicted {
    pub(super) fn exact(&self) -> bool {
        self.must.len() == self.may.len()
    }
}

impl Model {
    /// Learns the model; None when the list was not read whole.
    pub(super) async fn learn(l: &Lister<'_>, baseline: &Walk) -> Option<Model> {
        if !baseline.complete {
            return None;
        }
        let named: Vec<(String, String)> = baseline
            .items
            .iter()
            .filter_map(|v| Some((id_of(v)?.to_string(), v.get("name")?.as_str()?.to_string())))
            .filter(|(i, n)| !i.is_empty() && !i.contains(',') && !n.trim().is_empty())
            .collect();
        if named.is_empty() {
            return None;
        }
        let by_id = baseline
            .items
            .iter()
            .filter_map(|v| Some((id_of(v)?.to_string(), v.clone())))
            .collect();
        let order = baseline
            .items
            .iter()
            .filter_map(id_of)
            .map(str::to_string)
            .collect();
        let names = Names {
            search: l.op.param_with_role("search").map(|p| p.name.clone()),
            ids: l.op.param_with_role("ids").map(|p| p.name.clone()),
            sorting: Sorting::from(l.op),
        };
        let mut m = Model {
            named,
            by_id,
            order,
            rules: Vec::new(),
            orders: HashMap::new(),
            default_size: None,
            names,
            comma: Reading::Unsettled,
            repeated: Reading::Unsettled,
            literal: HashSet::new(),
        };
        m.learn_ids(l).await;
        m.learn_rules(l).await;
        m.learn_literals(l).await;
        m.learn_orders(l, baseline).await;
        let (_, _, items) = l.list(&[], Expect::Accept).await;
        m.default_size = items.map(|i| i.len()).filter(|n| *n < m.by_id.len());
        Some(m)
    }

    /// Terms that tell the rules apart: a piece from inside a name, a prefix with its case
    /// changed, a non-ASCII prefix lower-cased and with its accents taken off, a later word.
    fn learning_terms(&self) -> Vec<String> {
        let mut terms = Vec::new();
        let first = |f: &dyn Fn(&str) -> Option<String>| self.named.iter().find_map(|(_, n)| f(n));
        let chars = |n: &str| n.chars().collect::<Vec<char>>();
        terms.extend(first(&|n| {
            let c = chars(n);
            (c.len() >= 5 && c[1..4].iter().all(|c| c.is_alphanumeric()))
                .then(|| c[1..4].iter().collect())
        }));
        terms.extend(first(&|n| {
            let c = chars(n);
            (c.len() >= 3 && c[0].is_ascii_alphabetic())
                .then(|| c[..3].iter().collect::<String>())
                .map(|p| swap_case(&p))
        }));
        terms.extend(first(&|n| {
            let c = chars(n);
            (c.len() >= 3 && !c[0].is_ascii() && c[0].is_alphabetic())
                .then(|| c[..3].iter().collect::<String>().to_lowercase())
        }));
        terms.extend(first(&|n| {
            let c = chars(n);
            (c.len() >= 3
                && fold(&c[..3].iter().collect::<String>()).is_ascii()
                && !c[0].is_ascii())
            .then(|| fold(&c[..3].iter().collect::<String>()))
        }));
        terms.extend(first(&|n| {
            let w = n.split(|c: char| !c.is_alphanumeric()).nth(1)?;
            (w.chars().count() >= 2).then(|| w.chars().take(3).collect())
        }));
        terms.dedup();
        terms
    }

    async fn learn_rules(&mut self, l: &Lister<'_>) {
        let Some(param) = self.names.search.clone() else {
            return;
        };
        let mut rules = Rule::all();
        for term in self.learning_terms() {
            let Ok(w) = l.walk(&[(param.clone(), term.clone())], l.size_max).await else {
                continue;
            };
            if !w.complete {
                continue;
            }
            let got: HashSet<&str> = w.items.iter().filter_map(id_of).collect();
            let named = self.named.iter().map(|(i, n)| (i.as_str(), n.as_str()));
            Rule::consistent(&mut rules, named, &term, &got);
        }
        let note = if rules.is_empty() {
            "the search follows none of the rules the model knows: not predicted".to_string()
        } else {
            format!("the search, as learned: {}", Rule::say(&rules))
        };
        l.ctx
            .rec
            .observe(check_id!("pagination.choices"), &l.label, note, None);
        self.rules = rules;
    }

    /// How two distinct ids are read comma-separated and repeated (`ids=a&ids=b`).
    async fn learn_ids(&mut self, l: &Lister<'_>) {
        let Some(name) = self.names.ids.clone() else {
            return;
        };
        let Some((a, b)) = self.named.first().and_then(|(a, _)| {
            let (b, _) = self.named.iter().find(|(b, _)| b != a)?;
            Some((a.clone(), b.clone()))
        }) else {
            return;
        };
        let asked = vec![a.clone(), b.clone()];
        let all: HashSet<String> = asked.iter().cloned().collect();
        let mut seen = Vec::new();
        for repeated in [false, true] {
            let p: Params = if repeated {
                vec![(name.clone(), a.clone()), (name.clone(), b.clone())]
            } else {
                vec![(name.clone(), format!("{a},{b}"))]
            };
            let w = l
                .walk_first(&p, l.size_max, Expect::AcceptOrReject, MAX_PAGES)
                .await;
            let r = match w {
                Ok(w) if w.complete => {
                    let got = w.items.iter().filter_map(id_of).map(str::to_string);
                    let got: HashSet<String> = got.collect();
                    Reading::of(&got, &all, &asked)
                        .first()
                        .copied()
                        .unwrap_or(Reading::Unsettled)
                }
                Err(Unwalked::Refused(s, _)) => {
                    seen.push(format!("{} refused ({s})", show_query(&p)));
                    Reading::Unsettled
                }
                _ => Reading::Unsettled,
            };
            if !matches!(r, Reading::Unsettled) {
                seen.push(format!("{} read as {r:?}", show_query(&p)));
            }
            if repeated {
                self.repeated = r;
            } else {
                self.comma = r;
            }
        }
        let note = format!("ids lists, as learned: {}", seen.join("; "));
        l.ctx
            .rec
            .observe(check_id!("pagination.choices"), &l.label, note, None);
    }

    /// Whether ids go repeated: the form asked when the target honours it, else the other
    /// honoured one; None when it honours neither (ids are then not predicted).
    pub(super) fn ids_repeated(&self, prefer: bool) -> Option<bool> {
        let ok = |repeated: bool| {
            let r = if repeated { self.repeated } else { self.comma };
            r == Reading::All
        };
        [prefer, !prefer].into_iter().find(|r| ok(*r))
    }

    /// The tags a term selects taken literally: (under every rule, under some).
    fn literal_sets(&self, term: &str) -> (HashSet<&str>, HashSet<&str>) {
        let mut must = HashSet::new();
        let mut may = HashSet::new();
        for (id, n) in &self.named {
            let hits = self.rules.iter().filter(|r| r.matches(n, term)).count();
            if hits == self.rules.len() {
                must.insert(id.as_str());
            }
            if hits > 0 {
                may.insert(id.as_str());
            }
        }
        (must, may)
    }

    /// Learning terms for characters outside letters and digits: each meta character inside
    /// the first four letters of a name (`Su%mm`: a wildcard or stripping finds that name, the
    /// character taken literally does not), and a piece across a blank that a word-by-word
    /// search answers otherwise (`mer Sa` finds `Sale summer` word by word).
    fn literal_terms(&self) -> Vec<(char, String)> {
        let mut v = Vec::new();
        let head = self.named.iter().find_map(|(_, n)| {
            let c: Vec<char> = n.chars().take(4).collect();
            (c.len() == 4 && c.iter().all(|c| c.is_alphanumeric())).then_some(c)
        });
        let mut chars: Vec<char> = META.iter().flat_map(|m| m.chars()).collect();
        chars.extend(self.named.iter().flat_map(|(_, n)| n.chars()));
        let mut seen = HashSet::new();
        for c in chars {
            if c.is_alphanumeric() || c.is_whitespace() || !seen.insert(c) || seen.len() > 40 {
                continue;
            }
            if let Some(h) = &head {
                v.push((c, format!("{}{}{}{}{}", h[0], h[1], c, h[2], h[3])));
            }
        }
        v.extend(self.blank_term().map(|t| (' ', t)));
        v
    }

    /// A piece across a blank whose words, matched one by one, find a tag the piece does not.
    fn blank_term(&self) -> Option<String> {
        self.named.iter().find_map(|(_, n)| {
            let c: Vec<char> = n.chars().collect();
            (2..c.len().saturating_sub(2)).find_map(|i| {
                let piece: String = c[i - 2..=i + 2].iter().collect();
                let ok = c[i] == ' '
                    && [i - 2, i - 1, i + 1, i + 2]
                        .iter()
                        .all(|j| c[*j].is_alphanumeric());
                let (_, may) = self.literal_sets(&piece);
                let words: Vec<&str> = piece.split(' ').collect();
                let split = self.named.iter().any(|(id, n)| {
                    !may.contains(id.as_str())
                        && words
                            .iter()
                            .all(|w| self.rules.iter().any(|r| r.matches(n, w)))
                });
                (ok && split).then_some(piece)
            })
        })
    }

    /// Which characters outside letters and digits the search takes literally.
    async fn learn_literals(&mut self, l: &Lister<'_>) {
        let Some(param) = self.names.search.clone() else {
            return;
        };
        if self.rules.is_empty() {
            return;
        }
        let mut not = Vec::new();
        for (c, term) in self.literal_terms() {
            let p = vec![(param.clone(), term.clone())];
            let w = l
                .walk_first(&p, l.size_max, Expect::AcceptOrReject, MAX_PAGES)
                .await;
            let Ok(w) = w
                .map_err(|_| ())
                .and_then(|w| w.complete.then_some(w).ok_or(()))
            else {
                not.push(format!("{term:?} (refused)"));
                continue;
            };
            let got: HashSet<&str> = w.items.iter().filter_map(id_of).collect();
            let (must, may) = self.literal_sets(&term);
            if must.is_subset(&got) && got.is_subset(&may) {
                self.literal.insert(c);
            } else {
                not.push(format!("{term:?} ({} tags)", got.len()));
            }
        }
        if !not.is_empty() {
            let note = format!(
                "search terms not taken literally, not predicted: {}",
                not.join(", ")
            );
            l.ctx
                .rec
                .observe(check_id!("pagination.choices"), &l.label, note, None);
        }
    }

    /// Every sort field in both orders over the whole list (name ascending is the baseline).
    async fn learn_orders(&mut self, l: &Lister<'_>, baseline: &Walk) {
        let Some(s) = &self.names.sorting else { return };
        let main = s.main_field().unwrap_or("name").to_string();
        let all: HashSet<&str> = self.order.iter().map(String::as_str).collect();
        let mut learned = HashMap::new();
        for field in &s.fields {
            for desc in [false, true] {
                let walked;
                let w = if *field == main && !desc {
                    baseline
                } else {
                    match l.walk(&s.params(field, desc), l.size_max).await {
                        Ok(w) => {
                            walked = w;
                            &walked
                        }
                        Err(_) => continue,
                    }
                };
                let ids: Vec<String> = w
                    .items
                    .iter()
                    .filter_map(id_of)
                    .map(str::to_string)
                    .collect();
                let same = ids.len() == all.len() && ids.iter().all(|i| all.contains(i.as_str()));
                if w.complete && same {
                    learned.insert((field.clone(), desc), ids);
                }
            }
        }
        self.orders = learned;
    }

    /// The tags `filter` selects; None when it has a term and the search is not modelled.
    pub(super) fn predict(&self, term: Option<&str>, ids: Option<&[String]>) -> Option<Predicted> {
        if term.is_some() && self.rules.is_empty() {
            return None;
        }
        let unlearned = |c: char| {
            let c = if c.is_whitespace() { ' ' } else { c };
            !c.is_alphanumeric() && !self.literal.contains(&c)
        };
        if term.is_some_and(|t| t.chars().any(unlearned)) {
            return None;
        }
        if ids.is_some_and(|i| i.len() > 1) && self.ids_repeated(false).is_none() {
            return None;
        }
        let asked: Option<HashSet<&str>> = ids.map(|v| v.iter().map(String::as_str).collect());
        let mut must = Vec::new();
        let mut may = HashSet::new();
        for id in &self.order {
            if asked.as_ref().is_some_and(|a| !a.contains(id.as_str())) {
                continue;
            }
            let name = self.name(id).unwrap_or_default();
            let hits = term.map_or(self.rules.len().max(1), |t| {
                self.rules.iter().filter(|r| r.matches(name, t)).count()
            });
            if hits == self.rules.len().max(1) {
                must.push(id.clone());
            }
            if hits > 0 {
                may.insert(id.clone());
            }
        }
        Some(Predicted { must, may })
    }

    pub(super) fn name(&self, id: &str) -> Option<&str> {
        self.by_id.get(id)?.get("name")?.as_str()
    }

    /// The sort field and order of a combination's pick.
    pub(super) fn sort_of(&self, pick: Option<(usize, bool)>) -> Option<(String, bool)> {
        let s = self.names.sorting.as_ref()?;
        let (i, desc) = pick?;
        let field = s.fields.get(i % s.fields.len().max(1))?;
        Some((field.clone(), desc))
    }

    /// The folded sort key of a tag, from the list.
    pub(super) fn key(&self, id: &str, field: &str) -> Option<String> {
        key_of(self.by_id.get(id)?, field).map(|k| fold(&k))
    }
}

/// A query as a reader types it: `a=1&b=x y` (decoded, quoted when it has blanks).
pub(super) fn show_query(p: &[(String, String)]) -> String {
    p.iter()
        .map(|(k, v)| {
            if v.chars().any(|c| c.is_whitespace() || c == '&') || v.is_empty() {
                format!("{k}={v:?}")
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// An item that differs from the list's item of the same id, or that the list lacks.
pub(super) fn content_diff(m: &Model, items: &[Value]) -> Option<String> {
    for v in items {
        let Some(id) = id_of(v) else {
            continue; // schema.response judges items without an id
        };
        match m.by_id.get(id) {
            None => return Some(format!("{id}, which the list does not have")),
            Some(b) if b != v => return Some(format!("{id} as {v}, but the list has {b}")),
            _ => {}
        }
    }
    None
}

/// The first id given twice.
pub(super) fn duplicate(items: &[Value]) -> Option<&str> {
    let mut seen = HashSet::new();
    items.iter().filter_map(id_of).find(|i| !seen.insert(*i))
}

/// Every letter's case swapped.
fn swap_case(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_uppercase() {
                c.to_lowercase().collect::<Vec<_>>()
            } else {
                c.to_uppercase().collect()
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
