//! linkcert: certifies implementations of the Link Attribution Service API.
//!
//! Modules are named after what they own: `spec` loads the OpenAPI document everything is
//! driven by, `server` is the reference implementation, `check` the conformance runner,
//! `target` what check and load aim at, `report` what a run writes, `qr` renders and
//! inspects QR PNGs, `cli` is the command line.

pub mod check;
pub mod cli;
pub mod load;
pub mod qr;
pub mod report;
pub mod server;
pub mod spec;
pub mod target;
