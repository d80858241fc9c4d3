//! The judge on synthetic runs: what a real limiter of each kind would have answered.

use super::admitted::overloaded_by_sends;

/// A burst of 1.5N straddling a fixed window's boundary: N/2 + ... all admitted, since
/// each side of the boundary has a window of its own. Legal: not "not enforced".
#[test]
fn a_burst_straddling_a_fixed_window_boundary_is_not_failed() {
    use crate::load::engine::{Record, Run};
    use crate::load::scenario::Scenario;
    use crate::target::{PlanKey, Target};
    let spec = crate::spec::Spec::embedded().unwrap();
    let t = Target {
        base_url: "https://x".into(),
        rate_window: std::time::Duration::from_secs(6),
        keys: vec![PlanKey {
            plan: "free".into(),
            key: "k".into(),
        }],
        ..Target::default()
    };
    let r = Scenario::load("retry-after-honesty")
        .unwrap()
        .resolve(&spec, &t)
        .unwrap();
    let slots = super::super::schedule::build(&r);
    let wall0 = 1_800_000_000.0;
    // The boundary falls in the middle of the burst: half before, half after.
    let mid = slots.len() / 2;
    let boundary = slots[mid].due.as_secs_f64();
    let records: Vec<Record> = slots
        .iter()
        .map(|sl| {
            let t = sl.due.as_secs_f64();
            let end = if t < boundary {
                boundary
            } else {
                boundary + 6.0
            };
            Record {
                key: 0,
                op: 0,
                due: t,
                sent: t,
                recv: t + 0.001,
                status: Some(200),
                limit: Some("60".into()),
                remaining: Some("1".into()),
                reset: Some(format!("{}", (wall0 + end).ceil() as u64)),
                retry_after: None,
                code: None,
                error: None,
                retry: false,
            }
        })
        .collect();
    let run = Run {
        t0: std::time::Instant::now(),
        slots,
        records,
        wall0,
        users: 8,
        goose_requests: 0,
        goose_reports: Vec::new(),
    };
    let result = super::judge(&r, &run, &[("free#1".into(), 0)]);
    let failed: Vec<&str> = result
        .findings
        .iter()
        .filter(|f| f.verdict == crate::verdict::Verdict::Fail)
        .map(|f| f.check.as_str())
        .collect();
    assert!(!failed.contains(&"load.admitted"), "{failed:?}");
    // Twice the limit in a rolling window is fixed-window semantics: reported, not failed;
    // with no 429 there is nothing to retry.
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn overload_is_read_from_the_real_send_times() {
    // 10 per window of 1 s for 3 windows: overloaded at N = 10, not at N = 11.
    let even: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.1).collect();
    assert!(overloaded_by_sends(&even, 10, 1.0));
    assert!(!overloaded_by_sends(&even, 11, 1.0));
    // A generator that stalled through the second window: not overloaded there.
    let stalled: Vec<f64> = (0..30)
        .map(|i| f64::from(i) * 0.1)
        .filter(|t| !(1.0..2.0).contains(t))
        .chain([2.95])
        .collect();
    assert!(!overloaded_by_sends(&stalled, 10, 1.0));
    // Late but dense: sends that all came late still overload every window.
    let late: Vec<f64> = even.iter().map(|t| t + 0.5).collect();
    assert!(overloaded_by_sends(&late, 10, 1.0));
    assert!(!overloaded_by_sends(&[], 1, 1.0));
    assert!(!overloaded_by_sends(&[0.0, 0.5], 1, 1.0));
}
