//! linkcert: certifies implementations of the Link Attribution Service API.
//!
//! Modules are named after what they own: `spec` loads the OpenAPI document everything is
//! driven by, `server` is the reference implementation, `qr` renders and inspects QR PNGs,
//! `cli` is the command line.

pub mod cli;
pub mod qr;
pub mod server;
pub mod spec;
