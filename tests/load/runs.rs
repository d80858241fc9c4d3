//! How a `load` run behaves when its target is not there, goes away, refuses a scenario's
//! values or answers slowly: what the run reports, and when.

use super::*;

/// A target that goes away 4 s into `load` (connections reset, refused, or a stall where
/// nothing answers), in front of both implementations: the run notices within a few request
/// timeouts, stops sending, says when and how, and is incomplete, not a list of throttling
/// failures ("capacity did not come back") for a target that simply died. The scenario after
/// it on the same key never starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_goes_away_mid_run_leaves_the_run_incomplete() {
    use common::outage::{self, Mode};
    let cases: Vec<(Impl, Mode, &str)> = BOTH
        .into_iter()
        .flat_map(|imp| {
            [
                (imp, Mode::Reset, "connections reset"),
                (imp, Mode::Refuse, "connections refused"),
                (imp, Mode::Stall, "no answer within the request timeout"),
            ]
        })
        .collect();
    // The six runs at once, on one turn (Free's rate, and they stop when the target goes):
    // nothing here measures the generator's schedule.
    let _turn = turns(1).await;
    let runs = cases.into_iter().map(|(imp, mode, words)| async move {
        let up = Upstream::start(imp, linkcert::cli::LOAD_REFERENCE_WINDOW_SECS).await;
        let proxy = outage::start(up.base_url(), mode, Duration::from_secs(4)).await;
        let mut target = up.target();
        target.base_url = proxy.url.parse().expect("a base URL");
        let mut opts = LoadOptions::new(out_dir(&format!("outage-{imp:?}-{mode:?}")));
        opts.sending.request_timeout = Duration::from_secs(2);
        let started = std::time::Instant::now();
        let scenarios = vec![
            free_overload(),
            Scenario::load("retry-after-honesty").expect("built-in"),
        ];
        let report = load::run(common::spec(), target, scenarios, &opts)
            .await
            .expect("load runs");
        let took = started.elapsed();
        let ctx = format!("{imp:?} {mode:?} after {took:?}:\n{}", report.summary());
        assert!(took < Duration::from_secs(30), "{ctx}");
        assert_eq!(report.verdict, ScenarioVerdict::Incomplete, "{ctx}");
        let outage = report.outage.as_ref().expect("the outage is reported");
        assert!(outage.sentence().contains(words), "{ctx}");
        assert!(
            (3.0..12.0).contains(&outage.first_failure_secs),
            "the first failure came when the target went away: {ctx}"
        );
        let first = scenario_named(&report, "free-overload");
        assert_eq!(first.verdict, ScenarioVerdict::Incomplete, "{ctx}");
        assert!(first.findings.is_empty(), "nothing judged: {ctx}");
        assert!(first.keys[0].admitted > 0, "what it sent is kept: {ctx}");
        assert!(
            first.keys[0].unsent > 0,
            "it stopped sending when the target went away: {ctx}"
        );
        let second = scenario_named(&report, "retry-after-honesty");
        assert_eq!(second.verdict, ScenarioVerdict::Skipped, "{ctx}");
        assert!(
            second
                .skipped
                .as_deref()
                .unwrap_or("")
                .contains("not run: the target stopped answering"),
            "{ctx}"
        );
        assert!(
            report
                .summary()
                .starts_with("INCOMPLETE: the target stopped answering"),
            "{ctx}"
        );
        drop(proxy);
    });
    futures::future::join_all(runs).await;
}

