//! What the official SDK sends, the reference accepts. The request lines below were captured
//! by running PyPI `dub` 0.39.0 (`Dub(token=..., server_url=...)`, then
//! `tags.list(request={"ids": ["a", "b"]})` and `qr_codes.get(request={"url": ...})`) against
//! a plain socket on 127.0.0.1: repeated `ids`, every default sent explicitly, numbers as
//! floats and `hideLogo=false` on every QR call.

use crate::common;

use common::*;
use linkcert::qr;

const SDK_TAGS: &str = "/tags?sortBy=name&sortOrder=asc&ids={a}&ids={b}&pageSize=100";
const SDK_QR: &str = "/qr?url=https%3A%2F%2Fexample.com&size=600.0&level=L&fgColor=%23000000&bgColor=%23FFFFFF&hideLogo=false&margin=2.0&includeMargin=true";

async fn get(c: &reqwest::Client, url: String, key: &str) -> reqwest::Response {
    c.get(url)
        .header("authorization", format!("Bearer {key}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_sdk_s_tag_listing_with_repeated_ids_gets_exactly_those_tags() {
    let s = reference(None).await;
    let c = client(&s);
    let (_, all) =
        json(get(&c, format!("{}/tags?pageSize=100", s.base_url), "lk_free_1").await).await;
    let (a, b) = (
        all[5]["id"].as_str().unwrap(),
        all[60]["id"].as_str().unwrap(),
    );
    let mut want = vec![a.to_string(), b.to_string()];
    want.sort();
    let ids_of = |v: &serde_json::Value| {
        let mut v: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let sdk = SDK_TAGS.replace("{a}", a).replace("{b}", b);
    for query in [
        sdk,
        format!("/tags?ids={a},{b}"),
        format!("/tags?ids={a}&ids={b},tag_missing"),
    ] {
        let (status, body) =
            json(get(&c, format!("{}{query}", s.base_url), "lk_free_1").await).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(ids_of(&body), want, "{query}");
    }
}

#[tokio::test]
async fn the_sdk_s_qr_call_works_on_free_and_a_real_paid_feature_is_still_refused() {
    let s = reference(None).await;
    let c = client(&s);
    let r = get(&c, format!("{}{SDK_QR}", s.base_url), "lk_free_1").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    let png = r.bytes().await.unwrap();
    let insp = qr::inspect_png(&png, qr::Rgb([0, 0, 0]), qr::Rgb([255, 255, 255])).unwrap();
    assert_eq!((insp.width, insp.height), (600, 600));
    assert_eq!(insp.decoded.unwrap().content, b"https://example.com");
    // hideLogo=true and a logo are paid features: Free is refused.
    for paid in ["hideLogo=true", "logo=https%3A%2F%2Fexample.com%2Fl.png"] {
        let url = format!("{}/qr?url=https%3A%2F%2Fexample.com&{paid}", s.base_url);
        let (status, body) = json(get(&c, url, "lk_free_1").await).await;
        assert_envelope(status, &body, 403);
    }
}
