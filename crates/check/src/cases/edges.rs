//! Edge values of bounded integers: a strategy that favours the bounds and their neighbours,
//! where implementations most often disagree with the spec.

use super::*;

// ---------------------------------------------------------------------------------------------
// Integers with their edges, shrinking towards the lower bound.

/// Integers in `[lo, hi]`, the edges drawn on purpose, shrinking by binary search towards `lo`
/// (so a failure from some threshold on shrinks to the threshold itself).
#[derive(Clone, Debug)]
pub(super) struct EdgeInt {
    pub(super) lo: i64,
    pub(super) hi: i64,
    pub(super) edges: Vec<i64>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Shifted {
    pub(super) lo: i64,
    pub(super) inner: proptest::num::u64::BinarySearch,
}

impl ValueTree for Shifted {
    type Value = i64;
    fn current(&self) -> i64 {
        self.lo.wrapping_add(self.inner.current() as i64)
    }
    fn simplify(&mut self) -> bool {
        self.inner.simplify()
    }
    fn complicate(&mut self) -> bool {
        self.inner.complicate()
    }
}

impl Strategy for EdgeInt {
    type Tree = Shifted;
    type Value = i64;
    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let rng = runner.rng();
        let span = self.hi.wrapping_sub(self.lo) as u64;
        let v = if !self.edges.is_empty() && rng.next_u64() % 5 < 2 {
            self.edges[(rng.next_u64() % self.edges.len() as u64) as usize]
        } else {
            let off = match span.checked_add(1) {
                Some(n) => rng.next_u64() % n,
                None => rng.next_u64(),
            };
            self.lo.wrapping_add(off as i64)
        };
        let v = v.clamp(self.lo, self.hi);
        Ok(Shifted {
            lo: self.lo,
            inner: proptest::num::u64::BinarySearch::new(v.wrapping_sub(self.lo) as u64),
        })
    }
}

/// The integer bounds the spec gives (OpenAPI 3.0: exclusiveMinimum/-Maximum are booleans).
pub(super) fn int_bounds(p: &Param) -> (Option<i64>, Option<i64>) {
    let excl = |k: &str| p.schema.get(k).and_then(Value::as_bool) == Some(true);
    let lo = p
        .bound("minimum")
        .map(|m| m.ceil() as i64 + i64::from(excl("exclusiveMinimum")));
    let hi = p
        .bound("maximum")
        .map(|m| m.floor() as i64 - i64::from(excl("exclusiveMaximum")));
    (lo, hi)
}
