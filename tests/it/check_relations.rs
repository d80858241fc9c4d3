//! The model of the tag list and the relations where parameters meet, in front of both
//! implementations: each defect (one that lives where two parameters meet, so the checks of
//! one parameter at a time pass it) fails the relation that owns it; fault-free, all pass.

use common::broken::{
    Defect, Incoming, Row,
    Then::{Fails, Passes, Says},
    run_table,
};

use crate::common;

const MODELLED: &[&str] = &[
    "pagination.model",
    "pagination.concat",
    "pagination.intersection",
    "pagination.ids-forms",
    "pagination.reverse",
    "pagination.lexical",
    "pagination.literal",
];

/// The decoded query of a /tags request.
fn pairs(inc: &Incoming) -> Vec<(String, String)> {
    url::form_urlencoded::parse(inc.query.as_bytes())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Rewrites the query of a /tags request.
fn rewrite(inc: &mut Incoming, f: impl Fn(&mut Vec<(String, String)>)) {
    if inc.path != "/tags" {
        return;
    }
    let mut p = pairs(inc);
    f(&mut p);
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &p {
        s.append_pair(k, v);
    }
    inc.query = s.finish();
}

fn has(p: &[(String, String)], k: &str) -> bool {
    p.iter().any(|(n, _)| n == k)
}

fn filtered(p: &[(String, String)]) -> bool {
    has(p, "search") || has(p, "ids")
}

fn search_ignored_past_page_one() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            if p.iter().any(|(k, v)| k == "page" && v != "1") {
                p.retain(|(k, _)| k != "search");
            }
        })
    })
}

fn ids_ignored_beside_a_search() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            if has(p, "search") {
                p.retain(|(k, _)| k != "ids");
            }
        })
    })
}

fn sort_order_ignored_under_a_filter() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            if filtered(p) {
                p.retain(|(k, _)| k != "sortOrder");
            }
        })
    })
}

/// Repeated ids read as the last one: a framework reading one value of a repeated name, a
/// legal reading of a form the spec does not show.
fn only_the_last_repeated_id() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            if let Some(last) = p.iter().rposition(|(k, _)| k == "ids") {
                let kept = p[last].clone();
                p.retain(|(k, _)| k != "ids");
                p.push(kept);
            }
        })
    })
}

/// Repeated ids joined into one comma list without the first: for two ids it looks like
/// reading the last value, for three it is neither the list nor one value.
fn first_repeated_id_dropped() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            let ids: Vec<String> = p
                .iter()
                .filter(|(k, _)| k == "ids")
                .map(|(_, v)| v.clone())
                .collect();
            if ids.len() > 1 {
                p.retain(|(k, _)| k != "ids");
                p.push(("ids".into(), ids[1..].join(",")));
            }
        })
    })
}

/// `%` matching anything: here, taken out of the term (`a%b` finds what `ab` finds).
fn percent_as_wildcard() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            for (k, v) in p.iter_mut() {
                if k == "search" {
                    *v = v.replace('%', "");
                }
            }
        })
    })
}

/// `%` taken literally as the third character, stripped elsewhere: seen literal, then not.
fn percent_stripped_but_third() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            for (k, v) in p.iter_mut() {
                if k == "search" && v.chars().position(|c| c == '%') != Some(2) {
                    *v = v.replace('%', "");
                }
            }
        })
    })
}

/// `page=02` read as the first page.
fn zero_padded_page_as_one() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            for (k, v) in p.iter_mut() {
                if k == "page" && v.len() > 1 && v.starts_with('0') {
                    *v = "1".into();
                }
            }
        })
    })
}

/// `pageSize=1e1` read as 1, as `parseInt` reads it: `1e1` is no integer, a legal reading.
fn exponent_page_size_as_parse_int() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            for (k, v) in p.iter_mut() {
                if k == "pageSize" && v.contains(['e', 'E']) {
                    *v = v.split(['e', 'E']).next().unwrap_or_default().to_string();
                }
            }
        })
    })
}

fn page_size_only_without_filters() -> Defect {
    Defect::before(|inc| {
        rewrite(inc, |p| {
            if filtered(p) {
                p.retain(|(k, _)| k != "pageSize");
            }
        })
    })
}

const DEFECTS: &[Row] = &[
    Row::new(
        "no defect",
        Defect::none,
        MODELLED,
        &[
            Passes("pagination.model"),
            Passes("pagination.concat"),
            Passes("pagination.intersection"),
            Passes("pagination.ids-forms"),
            Passes("pagination.reverse"),
            Passes("pagination.lexical"),
            Passes("pagination.literal"),
        ],
    ),
    Row::new(
        "the search ignored past the first page",
        search_ignored_past_page_one,
        &["pagination.concat"],
        &[Fails("pagination.concat")],
    ),
    Row::new(
        "ids ignored beside a search term",
        ids_ignored_beside_a_search,
        &["pagination.intersection"],
        &[Fails("pagination.intersection")],
    ),
    Row::new(
        "sortOrder ignored under a filter",
        sort_order_ignored_under_a_filter,
        &["pagination.reverse"],
        &[Fails("pagination.reverse")],
    ),
    Row::new(
        "repeated ids: the first dropped, the rest read as a comma list",
        first_repeated_id_dropped,
        &["pagination.ids-forms"],
        &[Fails("pagination.ids-forms")],
    ),
    Row::new(
        "repeated ids read as the last one: a legal reading, observed",
        only_the_last_repeated_id,
        &["pagination.ids-forms", "pagination.choices"],
        &[
            Passes("pagination.ids-forms"),
            Says("pagination.choices", "read as Last"),
        ],
    ),
    Row::new(
        "% acting as a wildcard: the spec is silent, observed",
        percent_as_wildcard,
        &["pagination.literal", "pagination.choices"],
        // The spec says nothing of wildcards: a choice, observed, `%` terms then unjudged.
        &[
            Passes("pagination.literal"),
            Says("pagination.choices", "not taken literally"),
        ],
    ),
    Row::new(
        "% literal as the third character, stripped elsewhere",
        percent_stripped_but_third,
        &["pagination.literal"],
        &[
            Fails("pagination.literal"),
            Says("pagination.literal", "acting as a wildcard"),
        ],
    ),
    Row::new(
        "page=02 read as page 1",
        zero_padded_page_as_one,
        &["pagination.lexical"],
        &[Fails("pagination.lexical")],
    ),
    Row::new(
        "pageSize=1e1 read as 1 (parseInt): no integer, observed",
        exponent_page_size_as_parse_int,
        &["pagination.lexical", "pagination.choices"],
        &[
            Passes("pagination.lexical"),
            Says(
                "pagination.choices",
                "\"1e1\", no 10, accepted and read otherwise",
            ),
        ],
    ),
    Row::new(
        "pageSize honoured only without filters",
        page_size_only_without_filters,
        &["pagination.model"],
        &[Fails("pagination.model")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relations_fail_their_defects_and_pass_without() {
    run_table(DEFECTS).await;
}
