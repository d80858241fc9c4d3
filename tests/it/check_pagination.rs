//! The runner's pagination and partners families against the reference (no failures, with two
//! seeds and two workspaces) and against broken servers: a table of defects (`DEFECTS`), each
//! failing the right check, and of legal choices (`CHOICES`), failing none.

use crate::common;

use common::broken::{
    Answer, BOTH, Defect, Impl, Incoming, Row,
    Then::{Fails, NothingFails, Passes, Says},
    Upstream, broken_on, failed, run_check, run_table,
};
use linkcert::check::{self, CheckOptions};
use linkcert::server::{self, KeySet, ServeConfig, WorkspaceData, name_matches};
use linkcert::verdict::Verdict;
use serde_json::{Value, json};

fn query_has(inc: &Incoming, pair: &str) -> bool {
    inc.query.split('&').any(|p| p == pair)
}

fn is_tags(inc: &Incoming, ans: &Answer) -> bool {
    inc.path == "/tags" && ans.status == 200
}

/// Rewrite a JSON array answer.
fn edit_array(ans: &mut Answer, f: impl FnOnce(&mut Vec<Value>)) {
    if let Ok(Value::Array(mut items)) = serde_json::from_slice::<Value>(&ans.body) {
        f(&mut items);
        ans.body = serde_json::to_vec(&items).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_pagination_and_partners() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(b.target(), &["pagination", "partners"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        for id in [
            "pagination.bounds",
            "pagination.page-size",
            "pagination.walk",
            "pagination.sort",
            "pagination.ids",
            "pagination.search",
            "partners.deactivate",
            "partners.unknown",
            "partners.neither",
            "partners.null",
        ] {
            assert!(
                r.checks
                    .iter()
                    .any(|c| c.id == id && c.verdict == Verdict::Pass && c.cases > 0),
                "{id} did not pass: {imp:?}: {}",
                r.summary()
            );
        }
        // A fixture's id beside a null: the reference refuses it (400), the variant reads the
        // null as absent and deactivates; both legal, both judged.
        let choices = format!(
            "{:?}",
            r.checks
                .iter()
                .filter(|c| c.id == "partners.choices")
                .collect::<Vec<_>>()
        );
        let want = match imp {
            Impl::Reference => ": null: rejected with 400",
            Impl::Variant => ": null: accepted (null read as absent)",
        };
        assert!(choices.contains(want), "{imp:?}: {want} in {choices}");
        // GET /links is a stand-in only the reference serves: without it the effect of a
        // deactivation cannot be seen, and the check says so.
        let links = r
            .checks
            .iter()
            .find(|c| c.id == "partners.links-disabled")
            .unwrap();
        match imp {
            Impl::Reference => assert!(links.verdict == Verdict::Pass && links.cases > 0),
            Impl::Variant => assert_eq!(links.verdict, Verdict::Skipped, "{}", r.summary()),
        }
        assert!(
            r.checks
                .iter()
                .any(|c| c.id == "pagination.choices" && c.verdict == Verdict::Informational),
            "{imp:?}: {}",
            r.summary()
        );
        assert!(
            r.checks
                .iter()
                .any(|c| c.id == "partners.choices" && c.verdict == Verdict::Informational),
            "{imp:?}: {}",
            r.summary()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_passes_with_another_seed_and_other_data() {
    // Another workspace name seeds other tags and partners; another seed picks other ids.
    let spec = common::spec();
    let keys = KeySet::from_toml(
        &spec,
        "[[workspace]]\nname = \"linkcert-other-seed\"\nplan = \"enterprise\"\n\
         keys = [\"lk_other_seed_1\"]\nrate_limit_per_minute = 100000\nanalytics_per_second = 100\n",
    )
    .unwrap();
    let mut cfg = ServeConfig::in_process();
    cfg.keys = Some(keys);
    cfg.window = linkcert::window::RateWindow::from_secs(6.0).ok();
    let server = server::start(spec.clone(), cfg).await.unwrap();
    let target = server.target(&spec);
    assert!(!target.partner_ids.is_empty());
    let opts = CheckOptions {
        seed: 0x5eed_0f11,
        cases: 8,
        concurrency: 2,
        only: vec!["pagination".into(), "partners".into()],
        ..CheckOptions::default()
    };
    let r = check::run(spec, target, opts).await.unwrap();
    assert_eq!(failed(&r), Vec::<String>::new(), "{}", r.summary());
}

/// A valid target that sorts names case-insensitively and breaks ties by id ascending in both
/// orders (desc is not asc reversed within ties): no check may fail it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_insensitive_collation_with_a_fixed_tie_break_passes() {
    for imp in [Impl::Reference] {
        // The proxy replaces every answer with seeded data: what sits behind it does not matter.
        let data = WorkspaceData::seeded("enterprise-ws");
        let b = broken_on(
            imp,
            6.0,
            Defect::after(move |inc, ans| {
                if !is_tags(inc, ans) {
                    return;
                }
                let q: Vec<(String, String)> = url::form_urlencoded::parse(inc.query.as_bytes())
                    .into_owned()
                    .collect();
                let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
                if get("sortBy").is_some_and(|s| s != "name") {
                    // The upstream's order, each tag as this target shows it everywhere.
                    edit_array(ans, |items| {
                        for v in items.iter_mut() {
                            *v = json!({"id": v["id"], "name": v["name"]});
                        }
                    });
                    return;
                }
                // Comma-separated, repeated, or both.
                let ids: Option<Vec<&str>> = get("ids").map(|_| {
                    q.iter()
                        .filter(|(k, _)| k == "ids")
                        .flat_map(|(_, v)| v.split(','))
                        .collect()
                });
                let mut tags: Vec<_> = data
                    .tags
                    .items
                    .iter()
                    .filter(|t| ids.as_ref().is_none_or(|i| i.contains(&t.id.as_str())))
                    .filter(|t| get("search").is_none_or(|s| name_matches(&t.name, s)))
                    .collect();
                let desc = get("sortOrder") == Some("desc");
                tags.sort_by(|a, b| {
                    let o = a.name.to_lowercase().cmp(&b.name.to_lowercase());
                    if desc { o.reverse() } else { o }.then_with(|| a.id.cmp(&b.id))
                });
                let page: usize = get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let size: usize = get("pageSize").and_then(|p| p.parse().ok()).unwrap_or(100);
                let out: Vec<Value> = tags
                    .iter()
                    .skip((page - 1) * size)
                    .take(size)
                    .map(|t| json!({"id": t.id, "name": t.name}))
                    .collect();
                ans.body = serde_json::to_vec(&out).unwrap();
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        let sort = r.checks.iter().find(|c| c.id == "pagination.sort").unwrap();
        assert_eq!(sort.verdict, Verdict::Pass, "{imp:?}: {}", r.summary());
        // The proxy's order is the one judged: the collation is seen as case-insensitive.
        let choices = r
            .checks
            .iter()
            .find(|c| c.id == "pagination.choices")
            .unwrap();
        assert!(
            choices
                .findings
                .iter()
                .any(|f| f.message == "name ascending follows case-insensitive order"),
            "{:?}",
            choices.findings
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_allow_destructive_deactivation_is_skipped_not_failed() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let mut t = b.target();
        t.allow_destructive = false;
        let fixtures = t.partner_ids.clone();
        let r = run_check(t, &["partners"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        for id in ["partners.deactivate", "partners.links-disabled"] {
            assert!(
                r.checks
                    .iter()
                    .any(|c| c.id == id && c.verdict == Verdict::Skipped),
                "{id}: {imp:?}: {}",
                r.summary()
            );
        }
        // Nothing was deactivated.
        match &b.upstream {
            Upstream::Reference(s) => {
                for ws in 0..s.keys().workspaces.len() {
                    let data = s.workspace_data(ws).unwrap();
                    assert!(data.links.iter().all(|l| !l.disabled));
                }
            }
            Upstream::Variant(v) => {
                for f in &fixtures {
                    assert_eq!(v.partner_active("advanced", &f.id), Some(true), "{}", f.id);
                }
            }
        }
    }
}

/// Rewrite one query parameter of a /tags request (decoded value in, None drops it).
fn rewrite_tags_param(inc: &mut Incoming, name: &str, f: impl Fn(&str) -> Option<String>) {
    if inc.path != "/tags" {
        return;
    }
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in url::form_urlencoded::parse(inc.query.as_bytes()) {
        match (k == name, f(&v)) {
            (false, _) => {
                s.append_pair(&k, &v);
            }
            (true, Some(v)) => {
                s.append_pair(&k, &v);
            }
            (true, None) => {}
        }
    }
    inc.query = s.finish();
}

/// Lengths the spec does not bound are the target's to refuse: the variant refuses more than
/// 100 ids and search terms over 256 characters (the reference takes any). Both pass, and the
/// variant's refusals are observed, not failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusing_long_id_lists_and_search_terms_cleanly_passes() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(
            b.target(),
            &["pagination.ids", "pagination.search", "pagination.choices"],
        )
        .await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        let choices = format!(
            "{:?}",
            r.checks
                .iter()
                .filter(|c| c.id == "pagination.choices")
                .collect::<Vec<_>>()
        );
        let refused = choices.contains("ids with 101 ids: rejected with 400")
            && choices.contains("search terms refused, by length in characters: 257 (400)");
        assert_eq!(refused, imp == Impl::Variant, "{imp:?}: {choices}");
    }
}

/// An id length the spec does not bound is the target's to refuse: the variant refuses ids
/// over 255 characters with 400 (the reference answers 404 for any unknown id). Both pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusing_long_partner_ids_cleanly_passes_partners_unknown() {
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(b.target(), &["partners.unknown", "partners.choices"]).await;
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        let choices = format!("{:?}", r.checks);
        let refused = choices.contains("256 (400)");
        assert_eq!(refused, imp == Impl::Variant, "{imp:?}: {choices}");
    }
}

/// Every defect, what the runner runs in front of it, and what it must find, in front of both
/// implementations (`links-disabled`: the reference's stand-in, which the second has none of).
const DEFECTS: &[Row] = &[
    Row::new(
        "the last item of every page dropped",
        drops_the_last_item,
        &["pagination.walk"],
        &[Fails("pagination.walk")],
    ),
    // The walk runs before sort, so sort knows the pages are inconsistent and does not fail
    // the same defect again.
    Row::new(
        "the last item of every page dropped, sort judged too",
        drops_the_last_item,
        &["pagination.walk", "pagination.sort"],
        &[
            Fails("pagination.walk"),
            Says("pagination.sort", "inconsistent already"),
        ],
    ),
    Row::new(
        "one item too many on every page",
        one_item_too_many,
        &["pagination.page-size", "pagination.walk"],
        &[Fails("pagination.page-size"), Fails("pagination.walk")],
    ),
    Row::new(
        "sortOrder not read (its name is not shown): desc served as asc",
        ignores_desc,
        &["pagination.sort"],
        &[
            NothingFails,
            Says("pagination.sort", "the order parameter is not read"),
        ],
    ),
    // What a target answers whose sort field or order is read the wrong way round: every
    // listing is still consistent with its reverse, but the names do not go up.
    Row::new(
        "sortBy=name served by createdAt, and createdAt by name",
        || swaps("sortBy", "name", "createdAt"),
        &["pagination.sort"],
        &[Fails("pagination.sort")],
    ),
    Row::new(
        "sortOrder=asc served as desc, and desc as asc",
        || swaps("sortOrder", "asc", "desc"),
        &["pagination.sort"],
        &[Fails("pagination.sort")],
    ),
    // A target whose sort parameter has another name lists alike whatever sortBy says:
    // nothing to judge the names' order by.
    Row::new(
        "sortOrder=desc served as asc by createdAt only",
        ignores_desc_by_created_at,
        &["pagination.sort"],
        &[Fails("pagination.sort")],
    ),
    Row::new(
        "sortBy ignored",
        || drops("sortBy"),
        &["pagination.sort"],
        &[NothingFails],
    ),
    Row::new(
        "the ids filter ignored",
        || drops("ids"),
        &["pagination.ids"],
        &[Fails("pagination.ids")],
    ),
    Row::new(
        "a search returning a tag not in the list",
        search_injects_a_tag,
        &["pagination.search"],
        &[Fails("pagination.search")],
    ),
    Row::new(
        "an empty page for page=0",
        empty_page_zero,
        &["pagination.bounds"],
        &[Fails("pagination.bounds")],
    ),
    Row::new(
        "200 for unknown partners",
        unknown_partner_200,
        &["partners.unknown"],
        &[Fails("partners.unknown")],
    ),
    Row::new(
        "400 for a page past the last",
        past_the_end_400,
        &["pagination.bounds"],
        &[Fails("pagination.bounds")],
    ),
    Row::new(
        "the last page again past the last",
        last_page_again,
        &["pagination.bounds"],
        &[Fails("pagination.bounds")],
    ),
    Row::new(
        "a search ignoring terms that are not ASCII",
        search_ignores_non_ascii,
        &["pagination.search"],
        &[Fails("pagination.search")],
    ),
    Row::new(
        "a 500 for a null field",
        null_field_500,
        &["partners"],
        // Only the null probes are broken.
        &[Fails("partners.null"), Passes("partners.neither")],
    ),
    Row::new(
        "a null beside a fixture acknowledged, not honoured",
        null_beside_a_fixture_not_honoured,
        &["partners"],
        &[Fails("partners.deactivate")],
    ),
    Row::new(
        "links left enabled",
        links_left_enabled,
        &["partners"],
        &[
            Fails("partners.links-disabled"),
            Passes("partners.deactivate"),
        ],
    )
    .on(&[Impl::Reference]),
    Row::new(
        "a deactivation naming another partner",
        names_another_partner,
        &["partners.deactivate"],
        &[Fails("partners.deactivate")],
    ),
    Row::new(
        "ids past the 50th dropped",
        ids_past_the_50th_dropped,
        &["pagination.ids"],
        &[Fails("pagination.ids")],
    ),
    Row::new(
        "search terms over 255 characters ignored",
        long_search_terms_ignored,
        &["pagination.search"],
        &[Fails("pagination.search")],
    ),
    Row::new(
        "page sizes 51 to 99 served as 50",
        page_sizes_51_to_99_as_50,
        &["pagination.page-size"],
        &[Fails("pagination.page-size")],
    ),
    Row::new(
        "a 500 for a partnerId over 255 characters",
        partner_id_over_255_500,
        &["partners.unknown"],
        &[Fails("partners.unknown")],
    ),
];

/// Legal choices behind the proxy: none may fail the target, each is observed.
const CHOICES: &[Row] = &[Row::new(
    "404 not_found in the envelope for every page past the last",
    past_the_end_404,
    &["pagination", "status"],
    &[
        NothingFails,
        Passes("pagination.bounds"),
        Passes("pagination.walk"),
        Passes("status.valid-accepted"),
        // Observed (the page past the end, or the one beyond 64 bits: findings kept are few).
        Says("pagination.choices", "404 not_found"),
    ],
)];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_the_check_that_owns_it() {
    run_table(DEFECTS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legal_choices_fail_nothing() {
    run_table(CHOICES).await;
}

/// The table's runner sees a row whose defect is not there: its run fails no check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[should_panic(expected = "no defect (Reference")]
async fn a_row_whose_run_finds_nothing_fails_the_table() {
    run_table(&[Row::new(
        "no defect",
        Defect::none,
        &["pagination.walk"],
        &[Fails("pagination.walk")],
    )
    .on(&[Impl::Reference])])
    .await;
}

/// The page number a /tags request asks for, when it is a number.
fn page_asked(inc: &Incoming) -> Option<f64> {
    url::form_urlencoded::parse(inc.query.as_bytes())
        .find(|(k, _)| k == "page")
        .and_then(|(_, v)| v.parse::<f64>().ok())
}

/// Past the last page (an empty page after the first), 404 not_found in the envelope: the
/// spec's other answer there (every operation may answer 404).
fn past_the_end_404() -> Defect {
    Defect::after(|inc, ans| {
        if is_tags(inc, ans)
            && page_asked(inc).is_some_and(|p| p > 1.0)
            && ans.body.as_slice() == b"[]"
        {
            ans.status = 404;
            ans.body = br#"{"error":{"code":"not_found","message":"no such page"}}"#.to_vec();
            ans.set_header("content-type", "application/json");
        }
    })
}

/// Past the last page (an empty page after the first), the last page served for that page
/// size again: a target that clamps the page number.
fn last_page_again() -> Defect {
    let last: std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>> = Default::default();
    Defect::after(move |inc, ans| {
        if !is_tags(inc, ans) || page_asked(inc).is_none() {
            return;
        }
        let size = url::form_urlencoded::parse(inc.query.as_bytes())
            .find(|(k, _)| k == "pageSize")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let mut last = last.lock().unwrap();
        if ans.body.as_slice() != b"[]" {
            last.insert(size, ans.body.clone());
        } else if page_asked(inc).is_some_and(|p| p > 1.0)
            && let Some(body) = last.get(&size)
        {
            ans.body = body.clone();
        }
    })
}

fn drops_the_last_item() -> Defect {
    Defect::after(|inc, ans| {
        if is_tags(inc, ans) {
            edit_array(ans, |v| {
                v.pop();
            });
        }
    })
}

fn one_item_too_many() -> Defect {
    Defect::after(|inc, ans| {
        if is_tags(inc, ans) {
            edit_array(ans, |v| {
                if let Some(last) = v.last().cloned() {
                    v.push(last);
                }
            });
        }
    })
}

fn ignores_desc_by_created_at() -> Defect {
    Defect::before(|inc| {
        if inc.path == "/tags" && inc.query.contains("sortBy=createdAt") {
            inc.query = inc.query.replace("sortOrder=desc", "sortOrder=asc");
        }
    })
}

fn ignores_desc() -> Defect {
    Defect::before(|inc| {
        if inc.path == "/tags" {
            inc.query = inc.query.replace("sortOrder=desc", "sortOrder=asc");
        }
    })
}

/// GET /tags without the parameter `name`: a target that does not read it.
fn drops(name: &'static str) -> Defect {
    Defect::before(move |inc| {
        if inc.path == "/tags" {
            inc.query = inc
                .query
                .split('&')
                .filter(|p| p.split('=').next() != Some(name))
                .collect::<Vec<_>>()
                .join("&");
        }
    })
}

/// `param=a` read as `param=b`, and `b` as `a`, on GET /tags.
fn swaps(param: &'static str, a: &'static str, b: &'static str) -> Defect {
    Defect::before(move |inc| {
        if inc.path == "/tags" {
            inc.query = inc
                .query
                .split('&')
                .map(
                    |p| match p.strip_prefix(param).and_then(|v| v.strip_prefix('=')) {
                        Some(v) if v == a => format!("{param}={b}"),
                        Some(v) if v == b => format!("{param}={a}"),
                        _ => p.to_string(),
                    },
                )
                .collect::<Vec<_>>()
                .join("&");
        }
    })
}

fn search_injects_a_tag() -> Defect {
    Defect::after(|inc, ans| {
        if is_tags(inc, ans) && inc.query.contains("search=") {
            edit_array(ans, |v| {
                v.push(json!({"id": "tag_injected_by_proxy", "name": "injected"}));
            });
        }
    })
}

fn empty_page_zero() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/tags" && query_has(inc, "page=0") {
            ans.status = 200;
            ans.body = b"[]".to_vec();
            ans.set_header("content-type", "application/json");
        }
    })
}

fn unknown_partner_200() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/partners/deactivate" && ans.status == 404 {
            ans.status = 200;
            ans.body = br#"{"partnerId":"pn_linkcert_does_not_exist"}"#.to_vec();
        }
    })
}

