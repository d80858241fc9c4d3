//! The integration tests, one module per subject, in one test binary: the shared helpers
//! (`common`) are compiled and linked once rather than once per file, and a test that waits
//! out a rate-limit window leaves the machine to another one's work instead of holding up the
//! next binary. Run one module with `cargo test --test it check_qr::`.
//!
//! `tests/load/` stays a binary of its own: its runs take turns on the machine (`TURNS`
//! there), which tests beside them here would not see. Every load run against a fleet or the
//! built-in suite lives there.

#[path = "../common/mod.rs"]
mod common;

mod action;
mod certificates;
mod check_auth;
mod check_clients;
mod check_conditional;
mod check_families;
mod check_far;
mod check_fixtures;
mod check_hostile;
mod check_http;
mod check_limiter;
mod check_logo;
mod check_neighbours;
mod check_outage;
mod check_overlap;
mod check_pagination;
mod check_qr;
mod check_ratelimit;
mod check_relations;
mod check_sequence;
mod check_status;
mod cli_runs;
mod docs;
mod interrupt;
mod layering;
mod layout;
mod load_hostile;
mod load_prometheus;
mod load_shards;
mod no_server_errors;
mod ratelimit_fields;
mod registries;
mod samples;
mod sdk_requests;
mod server;
mod shell_docs;
mod spec_schemas;
