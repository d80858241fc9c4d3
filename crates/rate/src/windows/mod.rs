//! What a key may be admitted window by window, whatever the limiter: the bounds over k
//! windows (`bounds`), the most admissions provably in one rolling window (`rolling`), the
//! windows the target names itself (`named`), and the limiter a key's Resets show (`model`). `load` and `check` both count with these.

mod bounds;
mod model;
mod named;
mod rolling;

pub use bounds::Bounds;
pub use model::{Learner, Model};
pub use named::{NamedFixed, NamedWindows, ResetWindows, Short};
pub use rolling::RollingMax;
