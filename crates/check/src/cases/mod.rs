//! Requests generated from the spec, as `proptest` strategies: valid cases (every parameter
//! within what the spec allows) and invalid cases (exactly one thing the spec forbids, the rest
//! valid), each with what the spec says about it.
//!
//! Everything is derived from the spec's schemas (`Param::schema`, never the reference's own
//! `x-linkcert-reference` choices). Where a value touches something the spec leaves open
//! (bounds of a number it does not bound, the `#RGB` colour form, a URL beyond QR capacity, a
//! parameter whose name the spec does not show), the case only asks for a clean answer:
//! `Expect::AcceptOrReject`. A failure must always be something the spec says.

use linkcert_registry::{Check, check_id};
use std::sync::Mutex;

use proptest::prelude::*;

use proptest::strategy::{NewTree, Union, ValueTree};

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use serde_json::{Map, Value, json};

use super::conformance::Expect;

use super::probe::Req;

use linkcert_spec::{Location, Operation, Param, ParamKind};

mod edges;
mod hostile;
mod invalid;
mod valid;

use edges::*;
pub use hostile::hostile_strings;
use hostile::*;
pub use invalid::*;
pub use valid::*;

/// How often an optional parameter (or body field) appears in a generated case.
const OPTIONAL_WEIGHT: f64 = 0.5;

/// Prefix of the ids put in generated bodies: no fixture of any target starts so.
pub const ID_PREFIX: &str = "lcstatus_";

/// A generated request and what the spec says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Query parameters, already spelled for the query string.
    pub params: Vec<(String, String)>,
    /// Content type and bytes.
    pub body: Option<(String, Vec<u8>)>,
    pub expect: Expect,
    /// What the case is, e.g. "pageSize above its maximum 100 (101)".
    pub why: String,
    /// A choice the spec leaves open, worth recording informationally whatever the answer.
    pub observe: bool,
}

impl Case {
    /// The request, without a key.
    pub fn request(&self, op: &Operation) -> Req {
        let mut req = Req::new(op.method.clone(), &op.path);
        for (k, v) in &self.params {
            req = req.query(k, v.clone());
        }
        if let Some((ct, bytes)) = &self.body {
            req = req.body(ct, bytes.clone());
        }
        req
    }
}

/// The two properties the `status` family runs on every operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    Valid,
    Invalid,
}

impl Property {
    /// The catalogue id the property feeds.
    /// The id of `check()`.
    pub fn id(self) -> &'static str {
        self.check().id()
    }
    pub fn check(self) -> Check {
        match self {
            Property::Valid => check_id!("status.valid-accepted"),
            Property::Invalid => check_id!("status.invalid-rejected"),
        }
    }
    pub fn strategy(self, op: &Operation) -> Option<BoxedStrategy<Case>> {
        match self {
            Property::Valid => Some(valid(op)),
            Property::Invalid => invalid(op),
        }
    }
}

/// 32 bytes of ChaCha seed from the run's seed, the operation and the property: `--seed N`
/// replays every property exactly, whatever order or concurrency they run in.
pub fn seed_bytes(seed: u64, op_id: &str, property: Property) -> [u8; 32] {
    // FNV-1a over the inputs, then splitmix64 to spread it: stable across Rust versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let name = property.id();
    for b in seed
        .to_le_bytes()
        .iter()
        .chain(op_id.as_bytes())
        .chain(&[0xff])
        .chain(name.as_bytes())
    {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut out = [0u8; 32];
    for chunk in out.chunks_mut(8) {
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes());
    }
    out
}

/// The runner a property runs with: seeded, bounded shrinking, nothing persisted.
pub fn runner(cases: u32, seed: u64, op_id: &str, property: Property) -> TestRunner {
    let config = Config {
        cases,
        max_shrink_iters: 64,
        failure_persistence: None,
        max_global_rejects: 0,
        max_local_rejects: 0,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed, op_id, property));
    TestRunner::new_with_rng(config, rng)
}

/// How many cases a property of `op` runs: one when the operation has nothing to vary.
pub fn cases_for(op: &Operation, cases: u32) -> u32 {
    if op.params.iter().all(|p| !generated(p)) && op.body.is_none() {
        cases.min(1)
    } else {
        cases
    }
}

