//! linkcert: certifies implementations of the Link Attribution Service API.
//!
//! This package is the binary and its command line (`cli`). The library is a crate per
//! responsibility under `crates/`, bottom up: `linkcert-spec` (the OpenAPI document, clauses,
//! rate window, clock, verdict levels), `linkcert-registry` (every check and load rule),
//! `linkcert-http` (how our clients speak HTTP), `linkcert-qr` with `linkcert-qr-read`
//! (`check`'s side) and `linkcert-qr-encode` (the reference's), `linkcert-rate` (what the
//! rate-limit headers mean, and the quota rule), `linkcert-run` (target, interrupts, outages),
//! `linkcert-report` (reports and gates), `linkcert-server` (the reference), `linkcert-check`
//! and `linkcert-load`. They are re-exported here under their short names for the tests and
//! benches; code inside the crates names the crate it takes from.

pub mod cli;

pub use linkcert_check as check;
pub use linkcert_http as http;
pub use linkcert_load as load;
pub use linkcert_qr_encode as qr_encode;
pub use linkcert_qr_read as qr;
pub use linkcert_rate::{headers as rate_headers, quota};
pub use linkcert_registry as registry;
pub use linkcert_report as report;
pub use linkcert_report::gate;
pub use linkcert_run::{interrupt, outage, reach, target};
pub use linkcert_server as server;
pub use linkcert_spec as spec;
pub use linkcert_spec::{clock, verdict, window};
