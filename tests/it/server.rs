//! The reference server over real sockets (HTTPS on 127.0.0.1).

use crate::common;

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use linkcert::qr;
use serde_json::{Value, json};

const PRO: &str = "lk_pro_1";
const ADVANCED: &str = "lk_advanced_1";
const ENTERPRISE: &str = "lk_enterprise_1";

fn bearer(k: &str) -> String {
    format!("Bearer {k}")
}

#[tokio::test]
async fn authentication_failures_are_401_unauthorized_in_the_envelope() {
    let s = reference(None).await;
    let c = client(&s);
    let url = format!("{}/tags", s.base_url);
    for header in [
        None,
        Some(""),
        Some("Bearer"),
        Some("Bearer "),
        Some("Basic lk_pro_1"),
        Some("lk_pro_1"),
        Some("Bearer lk_pro_2"),
        Some("Bearer lk_pro_1x"),
    ] {
        let mut r = c.get(&url);
        if let Some(h) = header {
            r = r.header("authorization", h);
        }
        let (status, body) = json(r.send().await.unwrap()).await;
        assert_envelope(status, &body, 401);
    }
    // The scheme is case-insensitive.
    let r = c
        .get(&url)
        .header("authorization", "bEaReR lk_pro_1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn plan_gating_answers_403_forbidden_with_rate_headers() {
    let s = reference(None).await;
    let c = client(&s);
    let body = json!({"partnerId": "pn_unknown"});
    for key in ["lk_free_1", PRO, "lk_business_1"] {
        let r = c
            .post(format!("{}/partners/deactivate", s.base_url))
            .header("authorization", bearer(key))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(header_u64(&r, "x-ratelimit-limit").is_some());
        let (status, b) = json(r).await;
        assert_envelope(status, &b, 403);
    }
    for key in [ADVANCED, ENTERPRISE] {
        let r = c
            .post(format!("{}/partners/deactivate", s.base_url))
            .header("authorization", bearer(key))
            .json(&body)
            .send()
            .await
            .unwrap();
        let (status, b) = json(r).await;
        assert_envelope(status, &b, 404);
    }
    // Free has no analytics; paid-only parameters are refused on Free.
    let r = c
        .get(format!("{}/analytics", s.base_url))
        .header("authorization", bearer("lk_free_1"))
        .send()
        .await
        .unwrap();
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), Some(60));
    let (status, b) = json(r).await;
    assert_envelope(status, &b, 403);
    let r = c
        .get(format!(
            "{}/qr?url=https://a.io&logo=https://a.io/l.png",
            s.base_url
        ))
        .header("authorization", bearer("lk_free_1"))
        .send()
        .await
        .unwrap();
    let (status, b) = json(r).await;
    assert_envelope(status, &b, 403);
    let r = c
        .get(format!("{}/analytics", s.base_url))
        .header("authorization", bearer(PRO))
        .send()
        .await
        .unwrap();
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), Some(2));
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn every_error_is_in_the_envelope_with_its_code() {
    let s = reference(None).await;
    let c = client(&s);
    let auth = bearer(ENTERPRISE);
    let cases: Vec<(reqwest::RequestBuilder, u16)> = vec![
        (c.get(format!("{}/nope", s.base_url)), 404),
        (c.delete(format!("{}/tags", s.base_url)), 404),
        (c.get(format!("{}/partners/deactivate", s.base_url)), 404),
        (c.get(format!("{}/tags?page=0", s.base_url)), 422),
        (c.get(format!("{}/tags?page=x", s.base_url)), 400),
        (c.get(format!("{}/tags?page=1&page=2", s.base_url)), 400),
        (c.get(format!("{}/tags?pageSize=101", s.base_url)), 422),
        (c.get(format!("{}/tags?sortBy=color", s.base_url)), 422),
        (
            c.get(format!("{}/tags?page=999999999999999999999999", s.base_url)),
            422,
        ),
        (c.get(format!("{}/qr", s.base_url)), 400),
        (c.get(format!("{}/qr?url=a&level=X", s.base_url)), 422),
        (c.get(format!("{}/qr?url=a&fgColor=red", s.base_url)), 422),
        (c.get(format!("{}/qr?url=a&size=abc", s.base_url)), 400),
        (c.get(format!("{}/qr?url=a&size=NaN", s.base_url)), 400),
        (c.get(format!("{}/qr?url=a&margin=-1", s.base_url)), 422),
        (
            c.get(format!("{}/qr?url={}", s.base_url, "a".repeat(32001))),
            422,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .header("content-type", "application/json")
                .body("{bad"),
            400,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .header("content-type", "text/plain")
                .body("{}"),
            400,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .header("content-type", "application/json")
                .body("[1]"),
            400,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .header("content-type", "application/json")
                .body(""),
            400,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .header("content-type", "application/json")
                .body(format!("{{\"partnerId\":\"{}\"}}", "x".repeat(100_000))),
            400,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .json(&json!({})),
            422,
        ),
        (
            c.post(format!("{}/partners/deactivate", s.base_url))
                .json(&json!({"partnerId": 7})),
            400,
        ),
    ];
    for (i, (req, expected)) in cases.into_iter().enumerate() {
        let r = req.header("authorization", &auth).send().await.unwrap();
        assert_eq!(
            r.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json"),
            "case {i}"
        );
        let (status, body) = json(r).await;
        assert_eq!(status, expected, "case {i}: {body}");
        assert_envelope(status, &body, expected);
    }
}

