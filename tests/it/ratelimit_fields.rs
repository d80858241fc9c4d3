//! The IETF RateLimit fields the reference sends behind `serve --ratelimit-fields`
//! (draft-ietf-httpapi-ratelimit-headers-11): read as RFC 9651 Lists with `sfv`, they say what
//! X-RateLimit-* say on every answer, a 429's `t` is its Retry-After, and without the flag no
//! answer carries them (the spec names only X-RateLimit-*).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use linkcert::server::{self, RunningServer, ServeConfig};
use sfv::{BareItem, List, ListEntry, Parser};

use crate::common::{client, header_u64, spec};

async fn reference(fields: bool) -> RunningServer {
    let mut cfg = ServeConfig::in_process();
    cfg.ratelimit_fields = fields;
    server::start(spec(), cfg)
        .await
        .expect("the reference starts")
}

/// A field's one member: the policy it names and its integer parameters.
fn member(r: &reqwest::Response, name: &str) -> (String, BTreeMap<String, i64>) {
    let raw = r
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{name} on a {}", r.status()));
    let list: List = Parser::new(raw)
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {raw:?} is no List: {e}"));
    assert_eq!(list.len(), 1, "{name}: {raw}");
    let ListEntry::Item(item) = &list[0] else {
        panic!("{name}: {raw} is an inner list")
    };
    let BareItem::String(policy) = &item.bare_item else {
        panic!("{name}: {raw} names no policy")
    };
    let params = item
        .params
        .iter()
        .map(|(k, v)| {
            let n = v.as_integer().unwrap_or_else(|| panic!("{name}: {raw}"));
            (k.as_str().to_string(), i64::from(n))
        })
        .collect();
    (policy.as_str().to_string(), params)
}

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

#[tokio::test]
async fn the_fields_say_what_x_ratelimit_says_and_only_behind_the_flag() {
    let s = reference(true).await;
    let c = client(&s);
    let get = |path: &str, key: &str| {
        c.get(format!("{}{path}", s.base_url))
            .header("authorization", format!("Bearer {key}"))
            .send()
    };
    // A Free key at the spec's minute: 60 admitted, then a 429.
    for sent in 1..=61 {
        let r = get("/tags?pageSize=1", "lk_free_1")
            .await
            .expect("an answer");
        let now = epoch_now();
        let (policy, p) = member(&r, "ratelimit-policy");
        assert_eq!(policy, "standard");
        assert_eq!(p["q"], 60);
        assert_eq!(p["w"], 60);
        let (policy, now_left) = member(&r, "ratelimit");
        assert_eq!(policy, "standard");
        let remaining = header_u64(&r, "x-ratelimit-remaining").expect("Remaining") as i64;
        assert_eq!(now_left["r"], remaining, "request {sent}");
        let reset = header_u64(&r, "x-ratelimit-reset").expect("Reset") as f64;
        let t = now_left["t"] as f64;
        assert!(
            (reset - now - t).abs() <= 2.0,
            "request {sent}: t={t}, Reset {reset} at {now}"
        );
        if sent <= 60 {
            assert_eq!(r.status(), 200);
        } else {
            assert_eq!(r.status(), 429);
            assert_eq!(Some(now_left["t"] as u64), header_u64(&r, "retry-after"));
        }
    }
    // An analytics request counts in the analytics class: its own policy, a 1 s window.
    let r = get("/analytics", "lk_pro_1").await.expect("an answer");
    assert_eq!(r.status(), 200);
    let (policy, p) = member(&r, "ratelimit-policy");
    assert_eq!((policy.as_str(), p["q"], p["w"]), ("analytics", 2, 1));
    let (policy, now_left) = member(&r, "ratelimit");
    assert_eq!((policy.as_str(), now_left["r"]), ("analytics", 1));

    // Without the flag: the spec's headers only.
    let plain = reference(false).await;
    let r = client(&plain)
        .get(format!("{}/tags?pageSize=1", plain.base_url))
        .header("authorization", "Bearer lk_free_1")
        .send()
        .await
        .expect("an answer");
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), Some(60));
    assert!(r.headers().get("ratelimit").is_none());
    assert!(r.headers().get("ratelimit-policy").is_none());
}