/// The cases a property generates for a seed, exactly as the `status` run draws them (same
/// runner, same strategy), without sending anything.
pub fn sample(op: &Operation, property: Property, seed: u64, cases: u32) -> Vec<Case> {
    let Some(strategy) = property.strategy(op) else {
        return Vec::new();
    };
    let seen = Mutex::new(Vec::new());
    let mut r = runner(cases_for(op, cases), seed, &op.id, property);
    let _ = r.run(&strategy, |c| {
        seen.lock().unwrap_or_else(|p| p.into_inner()).push(c);
        Ok(())
    });
    seen.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// A parameter generated cases carry: in the query, and not paid-only (those depend on the
/// key's plan; `plan.paid-params` covers them).
pub(crate) fn generated(p: &Param) -> bool {
    p.location == Location::Query && !p.paid_only
}

fn unnamed(p: &Param) -> bool {
    p.name_unshown()
}

/// Operations the spec does not shape (`x-linkcert-extension`: ours): only observed.
fn observed_only(op: &Operation) -> bool {
    op.extension
}

/// Operations with effects or fixtures (anything but GET/HEAD): a valid shape names ids that
/// do not exist, so only invalid cases say something about the status.
fn has_effects(op: &Operation) -> bool {
    op.method != http::Method::GET && op.method != http::Method::HEAD
}

/// One parameter value.
#[derive(Clone, Debug)]
struct Val {
    text: String,
    /// Why the target may cleanly refuse it (what the spec leaves open), if it may.
    open: Option<String>,
    /// An edge worth naming in the case's `why`.
    note: Option<String>,
}

impl Val {
    fn closed(text: impl Into<String>) -> Val {
        Val {
            text: text.into(),
            open: None,
            note: None,
        }
    }
    fn open(text: impl Into<String>, why: impl Into<String>) -> Val {
        Val {
            open: Some(why.into()),
            ..Val::closed(text)
        }
    }
    fn noted(mut self, note: impl Into<String>) -> Val {
        self.note = Some(note.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkcert_spec::Spec;

    fn spec() -> Spec {
        Spec::embedded().unwrap()
    }

    #[test]
    fn the_same_seed_draws_the_same_cases_and_another_seed_others() {
        let spec = spec();
        for op in &spec.operations {
            for prop in [Property::Valid, Property::Invalid] {
                let a = sample(op, prop, 5, 16);
                assert_eq!(a, sample(op, prop, 5, 16), "{} {prop:?}", op.id);
                if a.len() > 1 {
                    assert_ne!(a, sample(op, prop, 6, 16), "{} {prop:?}", op.id);
                }
            }
        }
    }

    #[test]
    fn accepted_valid_values_satisfy_the_spec_schema_and_mutations_break_it() {
        let spec = spec();
        for op in spec.operations.iter().filter(|o| !o.extension) {
            for c in sample(op, Property::Valid, 3, 200) {
                for (k, v) in &c.params {
                    let p = op.param(k).unwrap();
                    if c.expect == Expect::Accept {
                        let value = p.decode(v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
                        let val = linkcert_spec::schema::validator(&p.schema).unwrap();
                        assert!(val.is_valid(&value), "{k}={v} in {}", c.why);
                    }
                }
                for p in op.params.iter().filter(|p| p.required) {
                    assert!(c.params.iter().any(|(k, _)| k == &p.name));
                }
                assert!(
                    c.params
                        .iter()
                        .all(|(k, _)| !op.param(k).unwrap().paid_only)
                );
            }
            for c in sample(op, Property::Invalid, 3, 200) {
                if c.expect != Expect::Reject || op.body.is_some() {
                    continue;
                }
                // One parameter is missing, undecodable or outside the spec's schema.
                let broken = op.params.iter().filter(|p| generated(p)).any(|p| {
                    match c.params.iter().find(|(k, _)| k == &p.name) {
                        None => p.required,
                        Some((_, v)) => match p.decode(v) {
                            Err(_) => true,
                            Ok(value) => {
                                let hex = p.format.as_deref() == Some("hex-color")
                                    && !(v.len() == 7
                                        && v.starts_with('#')
                                        && v[1..].chars().all(|c| c.is_ascii_hexdigit()));
                                hex || !linkcert_spec::schema::validator(&p.schema)
                                    .unwrap()
                                    .is_valid(&value)
                            }
                        },
                    }
                });
                assert!(
                    broken,
                    "{}: {:?} is not invalid ({})",
                    op.id, c.params, c.why
                );
            }
        }
    }

    #[test]
    fn edges_are_drawn() {
        let spec = spec();
        let tags = spec.operation("getTags").unwrap();
        let cases = sample(tags, Property::Valid, 1, 200);
        let sizes: Vec<&str> = cases
            .iter()
            .flat_map(|c| c.params.iter())
            .filter(|(k, _)| k == "pageSize")
            .map(|(_, v)| v.as_str())
            .collect();
        for edge in ["1", "2", "100"] {
            assert!(sizes.contains(&edge), "pageSize {edge} never drawn");
        }
        assert!(cases.iter().any(|c| c.expect == Expect::Accept));
        let qr = spec.operation("getQRCode").unwrap();
        let cases = sample(qr, Property::Valid, 1, 200);
        assert!(cases.iter().any(
            |c| c.params.iter().any(|(k, v)| k == "url" && v.len() == 32000)
                && c.expect == Expect::AcceptOrReject
        ));
        // Long strings and lists where the spec sets no maximum, around common limits.
        let tag_cases = sample(tags, Property::Valid, 1, 400);
        let values = |name: &'static str| {
            tag_cases
                .iter()
                .flat_map(|c| c.params.iter())
                .filter(move |(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let longest_search = values("search").map(|v| v.chars().count()).max();
        assert!(longest_search >= Some(255), "no long search term drawn");
        let longest_ids = values("ids").map(|v| v.split(',').count()).max();
        assert!(longest_ids >= Some(50), "no long ids list drawn");
        let invalid = sample(qr, Property::Invalid, 1, 200);
        assert!(
            invalid
                .iter()
                .any(|c| !c.params.iter().any(|(k, _)| k == "url"))
        );
    }
}