async fn tags(c: &reqwest::Client, base: &str, query: &str) -> Vec<Value> {
    let r = c
        .get(format!("{base}/tags?{query}"))
        .header("authorization", bearer(ENTERPRISE))
        .send()
        .await
        .unwrap();
    let (status, body) = json(r).await;
    assert_eq!(status, 200, "{query}: {body}");
    body.as_array().unwrap().clone()
}

fn ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn tag_pages_walk_the_whole_list_without_gaps_or_duplicates() {
    let s = reference(None).await;
    let c = client(&s);
    let all = tags(&c, &s.base_url, "pageSize=100&page=1").await;
    assert_eq!(all.len(), 100);
    let mut walked = Vec::new();
    for page in 1.. {
        let p = tags(&c, &s.base_url, &format!("pageSize=7&page={page}")).await;
        assert!(p.len() <= 7);
        if p.is_empty() {
            break;
        }
        walked.extend(p);
    }
    assert!(
        walked.len() >= 250,
        "the dataset spans several pages of 100"
    );
    let unique: HashSet<_> = ids(&walked).into_iter().collect();
    assert_eq!(unique.len(), walked.len(), "no duplicates");
    assert_eq!(
        ids(&walked[..100]),
        ids(&all),
        "pages agree with one big page"
    );
    assert!(
        walked
            .iter()
            .any(|t| !t["name"].as_str().unwrap().is_ascii())
    );
    // Sorted by name ascending by default; desc is the exact reverse.
    let names: Vec<&str> = walked.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]));
    let n = walked.len();
    let mut desc = Vec::new();
    for page in 1..=n.div_ceil(100) {
        desc.extend(tags(&c, &s.base_url, &format!("sortOrder=desc&page={page}")).await);
    }
    let mut rev = ids(&walked);
    rev.reverse();
    assert_eq!(ids(&desc), rev);
    let by_date = tags(&c, &s.base_url, "sortBy=createdAt&pageSize=100").await;
    let dates: Vec<&str> = by_date
        .iter()
        .map(|t| t["createdAt"].as_str().unwrap())
        .collect();
    assert!(dates.windows(2).all(|w| w[0] <= w[1]));
    // Past the end: an empty page.
    assert!(tags(&c, &s.base_url, "page=1000").await.is_empty());
}

#[tokio::test]
async fn tag_search_and_ids_filter_return_exactly_what_was_asked() {
    let s = reference(None).await;
    let c = client(&s);
    let all = tags(&c, &s.base_url, "pageSize=100").await;
    let wanted = [
        all[3]["id"].as_str().unwrap(),
        all[40]["id"].as_str().unwrap(),
    ];
    let got = tags(
        &c,
        &s.base_url,
        &format!("ids={},{},tag_missing", wanted[0], wanted[1]),
    )
    .await;
    let mut got_ids = ids(&got);
    got_ids.sort();
    let mut want: Vec<String> = wanted.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got_ids, want);
    let name = all[10]["name"].as_str().unwrap().to_string();
    let q: String = url::form_urlencoded::byte_serialize(name.to_uppercase().as_bytes()).collect();
    let found = tags(&c, &s.base_url, &format!("search={q}")).await;
    assert!(found.iter().any(|t| t["name"] == name.as_str()));
    assert!(found.iter().all(|t| {
        t["name"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains(&name.to_lowercase())
    }));
    let accented = tags(&c, &s.base_url, "search=%C3%BC").await; // "ü"
    assert!(
        accented
            .iter()
            .all(|t| t["name"].as_str().unwrap().to_lowercase().contains('ü'))
    );
}

