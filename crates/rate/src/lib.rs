//! Rate limits as the spec states them and as a target shows them, written once for the
//! reference, `check` and `load`: `headers` is what `X-RateLimit-*` and `Retry-After` mean
//! (building, parsing, the rules over a sequence of answers), `quota` the one rule that judges a
//! key's answers from its own history, `windows` what a key may be admitted window by window.

pub mod headers;
pub mod quota;
pub mod windows;