/// The engine hands its sink every record once, as its answer arrives, and its watermark never
/// passes a record not yet handed over, though answers come back out of order (a proxy adding
/// 150 ms ±50% to each): what lets the judge keep only the answers in flight, not the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_reach_the_judge_as_they_come_behind_a_watermark_that_holds() {
    use linkcert::load::engine::{Attack, Sending};
    use linkcert::load::live::Live;
    use linkcert::load::record::{Record, Sink};
    use linkcert::load::schedule::Summary;

    #[derive(Default)]
    struct Checked {
        taken: u64,
        settled: f64,
        settles: u64,
        /// Records taken after a watermark they were sent before.
        behind: Vec<(f64, f64)>,
        /// The most records taken but not yet below a watermark.
        held_most: u64,
        sends: Vec<f64>,
    }
    impl Sink for Checked {
        fn take(&mut self, rec: Record) {
            self.taken += 1;
            if rec.sent < self.settled {
                self.behind.push((rec.sent, self.settled));
            }
            self.sends.push(rec.sent);
            let t = self.settled;
            self.held_most = self
                .held_most
                .max(self.sends.iter().filter(|s| **s >= t).count() as u64);
        }
        fn settled(&mut self, t: f64) {
            self.settles += 1;
            self.settled = self.settled.max(t);
        }
    }

    let _turn = turns(1).await;
    let up = Upstream::start(Impl::Reference, WINDOW).await;
    let proxy = common::latency::start(up.base_url(), Duration::from_millis(150), 0.5).await;
    let mut target = up.target();
    target.base_url = proxy.url.parse().expect("a base URL");
    // Pro at 2 s windows: 300 requests a second for 3 s.
    let s = scenario(
        r#"
name = "watermark"
description = "steady, at the limit"
plan = "pro"
class = "standard"
shape = "steady"
rate = 1.0
windows = 1.5
[[operations]]
operation = "getTags"
weight = 1
query = { pageSize = "1" }
"#,
    );
    let r = s.resolve(&common::spec(), &target).expect("resolves");
    let scheduled = Summary::of_scenario(&r).len;
    let dir = out_dir("watermark");
    std::fs::create_dir_all(&dir).unwrap();
    let watch = std::sync::Arc::new(linkcert::outage::Watch::new());
    let attack = Attack {
        target: &target,
        resolved: &r,
        sending: &Sending::default(),
        goose_dir: &dir,
        live: std::sync::Arc::new(Live::default()),
        watch,
    };
    let (run, checked) = attack.run(|_, _| Checked::default()).await.expect("runs");
    assert_eq!(
        checked.taken, scheduled,
        "every slot sent and handed over once"
    );
    assert!(
        checked.behind.is_empty(),
        "records handed over after a watermark past their send: {:?}",
        &checked.behind[..checked.behind.len().min(5)]
    );
    // The watermark moved with the run: it did not wait for the end.
    assert!(
        checked.settles >= scheduled / 128,
        "{} watermarks",
        checked.settles
    );
    assert!(
        checked.held_most < scheduled / 2,
        "at most {} held of {scheduled}: the watermark lagged the run",
        checked.held_most
    );
    assert!(
        run.peak_in_flight > 10,
        "answers overlapped: {}",
        run.peak_in_flight
    );
}

/// A target that is not listening at all is said to be unreachable before anything is sent,
/// not judged as a run of failed requests (which read as `load.answers` and `load.admitted`
/// failures against a server that was never there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_is_not_there_stops_the_run_before_it_starts() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let target = Target {
        base_url: url.parse().expect("a base URL"),
        keys: vec![linkcert::target::PlanKey {
            plan: "free".into(),
            key: "k".into(),
        }],
        rate_window: linkcert::window::RateWindow::from_secs(WINDOW).unwrap(),
        ..Target::default()
    };
    let opts = LoadOptions::new(out_dir("absent"));
    let started = std::time::Instant::now();
    let err = load::run(common::spec(), target, vec![free_overload()], &opts)
        .await
        .expect_err("nothing to judge");
    assert!(matches!(err, load::LoadError::Unreachable(_)), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "said at once");
}

/// A certificate the client does not trust stops the run before it sends, as `check` does
/// (`tests/it/check_hostile.rs`): what was refused, and what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_not_trusted_stops_the_run_before_it_starts() {
    let server = common::reference(Some(WINDOW)).await;
    let target = Target {
        trust_pem: None,
        ..server.target(&common::spec())
    };
    let opts = LoadOptions::new(out_dir("untrusted"));
    let err = load::run(common::spec(), target, vec![free_overload()], &opts)
        .await
        .expect_err("nothing to judge");
    assert!(
        matches!(
            err,
            load::LoadError::Unreachable(linkcert::reach::Unreachable::Untrusted { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("--insecure"), "{err}");
}

/// A scenario naming a value the spec does not guarantee (`size = 8`: below both
/// implementations' accepted ranges, bounds the spec does not show) meets clean rejections
/// (400 or 422 in the envelope): the target's choice, reported, the scenario not judged, never
/// a load.answers failure (a correct implementation with a narrower range failed
/// free-overload and pro-overload when they sent `size = 64`; they now send the default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clean_rejections_of_a_scenarios_values_are_reported_not_failed() {
    side_by_side(|imp| async move {
        let up = Upstream::start(imp, WINDOW).await;
        let s = scenario(
            "name='free-size'\nplan='free'\nrate=2.0\nwindows=1.5\n[[operations]]\noperation='getQRCode'\nquery={url='https://example.com/load', size='8'}",
        );
        let r = run(up.target(), vec![s], &format!("size-{imp:?}")).await;
        let s = scenario_named(&r, "free-size");
        let ctx = format!("{imp:?}: {}", r.summary());
        assert_eq!(s.verdict, ScenarioVerdict::Incomplete, "{ctx}");
        let why = s.skipped.as_deref().unwrap_or("");
        assert!(why.contains("rejected") && why.contains("cleanly"), "{ctx}");
        assert!(s.findings.is_empty(), "{ctx}");
    })
    .await;
}