async fn qr_png(c: &reqwest::Client, base: &str, query: &str, key: &str) -> (u16, Vec<u8>) {
    let r = c
        .get(format!("{base}/qr?{query}"))
        .header("authorization", bearer(key))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    if status == 200 {
        assert_eq!(r.headers()["content-type"], "image/png");
    }
    (status, r.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn qr_codes_are_real_pngs_of_the_requested_url_size_colours_and_level() {
    let s = reference(None).await;
    let c = client(&s);
    let url = "https://example.com/some/path?x=1";
    let enc: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    for (size, margin, level) in [(600, 2, "L"), (333, 0, "M"), (1000, 4, "Q"), (200, 10, "H")] {
        let q = format!(
            "url={enc}&size={size}&margin={margin}&level={level}&fgColor=%23336699&bgColor=%23FFEEDD"
        );
        let (status, png) = qr_png(&c, &s.base_url, &q, ENTERPRISE).await;
        assert_eq!(status, 200);
        let fg = qr::parse_hex_color("#336699").unwrap();
        let bg = qr::parse_hex_color("#FFEEDD").unwrap();
        let i = qr::inspect_png(&png, fg, bg).unwrap();
        assert_eq!((i.width, i.height), (size, size));
        assert_eq!(i.exact_colour_fraction, 1.0);
        let d = i.decoded.unwrap();
        assert_eq!(d.content, url.as_bytes());
        assert_eq!(d.level.as_str(), level);
        assert!(
            (d.quiet_zone_modules - margin as f64).abs() <= 1.0,
            "{}",
            d.quiet_zone_modules
        );
    }
    // Defaults: 600 px, black on white.
    let (_, png) = qr_png(&c, &s.base_url, "url=hi", ENTERPRISE).await;
    let i = qr::inspect_png(&png, qr::Rgb([0, 0, 0]), qr::Rgb([255, 255, 255])).unwrap();
    assert_eq!(i.width, 600);
    // #RGB is accepted and means #RRGGBB.
    let (status, png) = qr_png(&c, &s.base_url, "url=hi&fgColor=%23a00", ENTERPRISE).await;
    assert_eq!(status, 200);
    let i = qr::inspect_png(&png, qr::Rgb([0xaa, 0, 0]), qr::Rgb([255, 255, 255])).unwrap();
    assert_eq!(i.exact_colour_fraction, 1.0);
}

#[tokio::test]
async fn qr_capacity_is_a_422_that_says_so() {
    let s = reference(None).await;
    let c = client(&s);
    let (status, _) = qr_png(
        &c,
        &s.base_url,
        &format!("url={}", "a".repeat(2953)),
        ENTERPRISE,
    )
    .await;
    assert_eq!(status, 200);
    let r = c
        .get(format!("{}/qr?url={}", s.base_url, "a".repeat(2954)))
        .header("authorization", bearer(ENTERPRISE))
        .send()
        .await
        .unwrap();
    let (status, body) = json(r).await;
    assert_envelope(status, &body, 422);
    assert!(
        body["error"]["message"].as_str().unwrap().contains("2953"),
        "{body}"
    );
    let (status, _) = qr_png(
        &c,
        &s.base_url,
        &format!("url={}&level=H", "a".repeat(1300)),
        ENTERPRISE,
    )
    .await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn deactivation_disables_the_partner_s_links_and_is_idempotent() {
    let s = reference(None).await;
    let c = client(&s);
    let ws = s
        .keys()
        .workspaces
        .iter()
        .position(|w| w.plan == "advanced")
        .unwrap();
    let data = s.workspace_data(ws).unwrap();
    let (victim, other) = (&data.partners[2], &data.partners[5]);
    let post = |body: Value| {
        c.post(format!("{}/partners/deactivate", s.base_url))
            .header("authorization", bearer(ADVANCED))
            .json(&body)
            .send()
    };
    let (status, body) = json(post(json!({"tenantId": victim.tenant_id})).await.unwrap()).await;
    assert_eq!(
        (status, body),
        (200, json!({"partnerId": victim.partner_id}))
    );
    let links = |p: &str| {
        c.get(format!("{}/links?partnerId={p}", s.base_url))
            .header("authorization", bearer(ADVANCED))
            .send()
    };
    let (_, l) = json(links(&victim.partner_id).await.unwrap()).await;
    assert!(!l.as_array().unwrap().is_empty());
    assert!(l.as_array().unwrap().iter().all(|l| l["disabled"] == true));
    let (_, l) = json(links(&other.partner_id).await.unwrap()).await;
    assert!(l.as_array().unwrap().iter().all(|l| l["disabled"] == false));
    // Commissions and payouts stay.
    let after = s.workspace_data(ws).unwrap();
    assert_eq!(
        after.partners[2].commissions_cents,
        victim.commissions_cents
    );
    assert_eq!(after.partners[2].payouts_cents, victim.payouts_cents);
    // Again: same answer.
    let (status, body) = json(post(json!({"partnerId": victim.partner_id})).await.unwrap()).await;
    assert_eq!(
        (status, body),
        (200, json!({"partnerId": victim.partner_id}))
    );
    let (status, body) = json(post(json!({"tenantId": "tn_nobody"})).await.unwrap()).await;
    assert_envelope(status, &body, 404);
}

#[tokio::test]
async fn the_limiter_counts_per_key_with_honest_headers() {
    // A 3 s standard window: Free gets 60 per 3 s.
    let s = reference(Some(3.0)).await;
    let c = client(&s);
    let get = |k: &'static str| {
        c.get(format!("{}/tags?pageSize=1", s.base_url))
            .header("authorization", bearer(k))
            .send()
    };
    let mut remaining = Vec::new();
    for _ in 0..60 {
        let r = get("lk_free_1").await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(header_u64(&r, "x-ratelimit-limit"), Some(60));
        remaining.push(header_u64(&r, "x-ratelimit-remaining").unwrap());
    }
    assert_eq!(remaining, (0..60).rev().collect::<Vec<u64>>());
    let r = get("lk_free_1").await.unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let retry = header_u64(&r, "retry-after").unwrap();
    let reset = header_u64(&r, "x-ratelimit-reset").unwrap() as f64;
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), Some(0));
    assert!((1..=3).contains(&retry), "{retry}");
    assert!(
        reset >= now && reset <= now + 4.0,
        "reset {reset} now {now}"
    );
    let (status, body) = json(r).await;
    assert_envelope(status, &body, 429);
    // The other Free key is untouched.
    assert_eq!(get("lk_free_2").await.unwrap().status(), 200);
    // Waiting what Retry-After says is enough.
    tokio::time::sleep(Duration::from_secs(retry)).await;
    assert_eq!(get("lk_free_1").await.unwrap().status(), 200);
}

