//! The fields as built, read in every draft's form, and judged.

use super::*;

/// The fields of an answer with these (name, value) pairs.
fn fields(pairs: &[(&str, &str)]) -> Result<Option<Fields>, Malformed> {
    read(|name| combined(pairs.iter().copied(), name))
}

fn one(pairs: &[(&str, &str)]) -> Fields {
    fields(pairs).expect("well formed").expect("present")
}

#[test]
fn the_fields_read_back_as_built() {
    let policy = policy_field("standard", 600, Duration::from_secs(60)).unwrap();
    assert_eq!(policy, r#""standard";q=600;w=60"#);
    let now = ratelimit_field("standard", 42, 17).unwrap();
    assert_eq!(now, r#""standard";r=42;t=17"#);
    let f = one(&[(POLICY, &policy), (RATELIMIT, &now)]);
    assert_eq!(
        f.policies,
        vec![Policy {
            name: Some("standard".into()),
            quota: 600,
            window: Some(60),
            requests: true
        }]
    );
    assert_eq!(
        f.now,
        vec![Now {
            form: Form::Lists,
            policy: Some("standard".into()),
            limit: None,
            remaining: Some(42),
            reset_in: Some(17)
        }]
    );
}

#[test]
fn a_window_of_less_than_whole_seconds_has_no_w() {
    for (quota, window) in [
        (4, Duration::from_millis(100)),
        (60, Duration::from_millis(6_500)),
    ] {
        let policy = policy_field("analytics", quota, window).unwrap();
        let f = one(&[(POLICY, &policy)]);
        assert_eq!((f.policies[0].quota, f.policies[0].window), (quota, None));
    }
}

#[test]
fn what_the_field_cannot_carry_is_not_sent() {
    assert_eq!(
        policy_field("standard", u64::MAX, Duration::from_secs(60)),
        None
    );
    assert_eq!(ratelimit_field("stänدard", 1, 1), None);
    assert_eq!(ratelimit_field("standard", 1_000_000_000_000_000, 1), None);
}

#[test]
fn each_draft_s_form_is_read_by_its_own_meaning() {
    let d07 = one(&[
        (RATELIMIT, "limit=60, remaining=42, reset=17"),
        (POLICY, "60;w=60"),
    ]);
    assert_eq!(d07.now[0].form, Form::Dictionary);
    assert_eq!(
        (d07.now[0].limit, d07.now[0].remaining, d07.now[0].reset_in),
        (Some(60), Some(42), Some(17))
    );
    assert_eq!(
        (d07.policies[0].name.as_deref(), d07.policies[0].quota),
        (None, 60)
    );
    let d06 = one(&[(LIMIT_06, "60"), (REMAINING_06, "42"), (RESET_06, "17")]);
    assert_eq!(d06.now[0].form, Form::Separate);
    assert_eq!(
        (d06.now[0].limit, d06.now[0].remaining, d06.now[0].reset_in),
        (Some(60), Some(42), Some(17))
    );
    // The first drafts listed the policies after the limit.
    let d01 = one(&[(LIMIT_06, "60, 60;w=60, 1000;w=3600")]);
    assert_eq!(d01.policies.len(), 2);
    assert_eq!(
        (d01.policies[1].quota, d01.policies[1].window),
        (1000, Some(3600))
    );
    // A policy named by a Token, a partition key, another unit.
    let f = one(&[(
        POLICY,
        r#"burst;q=10;w=1;pk=:AQID:, "bytes";q=9000;qu="content-bytes""#,
    )]);
    assert_eq!(f.policies[0].name.as_deref(), Some("burst"));
    assert!(!f.policies[1].requests);
    assert_eq!(fields(&[]), Ok(None));
    // A List split over two lines is one List.
    let two = one(&[
        (POLICY, r#""burst";q=10;w=1"#),
        (POLICY, r#""standard";q=60;w=60"#),
    ]);
    assert_eq!(two.policies.len(), 2);
}

#[test]
fn a_field_of_no_draft_s_form_is_malformed_named_and_quoted() {
    for (name, value, why) in [
        (RATELIMIT, r#""standard;r=5"#, "neither a List"),
        (RATELIMIT, r#""standard";t=5"#, "has no r"),
        (RATELIMIT, r#""standard";r=-1;t=5"#, "r is negative"),
        (RATELIMIT, "r=5, t=6", "without limit, remaining or reset"),
        (RATELIMIT, r#""standard";r=5.5"#, "r is not an Integer"),
        (POLICY, r#""standard";w=60"#, "has no q"),
        (POLICY, "(60 60)", "Inner List"),
        (LIMIT_06, "sixty", "not an Integer"),
        (RESET_06, "17, 18", "not a Structured Field Item"),
    ] {
        let e = fields(&[(name, value)]).expect_err(value);
        assert_eq!((e.field, e.value.as_str()), (name, value));
        assert!(e.why.contains(why), "{value}: {}", e.why);
    }
}

const NOW: f64 = 1_800_000_000.0;
const DATE: &str = "Fri, 15 Jan 2027 08:00:00 GMT";

fn date_epoch() -> f64 {
    httpdate::parse_http_date(DATE)
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A Free key's answer as X-RateLimit-* say it: `remaining` left, Reset `reset`, its Date.
fn answer<'a>(
    status: u16,
    remaining: &'a str,
    reset: &'a str,
    retry: Option<&'a str>,
) -> Beside<'a> {
    Beside {
        status,
        remaining: Some(remaining),
        reset: Some(reset),
        retry_after: retry,
        date: Some(DATE),
        exchange: Some((NOW, NOW + 0.2)),
    }
}

const FREE: Quota = Quota {
    plan: "free",
    limit: Some(60),
    window: Duration::from_secs(60),
    standard: true,
};

fn judged(pairs: &[(&str, &str)], a: &Beside) -> Result<(), Untrue> {
    judge_answer(&one(pairs), &FREE, a)
}

const PLAN: (&str, &str) = (POLICY, r#""standard";q=60;w=60"#);
const PLAN_07: (&str, &str) = (POLICY, "60;w=60");

#[test]
fn fields_that_say_what_x_ratelimit_says_pass_in_every_form() {
    let reset = format!("{}", date_epoch() as u64 + 17);
    let a = answer(200, "42", &reset, None);
    for pairs in [
        vec![PLAN, (RATELIMIT, r#""standard";r=42;t=17"#)],
        // Several policies: the plan's is judged, the burst's state is its own.
        vec![
            (POLICY, r#""burst";q=10;w=1, "standard";q=60;w=60"#),
            (RATELIMIT, r#""burst";r=9;t=1, "standard";r=42;t=16"#),
        ],
        // The state of the policy closest to running out only: not the plan's, not judged.
        vec![PLAN, (RATELIMIT, r#""burst";r=3;t=1"#)],
        vec![(RATELIMIT, r#""burst";r=3;t=1"#)],
        vec![
            (POLICY, "10;w=1, 60;w=60"),
            (RATELIMIT, "limit=10, remaining=5, reset=1"),
        ],
        vec![(RATELIMIT, "limit=60, remaining=42, reset=18"), PLAN_07],
        vec![(LIMIT_06, "60"), (REMAINING_06, "42"), (RESET_06, "17")],
        // The per-hour reading of the plan's limit, and a daily policy beside it.
        vec![
            (POLICY, r#""hourly";q=3600;w=3600, "daily";q=10000;w=86400"#),
            (RATELIMIT, r#""hourly";r=42;t=17"#),
        ],
    ] {
        assert_eq!(judged(&pairs, &a), Ok(()), "{pairs:?}");
    }
    let f = one(&[PLAN, (RATELIMIT, r#""standard";r=42;t=17"#)]);
    assert_eq!(remaining(&f, &FREE), Some(42));
    let f = one(&[(RATELIMIT, r#""burst";r=3;t=1"#)]);
    assert_eq!(remaining(&f, &FREE), None);
    // A 429 whose reset is its Retry-After.
    let a = answer(429, "0", &reset, Some("17"));
    assert_eq!(
        judged(&[PLAN, (RATELIMIT, r#""standard";r=0;t=17"#)], &a),
        Ok(())
    );
}

/// What the finding on these fields names: (field, expected, actual).
fn untrue(pairs: &[(&str, &str)], a: &Beside) -> (String, String, String) {
    let u = judged(pairs, a).expect_err("untrue");
    assert!(u.quoted.starts_with(u.field), "{u:?}");
    (u.field.to_string(), u.expected, u.actual)
}

#[test]
fn untrue_fields_are_named_quoted_and_contradicted() {
    let reset = format!("{}", date_epoch() as u64 + 17);
    let a = answer(200, "42", &reset, None);
    let (field, expected, actual) = untrue(&[(POLICY, r#""standard";q=61;w=60"#)], &a);
    assert_eq!(field, POLICY);
    assert!(expected.contains("a quota of 60 over 60 s"), "{expected}");
    assert_eq!(actual, r#"policies "standard";q=61;w=60"#);
    let (field, _, actual) = untrue(&[(POLICY, "61;w=60")], &a);
    assert_eq!(
        (field.as_str(), actual.as_str()),
        (POLICY, "policies 61;w=60")
    );
    let (field, _, actual) = untrue(
        &[(RATELIMIT, "limit=100, remaining=42, reset=17"), PLAN_07],
        &a,
    );
    assert_eq!(field, RATELIMIT);
    assert!(actual.starts_with("100, beside"), "{actual}");
    let (field, _, _) = untrue(&[(LIMIT_06, "100"), (REMAINING_06, "42"), PLAN_07], &a);
    assert_eq!(field, LIMIT_06);
    let (field, expected, actual) = untrue(&[PLAN, (RATELIMIT, r#""standard";r=47;t=17"#)], &a);
    assert_eq!(field, RATELIMIT);
    assert_eq!(
        (expected.as_str(), actual.as_str()),
        ("r=42, as X-RateLimit-Remaining says", "r=47")
    );
    let (field, _, actual) = untrue(&[(REMAINING_06, "41"), (RESET_06, "17"), PLAN_07], &a);
    assert_eq!(
        (field.as_str(), actual.as_str()),
        (REMAINING_06, "RateLimit-Remaining=41")
    );
    // The reset in milliseconds, as an epoch time, or far from what X-RateLimit-Reset names.
    let (_, _, actual) = untrue(&[PLAN, (RATELIMIT, r#""standard";r=42;t=17000"#)], &a);
    assert!(actual.contains("milliseconds"), "{actual}");
    let (field, _, actual) = untrue(&[(RESET_06, &reset), PLAN_07], &a);
    assert_eq!(field, RESET_06);
    assert!(actual.contains("epoch"), "{actual}");
    let (_, expected, actual) = untrue(&[PLAN, (RATELIMIT, r#""standard";r=42;t=50"#)], &a);
    assert_eq!(
        (expected.as_str(), actual.as_str()),
        ("t=17, the reset X-RateLimit-Reset names", "t=50")
    );
    // A 429 whose reset comes before the wait it asks for.
    let late = format!("{}", date_epoch() as u64 + 40);
    let a = answer(429, "0", &late, Some("40"));
    let (_, expected, actual) = untrue(&[(RATELIMIT, "limit=60, remaining=0, reset=4")], &a);
    assert!(expected.contains("X-RateLimit-Reset"), "{expected}");
    assert_eq!(actual, "reset=4");
    let a = answer(429, "0", &reset, Some("40"));
    let (_, expected, actual) = untrue(&[PLAN, (RATELIMIT, r#""standard";r=0;t=17"#)], &a);
    assert!(expected.contains("Retry-After asks"), "{expected}");
    assert_eq!(actual, "t=17 on a 429");
}

#[test]
fn without_a_date_the_reset_is_counted_from_the_exchange_or_not_at_all() {
    let reset = format!("{}", NOW as u64 + 17);
    let a = Beside {
        date: None,
        ..answer(200, "42", &reset, None)
    };
    let f = one(&[PLAN, (RATELIMIT, r#""standard";r=42;t=17"#)]);
    assert_eq!(judge_answer(&f, &FREE, &a), Ok(()));
    let f = one(&[PLAN, (RATELIMIT, r#""standard";r=42;t=27"#)]);
    assert!(judge_answer(&f, &FREE, &a).is_err());
    // Neither a Date nor the exchange's times: only the window bounds the reset.
    let unknown = Beside {
        exchange: None,
        ..a
    };
    assert_eq!(judge_answer(&f, &FREE, &unknown), Ok(()));
    // A custom plan's quota is its own: only the fields' form is judged.
    let custom = Quota {
        limit: None,
        ..FREE
    };
    let f = one(&[
        (POLICY, r#""enterprise";q=5000;w=3600"#),
        (RATELIMIT, r#""enterprise";r=4000;t=1800"#),
    ]);
    assert_eq!(judge_answer(&f, &custom, &a), Ok(()));
}
