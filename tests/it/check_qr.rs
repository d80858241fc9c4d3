//! The qr family against the reference (no failures) and against broken servers: each defect
//! makes the check that owns it fail, and hostile bodies fail `qr.png` without a panic or hang.

use crate::common;

use std::io::Cursor;
use std::time::Instant;

use common::broken::{Answer, BOTH, Defect, Incoming, broken_on, failed, run_check};
use linkcert::qr::{self, EcLevel, RenderOptions};
use linkcert::verdict::Verdict;

/// A 200 from GET /qr (the defects only touch those).
fn is_png_answer(inc: &Incoming, ans: &Answer) -> bool {
    inc.path == "/qr" && ans.status == 200
}

/// A 200 from GET /qr for an explicitly small image: the costly defects (re-encoding with
/// `image`, 50 MB bodies) touch only those, which keeps the file fast on a debug build.
fn is_small_png_answer(inc: &Incoming, ans: &Answer) -> bool {
    is_png_answer(inc, ans)
        && query_pairs(&inc.query)
            .iter()
            .any(|(k, v)| k == "size" && v.parse::<f64>().is_ok_and(|s| (1.0..=400.0).contains(&s)))
}

fn query_pairs(q: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(q.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn set_query(inc: &mut Incoming, name: &str, value: Option<&str>) {
    let mut pairs = query_pairs(&inc.query);
    pairs.retain(|(k, _)| k != name);
    if let Some(v) = value {
        pairs.push((name.to_string(), v.to_string()));
    }
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &pairs {
        s.append_pair(k, v);
    }
    inc.query = s.finish();
}

fn encode_png(img: &image::RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// Failed check ids and the summary, for `defect()` in front of each implementation.
async fn failing_checks(defect: impl Fn() -> Defect, only: &[&str]) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for imp in BOTH {
        let started = Instant::now();
        let b = broken_on(imp, 6.0, defect()).await;
        let r = run_check(b.target(), only).await;
        eprintln!("{imp:?} {only:?}: {:?}", started.elapsed());
        out.push((failed(&r), format!("{imp:?}: {}", r.summary())));
    }
    out
}

fn assert_fails(results: &[(Vec<String>, String)], id: &str) {
    for (failed, summary) in results {
        assert!(
            failed.contains(&id.to_string()),
            "{id} should fail:\n{summary}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_every_qr_check() {
    let started = Instant::now();
    for imp in BOTH {
        let b = broken_on(imp, 6.0, Defect::none()).await;
        let r = run_check(b.target(), &["qr"]).await;
        eprintln!(
            "qr family: {} requests in {:?}\n{imp:?}: {}",
            r.requests,
            started.elapsed(),
            r.summary()
        );
        for c in &r.checks {
            eprintln!(
                "{} {} cases={} {:?}",
                c.id,
                c.verdict.as_str(),
                c.cases,
                c.skipped
            );
            for f in &c.findings {
                eprintln!("    {}", f.message);
            }
        }
        assert_eq!(failed(&r), Vec::<String>::new(), "{imp:?}: {}", r.summary());
        for id in [
            "qr.png",
            "qr.size",
            "qr.colours",
            "qr.content",
            "qr.level",
            "qr.margin",
            "qr.rejects",
            "qr.choices",
        ] {
            let cases: u64 = r
                .checks
                .iter()
                .filter(|c| c.id == id)
                .map(|c| c.cases)
                .sum();
            assert!(cases > 0, "{id} judged nothing:\n{imp:?}: {}", r.summary());
        }
        // The reference's choices are observed, not failed.
        assert!(
            r.checks
                .iter()
                .any(|c| c.id == "qr.choices" && c.verdict == Verdict::Informational)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_png_fails_qr_png() {
    let f = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_png_answer(inc, ans) {
                    let half = ans.body.len() / 2;
                    ans.body.truncate(half);
                }
            })
        },
        &["qr.png"],
    )
    .await;
    assert_fails(&f, "qr.png");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_or_jpeg_bytes_sent_as_image_png_fail_qr_png() {
    let html = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_png_answer(inc, ans) {
                    ans.body = b"<html><body>QR</body></html>".to_vec();
                }
            })
        },
        &["qr.png"],
    )
    .await;
    assert_fails(&html, "qr.png");
    let jpeg = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_png_answer(inc, ans) {
                    let mut body = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F'];
                    body.extend((0..4000u32).map(|i| (i * 7919 % 251) as u8));
                    ans.body = body;
                }
            })
        },
        &["qr.png"],
    )
    .await;
    assert_fails(&jpeg, "qr.png");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resized_png_fails_qr_size() {
    let f = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_small_png_answer(inc, ans)
                    && let Ok(img) = image::load_from_memory(&ans.body)
                {
                    let img = img.to_rgb8();
                    let (w, h) = (img.width() + 7, img.height() + 7);
                    let resized =
                        image::imageops::resize(&img, w, h, image::imageops::FilterType::Nearest);
                    ans.body = encode_png(&resized);
                }
            })
        },
        &["qr.size"],
    )
    .await;
    assert_fails(&f, "qr.size");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_colours_fail_qr_colours() {
    // Every channel off by 8: still a readable code, but not the colours asked for.
    let f = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_small_png_answer(inc, ans)
                    && let Ok(img) = image::load_from_memory(&ans.body)
                {
                    let mut img = img.to_rgb8();
                    for p in img.pixels_mut() {
                        for c in p.0.iter_mut() {
                            *c ^= 0x08;
                        }
                    }
                    ans.body = encode_png(&img);
                }
            })
        },
        &["qr.colours"],
    )
    .await;
    assert_fails(&f, "qr.colours");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_for_another_url_fails_qr_content() {
    let f = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if !is_png_answer(inc, ans) {
                    return;
                }
                let q = query_pairs(&inc.query);
                let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
                let size = get("size")
                    .and_then(|s| s.parse::<f64>().ok())
                    .map_or(600, |s| s as u32);
                let opts = RenderOptions {
                    size,
                    margin: 2,
                    level: get("level").and_then(EcLevel::parse).unwrap_or(EcLevel::L),
                    fg: get("fgColor")
                        .and_then(qr::parse_hex_color)
                        .unwrap_or(qr::Rgb([0, 0, 0])),
                    bg: get("bgColor")
                        .and_then(qr::parse_hex_color)
                        .unwrap_or(qr::Rgb([255, 255, 255])),
                    logo: false,
                };
                if let Ok(png) = qr::render_png(b"https://evil.example/elsewhere", &opts) {
                    ans.body = png;
                }
            })
        },
        &["qr.content"],
    )
    .await;
    assert_fails(&f, "qr.content");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_level_than_asked_fails_qr_level() {
    let f = failing_checks(
        || {
            Defect::before(|inc| {
                if inc.path == "/qr" {
                    set_query(inc, "level", Some("L"));
                }
            })
        },
        &["qr.level"],
    )
    .await;
    assert_fails(&f, "qr.level");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignored_margin_fails_qr_margin() {
    let f = failing_checks(
        || {
            Defect::before(|inc| {
                if inc.path == "/qr" {
                    set_query(inc, "margin", Some("2"));
                }
            })
        },
        &["qr.margin"],
    )
    .await;
    assert_fails(&f, "qr.margin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepting_a_missing_url_or_a_bad_level_fails_qr_rejects() {
    let f = failing_checks(
        || {
            Defect::before(|inc| {
                if inc.path != "/qr" {
                    return;
                }
                let q = query_pairs(&inc.query);
                if !q.iter().any(|(k, _)| k == "url") {
                    set_query(inc, "url", Some("https://example.com/"));
                }
                if q.iter()
                    .any(|(k, v)| k == "level" && EcLevel::parse(v).is_none())
                {
                    set_query(inc, "level", Some("L"));
                }
            })
        },
        &["qr.rejects"],
    )
    .await;
    assert_fails(&f, "qr.rejects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_fail_qr_png_without_panic_or_hang() {
    // 50 MB: the runner reads 8 MiB and stops.
    let huge = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_small_png_answer(inc, ans) {
                    let mut body = ans.body.clone();
                    body.resize(50 * 1024 * 1024, 0);
                    ans.body = body;
                }
            })
        },
        &["qr.png"],
    )
    .await;
    assert_fails(&huge, "qr.png");
    // A PNG declaring 100000 x 100000 pixels (a decompression bomb's header).
    let bomb = failing_checks(
        || {
            Defect::after(|inc, ans| {
                if is_png_answer(inc, ans) {
                    ans.body = linkcert::qr::png_declaring(100_000, 100_000);
                }
            })
        },
        &["qr.png", "qr.size"],
    )
    .await;
    assert_fails(&bomb, "qr.png");
    assert_fails(&bomb, "qr.size");
}

