//! What a run of `check` or `load` works with: the target (`target`: base URL, keys by plan,
//! fixtures, TLS trust, window), a run asked to stop (`interrupt`: SIGINT, SIGTERM) and a
//! target that went away mid-run (`outage`).

pub mod interrupt;
pub mod outage;
pub mod target;
