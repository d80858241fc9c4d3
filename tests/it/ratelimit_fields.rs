//! The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11, and the earlier drafts'
//! forms). The reference sends -11's behind `serve --ratelimit-fields`, the second
//! implementation -07's Dictionary: both pass `ratelimit.fields`; without them nothing is judged;
//! in front of both, a defect proxy's untrue fields fail it with the field named and quoted.
//! The fields are read with the one parser `check` and `load` use (`rate_headers::ietf`).

use std::time::{SystemTime, UNIX_EPOCH};

use linkcert::rate_headers::ietf::{self, Fields, Form};
use linkcert::report::Report;

use crate::common::broken::{
    BOTH, Defect, Impl, Row, Then, broken_on, broken_with_fields, failed, run_check, run_table,
};
use crate::common::fields::{
    malformed, quota_plus_one, remaining_plus_three, remaining_stuck_alone, reset_in_milliseconds,
};
use crate::common::{client, header_u64, reference_with_fields};

/// An answer's fields, as `check` reads them.
fn fields(r: &reqwest::Response) -> Fields {
    let pairs: Vec<(&str, &str)> = r
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)))
        .collect();
    ietf::read_pairs(pairs.iter().copied())
        .expect("well formed")
        .unwrap_or_else(|| panic!("the fields on a {}", r.status()))
}

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

#[tokio::test]
async fn the_reference_s_fields_say_what_x_ratelimit_says_and_only_behind_the_flag() {
    let s = reference_with_fields(60.0).await;
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
        let f = fields(&r);
        let p = &f.policies[..];
        assert_eq!(p.len(), 1, "{f:?}");
        assert_eq!(
            (p[0].name.as_deref(), p[0].quota, p[0].window),
            (Some("standard"), 60, Some(60))
        );
        let m = &f.now[..];
        assert_eq!((m.len(), m[0].form), (1, Form::Lists));
        assert_eq!(m[0].policy.as_deref(), Some("standard"));
        let remaining = header_u64(&r, "x-ratelimit-remaining").expect("Remaining");
        assert_eq!(m[0].remaining, Some(remaining), "request {sent}");
        let reset = header_u64(&r, "x-ratelimit-reset").expect("Reset") as f64;
        let t = m[0].reset_in.expect("t") as f64;
        assert!(
            (reset - now - t).abs() <= 2.0,
            "request {sent}: t={t}, Reset {reset} at {now}"
        );
        if sent <= 60 {
            assert_eq!(r.status(), 200);
        } else {
            assert_eq!(r.status(), 429);
            assert_eq!(m[0].reset_in, header_u64(&r, "retry-after"));
        }
    }
    // An analytics request counts in the analytics class: its own policy, a 1 s window.
    let r = get("/analytics", "lk_pro_1").await.expect("an answer");
    assert_eq!(r.status(), 200);
    let f = fields(&r);
    let p = &f.policies[0];
    assert_eq!(
        (p.name.as_deref(), p.quota, p.window),
        (Some("analytics"), 2, Some(1))
    );
    assert_eq!(
        (f.now[0].policy.as_deref(), f.now[0].remaining),
        (Some("analytics"), Some(1))
    );

    // Without the flag: the spec's headers only.
    let plain = crate::common::reference(None).await;
    let r = client(&plain)
        .get(format!("{}/tags?pageSize=1", plain.base_url))
        .header("authorization", "Bearer lk_free_1")
        .send()
        .await
        .expect("an answer");
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), Some(60));
    for name in ietf::NAMES {
        assert!(r.headers().get(name).is_none(), "{name}");
    }
}

/// The checks the fields' runs judge: the fields, and a burst to a 429 and past it.
const ONLY: &[&str] = &["ratelimit.fields", "ratelimit.throttles"];

/// Answers `ratelimit.fields` judged.
fn judged(r: &Report) -> u64 {
    r.checks
        .iter()
        .filter(|c| c.id == "ratelimit.fields")
        .map(|c| c.cases)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_with_their_own_draft_s_fields_and_judge_nothing_without() {
    let runs = BOTH.map(|imp| async move {
        let with = broken_with_fields(imp, 6.0, Defect::none()).await;
        let without = broken_on(imp, 6.0, Defect::none()).await;
        let (with, without) = tokio::join!(
            run_check(with.target(), ONLY),
            run_check(without.target(), ONLY)
        );
        (imp, with, without)
    });
    for (imp, with, without) in futures::future::join_all(runs).await {
        assert_eq!(
            failed(&with),
            Vec::<String>::new(),
            "{imp:?}: {}",
            with.summary()
        );
        assert!(
            judged(&with) > 60,
            "{imp:?} judged {}: {}",
            judged(&with),
            with.summary()
        );
        // The units left judged over each key's history too.
        assert!(
            with.checks
                .iter()
                .any(|c| c.id == "ratelimit.fields" && c.operation.contains("key by key")),
            "{imp:?}: {}",
            with.summary()
        );
        assert_eq!(
            failed(&without),
            Vec::<String>::new(),
            "{imp:?}: {}",
            without.summary()
        );
        let rows: Vec<_> = without
            .checks
            .iter()
            .filter(|c| c.id == "ratelimit.fields")
            .collect();
        assert!(rows.is_empty(), "{imp:?} without the fields: {rows:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrue_fields_fail_ratelimit_fields_naming_and_quoting_the_field_in_front_of_both() {
    const FAILS: Then = Then::Fails("ratelimit.fields");
    run_table(&[
        Row::new(
            "a quota that is not the plan's limit",
            quota_plus_one,
            ONLY,
            &[FAILS, Then::Says("ratelimit.fields", "ratelimit-policy: ")],
        )
        .with_fields(),
        Row::new(
            "units left that are not X-RateLimit-Remaining's",
            remaining_plus_three,
            ONLY,
            &[
                FAILS,
                Then::Says("ratelimit.fields", "as X-RateLimit-Remaining says"),
            ],
        )
        .with_fields(),
        Row::new(
            "units left that never fall, and no X-RateLimit-Remaining",
            remaining_stuck_alone,
            ONLY,
            &[
                FAILS,
                Then::Says("ratelimit.fields", "the RateLimit fields' units left"),
            ],
        )
        .with_fields(),
        Row::new(
            "the reset in milliseconds",
            reset_in_milliseconds,
            ONLY,
            &[
                FAILS,
                Then::Says("ratelimit.fields", "milliseconds, or an epoch time"),
            ],
        )
        .with_fields(),
        Row::new(
            "a RateLimit field of no draft's form",
            malformed,
            ONLY,
            &[
                FAILS,
                Then::Says("ratelimit.fields", "ratelimit: \"standard;r=5"),
            ],
        )
        .with_fields(),
    ])
    .await;
}

/// Each implementation's form is its draft's, read as such (never a malformed -11 field).
#[tokio::test]
async fn each_implementation_s_form_is_read_as_its_own_draft() {
    for (imp, form) in [
        (Impl::Reference, Form::Lists),
        (Impl::Variant, Form::Dictionary),
    ] {
        let b = broken_with_fields(imp, 6.0, Defect::none()).await;
        let key = b
            .target()
            .keys
            .iter()
            .find(|k| k.plan == "free")
            .cloned()
            .expect("a Free key");
        let r = b
            .upstream
            .client()
            .get(format!("{}/tags?pageSize=1", b.url))
            .header("authorization", format!("Bearer {}", key.key))
            .send()
            .await
            .expect("an answer");
        assert_eq!(fields(&r).now[0].form, form, "{imp:?}");
    }
}
