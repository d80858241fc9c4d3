//! Header semantics on synthetic values.

use super::*;

const NOW: f64 = 1_800_000_000.0;
const W: Duration = Duration::from_secs(60);

fn answer<'a>(t: f64, status: u16, reset: Option<&'a str>, retry: Option<&'a str>) -> Answer<'a> {
    Answer {
        sent: t - 0.01,
        recv: t,
        status,
        remaining: None,
        reset,
        retry_after: retry,
    }
}

#[test]
fn reset_units_are_told_apart() {
    assert_eq!(
        reset_unit("1800000030"),
        ResetUnit::EpochSeconds(1_800_000_030)
    );
    assert_eq!(
        reset_unit(" 1800000030000 "),
        ResetUnit::EpochMillis(1_800_000_030_000)
    );
    assert_eq!(reset_unit("30"), ResetUnit::SecondsUntil(30));
    assert_eq!(reset_unit("soon"), ResetUnit::NotInteger("soon".into()));
    assert_eq!(reset_unit("-3"), ResetUnit::NotInteger("-3".into()));
}

#[test]
fn retry_after_reads_both_rfc_forms() {
    assert_eq!(parse_retry_after("7"), Some(RetryAfter::Seconds(7)));
    let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(NOW as u64 + 5));
    let ra = parse_retry_after(&date).unwrap();
    assert_eq!(ra.wait_secs(NOW), 5.0);
    assert_eq!(
        ra.wait_secs(NOW + 10.0),
        0.0,
        "a date in the past: retry now"
    );
    assert_eq!(parse_retry_after("-3"), None);
    assert_eq!(parse_retry_after("soon"), None);
}

#[test]
fn the_reference_s_headers_round_up_and_read_back_as_the_spec_s_units() {
    let wall = UNIX_EPOCH + Duration::from_secs(NOW as u64);
    let h = RateHeaders::new(60, 0, Duration::from_millis(39_500), wall, true);
    assert_eq!(h.retry_after, Some(40));
    assert_eq!(h.reset_epoch, NOW as u64 + 40);
    let names: Vec<&str> = h.pairs().map(|(n, _)| n).collect();
    assert_eq!(names, [LIMIT, REMAINING, RESET, RETRY_AFTER]);
    let reset = h.reset_epoch.to_string();
    let retry = "40";
    let seq = [answer(NOW, 429, Some(&reset), Some(retry))];
    assert_eq!(judge_resets(&seq, W).unwrap().verdict, Verdict::Pass);
    assert_eq!(judge_retry_afters(&seq, W).unwrap().verdict, Verdict::Pass);
    // Admitted: no Retry-After, and a wait of zero still says at least 1 s when throttled.
    let h = RateHeaders::new(60, 59, Duration::ZERO, wall, false);
    assert_eq!(h.retry_after, None);
    assert_eq!(h.pairs().count(), 3);
    assert_eq!(
        RateHeaders::new(60, 0, Duration::ZERO, wall, true).retry_after,
        Some(1)
    );
}

#[test]
fn resets_in_the_wrong_unit_or_place_fail_and_say_why() {
    let verdict = |resets: &[&str]| {
        let seq: Vec<Answer> = resets
            .iter()
            .enumerate()
            .map(|(i, r)| answer(NOW + i as f64, 200, Some(r), None))
            .collect();
        judge_resets(&seq, W).map(|j| (j.verdict, j.actual))
    };
    assert_eq!(
        verdict(&["1800000060", "1800000060"]).unwrap().0,
        Verdict::Pass
    );
    let (v, why) = verdict(&["1800000060000"]).unwrap();
    assert_eq!((v, why.contains("milliseconds")), (Verdict::Fail, true));
    let (v, why) = verdict(&["60"]).unwrap();
    assert_eq!((v, why.contains("seconds until")), (Verdict::Fail, true));
    let (v, why) = verdict(&["1799999990"]).unwrap();
    assert_eq!((v, why.contains("in the past")), (Verdict::Fail, true));
    let (v, why) = verdict(&["1800000100"]).unwrap();
    assert_eq!(
        (v, why.contains("beyond one window")),
        (Verdict::Fail, true)
    );
    let (v, why) = verdict(&["1800000060", "1800000050"]).unwrap();
    assert_eq!((v, why.contains("backwards")), (Verdict::Fail, true));
    // 1 s of rounding is not backwards; no Reset at all is not judged here.
    assert_eq!(
        verdict(&["1800000060", "1800000059"]).unwrap().0,
        Verdict::Pass
    );
    assert_eq!(verdict(&[]), None);
}