/// A target that answers 400 for a page past the last one (its empty page made an error).
fn past_the_end_400() -> Defect {
    Defect::after(|inc, ans| {
        let paged = inc.query.split('&').any(|p| p.starts_with("page="));
        if is_tags(inc, ans) && paged && ans.body.as_slice() == b"[]" {
            ans.status = 400;
            ans.body =
                br#"{"error":{"code":"bad_request","message":"page out of range"}}"#.to_vec();
        }
    })
}

/// A target whose search ignores a term that is not ASCII: every tag comes back.
fn search_ignores_non_ascii() -> Defect {
    Defect::before(|inc| {
        if inc.path != "/tags" {
            return;
        }
        // UTF-8 beyond ASCII, percent-encoded: a lead byte %C2..%F4.
        let non_ascii = |p: &str| {
            ["%C", "%D", "%E", "%F", "%c", "%d", "%e", "%f"]
                .iter()
                .any(|b| p.contains(b))
        };
        inc.query = inc
            .query
            .split('&')
            .filter(|p| !(p.starts_with("search=") && non_ascii(p)))
            .collect::<Vec<_>>()
            .join("&");
    })
}

/// A target that crashes on `null` in a deactivation body.
fn null_field_500() -> Defect {
    Defect::after(|inc, ans| {
        let null_field = serde_json::from_slice::<Value>(&inc.body)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .is_some_and(|o| o.values().any(Value::is_null));
        if inc.path == "/partners/deactivate" && null_field && ans.status != 429 {
            ans.status = 500;
            ans.body = br#"{"error":{"code":"internal_server_error","message":"boom"}}"#.to_vec();
        }
    })
}

