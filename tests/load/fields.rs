//! `load` judging the IETF RateLimit fields (load.fields): both implementations, each sending
//! its own draft's form (the reference -11's, the second implementation -07's), pass; in front
//! of both, the defect proxy's untrue fields fail load.fields with the field named and quoted;
//! a target without them gets no load.fields finding at all.

use super::*;
use common::broken::broken_with_fields;
use common::fields::{
    malformed, quota_plus_one, remaining_plus_three, remaining_stuck_alone, reset_in_milliseconds,
};

/// The load.fields findings of `scenario`.
fn findings<'a>(r: &'a LoadReport, scenario: &str) -> Vec<&'a linkcert::load::Finding> {
    r.scenarios
        .iter()
        .filter(|s| s.name == scenario)
        .flat_map(|s| &s.findings)
        .filter(|f| f.check == "load.fields")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_implementations_pass_load_fields_and_without_the_fields_it_says_nothing() {
    side_by_side(|imp| async move {
        let with = broken_with_fields(imp, WINDOW, Defect::none()).await;
        let r = run(
            with.target(),
            vec![free_overload()],
            &format!("fields-{imp:?}"),
        )
        .await;
        assert_eq!(
            r.failed_checks("free-overload"),
            Vec::<String>::new(),
            "{imp:?}: {}",
            r.summary()
        );
        let f = findings(&r, "free-overload");
        assert!(
            !f.is_empty() && f.iter().all(|f| f.verdict == Verdict::Pass),
            "{imp:?}: {f:?}"
        );
        let without = broken_on(imp, WINDOW, Defect::none()).await;
        let r = run(
            without.target(),
            vec![free_overload()],
            &format!("no-fields-{imp:?}"),
        )
        .await;
        assert!(
            findings(&r, "free-overload").is_empty(),
            "{imp:?}: {}",
            r.summary()
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrue_fields_fail_load_fields_naming_and_quoting_the_field() {
    type Make = fn() -> Defect;
    let defects: [(&str, Make, &str); 5] = [
        ("quota", quota_plus_one, "ratelimit-policy: "),
        (
            "history",
            remaining_stuck_alone,
            "do not follow from the key's own history",
        ),
        (
            "remaining",
            remaining_plus_three,
            "as X-RateLimit-Remaining says",
        ),
        (
            "reset-ms",
            reset_in_milliseconds,
            "milliseconds, or an epoch time",
        ),
        ("malformed", malformed, "ratelimit: \"standard;r=5"),
    ];
    side_by_side(|imp| async move {
        for (name, make, says) in defects {
            let b = broken_with_fields(imp, WINDOW, make()).await;
            let r = run(
                b.target(),
                vec![free_overload()],
                &format!("fields-{name}-{imp:?}"),
            )
            .await;
            assert_fails(imp, &r, "free-overload", "load.fields");
            let f = findings(&r, "free-overload");
            assert!(
                f.iter()
                    .any(|f| format!("{} {} {}", f.message, f.expected, f.actual).contains(says)),
                "{imp:?} {name}: no load.fields finding says {says:?}: {f:?}"
            );
        }
    })
    .await;
}
