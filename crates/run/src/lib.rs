//! What a run of `check` or `load` works with: the target (`target`: base URL, keys by plan,
//! fixtures, TLS trust, window), whether it can be judged at all (`reach`), a run asked to
//! stop (`interrupt`: SIGINT, SIGTERM), a target that went away mid-run (`outage`), and how a
//! run ended, as an exit code (`outcome`).

pub mod interrupt;
pub mod outage;
pub mod outcome;
pub mod reach;
pub mod target;

pub use outcome::Outcome;