/// A target that acknowledges a fixture's id beside a null, naming some other partner, and
/// deactivates nothing: an acceptance not honoured.
fn null_beside_a_fixture_not_honoured() -> Defect {
    Defect::after(|inc, ans| {
        let body = serde_json::from_slice::<Value>(&inc.body).unwrap_or(Value::Null);
        let fields = body.as_object().cloned().unwrap_or_default();
        let beside = fields.values().any(Value::is_null)
            && fields.values().any(|v| {
                v.as_str()
                    .is_some_and(|s| !s.contains("linkcert_does_not_exist"))
            });
        if inc.path == "/partners/deactivate" && beside && ans.status != 429 {
            ans.status = 200;
            ans.body = br#"{"partnerId":"pn_someone_else"}"#.to_vec();
            ans.set_header("content-type", "application/json");
        }
    })
}

fn links_left_enabled() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/links" && ans.status == 200 {
            let text = String::from_utf8_lossy(&ans.body)
                .replace("\"disabled\":true", "\"disabled\":false");
            ans.body = text.into_bytes();
        }
    })
}

fn names_another_partner() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/partners/deactivate" && ans.status == 200 {
            ans.body = br#"{"partnerId":"pn_somebody_else"}"#.to_vec();
        }
    })
}

/// A target that acts on the first 50 ids of a list and silently drops the rest.
fn ids_past_the_50th_dropped() -> Defect {
    Defect::before(|inc| {
        rewrite_tags_param(inc, "ids", |v| {
            Some(v.split(',').take(50).collect::<Vec<_>>().join(","))
        })
    })
}

