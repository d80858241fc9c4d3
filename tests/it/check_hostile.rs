//! Hostile or broken targets: the runner finishes with failing checks, never a panic or hang.
//! The servers here speak raw TCP on 127.0.0.1.

use crate::common;

use std::time::Duration;

use linkcert::check::{self, CheckError, CheckOptions};
use linkcert::target::{PlanKey, Target};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Clone, Copy)]
enum Behaviour {
    /// Reads the request, never answers.
    Silent,
    /// Closes the connection as soon as it is accepted.
    Reset,
    /// Answers bytes that are not HTTP.
    Garbage,
    /// A well-formed answer whose body is not UTF-8.
    NonUtf8,
    /// A well-formed 200 PNG answer with an endless body.
    Huge,
}

async fn hostile(b: Behaviour) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                if !matches!(b, Behaviour::Reset) {
                    let _ = s.read(&mut buf).await;
                }
                match b {
                    Behaviour::Silent => tokio::time::sleep(Duration::from_secs(30)).await,
                    Behaviour::Reset => {}
                    Behaviour::Garbage => {
                        let _ = s
                            .write_all(b"\x00\xffSPDY/9 what\r\n\r\n\x01\x02garbage")
                            .await;
                    }
                    Behaviour::NonUtf8 => {
                        let body = b"\xff\xfe\xfd{\"error\":\xc3\x28}";
                        let mut head = format!(
                            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nx-ratelimit-remaining: ",
                            body.len()
                        )
                        .into_bytes();
                        head.extend_from_slice(b"\xff\r\n\r\n");
                        let _ = s.write_all(&head).await;
                        let _ = s.write_all(body).await;
                    }
                    Behaviour::Huge => {
                        let head = b"HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 52428800\r\n\r\n\x89PNG\r\n\x1a\n";
                        let _ = s.write_all(head).await;
                        let chunk = vec![0u8; 1 << 16];
                        for _ in 0..800 {
                            if s.write_all(&chunk).await.is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    url
}

fn target(url: &str) -> Target {
    let key = |plan: &str, key: &str| PlanKey {
        plan: plan.into(),
        key: key.into(),
    };
    Target {
        base_url: url.to_string(),
        keys: vec![
            key("free", "lk_free_1"),
            key("free", "lk_free_2"),
            key("advanced", "lk_advanced_1"),
        ],
        rate_window: Duration::from_secs(2),
        partner_ids: vec![linkcert::target::Fixture::bound("pn_1", "advanced")],
        allow_destructive: true,
        ..Target::default()
    }
}

async fn run(url: &str, only: &[&str]) -> linkcert::report::Report {
    let opts = CheckOptions {
        cases: 4,
        request_timeout: Duration::from_millis(800),
        only: only.iter().map(|s| s.to_string()).collect(),
        ..CheckOptions::default()
    };
    // A hang detector, not a timing assertion: the run must end.
    tokio::time::timeout(
        Duration::from_secs(240),
        check::run(common::spec(), target(url), opts),
    )
    .await
    .expect("the run ends")
    .expect("the runner runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_resetting_and_garbage_targets_fail_without_panicking() {
    for b in [
        Behaviour::Silent,
        Behaviour::Reset,
        Behaviour::Garbage,
        Behaviour::NonUtf8,
    ] {
        let url = hostile(b).await;
        let r = run(&url, &[]).await;
        assert!(r.totals.fail > 0, "{}", r.summary());
        // Nothing in the reports breaks on what came back.
        assert!(r.junit().contains("<failure"));
        assert!(!r.markdown().is_empty());
        serde_json::to_string(&r).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_bodies_are_cut_and_fail() {
    let url = hostile(Behaviour::Huge).await;
    let r = run(&url, &["qr", "status", "auth"]).await;
    assert!(r.totals.fail > 0, "{}", r.summary());
}

#[tokio::test]
async fn nothing_listening_is_a_could_not_run_error() {
    // Bind and drop: the port is closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = check::run(
        common::spec(),
        target(&format!("http://127.0.0.1:{port}")),
        CheckOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, CheckError::Unreachable(_)), "{err}");
}

#[test]
fn the_binary_exits_2_with_a_one_line_reason_when_it_cannot_run() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bin = env!("CARGO_BIN_EXE_linkcert");
    let out = std::process::Command::new(bin)
        .args([
            "check",
            "--target",
            &format!("https://127.0.0.1:{port}"),
            "--key",
            "free=lk_secret_abc",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be reached"), "{err}");
    assert!(
        !err.contains("lk_secret_abc")
            && !String::from_utf8_lossy(&out.stdout).contains("lk_secret_abc")
    );
    // Bad arguments: 2 as well.
    let out = std::process::Command::new(bin)
        .args(["check", "--key", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = std::process::Command::new(bin)
        .args([
            "check",
            "--key",
            "gold=k",
            "--target",
            "https://127.0.0.1:1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown plan"));
}

/// A run in which no check was judged is not a pass: the reference over HTTPS with a
/// certificate this client does not trust, and only `envelope` selected, used to come back
/// PASSED with nothing certified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_judged_nothing_is_not_passed() {
    let reference = common::reference(None).await;
    let mut target = reference.target(&common::spec());
    target.trust_pem = None;
    target.insecure = false;
    let opts = CheckOptions {
        only: vec!["envelope".into()],
        ..CheckOptions::default()
    };
    let report = check::run(common::spec(), target, opts)
        .await
        .expect("the run runs");
    assert_ne!(
        report.outcome,
        linkcert::report::model::Outcome::Passed,
        "nothing was judged: {:?}",
        report.totals
    );
    let incomplete = report.incomplete.as_ref().map(|i| i.reason.as_str());
    assert!(
        report.outcome == linkcert::report::model::Outcome::Failed
            || incomplete.is_some_and(|r| r.contains("no check was judged")),
        "{incomplete:?}"
    );
}
