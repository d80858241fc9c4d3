//! `qr.logo-hidden` and `qr.logo-unpaid` in front of both implementations: a logo drawn where
//! it was hidden, or drawn for a plan without logos, fails the check that owns it; a target
//! that raises the level for a hidden logo and draws none passes (the real service raises it
//! for a logo).

use crate::common;

use std::io::Cursor;

use common::broken::{
    Answer, Defect, Incoming, Row,
    Then::{Fails, NothingFails, Passes},
    run_table,
};

const CHECKS: &[&str] = &["qr.logo-hidden", "qr.logo-unpaid"];

fn query_has(inc: &Incoming, name: &str, value: Option<&str>) -> bool {
    url::form_urlencoded::parse(inc.query.as_bytes())
        .any(|(k, v)| k == name && value.is_none_or(|want| v == want))
}

fn free(inc: &Incoming) -> bool {
    inc.headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.starts_with("Bearer lk_free_"))
}

/// The answer's picture with a white square in its centre, a seventh of its side: a logo
/// drawn over the code (small enough that the code still reads at level L).
fn draw_logo(ans: &mut Answer) {
    let Ok(img) = image::load_from_memory(&ans.body) else {
        return;
    };
    let mut img = img.to_rgb8();
    let (w, h) = img.dimensions();
    let side = w.min(h) / 7;
    for y in (h - side) / 2..(h + side) / 2 {
        for x in (w - side) / 2..(w + side) / 2 {
            img.put_pixel(x, y, image::Rgb([255, 255, 255]));
        }
    }
    let mut out = Vec::new();
    if img
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .is_ok()
    {
        ans.body = out;
    }
}

/// A logo drawn although hideLogo=true.
fn hidden_logo_drawn() -> Defect {
    Defect::after(|inc, ans| {
        if inc.path == "/qr" && ans.status == 200 && query_has(inc, "hideLogo", Some("true")) {
            draw_logo(ans);
        }
    })
}

/// A Free key's logo let through to the implementation (which refuses or ignores it) and
/// drawn on its answer.
fn unpaid_logo_drawn() -> Defect {
    Defect {
        before: Some(Box::new(|inc| {
            if inc.path == "/qr" && free(inc) && query_has(inc, "logo", None) {
                let q: Vec<(String, String)> = url::form_urlencoded::parse(inc.query.as_bytes())
                    .filter(|(k, _)| k != "logo")
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                inc.query = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(q)
                    .finish();
                inc.headers
                    .insert("x-defect-logo", http::HeaderValue::from_static("1"));
            }
        })),
        after: Some(Box::new(|inc, ans| {
            if ans.status == 200 && inc.headers.contains_key("x-defect-logo") {
                draw_logo(ans);
            }
        })),
        hold: None,
    }
}

/// Legal: a hidden logo asked for raises the level to Q, and none is drawn.
fn hidden_logo_raises_the_level() -> Defect {
    Defect::before(|inc| {
        if inc.path == "/qr" && query_has(inc, "hideLogo", Some("true")) {
            let q: Vec<(String, String)> = url::form_urlencoded::parse(inc.query.as_bytes())
                .filter(|(k, _)| k != "level")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .chain([("level".to_string(), "Q".to_string())])
                .collect();
            inc.query = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(q)
                .finish();
        }
    })
}

const LOGO_DEFECTS: &[Row] = &[
    Row::new(
        "no defect",
        Defect::none,
        CHECKS,
        &[NothingFails, Passes("qr.logo-hidden")],
    ),
    Row::new(
        "a logo drawn although hideLogo=true",
        hidden_logo_drawn,
        CHECKS,
        &[Fails("qr.logo-hidden")],
    ),
    Row::new(
        "a logo drawn for a Free key",
        unpaid_logo_drawn,
        CHECKS,
        &[Fails("qr.logo-unpaid")],
    ),
    Row::new(
        "a hidden logo raises the level to Q, none drawn (legal)",
        hidden_logo_raises_the_level,
        CHECKS,
        &[NothingFails, Passes("qr.logo-hidden")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logo_drawn_where_it_must_not_be_fails_and_legal_choices_pass() {
    run_table(LOGO_DEFECTS).await;
}
