//! HTTP as every client of ours speaks it, written once for `check`, `load` and the tests'
//! helpers. A leaf: no other module of ours is needed here.
//!
//! Owns: the client settings (`ClientConfig`: timeouts, idle pool, no redirects, no proxy, the
//! certificate to trust), the TLS they make (`tls`), and the one place clients are built:
//! reqwest's for `check`, the probes and the tests, and the generator's `BareClient` (hyper
//! without reqwest's layers, for `load`'s rate); reading a body whatever the target sends
//! (`body`: caps by what the spec allows, counted after decompression, time budgets, words for
//! what went wrong); a plain request on a fresh connection read as raw bytes (`raw`); the
//! answer as read (`Resp`: status, headers, body, media type, JSON, and in words); the spec's
//! error envelope (`envelope_error`, `is_envelope`, `error_code`); and what a request without
//! an answer ran into (`Failure`, classified where the client sees it: `describe`).
//!
//! Not here: what a request is and how it is paced and written down (`check::probe`), what the
//! rate-limit headers mean (`rate_headers`), and which code each status must carry (the spec's
//! error table).

mod answer;
mod bare;
mod base_url;
mod body;
mod client;
mod decode;
mod envelope;
mod failure;
mod raw;
mod tls;

pub use answer::*;
pub use bare::*;
pub use base_url::*;
pub use body::*;
pub use client::*;
pub use decode::decodes;
pub use envelope::*;
pub use failure::*;
pub use raw::*;