#[tokio::test]
async fn sixty_four_clients_on_one_key_never_get_more_than_the_limit() {
    let s = reference(Some(3600.0)).await;
    let c = client(&s);
    let url = format!("{}/tags?pageSize=1", s.base_url);
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let (c, url) = (c.clone(), url.clone());
            tokio::spawn(async move {
                let mut ok = 0;
                for _ in 0..4 {
                    let r = c
                        .get(&url)
                        .header("authorization", "Bearer lk_free_1")
                        .send()
                        .await
                        .unwrap();
                    ok += u32::from(r.status() == 200);
                }
                ok
            })
        })
        .collect();
    let mut admitted = 0;
    for t in tasks {
        admitted += t.await.unwrap();
    }
    assert_eq!(admitted, 60);
    assert_eq!(s.admitted(0), 60);
}

#[tokio::test]
async fn plain_http_is_only_served_behind_the_flag() {
    let s = reference(None).await;
    assert!(s.base_url.starts_with("https://"));
    let plain = s.base_url.replacen("https://", "http://", 1);
    let c = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .no_proxy()
        .build()
        .unwrap();
    let r = c
        .get(format!("{plain}/tags"))
        .header("authorization", bearer(PRO))
        .send()
        .await;
    assert!(r.map_or(true, |r| !r.status().is_success()));
    let mut cfg = linkcert::server::ServeConfig::in_process();
    cfg.tls = linkcert::server::TlsMode::Plain;
    let p = linkcert::server::start(spec(), cfg).await.unwrap();
    assert!(p.base_url.starts_with("http://"));
    let r = c
        .get(format!("{}/tags", p.base_url))
        .header("authorization", bearer(PRO))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[test]
fn serve_prints_its_base_url_first_then_keys_and_partners() {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_linkcert"))
        .args(["serve", "--addr", "127.0.0.1:0", "--window", "5"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let mut rest = String::new();
    for _ in 0..12 {
        rest.push_str(&lines.next().unwrap().unwrap());
        rest.push('\n');
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.starts_with("listening https://127.0.0.1:"), "{first}");
    for needle in [
        "lk_free_1",
        "lk_free_2",
        "lk_pro_1",
        "lk_advanced_1",
        "lk_enterprise_1",
        "pn_",
        "tn_",
    ] {
        assert!(rest.contains(needle), "{needle} missing from:\n{rest}");
    }
}
