//! Shared by the integration tests: the reference server on loopback and a client that
//! trusts its self-signed certificate.
#![allow(dead_code)]

pub mod broken;
pub mod browser;
pub mod fields;
pub mod hostile;
pub mod latency;
pub mod outage;
pub mod prometheus;
pub mod variant;

/// How the binary words failures: as users read them, or reworded (a test-only wording of
/// every `Failure`, `LINKCERT_TEST_REWORD_FAILURES=1`): the suites run both ways and assert
/// the same verdicts and exit codes, so no verdict, streak or exit code depends on words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Words {
    Plain,
    Reworded,
}

impl Words {
    /// Sets `cmd` to word failures this way.
    pub fn apply(self, cmd: &mut std::process::Command) {
        if self == Words::Reworded {
            cmd.env("LINKCERT_TEST_REWORD_FAILURES", "1");
        }
    }
}

use std::sync::Arc;
use std::time::Duration;

/// A program `.ci/run` installs for the tests (Debian's package `package`), at `path` or at
/// the path in the environment variable `env`.
pub struct Tool {
    pub env: &'static str,
    pub path: &'static str,
    /// The environment variable (set by `.ci/run`) that makes its absence a failure.
    pub required_by: &'static str,
    pub package: &'static str,
}

/// Where `tool` is; None where it is not installed (saying `otherwise`), unless it is required.
pub fn installed(tool: Tool, otherwise: &str) -> Option<String> {
    let path = std::env::var(tool.env).unwrap_or_else(|_| tool.path.into());
    if std::path::Path::new(&path).exists() {
        return Some(path);
    }
    assert!(
        std::env::var(tool.required_by).is_err(),
        "no {} at {path}: install Debian's {} (.ci/run does)",
        tool.package,
        tool.package
    );
    eprintln!("no {} at {path}: {otherwise}", tool.package);
    None
}

use linkcert::http::ClientConfig;
use linkcert::server::{self, RunningServer, ServeConfig};
use linkcert::spec::Spec;

pub fn spec() -> Arc<Spec> {
    Arc::new(Spec::embedded().expect("the embedded spec loads"))
}

pub async fn reference(window_secs: Option<f64>) -> RunningServer {
    let mut cfg = ServeConfig::in_process();
    cfg.window = window_secs.map(|w| linkcert::window::RateWindow::from_secs(w).expect("a window"));
    server::start(spec(), cfg)
        .await
        .expect("the reference starts")
}

/// The reference at a window of `window_secs`, with `fleet` keys per plan (`serve --dev-keys
/// n`; None: the development set), sending the IETF RateLimit fields beside X-RateLimit-* or
/// not (`serve --ratelimit-fields`).
pub async fn reference_as(window_secs: f64, fleet: Option<usize>, fields: bool) -> RunningServer {
    let mut cfg = ServeConfig::in_process();
    cfg.window = Some(linkcert::window::RateWindow::from_secs(window_secs).expect("a window"));
    cfg.keys = fleet.map(|n| linkcert::server::KeySet::development_fleet(&spec(), n));
    cfg.ratelimit_fields = fields;
    server::start(spec(), cfg)
        .await
        .expect("the reference starts")
}

/// The reference sending the IETF RateLimit fields.
pub async fn reference_with_fields(window_secs: f64) -> RunningServer {
    reference_as(window_secs, None, true).await
}

/// The reference with `n` keys per plan (`serve --dev-keys n`).
pub async fn reference_fleet(window_secs: f64, n: usize) -> RunningServer {
    reference_as(window_secs, Some(n), false).await
}

/// The runner's own client settings (`linkcert::http`), trusting the server's certificate.
pub fn client(server: &RunningServer) -> reqwest::Client {
    ClientConfig {
        trust_pem: server.self_signed_pem.clone(),
        ..ClientConfig::new(Duration::from_secs(20), usize::MAX)
    }
    .build()
    .expect("the test client builds")
}

pub fn header_u64(r: &reqwest::Response, name: &str) -> Option<u64> {
    r.headers().get(name)?.to_str().ok()?.parse().ok()
}

/// Status and parsed JSON body.
pub async fn json(r: reqwest::Response) -> (u16, serde_json::Value) {
    let status = r.status().as_u16();
    let body = r.bytes().await.unwrap();
    (
        status,
        serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    )
}

/// Asserts the spec's error envelope with the code of `status`.
pub fn assert_envelope(status: u16, body: &serde_json::Value, expected_status: u16) {
    let spec = spec();
    assert_eq!(status, expected_status, "body: {body}");
    let code = spec.errors.code(status).unwrap();
    assert_eq!(body["error"]["code"], code, "body: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    let doc = body["error"]["doc_url"].as_str().unwrap();
    assert!(doc.ends_with(&format!("#{code}")), "{doc}");
}