/// A defect rewriting `size` before the target sees it: sizes in `range` are drawn at `to`,
/// still accepted (a target that clamps where it should refuse).
fn size_drawn_at(range: std::ops::RangeInclusive<f64>, to: &'static str) -> Defect {
    Defect::before(move |inc| {
        if inc.path != "/qr" {
            return;
        }
        let asked = query_pairs(&inc.query)
            .iter()
            .find(|(k, _)| k == "size")
            .and_then(|(_, v)| v.parse::<f64>().ok());
        if asked.is_some_and(|s| range.contains(&s)) {
            set_query(inc, "size", Some(to));
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_sizes_drawn_smaller_fail_qr_size() {
    // 1025..=2048 px drawn at 1024: both implementations accept these sizes, and the usual
    // matrix asks for none of them (its largest accepted size is 1000).
    let f = failing_checks(|| size_drawn_at(1025.0..=2048.0, "1024"), &["qr.size"]).await;
    assert_fails(&f, "qr.size");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_sizes_drawn_larger_fail_qr_size() {
    // 32..=99 px drawn at 100: the matrix's smallest accepted size is 100, and the sizes
    // 1 and 10 it tries are refused (not rewritten here).
    let f = failing_checks(|| size_drawn_at(32.0..=99.0, "100"), &["qr.size"]).await;
    assert_fails(&f, "qr.size");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_urls_losing_their_query_fail_qr_content() {
    // A url over 100 bytes is encoded without its query string: the usual cases' urls with a
    // query are shorter, the long ones (at each level's capacity) have none.
    let f = failing_checks(
        || {
            Defect::before(|inc| {
                if inc.path != "/qr" {
                    return;
                }
                let url = query_pairs(&inc.query)
                    .into_iter()
                    .find(|(k, _)| k == "url")
                    .map(|(_, v)| v);
                if let Some(u) = url
                    && u.len() > 100
                    && let Some((head, _)) = u.split_once('?')
                {
                    set_query(inc, "url", Some(head));
                }
            })
        },
        &["qr.content"],
    )
    .await;
    assert_fails(&f, "qr.content");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_margin_past_10_added_outside_the_size_fails_qr_size() {
    // From margin 11 on, the quiet zone is added around an image of the size asked (size +
    // 2 x margin px): the usual margins (0, 2, 4, 10) are drawn right, and the larger one they
    // try (50) both implementations refuse.
    let f = failing_checks(
        || {
            Defect::before(|inc| {
                if inc.path != "/qr" {
                    return;
                }
                let q = query_pairs(&inc.query);
                let get = |k: &str| {
                    q.iter()
                        .find(|(n, _)| n == k)
                        .and_then(|(_, v)| v.parse::<f64>().ok())
                };
                if let Some(m) = get("margin").filter(|m| (11.0..=64.0).contains(m)) {
                    let size = get("size").unwrap_or(600.0);
                    set_query(inc, "size", Some(&(size + 2.0 * m).to_string()));
                }
            })
        },
        &["qr.size", "qr.margin"],
    )
    .await;
    assert_fails(&f, "qr.size");
}