#[test]
fn reset_backwards_only_between_exchanges_that_did_not_overlap() {
    // In flight together (both sent before either answered): either order is legal.
    let overlapping = [(0, 0.0, 0.5, 120), (1, 0.1, 0.4, 114)];
    assert_eq!(reset_backwards(&overlapping), None);
    // The second was sent after the first's answer: it may not go back.
    let sequential = [(0, 0.0, 0.1, 120), (1, 0.2, 0.3, 114)];
    assert_eq!(reset_backwards(&sequential), Some((1, 120, 114)));
    assert_eq!(
        reset_backwards(&[(0, 0.0, 0.1, 120), (1, 0.2, 0.3, 119)]),
        None
    );
    assert_eq!(
        reset_backwards(&[(0, 0.0, 0.1, 114), (1, 0.2, 0.3, 120)]),
        None
    );
}

#[test]
fn retry_after_is_judged_in_either_form_against_the_window_and_reset() {
    let reset = "1800000030";
    let verdict = |retry: Option<&str>| {
        judge_retry_afters(&[answer(NOW, 429, Some(reset), retry)], W).map(|j| j.verdict)
    };
    assert_eq!(verdict(Some("30")), Some(Verdict::Pass));
    // Shorter than Reset: the limiter's choice (retrying judges honesty).
    assert_eq!(verdict(Some("1")), Some(Verdict::Pass));
    assert_eq!(verdict(Some("45")), Some(Verdict::Fail), "past the reset");
    assert_eq!(verdict(Some("30000")), Some(Verdict::Fail), "milliseconds");
    assert_eq!(verdict(None), Some(Verdict::Fail));
    assert_eq!(verdict(Some("-3")), Some(Verdict::Fail));
    let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(NOW as u64 + 30));
    assert_eq!(verdict(Some(&date)), Some(Verdict::NonStrict));
    // No 429: nothing to judge.
    assert_eq!(
        judge_retry_afters(&[answer(NOW, 200, Some(reset), None)], W),
        None
    );
}

#[test]
fn remaining_reaches_zero_before_the_first_429() {
    let seq = |rem: &[&'static str]| {
        let mut v: Vec<Answer> = rem
            .iter()
            .enumerate()
            .map(|(i, r)| Answer {
                remaining: Some(r),
                ..answer(NOW + i as f64, 200, None, None)
            })
            .collect();
        v.push(answer(NOW + rem.len() as f64, 429, None, Some("1")));
        judge_remaining_before_429(&v).map(|j| j.verdict)
    };
    assert_eq!(seq(&["2", "1", "0"]), Some(Verdict::Pass));
    assert_eq!(seq(&["2", "1"]), Some(Verdict::Fail));
    assert_eq!(seq(&[]), None);
}

#[test]
fn remaining_may_stay_or_rise_when_quota_comes_back_but_must_count() {
    let trend = |v: &[u64]| remaining_trend(&v.iter().map(|x| Some(*x)).collect::<Vec<_>>());
    // Exact counting; a refill now and then (equal pairs); a window boundary (a rise).
    assert_eq!(
        trend(&[5, 4, 3, 2, 1, 0]),
        RemainingTrend::Counting { pairs: 5 }
    );
    assert_eq!(
        trend(&[59, 58, 57, 57, 56, 55, 55, 54]),
        RemainingTrend::Counting { pairs: 7 }
    );
    assert_eq!(
        trend(&[2, 1, 0, 59, 58]),
        RemainingTrend::Counting { pairs: 4 }
    );
    // Frozen, or dropping by two: not counting this client's requests one by one.
    assert!(matches!(
        trend(&[42, 42, 42, 42, 42]),
        RemainingTrend::Stuck {
            fell_by_one: 0,
            pairs: 4
        }
    ));
    assert_eq!(
        trend(&[10, 9, 7]),
        RemainingTrend::Jumped {
            at: 2,
            from: 9,
            to: 7
        }
    );
    // Missing values are skipped, not guessed.
    assert_eq!(
        remaining_trend(&[Some(3), None, Some(1)]),
        RemainingTrend::Counting { pairs: 0 }
    );
}

#[test]
fn quota_is_back_when_reset_or_retry_after_says_in_any_unit() {
    let back = quota_back(429, Some("1800000030"), Some("20"), NOW);
    assert_eq!(back.reset, Some(NOW + 30.0));
    assert_eq!(back.spec_reset(), Some(NOW + 30.0));
    assert_eq!(back.retry, Some(NOW + 20.0));
    assert_eq!(back.latest(), Some(NOW + 30.0));
    // Milliseconds and seconds-until are read for what they are; pacing trusts neither.
    let millis = quota_back(200, Some("1800000030000"), None, NOW);
    assert_eq!(
        (millis.reset, millis.spec_reset()),
        (Some(NOW + 30.0), None)
    );
    let until = quota_back(200, Some("12"), Some("40"), NOW);
    assert_eq!(until.reset, Some(NOW + 12.0));
    assert_eq!(until.retry, None, "Retry-After counts on a 429 only");
    let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(NOW as u64 + 5));
    assert_eq!(
        quota_back(429, Some("soon"), Some(&date), NOW).latest(),
        Some(NOW + 5.0)
    );
}

