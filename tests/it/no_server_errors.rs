//! Property: no query string and no body makes the reference answer 5xx.

use crate::common;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbitrary_queries_and_bodies_never_get_a_server_error() {
    let s = reference(None).await;
    let c = client(&s);
    let paths = [
        "/qr",
        "/tags",
        "/partners/deactivate",
        "/links",
        "/analytics",
        "/events",
        "/x",
    ];
    let name = prop_oneof![
        Just("url".to_string()),
        Just("size".to_string()),
        Just("margin".to_string()),
        Just("level".to_string()),
        Just("fgColor".to_string()),
        Just("page".to_string()),
        Just("pageSize".to_string()),
        Just("ids".to_string()),
        Just("sortBy".to_string()),
        Just("search".to_string()),
        Just("logo".to_string()),
        Just("hideLogo".to_string()),
        "[a-zA-Z]{1,8}",
    ];
    let value = prop_oneof![
        any::<String>(),
        "-?[0-9]{1,25}",
        "[0-9.eE+-]{1,12}",
        Just("true".to_string()),
        "#[0-9a-fA-FgG]{0,8}",
        proptest::collection::vec(any::<u8>(), 0..40)
            .prop_map(|b| b.iter().map(|x| format!("%{x:02X}")).collect()),
    ];
    let body = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..300),
        any::<String>().prop_map(|s| format!("{{\"partnerId\":{s:?}}}").into_bytes()),
        Just(b"{\"partnerId\":null,\"tenantId\":[1]}".to_vec()),
    ];
    let strategy = (
        0..paths.len(),
        proptest::collection::vec((name, value), 0..6),
        body,
        any::<bool>(),
    );
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let requests = std::sync::Mutex::new(Vec::new());
    runner
        .run(&strategy, |(p, params, body, post)| {
            let query: Vec<String> = params
                .iter()
                .map(|(k, v)| {
                    let v = if v.starts_with('%') {
                        v.clone()
                    } else {
                        url::form_urlencoded::byte_serialize(v.as_bytes()).collect()
                    };
                    format!("{k}={v}")
                })
                .collect();
            let url = format!("{}{}?{}", s.base_url, paths[p], query.join("&"));
            requests.lock().unwrap().push((url, body, post));
            Ok(())
        })
        .unwrap();
    for (url, body, post) in requests.into_inner().unwrap() {
        let req = if post {
            c.post(&url)
                .header("content-type", "application/json")
                .body(body)
        } else {
            c.get(&url)
        };
        let r = req
            .header("authorization", "Bearer lk_enterprise_1")
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let bytes = r.bytes().await.unwrap();
        assert!(
            status < 500,
            "{status} for {url}: {}",
            String::from_utf8_lossy(&bytes)
        );
        if status >= 400 {
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert!(v["error"]["code"].is_string(), "{url}: {v}");
        }
    }
}
