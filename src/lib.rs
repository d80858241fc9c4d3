//! linkcert: certifies implementations of the Link Attribution Service API.
//!
//! Modules are named after what they own: `spec` loads the OpenAPI document everything is
//! driven by, `server` is the reference implementation, `check` the conformance runner,
//! `load` throttling under load, `registry` every check and load rule with the clauses it
//! enforces, `gate` waivers and baselines, `target` what check and load aim at, `http` how
//! every client of ours speaks HTTP, `report` the run's record and what a run writes, `qr`
//! renders and inspects QR PNGs, `rate_headers` owns what the rate-limit headers mean (for
//! server, check and load alike), `clock` the wall clock and its formats, `verdict` the
//! verdict levels, `window` the target's rate window, `interrupt` a run asked to stop (SIGINT,
//! SIGTERM), `cli` is the command line.

pub mod check;
pub mod cli;
pub mod clock;
pub mod gate;
pub mod http;
pub mod interrupt;
pub mod load;
pub mod outage;
pub mod qr;
pub mod quota;
pub mod rate_headers;
pub mod registry;
pub mod report;
pub mod server;
pub mod spec;
pub mod target;
pub mod verdict;
pub mod window;