/// A target that ignores a search term longer than 255 characters (every tag comes back).
fn long_search_terms_ignored() -> Defect {
    Defect::before(|inc| {
        rewrite_tags_param(inc, "search", |v| {
            (v.chars().count() <= 255).then(|| v.to_string())
        })
    })
}

/// A target that serves a pageSize from 51 to 99 as 50 (rounding down to a size it likes):
/// never too many items, but not the page asked for.
fn page_sizes_51_to_99_as_50() -> Defect {
    Defect::before(|inc| {
        rewrite_tags_param(inc, "pageSize", |v| match v.parse::<u32>() {
            Ok(51..=99) => Some("50".to_string()),
            _ => Some(v.to_string()),
        })
    })
}

/// A target whose partnerId column holds 255 characters: a longer id is a 500 (in the
/// envelope), where an unknown id is a 404 and a refused length a clean 400/422.
fn partner_id_over_255_500() -> Defect {
    Defect::after(|inc, ans| {
        let long = serde_json::from_slice::<Value>(&inc.body)
            .ok()
            .and_then(|v| v.get("partnerId")?.as_str().map(|s| s.chars().count()))
            .is_some_and(|n| n > 255);
        if inc.path == "/partners/deactivate" && long {
            ans.status = 500;
            ans.body = serde_json::to_vec(&json!({"error": {
                "code": "internal_server_error",
                "message": "value too long for type character varying(255)"
            }}))
            .unwrap();
        }
    })
}