/// A target 4 s away (a slow answer): the server decided somewhere between the send and the
/// receipt, so a Reset and a Retry-After true at the send are not failed for the round trip;
/// a Reset before the send still is.
#[test]
fn times_allow_for_the_round_trip() {
    let slow = |reset: &'static str, retry: Option<&'static str>| Answer {
        sent: NOW,
        recv: NOW + 4.0,
        status: 429,
        remaining: Some("0"),
        reset: Some(reset),
        retry_after: retry,
    };
    let at_send = "1800000001";
    let resets = judge_resets(&[slow(at_send, Some("1"))], W).unwrap();
    assert_eq!(resets.verdict, Verdict::Pass, "{resets:?}");
    let retry = judge_retry_afters(&[slow(at_send, Some("1"))], W).unwrap();
    assert_eq!(retry.verdict, Verdict::Pass, "{retry:?}");
    let before_send = judge_resets(&[slow("1799999995", Some("1"))], W).unwrap();
    assert_eq!(before_send.verdict, Verdict::Fail, "{before_send:?}");
    let longer = judge_retry_afters(&[slow(at_send, Some("9"))], W).unwrap();
    assert_eq!(longer.verdict, Verdict::Fail, "{longer:?}");
}

#[test]
fn a_limit_is_the_plans_or_its_hourly_reading_for_check_and_load_alike() {
    use super::LimitReading::*;
    assert_eq!(super::read_limit(600, 600, true), Plan);
    // The per-hour reading of a per-minute limit: only for the standard class.
    assert_eq!(super::read_limit(36_000, 600, true), PerHour);
    assert_eq!(super::read_limit(480, 8, false), Wrong);
    // Another plan's figure.
    assert_eq!(super::read_limit(60, 600, true), Wrong);
    assert_eq!(super::read_limit(u64::MAX, u64::MAX, true), Plan);
}

/// A fixed window of 6 s read by a target clock `skew` seconds off the client's, sampled at
/// every twelfth of a window: (the answers' Reset, their Date), sent at NOW + i/2 s.
fn skewed_fixed_window(skew: f64) -> Vec<(f64, String, String)> {
    (0..24)
        .map(|i| {
            let t = NOW + 0.01 + f64::from(i) * 0.5;
            let theirs = t + skew;
            let end = ((theirs / 6.0).floor() + 1.0) * 6.0;
            let date = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs_f64(theirs));
            (t, (end.ceil() as u64).to_string(), date)
        })
        .collect()
}

#[test]
fn a_target_clock_seconds_off_is_allowed_for_by_its_date() {
    let w = Duration::from_secs(6);
    for skew in [-5.0, 5.0] {
        let samples = skewed_fixed_window(skew);
        let seq: Vec<Answer> = samples
            .iter()
            .map(|(t, reset, _)| answer(*t, 200, Some(reset), None))
            .collect();
        let dates = samples.iter().map(|(t, _, d)| (t - 0.01, *t, d.as_str()));
        let offset = clock_offset(dates).unwrap();
        assert!((offset - skew).abs() <= 0.6, "{skew}: {offset}");
        // Without the offset, the client's clock puts some Resets out of range.
        let naive = judge_resets(&seq, w).unwrap();
        assert_eq!(naive.verdict, Verdict::Fail, "{skew}: {naive:?}");
        let judged = judge_shared_skewed(&seq, w, Some(offset));
        assert!(
            judged.iter().all(|(_, j)| j.verdict == Verdict::Pass),
            "{skew}: {judged:?}"
        );
        // Faults still show: milliseconds, and a Reset far in the past.
        let millis = format!("{}000", samples[0].1);
        let past = (NOW as u64 - 30).to_string();
        for bad in [millis, past] {
            let one = [answer(NOW, 200, Some(&bad), None)];
            let j = judge_shared_skewed(&one, w, Some(offset));
            assert_eq!(j[0].1.verdict, Verdict::Fail, "{skew} {bad}: {j:?}");
        }
    }
}

#[test]
fn no_date_no_offset() {
    assert_eq!(clock_offset([(NOW, NOW + 0.1, "yesterday")]), None);
    assert_eq!(clock_offset(std::iter::empty()), None);
}

#[test]
fn a_rate_field_twice_is_named_with_its_values_whatever_their_case() {
    let names = ["X-RateLimit-Limit", "X-RateLimit-Remaining"];
    let once = [("x-ratelimit-limit", "60"), ("x-ratelimit-remaining", "59")];
    assert_eq!(repeated(&names, once.iter().copied()), None);
    let twice = [
        ("x-ratelimit-limit", "60"),
        ("X-RateLimit-Remaining", "59"),
        ("x-ratelimit-remaining", "58"),
    ];
    assert_eq!(
        repeated(&names, twice.iter().copied()),
        Some((
            "X-RateLimit-Remaining".into(),
            vec!["59".into(), "58".into()]
        ))
    );
    let retry = [("retry-after", "1"), ("Retry-After", "1")];
    assert_eq!(
        repeated(&names, retry.iter().copied()).map(|r| r.0),
        Some(RETRY_AFTER.to_string())
    );
}
