//! The measure of how much of the reference `check` pins down (issue 41, `benches/mutants`):
//! cargo-mutants changes the reference one small step at a time and runs this, the main job in
//! process: `check`, as `cargo run -- check` runs it, against the mutated reference. Any
//! outcome but PASSED fails it, and the mutant counts as caught. The reference sends its
//! optional IETF RateLimit fields here (`serve --ratelimit-fields`), so that what it says
//! there is measured too; `check` judges them where sent (ratelimit.fields).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use linkcert_check::{CheckOptions, IN_PROCESS_KEYS_PER_PLAN, IN_PROCESS_WINDOW_SECS};
use linkcert_report::gate::FailOn;
use linkcert_run::Outcome;
use linkcert_server::{KeySet, ServeConfig};
use linkcert_spec::Spec;
use linkcert_spec::window::RateWindow;

const ELSEWHERE: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 0);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_passes_the_reference() {
    let spec = Arc::new(Spec::embedded().expect("the built-in spec"));
    let mut cfg = ServeConfig::in_process();
    cfg.window = Some(RateWindow::from_secs(IN_PROCESS_WINDOW_SECS).expect("a window"));
    cfg.keys = Some(KeySet::development_fleet(&spec, IN_PROCESS_KEYS_PER_PLAN));
    cfg.ratelimit_fields = true;
    // Served at an address its certificate does not name by default, as a user's `serve
    // --listen` is: the certificate must name where the reference listens, or check's
    // handshake fails. 127.0.0.2 is loopback on Linux; elsewhere, 127.0.0.1.
    if std::net::TcpListener::bind(ELSEWHERE).is_ok() {
        cfg.addr = ELSEWHERE;
    }
    let running = linkcert_server::start(spec.clone(), cfg)
        .await
        .expect("the reference starts");
    let target = running.target(&spec);
    let report = linkcert_check::run(spec, target, CheckOptions::default())
        .await
        .expect("check runs");
    assert_eq!(
        report.outcome(FailOn::Any),
        Outcome::Passed,
        "{}",
        report.summary()
    );
}
