//! `check` and `load` judge the same header sequences alike.

use std::time::Duration;

use super::{Seen, header_verdicts};
use crate::probe::{Exchange, Req};
use linkcert_http::Resp;
use linkcert_load::record::{Record, Run};
use linkcert_load::scenario::Scenario;
use linkcert_run::target::{PlanKey, Target};
use linkcert_spec::verdict::Verdict;

const WALL0: f64 = 1_800_000_000.0;
const W: f64 = 6.0;

/// One answer: seconds after WALL0, status, Remaining, Reset, Retry-After.
type Row = (f64, u16, Option<String>, Option<String>, Option<String>);

/// A Free burst of 60 with honest headers, then a 429; `edit` spoils one thing.
fn burst(edit: impl Fn(usize, &mut Row)) -> Vec<Row> {
    let reset = || Some(format!("{}", (WALL0 + W).ceil() as u64));
    let mut rows: Vec<Row> = (0..60)
        .map(|i| {
            let t = 0.01 * i as f64;
            (t, 200, Some(format!("{}", 59 - i)), reset(), None)
        })
        .collect();
    rows.push((0.6, 429, Some("0".into()), reset(), Some("6".into())));
    for (i, r) in rows.iter_mut().enumerate() {
        edit(i, r);
    }
    rows
}

fn check_verdicts(rows: &[Row]) -> Vec<(&'static str, Verdict)> {
    let seen: Vec<Seen> = rows
        .iter()
        .map(|(t, status, rem, reset, retry)| {
            let mut headers = Vec::new();
            for (name, v) in [
                ("x-ratelimit-remaining", rem),
                ("x-ratelimit-reset", reset),
                ("retry-after", retry),
            ] {
                if let Some(v) = v {
                    headers.push((name.to_string(), v.clone()));
                }
            }
            Seen {
                sent: WALL0 + t - 0.005,
                at: WALL0 + t,
                exchange: Exchange {
                    req: Req::get("/tags"),
                    url: "https://x/tags".into(),
                    result: Ok(Resp {
                        status: *status,
                        headers,
                        body: Vec::new(),
                        truncated: false,
                        elapsed: Duration::ZERO,
                    }),
                    insecure: false,
                },
            }
        })
        .collect();
    let mut v: Vec<(&'static str, Verdict)> = header_verdicts(&seen, Duration::from_secs_f64(W))
        .into_iter()
        .map(|(id, j)| (id.id().trim_start_matches("ratelimit."), j.verdict))
        .collect();
    v.sort();
    v
}

fn load_verdicts(rows: &[Row]) -> Vec<(&'static str, Verdict)> {
    let spec = linkcert_spec::Spec::embedded().unwrap();
    let t = Target {
        base_url: linkcert_http::BaseUrl::parse("https://x").unwrap(),
        rate_window: linkcert_spec::window::RateWindow::from_secs(W).unwrap(),
        keys: vec![PlanKey {
            plan: "free".into(),
            key: "k".into(),
        }],
        ..Target::default()
    };
    let r = Scenario::load("free-overload")
        .unwrap()
        .resolve(&spec, &t)
        .unwrap();
    let records: Vec<Record> = rows
        .iter()
        .map(|(t, status, rem, reset, retry)| Record {
            sent: *t - 0.005,
            recv: *t,
            status: Some(*status),
            limit: Some("60".into()),
            remaining: rem.clone(),
            reset: reset.clone(),
            retry_after: retry.clone(),
            code: Some("rate_limit_exceeded".into()),
            ..Record::slot(0, 0, *t - 0.005)
        })
        .collect();
    let run = Run {
        t0: std::time::Instant::now(),
        wall0: WALL0,
        users: 1,
        peak_in_flight: 1,
        goose_requests: 0,
        goose_reports: Vec::new(),
        outage: None,
        broken: None,
    };
    let slots = linkcert_load::schedule::build(&r);
    let result = linkcert_load::judge::judge(&r, &slots, &records, &run, &[("free#1".into(), 0)]);
    let mut v: Vec<(&'static str, Verdict)> = ["reset", "retry-after", "remaining"]
        .into_iter()
        .filter_map(|rule| {
            let id = format!("load.{rule}");
            let worst = result
                .findings
                .iter()
                .filter(|f| f.check == id)
                .map(|f| f.verdict)
                .max()?;
            Some((rule, worst))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn check_and_load_give_the_same_header_the_same_verdict() {
    let date =
        httpdate::fmt_http_date(std::time::UNIX_EPOCH + Duration::from_secs(WALL0 as u64 + 6));
    let cases: Vec<(&str, Vec<Row>)> = vec![
        ("honest", burst(|_, _| {})),
        (
            "reset in milliseconds",
            burst(|_, r| r.3 = r.3.as_ref().map(|v| format!("{v}000"))),
        ),
        (
            "reset as seconds until",
            burst(|_, r| r.3 = Some("6".into())),
        ),
        (
            "reset not a number",
            burst(|_, r| r.3 = Some("soon".into())),
        ),
        (
            "reset backwards",
            burst(|i, r| {
                if i == 30 {
                    r.3 = Some(format!("{}", WALL0 as u64 - 1));
                }
            }),
        ),
        ("no retry-after", burst(|_, r| r.4 = None)),
        (
            "retry-after in milliseconds",
            burst(|_, r| r.4 = r.4.as_ref().map(|_| "6000".into())),
        ),
        (
            "retry-after past the reset",
            burst(|i, r| {
                if i == 60 {
                    r.3 = Some(format!("{}", WALL0 as u64 + 1));
                }
            }),
        ),
        (
            "retry-after as an http-date",
            burst(|_, r| r.4 = r.4.as_ref().map(|_| date.clone())),
        ),
        (
            "remaining never 0",
            burst(|_, r| {
                if r.1 == 200 {
                    r.2 = Some("5".into());
                }
            }),
        ),
    ];
    let mut seen_verdicts = std::collections::BTreeSet::new();
    for (name, rows) in cases {
        let (c, l) = (check_verdicts(&rows), load_verdicts(&rows));
        assert_eq!(c, l, "{name}: check {c:?}, load {l:?}");
        assert_eq!(c.len(), 3, "{name}: every rule judged: {c:?}");
        let worst = c.iter().map(|(_, v)| *v).max().unwrap();
        assert_eq!(worst == Verdict::Pass, name == "honest", "{name}: {c:?}");
        seen_verdicts.insert(worst);
    }
    // The cases exercise passing, non-strict and failing headers alike.
    assert_eq!(seen_verdicts.len(), 3, "{seen_verdicts:?}");
}
