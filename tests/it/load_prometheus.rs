//! `load --metrics prometheus-rw=URL` against a real Prometheus (Debian's package, on loopback,
//! its remote-write receiver on): two shards of one run, as separate processes, write what they
//! count while they run; Prometheus's query API then gives each shard's admitted requests as
//! its load.json does, and the sum of both as the merged run's; every query of the Grafana
//! dashboard (deploy/grafana/) returns the run's data, and the picture drawn from those results
//! reads in a browser. A Prometheus that is down, or that never answers, delays no request,
//! changes no verdict, and the report counts the samples it lost.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::browser::browser;
use crate::common::prometheus::{Panel, Prometheus, free_port, lines, number, svg};

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");
const WINDOW: &str = "2";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("linkcert-prom-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a scratch directory");
    d
}

fn now() -> f64 {
    linkcert::clock::now_epoch()
}

fn spawn(args: &[String], log: &Path) -> Child {
    let file = std::fs::File::create(log).expect("a log");
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("a log"))
        .stderr(file)
        .spawn()
        .expect("linkcert starts")
}

/// The exit code, waiting at most two minutes (killed past it).
async fn wait(mut child: Child) -> Option<i32> {
    let started = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("waitable") {
            return s.code();
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

/// The arguments of a run of `scenario` against `url` with the Free keys in `keys`, in one
/// process: a shard's (`load_shards::shard_args`) without the shard.
fn load_args(url: &str, keys: &Path, scenario: &str, out: &Path, more: &[&str]) -> Vec<String> {
    let mut a = crate::load_shards::shard_args(url, keys, scenario, 1, 1, 0.0, out);
    // Not a shard: no --shard, no --start-at.
    let at = a.iter().position(|x| x == "--shard").expect("--shard");
    a.drain(at..at + 4);
    a.extend(
        ["--rate-window", WINDOW]
            .iter()
            .chain(more)
            .map(|s| s.to_string()),
    );
    a
}

/// Admitted requests per key label of a report's scenarios.
fn admitted_by_key(report: &Value) -> Vec<(String, u64)> {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["keys"].as_array().cloned().unwrap_or_default())
        .map(|k| {
            (
                k["label"].as_str().unwrap_or_default().to_string(),
                k["admitted"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shards_write_to_prometheus_what_their_reports_say_and_the_dashboard_shows_the_run() {
    let Some(prom) = Prometheus::start("shards").await else {
        return;
    };
    let reference = crate::common::reference_fleet(2.0, 8).await;
    let dir = scratch("shards");
    let keys = dir.join("keys");
    let lines_: Vec<String> = (1..=8).map(|i| format!("free=lk_free_{i}")).collect();
    std::fs::write(&keys, lines_.join("\n")).expect("a key file");
    let run_id = format!("prom-test-{}", std::process::id());
    let sink = format!("prometheus-rw={}", prom.write_url());
    let out = dir.join("run");
    let began = now() + 3.0;
    let shards: Vec<Child> = (1..=2)
        .map(|i| {
            let mut args = crate::load_shards::shard_args(
                &reference.base_url,
                &keys,
                "free-fleet",
                i,
                2,
                began,
                &out,
            );
            let more = [
                "--rate-window",
                WINDOW,
                "--run-id",
                &run_id,
                "--metrics",
                &sink,
            ];
            args.extend(more.iter().map(|s| s.to_string()));
            spawn(&args, &dir.join(format!("shard-{i}.log")))
        })
        .collect();
    for (i, c) in shards.into_iter().enumerate() {
        let log = dir.join(format!("shard-{}.log", i + 1));
        let code = wait(c).await;
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(code, Some(0), "{said}");
        assert!(
            said.contains("samples written to") && said.contains("none lost"),
            "{said}"
        );
    }
    let merged = dir.join("merged");
    let args: Vec<String> = [
        "load",
        "merge",
        &out.display().to_string(),
        "--out",
        &merged.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(wait(spawn(&args, &dir.join("merge.log"))).await, Some(0));
    let ended = now();

    // Each shard: admitted as its load.json says, in all and for each key it named.
    let mut in_all = 0;
    for i in 1..=2 {
        let report = read_json(&out.join(format!("shard-{i}-of-2")).join("load.json"));
        let account = &report["metrics"];
        assert_eq!(
            (account["run_id"].as_str(), account["shard"].as_str()),
            (Some(run_id.as_str()), Some(format!("{i}/2").as_str()))
        );
        assert_eq!(account["samples_lost"], 0, "{account}");
        let by_key = admitted_by_key(&report);
        let ours: u64 = by_key.iter().map(|(_, n)| n).sum();
        let q = format!(
            r#"max_over_time(linkcert_load_admitted_total{{run_id="{run_id}",shard="{i}/2"}}[1h])"#
        );
        let theirs: f64 = prom
            .query(&q)
            .await
            .iter()
            .map(|s| number(&s["value"][1]))
            .sum();
        assert_eq!(
            theirs, ours as f64,
            "shard {i}: Prometheus {theirs}, load.json {ours}"
        );
        in_all += ours;
        let q = format!(
            r#"max_over_time(linkcert_load_key_admitted_total{{run_id="{run_id}",shard="{i}/2"}}[1h])"#
        );
        let named = prom.query(&q).await;
        assert!(
            named.len() <= 5,
            "at most the five worst keys are named: {named:?}"
        );
        for s in &named {
            let label = s["metric"]["key"].as_str().expect("a key label");
            assert!(
                label.starts_with("free#"),
                "a label, never the key: {label}"
            );
            let n = by_key.iter().find(|(l, _)| l == label).map(|(_, n)| *n);
            assert_eq!(Some(number(&s["value"][1]) as u64), n, "{label}");
        }
    }
    // Both shards: the merged run's figure.
    let merged_report = read_json(&merged.join("load.json"));
    let merged_admitted: u64 = admitted_by_key(&merged_report).iter().map(|(_, n)| n).sum();
    assert_eq!(merged_admitted, in_all);
    let q = format!(r#"sum(max_over_time(linkcert_load_admitted_total{{run_id="{run_id}"}}[1h]))"#);
    let sum = prom.query(&q).await.first().map(|s| number(&s["value"][1]));
    assert_eq!(sum, Some(merged_admitted as f64));

    // Every query of the dashboard returns this run's data.
    let dashboard = read_json(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/grafana/linkcert-load.json"
    )));
    let mut panels = Vec::new();
    for p in dashboard["panels"].as_array().expect("panels") {
        let title = p["title"].as_str().expect("a title").to_string();
        let mut drawn = Vec::new();
        for t in p["targets"].as_array().expect("targets") {
            let expr = t["expr"]
                .as_str()
                .expect("an expr")
                .replace("$run_id", &run_id)
                .replace("$__rate_interval", "4s");
            let result = prom.query_range(&expr, began, ended).await;
            assert!(!result.is_empty(), "{title}: {expr} returned nothing");
            let legend = t["legendFormat"].as_str().unwrap_or_default();
            let l = lines(&result, legend, began);
            assert!(
                l.iter().any(|(_, pts)| !pts.is_empty()),
                "{title}: {expr}: no points"
            );
            drawn.extend(l);
        }
        let unit = match p["fieldConfig"]["defaults"]["unit"].as_str() {
            Some("reqps") => "/s",
            Some("s") => "s",
            _ => "",
        };
        panels.push(Panel {
            title,
            unit: unit.into(),
            lines: drawn,
        });
    }
    assert_eq!(panels.len(), 4);
    // The picture the book shows, drawn from those results, as a reader's browser shows it.
    let picture = svg(&panels);
    if std::env::var("LINKCERT_WRITE_BOOK_PICTURE").is_ok() {
        std::fs::write(
            concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/prometheus-run.svg"),
            &picture,
        )
        .expect("the book's picture");
    }
    let page = dir.join("prometheus.html");
    std::fs::write(
        &page,
        format!("<!doctype html><html><body>{picture}</body></html>"),
    )
    .expect("the page");
    let dom = tokio::task::spawn_blocking(move || browser(&page, None))
        .await
        .expect("the browser");
    if let Some(dom) = dom {
        for p in &panels {
            assert!(
                dom.contains(&p.title.replace('&', "&amp;")),
                "{} not shown",
                p.title
            );
        }
        assert!(
            dom.matches("<polyline").count() >= 5,
            "the lines drawn: {dom}"
        );
    }
    // The book's copy (written by this test with LINKCERT_WRITE_BOOK_PICTURE=1) reads too.
    let book = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/src/prometheus-run.svg"
    ));
    let page = dir.join("book.html");
    let img = std::fs::read_to_string(book).expect("the book's picture");
    std::fs::write(
        &page,
        format!("<!doctype html><html><body>{img}</body></html>"),
    )
    .expect("the page");
    if let Some(dom) = tokio::task::spawn_blocking(move || browser(&page, None))
        .await
        .expect("the browser")
    {
        for p in &panels {
            assert!(
                dom.contains(&p.title),
                "the book's picture lacks {}",
                p.title
            );
        }
        assert!(
            dom.matches("<polyline").count() >= 5,
            "the book's picture draws no lines"
        );
    }
}

/// A Prometheus that is not there (a closed port), or that takes the connection and never
/// answers: the run is what it is without one (exit 0, passed, the generator on time), and
/// load.json and the summary say how many samples were lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_or_silent_prometheus_delays_nothing_and_the_report_counts_what_was_lost() {
    let reference = crate::common::reference_fleet(2.0, 2).await;
    let dir = scratch("dead");
    let keys = dir.join("keys");
    std::fs::write(&keys, "free=lk_free_1\n").expect("a key file");
    // Takes connections, never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let silent_port = silent.local_addr().expect("its address").port();
    let ends = [("dead", free_port()), ("silent", silent_port)];
    let runs = ends.iter().map(|(name, port)| {
        let sink = format!("prometheus-rw=http://127.0.0.1:{port}/api/v1/write");
        let out = dir.join(name);
        let args = load_args(
            &reference.base_url,
            &keys,
            "free-overload",
            &out,
            &["--metrics", &sink],
        );
        let log = dir.join(format!("{name}.log"));
        let child = spawn(&args, &log);
        async move { (name, wait(child).await, out, log) }
    });
    // One after the other: one key, one quota.
    for run in runs {
        let (name, code, out, log) = run.await;
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(code, Some(0), "{name}: {said}");
        let report = read_json(&out.join("load.json"));
        assert_eq!(report["verdict"], "pass", "{name}: {said}");
        let s = &report["scenarios"][0];
        assert_eq!(s["generator"]["saturated"], false, "{name}: {said}");
        let m = &report["metrics"];
        assert_eq!(m["samples_written"], 0, "{name}: {m}");
        let lost = m["samples_lost"].as_u64().unwrap_or(0);
        assert!(lost > 0, "{name}: {m}");
        assert!(said.contains(&format!("{lost} lost")), "{name}: {said}");
    }
    drop(silent);
}
