//! The runner's pagination and partners families against the reference (no failures, with two
//! seeds and two workspaces) and against broken servers (the right check fails).

use crate::common;

use common::broken::{
    Answer, BOTH, Defect, Impl, Incoming, Upstream, broken_on, failed, run_check,
};
use linkcert::check::{self, CheckOptions};
use linkcert::report::Report;
use linkcert::server::{self, KeySet, ServeConfig, WorkspaceData, name_matches};
use linkcert::verdict::Verdict;
use serde_json::{Value, json};

fn assert_fails(r: &Report, id: &str) {
    assert!(failed(r).contains(&id.to_string()), "{id}: {}", r.summary());
}

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
    let target = linkcert::target::Target::of_reference(&server, &spec);
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
                    return;
                }
                let ids: Option<Vec<&str>> = get("ids").map(|s| s.split(',').collect());
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
async fn dropping_the_last_item_of_every_page_fails_the_walk() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if is_tags(inc, ans) {
                    edit_array(ans, |v| {
                        v.pop();
                    });
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.walk"]).await;
        assert_fails(&r, "pagination.walk");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_item_too_many_fails_page_size() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if is_tags(inc, ans) {
                    edit_array(ans, |v| {
                        if let Some(last) = v.last().cloned() {
                            v.push(last);
                        }
                    });
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.page-size", "pagination.walk"]).await;
        assert_fails(&r, "pagination.page-size");
        assert_fails(&r, "pagination.walk");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_sort_order_desc_fails_sort() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                if inc.path == "/tags" {
                    inc.query = inc.query.replace("sortOrder=desc", "sortOrder=asc");
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.sort"]).await;
        assert_fails(&r, "pagination.sort");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_ids_fails_ids() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                if inc.path == "/tags" {
                    inc.query = inc
                        .query
                        .split('&')
                        .filter(|p| !p.starts_with("ids="))
                        .collect::<Vec<_>>()
                        .join("&");
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.ids"]).await;
        assert_fails(&r, "pagination.ids");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_returning_a_tag_not_in_the_list_fails_search() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if is_tags(inc, ans) && inc.query.contains("search=") {
                    edit_array(ans, |v| {
                        v.push(json!({"id": "tag_injected_by_proxy", "name": "injected"}));
                    });
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.search"]).await;
        assert_fails(&r, "pagination.search");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_page_for_page_zero_fails_bounds() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if inc.path == "/tags" && query_has(inc, "page=0") {
                    ans.status = 200;
                    ans.body = b"[]".to_vec();
                    ans.set_header("content-type", "application/json");
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.bounds"]).await;
        assert_fails(&r, "pagination.bounds");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answering_200_for_unknown_partners_fails_unknown() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if inc.path == "/partners/deactivate" && ans.status == 404 {
                    ans.status = 200;
                    ans.body = br#"{"partnerId":"pn_linkcert_does_not_exist"}"#.to_vec();
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["partners.unknown"]).await;
        assert_fails(&r, "partners.unknown");
    }
}

/// A target that answers 400 for a page past the last one (its empty page made an error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_400_for_a_page_past_the_end_fails_pagination_bounds() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                let paged = inc.query.split('&').any(|p| p.starts_with("page="));
                if is_tags(inc, ans) && paged && ans.body.as_slice() == b"[]" {
                    ans.status = 400;
                    ans.body = br#"{"error":{"code":"bad_request","message":"page out of range"}}"#
                        .to_vec();
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.bounds"]).await;
        assert_fails(&r, "pagination.bounds");
    }
}

/// A target whose search ignores a term that is not ASCII: every tag comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_ignoring_non_ascii_terms_fails_pagination_search() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
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
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.search"]).await;
        assert_fails(&r, "pagination.search");
    }
}

/// A target that crashes on `null` in a deactivation body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_a_null_field_fails_partners_null() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                let null_field = serde_json::from_slice::<Value>(&inc.body)
                    .ok()
                    .and_then(|v| v.as_object().cloned())
                    .is_some_and(|o| o.values().any(Value::is_null));
                if inc.path == "/partners/deactivate" && null_field && ans.status != 429 {
                    ans.status = 500;
                    ans.body =
                        br#"{"error":{"code":"internal_server_error","message":"boom"}}"#.to_vec();
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["partners"]).await;
        assert_fails(&r, "partners.null");
        assert!(
            !failed(&r).contains(&"partners.neither".to_string()),
            "{imp:?}: only the null probes are broken: {}",
            r.summary()
        );
    }
}

/// A target that acknowledges a fixture's id beside a null, naming some other partner, and
/// deactivates nothing: an acceptance not honoured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_beside_a_fixture_acknowledged_but_not_honoured_fails_deactivate() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
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
            }),
        )
        .await;
        let r = run_check(b.target(), &["partners"]).await;
        assert_fails(&r, "partners.deactivate");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_left_enabled_fail_links_disabled() {
    // GET /links is the reference's stand-in: the second implementation has none to break.
    for imp in [Impl::Reference] {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if inc.path == "/links" && ans.status == 200 {
                    let text = String::from_utf8_lossy(&ans.body)
                        .replace("\"disabled\":true", "\"disabled\":false");
                    ans.body = text.into_bytes();
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["partners"]).await;
        assert_fails(&r, "partners.links-disabled");
        assert!(!failed(&r).contains(&"partners.deactivate".to_string()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deactivation_naming_another_partner_fails_deactivate() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::after(|inc, ans| {
                if inc.path == "/partners/deactivate" && ans.status == 200 {
                    ans.body = br#"{"partnerId":"pn_somebody_else"}"#.to_vec();
                }
            }),
        )
        .await;
        let r = run_check(b.target(), &["partners.deactivate"]).await;
        assert_fails(&r, "partners.deactivate");
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

/// A target that acts on the first 50 ids of a list and silently drops the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_past_the_50th_dropped_fail_pagination_ids() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                rewrite_tags_param(inc, "ids", |v| {
                    Some(v.split(',').take(50).collect::<Vec<_>>().join(","))
                })
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.ids"]).await;
        assert_fails(&r, "pagination.ids");
    }
}

/// A target that ignores a search term longer than 255 characters (every tag comes back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_search_terms_ignored_fail_pagination_search() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                rewrite_tags_param(inc, "search", |v| {
                    (v.chars().count() <= 255).then(|| v.to_string())
                })
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.search"]).await;
        assert_fails(&r, "pagination.search");
    }
}

/// A target that serves a pageSize from 51 to 99 as 50 (rounding down to a size it likes):
/// never too many items, but not the page asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_sizes_between_51_and_99_served_as_50_fail_page_size() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
            Defect::before(|inc| {
                rewrite_tags_param(inc, "pageSize", |v| match v.parse::<u32>() {
                    Ok(51..=99) => Some("50".to_string()),
                    _ => Some(v.to_string()),
                })
            }),
        )
        .await;
        let r = run_check(b.target(), &["pagination.page-size"]).await;
        assert_fails(&r, "pagination.page-size");
    }
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

/// A target whose partnerId column holds 255 characters: a longer id is a 500 (in the
/// envelope), where an unknown id is a 404 and a refused length a clean 400/422.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_a_partner_id_over_255_characters_fails_partners_unknown() {
    for imp in BOTH {
        let b = broken_on(
            imp,
            6.0,
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
            }),
        )
        .await;
        let r = run_check(b.target(), &["partners.unknown"]).await;
        assert_fails(&r, "partners.unknown");
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
