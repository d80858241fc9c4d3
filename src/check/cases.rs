//! Requests generated from the spec, as `proptest` strategies: valid cases (every parameter
//! within what the spec allows) and invalid cases (exactly one thing the spec forbids, the rest
//! valid), each with what the spec says about it.
//!
//! Everything is derived from the spec's schemas (`Param::schema`, never the reference's own
//! `x-linkcert-reference` choices). Where a value touches something the spec leaves open
//! (bounds of a number it does not bound, the `#RGB` colour form, a URL beyond QR capacity, a
//! parameter whose name the spec does not show), the case only asks for a clean answer:
//! `Expect::AcceptOrReject`. A failure must always be something the spec says.

use std::sync::Mutex;

use proptest::prelude::*;
use proptest::strategy::{NewTree, Union, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value, json};

use super::conformance::Expect;
use super::probe::Req;
use crate::spec::{Location, Operation, Param, ParamKind};

/// Roles whose query-parameter names the spec does not show ("GET /tags: the exact
/// query-parameter names of the sort field, order, search term and id filter: not shown").
/// Our spec names them as the real service does, but a target may call them otherwise: for it
/// they are unknown parameters, which the spec neither requires tolerating nor rejecting.
const UNNAMED_ROLES: &[&str] = &["sort-by", "sort-order", "search", "ids"];

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
    /// Statuses the spec also allows here, in the error envelope (404 for a page that may be
    /// past the last: the spec does not say what a page beyond the data gives).
    pub tolerated: Vec<u16>,
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
    pub fn id(self) -> &'static str {
        match self {
            Property::Valid => "status.valid-accepted",
            Property::Invalid => "status.invalid-rejected",
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
fn generated(p: &Param) -> bool {
    p.location == Location::Query && !p.paid_only
}

fn unnamed(p: &Param) -> bool {
    p.pagination
        .as_deref()
        .is_some_and(|r| UNNAMED_ROLES.contains(&r))
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
    /// Another status the spec allows for this value (404 for a page maybe past the last).
    tolerated: Option<u16>,
}

impl Val {
    fn closed(text: impl Into<String>) -> Val {
        Val {
            text: text.into(),
            open: None,
            note: None,
            tolerated: None,
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

// ---------------------------------------------------------------------------------------------
// Integers with their edges, shrinking towards the lower bound.

/// Integers in `[lo, hi]`, the edges drawn on purpose, shrinking by binary search towards `lo`
/// (so a failure from some threshold on shrinks to the threshold itself).
#[derive(Clone, Debug)]
struct EdgeInt {
    lo: i64,
    hi: i64,
    edges: Vec<i64>,
}

#[derive(Clone, Copy, Debug)]
struct Shifted {
    lo: i64,
    inner: proptest::num::u64::BinarySearch,
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
fn int_bounds(p: &Param) -> (Option<i64>, Option<i64>) {
    let excl = |k: &str| p.schema.get(k).and_then(Value::as_bool) == Some(true);
    let lo = p
        .bound("minimum")
        .map(|m| m.ceil() as i64 + i64::from(excl("exclusiveMinimum")));
    let hi = p
        .bound("maximum")
        .map(|m| m.floor() as i64 - i64::from(excl("exclusiveMaximum")));
    (lo, hi)
}

// ---------------------------------------------------------------------------------------------
// Valid values.

fn valid_value(p: &Param) -> BoxedStrategy<Val> {
    let s = valid_by_kind(p);
    if unnamed(p) {
        let why = format!(
            "{}: the spec does not show this parameter's name (a target may not know it)",
            p.name
        );
        s.prop_map(move |mut v| {
            if v.open.is_none() {
                v.open = Some(why.clone());
            }
            v
        })
        .boxed()
    } else {
        s
    }
}

fn valid_by_kind(p: &Param) -> BoxedStrategy<Val> {
    let name = p.name.clone();
    if p.kind != ParamKind::Array
        && let Some(values) = p.enum_values()
        && !values.is_empty()
    {
        let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
        return prop::sample::select(values).prop_map(Val::closed).boxed();
    }
    match p.kind {
        ParamKind::Boolean => prop::sample::select(vec!["true", "false"])
            .prop_map(Val::closed)
            .boxed(),
        ParamKind::Integer => valid_integer(p),
        ParamKind::Number => valid_number(p),
        ParamKind::Array => valid_array(p),
        ParamKind::String if p.format.as_deref() == Some("hex-color") => prop_oneof![
            4 => "[0-9a-fA-F]{6}".prop_map(|h| Val::closed(format!("#{h}"))),
            1 => "[0-9a-fA-F]{3}".prop_map(move |h| Val::open(
                format!("#{h}"),
                format!("{name} #RGB: the spec shows only the #RRGGBB form")
            )),
        ]
        .boxed(),
        ParamKind::String if is_url(p) => valid_url(p),
        ParamKind::String => valid_text(p),
    }
}

fn valid_integer(p: &Param) -> BoxedStrategy<Val> {
    let (lo, hi) = int_bounds(p);
    let lo_v = lo.unwrap_or(0);
    let page = p.pagination.as_deref() == Some("page");
    let (name, n2) = (p.name.clone(), p.name.clone());
    let mut edges = vec![lo_v, lo_v.saturating_add(1)];
    let top = match hi {
        Some(h) => {
            edges.push(h);
            h
        }
        None => lo_v.saturating_add(1000),
    };
    let within = EdgeInt {
        lo: lo_v,
        hi: top.max(lo_v),
        edges,
    }
    .prop_map(move |v| {
        let mut val = Val::closed(v.to_string());
        if lo == Some(v) {
            val = val.noted(format!("{name} at its minimum {v}"));
        } else if hi == Some(v) {
            val = val.noted(format!("{name} at its maximum {v}"));
        }
        if page && v > lo_v {
            // A page past the last: the spec does not say whether it is empty or 404.
            val.tolerated = Some(404);
        }
        val
    });
    if hi.is_some() {
        return within.boxed();
    }
    // No maximum: any size is valid, but beyond 32 or 64 bits the representation is the
    // target's choice.
    let huge = prop::sample::select(vec![
        "2147483648",
        "9223372036854775807",
        "99999999999999999999",
    ])
    .prop_map(move |v| {
        let mut val = Val::open(
            v,
            format!("{n2} {v}: beyond 32/64 bits (the spec sets no maximum; representation is the target's)"),
        );
        if page {
            val.tolerated = Some(404);
        }
        val
    });
    prop_oneof![9 => within, 1 => huge].boxed()
}

fn valid_number(p: &Param) -> BoxedStrategy<Val> {
    let name = p.name.clone();
    let (lo, hi) = (p.bound("minimum"), p.bound("maximum"));
    if let (Some(lo), Some(hi)) = (lo, hi) {
        let (a, b) = (lo.ceil() as i64, hi.floor() as i64);
        return EdgeInt {
            lo: a,
            hi: b.max(a),
            edges: vec![a, b],
        }
        .prop_map(|v| Val::closed(v.to_string()))
        .boxed();
    }
    // No bounds in the spec: only the default is sure to be accepted.
    let default = p.default().map(|d| p.encode(d));
    let n1 = name.clone();
    let others = prop_oneof![
        3 => EdgeInt { lo: 0, hi: 1000, edges: vec![0, 1] }.prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec!["-1", "0.5", "12.5", "250.75"]).prop_map(str::to_string),
    ]
    .prop_map(move |v| {
        let why = format!("{n1} {v}: the spec sets no bounds");
        Val::open(v, why)
    });
    match default {
        Some(d) => prop_oneof![
            3 => Just(Val::closed(d.clone()).noted(format!("{name} at its default {d}"))),
            2 => others,
        ]
        .boxed(),
        None => others.boxed(),
    }
}

fn valid_array(p: &Param) -> BoxedStrategy<Val> {
    let name = p.name.clone();
    if let Some(values) = p.enum_values()
        && !values.is_empty()
    {
        let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
        let n = values.len();
        return prop::sample::subsequence(values, 1..=n)
            .prop_map(|v| Val::closed(v.join(",")))
            .boxed();
    }
    prop_oneof![
        6 => prop::collection::vec("[a-z][a-z0-9_]{0,11}", 1..=3)
            .prop_map(|v| Val::closed(v.join(","))),
        1 => Just(Val::open("", format!("{name} empty: the spec does not say"))),
    ]
    .boxed()
}

/// A parameter whose value is a URL (the spec's "URL to encode"; `format: uri`).
fn is_url(p: &Param) -> bool {
    p.format.as_deref() == Some("uri") || p.name.to_ascii_lowercase().ends_with("url")
}

fn valid_url(p: &Param) -> BoxedStrategy<Val> {
    let name = p.name.clone();
    let max = p.bound("maxLength").map(|m| m as usize);
    let base = "https://example.com/";
    let mut options: Vec<(u32, BoxedStrategy<Val>)> = vec![
        (
            12,
            "[a-zA-Z0-9/_.~-]{0,100}([?][a-z]{1,5}=[a-zA-Z0-9]{0,8}(&[a-z]{1,5}=[a-zA-Z0-9]{0,8}){0,2})?"
                .prop_map(move |path| Val::closed(format!("{base}{path}")))
                .boxed(),
        ),
        (
            1,
            Just(Val::open("a", format!("{name} of 1 character: not a URL")))
                .boxed(),
        ),
        (
            1,
            Just(Val::open("", format!("{name} empty: the spec does not say")))
                .boxed(),
        ),
        (
            1,
            prop::sample::select(vec![
                "https://example.com/ünïcödé/ページ",
                "https://例え.テスト/パス?q=値",
                "https://example.com/emoji/😀",
            ])
            .prop_map(move |u| {
                Val::open(u, "a non-ASCII URL: how it is encoded is not shown".to_string())
            })
            .boxed(),
        ),
    ];
    if let Some(max) = max {
        let pad = max.saturating_sub(base.len());
        options.push((
            1,
            Just(Val::open(
                format!("{base}{}", "a".repeat(pad)),
                format!(
                    "{name} of {max} characters (its maxLength): beyond any QR code's capacity"
                ),
            ))
            .boxed(),
        ));
    }
    Union::new_weighted(options).boxed()
}

fn valid_text(p: &Param) -> BoxedStrategy<Val> {
    let name = p.name.clone();
    let (n1, n2) = (name.clone(), name.clone());
    let mut options: Vec<(u32, BoxedStrategy<Val>)> = vec![
        (5, "[a-zA-Z0-9]{1,16}".prop_map(Val::closed).boxed()),
        (
            1,
            Just(Val::open("", format!("{n1} empty: the spec does not say"))).boxed(),
        ),
        (
            1,
            "[ a-zé漢字ß]{1,10}"
                .prop_map(move |s| Val::open(s, format!("{n2} with spaces or non-ASCII")))
                .boxed(),
        ),
    ];
    if let Some(max) = p.bound("maxLength").map(|m| m as usize) {
        options.push((
            1,
            Just(Val::closed("a".repeat(max)).noted(format!("{name} at its maxLength {max}")))
                .boxed(),
        ));
    }
    Union::new_weighted(options).boxed()
}

/// A valid body for the operation: a JSON object with each declared property present or not.
fn valid_body(op: &Operation) -> BoxedStrategy<Option<(String, Vec<u8>)>> {
    let Some(body) = &op.body else {
        return Just(None).boxed();
    };
    let ct = body.content_type.clone();
    let fields = body_fields(&body.schema);
    let strategies: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
        .into_iter()
        .map(|(name, schema)| {
            prop::option::weighted(OPTIONAL_WEIGHT + 0.2, valid_json(&schema))
                .prop_map(move |v| v.map(|v| (name.clone(), v)))
                .boxed()
        })
        .collect();
    strategies
        .prop_map(move |fields| {
            let obj: Map<String, Value> = fields.into_iter().flatten().collect();
            Some((ct.clone(), Value::Object(obj).to_string().into_bytes()))
        })
        .boxed()
}

/// Declared properties of an object schema, with their schemas.
fn body_fields(schema: &Value) -> Vec<(String, Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn valid_json(schema: &Value) -> BoxedStrategy<Value> {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => (0i64..1000).prop_map(Value::from).boxed(),
        Some("number") => (0i64..1000).prop_map(Value::from).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        // Strings, and anything else: an id no target has.
        _ => "[a-z0-9]{10}"
            .prop_map(|s| Value::from(format!("{ID_PREFIX}{s}")))
            .boxed(),
    }
}

/// A value of `p` every target must accept, if the spec gives one: the default, the first of
/// an enum, the lower bound... None where every value touches what the spec leaves open.
fn sure_value(p: &Param) -> Option<String> {
    if unnamed(p) {
        return None;
    }
    if let Some(d) = p.default() {
        return Some(p.encode(d));
    }
    if let Some(first) = p
        .enum_values()
        .and_then(|e| e.first().map(|s| s.to_string()))
    {
        return Some(first);
    }
    Some(match p.kind {
        ParamKind::Boolean => "false".into(),
        ParamKind::Integer => int_bounds(p).0.unwrap_or(0).to_string(),
        ParamKind::Number => p.bound("minimum")?.to_string(),
        ParamKind::String if p.format.as_deref() == Some("hex-color") => "#000000".into(),
        ParamKind::String if is_url(p) => "https://example.com/linkcert".into(),
        ParamKind::String | ParamKind::Array => "abc".into(),
    })
}

/// Parameters as (name, value when present): required ones always, optional ones at random.
/// With `sure`, only values every target must accept (the base of an invalid case, so that
/// its one mutation is what makes it invalid): open values become the sure one, parameters
/// without a sure value are left out.
fn base_params(op: &Operation, sure: bool) -> BoxedStrategy<Vec<(String, Option<Val>)>> {
    let strategies: Vec<BoxedStrategy<(String, Option<Val>)>> = op
        .params
        .iter()
        .filter(|p| generated(p))
        .filter(|p| !sure || p.required || sure_value(p).is_some())
        .map(|p| {
            let name = p.name.clone();
            let v = match (sure, sure_value(p)) {
                (true, Some(fallback)) => valid_value(p)
                    .prop_map(move |v| {
                        if v.open.is_some() {
                            Val::closed(fallback.clone())
                        } else {
                            v
                        }
                    })
                    .boxed(),
                _ => valid_value(p),
            };
            // Parameters whose name the spec does not show: rarer, so most cases are Accept.
            let weight = if unnamed(p) {
                OPTIONAL_WEIGHT / 2.0
            } else {
                OPTIONAL_WEIGHT
            };
            if p.required {
                v.prop_map(move |v| (name.clone(), Some(v))).boxed()
            } else {
                prop::option::weighted(weight, v)
                    .prop_map(move |v| (name.clone(), v))
                    .boxed()
            }
        })
        .collect();
    strategies.boxed()
}

/// Valid cases: `Accept`, or `AcceptOrReject` when a value touches what the spec leaves open;
/// `Any` where the status says nothing (ids that do not exist, operations the spec does not
/// shape).
pub fn valid(op: &Operation) -> BoxedStrategy<Case> {
    let any = observed_only(op) || has_effects(op);
    (base_params(op, false), valid_body(op))
        .prop_map(move |(params, body)| {
            let vals: Vec<(String, Val)> = params
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect();
            let open: Vec<&str> = vals.iter().filter_map(|(_, v)| v.open.as_deref()).collect();
            let notes: Vec<&str> = vals.iter().filter_map(|(_, v)| v.note.as_deref()).collect();
            let expect = if any {
                Expect::Any
            } else if open.is_empty() {
                Expect::Accept
            } else {
                Expect::AcceptOrReject
            };
            let mut why = if any {
                "a request of valid shape (ids that do not exist: any status)".to_string()
            } else {
                "a valid request".to_string()
            };
            if !notes.is_empty() {
                why.push_str(&format!(" with {}", notes.join(", ")));
            }
            if !open.is_empty() {
                why.push_str(&format!("; the spec leaves open: {}", open.join("; ")));
            }
            let mut tolerated: Vec<u16> = vals.iter().filter_map(|(_, v)| v.tolerated).collect();
            tolerated.dedup();
            Case {
                params: vals.into_iter().map(|(k, v)| (k, v.text)).collect(),
                body,
                expect,
                tolerated,
                why,
                observe: false,
            }
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Invalid cases: one mutation.

#[derive(Clone, Debug)]
enum Edit {
    Drop(String),
    Set(String, String),
    Body(Option<(String, Vec<u8>)>),
}

#[derive(Clone, Debug)]
struct Mutation {
    edit: Edit,
    why: String,
    expect: Expect,
    observe: bool,
}

fn set(p: &Param, value: impl Into<String>, why: impl Into<String>) -> Mutation {
    let why = why.into();
    let (expect, why) = if unnamed(p) {
        (
            Expect::AcceptOrReject,
            format!("{why} (the spec does not show the parameter's name: a target may ignore it)"),
        )
    } else {
        (Expect::Reject, why)
    };
    Mutation {
        edit: Edit::Set(p.name.clone(), value.into()),
        why,
        expect,
        observe: false,
    }
}

/// The ways a parameter can be made invalid per the spec.
fn param_mutations(p: &Param) -> Vec<BoxedStrategy<Mutation>> {
    let mut out: Vec<BoxedStrategy<Mutation>> = Vec::new();
    let name = p.name.clone();
    if p.required {
        out.push(
            Just(Mutation {
                edit: Edit::Drop(name.clone()),
                why: format!("{name} missing (required)"),
                expect: Expect::Reject,
                observe: false,
            })
            .boxed(),
        );
    }
    let pc = p.clone();
    let with = move |values: Vec<String>, what: &'static str| -> BoxedStrategy<Mutation> {
        let pc = pc.clone();
        prop::sample::select(values)
            .prop_map(move |v| {
                let why = format!("{} {what} ({v:?})", pc.name);
                set(&pc, v, why)
            })
            .boxed()
    };
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match p.kind {
        ParamKind::Integer => {
            out.push(with(
                strings(&["abc", "1.5", "1e3", "0x10"]),
                "not an integer",
            ));
            let (lo, hi) = int_bounds(p);
            if let Some(lo) = lo {
                let below = vec![
                    lo.saturating_sub(1),
                    lo.saturating_sub(7),
                    lo.saturating_sub(1000),
                ];
                let pc = p.clone();
                out.push(
                    prop::sample::select(below)
                        .prop_map(move |v| {
                            set(
                                &pc,
                                v.to_string(),
                                format!("{} below its minimum {lo} ({v})", pc.name),
                            )
                        })
                        .boxed(),
                );
            }
            if let Some(hi) = hi {
                let above = vec![
                    hi.saturating_add(1).to_string(),
                    hi.saturating_add(50).to_string(),
                    "99999999999999999999".to_string(),
                ];
                let pc = p.clone();
                out.push(
                    prop::sample::select(above)
                        .prop_map(move |v| {
                            let why = format!("{} above its maximum {hi} ({v})", pc.name);
                            set(&pc, v, why)
                        })
                        .boxed(),
                );
            }
        }
        ParamKind::Number => {
            out.push(with(strings(&["abc", "twelve", "1.2.3"]), "not a number"));
            // One fixed value each: nothing to shrink.
            if let Some(lo) = p.bound("minimum") {
                let why = format!("{} below its minimum {lo}", p.name);
                out.push(Just(set(p, (lo - 1.0).to_string(), why)).boxed());
            }
            if let Some(hi) = p.bound("maximum") {
                let why = format!("{} above its maximum {hi}", p.name);
                out.push(Just(set(p, (hi + 1.0).to_string(), why)).boxed());
            }
        }
        ParamKind::Boolean => out.push(with(strings(&["maybe", "notabool"]), "not true or false")),
        ParamKind::String | ParamKind::Array => {
            if let Some(values) = p.enum_values()
                && !values.is_empty()
            {
                // Clearly outside the enum: no case variant of a member.
                let bogus: Vec<String> = ["bogus", "zzz", "X9", "none_of_these"]
                    .iter()
                    .filter(|b| !values.iter().any(|v| v.eq_ignore_ascii_case(b)))
                    .map(|s| s.to_string())
                    .collect();
                let what = if p.kind == ParamKind::Array {
                    "with an item not in its enum"
                } else {
                    "not in its enum"
                };
                let bogus = if p.kind == ParamKind::Array {
                    bogus
                        .into_iter()
                        .map(|b| format!("{},{b}", values[0]))
                        .collect()
                } else {
                    bogus
                };
                out.push(with(bogus, what));
            }
            if p.kind == ParamKind::String && p.format.as_deref() == Some("hex-color") {
                out.push(with(
                    strings(&["#GGGGGG", "#12345", "red", "#1234567", "#12 456"]),
                    "not a hex colour",
                ));
            }
            if p.kind == ParamKind::String
                && let Some(max) = p.bound("maxLength").map(|m| m as usize)
            {
                let value = if is_url(p) {
                    let base = "https://example.com/";
                    format!("{base}{}", "a".repeat((max + 1).saturating_sub(base.len())))
                } else {
                    "a".repeat(max + 1)
                };
                let why = format!("{name} over its maxLength {max} ({} characters)", max + 1);
                let m = set(p, value, why);
                out.push(Just(m).boxed());
            }
        }
    }
    out
}

/// The ways a body can be made invalid per the spec, and the ambiguous wrong content type.
fn body_mutations(op: &Operation) -> Vec<BoxedStrategy<Mutation>> {
    let Some(body) = &op.body else {
        return Vec::new();
    };
    let mut out: Vec<BoxedStrategy<Mutation>> = Vec::new();
    let ct = body.content_type.clone();
    let reject = move |bytes: Vec<u8>, why: String| Mutation {
        edit: Edit::Body(Some((ct.clone(), bytes))),
        why,
        expect: Expect::Reject,
        observe: false,
    };
    if body.required {
        out.push(
            Just(Mutation {
                edit: Edit::Body(None),
                why: "no body (the spec requires one)".into(),
                expect: Expect::Reject,
                observe: false,
            })
            .boxed(),
        );
    }
    if !body.content_type.ends_with("json") {
        return out;
    }
    let fields = body_fields(&body.schema);
    let first = fields.first().map_or("id".to_string(), |(k, _)| k.clone());
    let malformed = vec![
        "{bad".to_string(),
        format!("{{\"{first}\": "),
        format!("{{\"{first}\": \"x\",}}"),
    ];
    let r = reject.clone();
    out.push(
        prop::sample::select(malformed)
            .prop_map(move |b| r(b.clone().into_bytes(), format!("malformed JSON ({b:?})")))
            .boxed(),
    );
    if body.schema.get("type").and_then(Value::as_str) == Some("object") {
        let r = reject.clone();
        out.push(
            prop::sample::select(vec!["[1]", "\"x\"", "5", "true", "[]"])
                .prop_map(move |b| {
                    r(
                        b.as_bytes().to_vec(),
                        format!("a JSON {b} where the spec says an object"),
                    )
                })
                .boxed(),
        );
        // A declared property of the wrong type; the others valid.
        let wrong_for = |schema: &Value| -> Vec<Value> {
            match schema.get("type").and_then(Value::as_str) {
                Some("string") => vec![json!(5), json!(true), json!(["a"]), json!({"a": 1})],
                Some("integer") | Some("number") => vec![json!("x"), json!(true), json!([1])],
                Some("boolean") => vec![json!("x"), json!(5)],
                Some("object") => vec![json!("x"), json!(5)],
                Some("array") => vec![json!("x"), json!(5)],
                _ => Vec::new(),
            }
        };
        for (i, (name, schema)) in fields.iter().enumerate() {
            let wrong = wrong_for(schema);
            if wrong.is_empty() {
                continue;
            }
            let others: Vec<BoxedStrategy<Option<(String, Value)>>> = fields
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (k, s))| {
                    let k = k.clone();
                    prop::option::weighted(OPTIONAL_WEIGHT, valid_json(s))
                        .prop_map(move |v| v.map(|v| (k.clone(), v)))
                        .boxed()
                })
                .collect();
            let (name, r) = (name.clone(), reject.clone());
            out.push(
                (prop::sample::select(wrong), others)
                    .prop_map(move |(w, others)| {
                        let mut obj: Map<String, Value> = Map::new();
                        obj.insert(name.clone(), w.clone());
                        obj.extend(others.into_iter().flatten());
                        r(
                            Value::Object(obj).to_string().into_bytes(),
                            format!("{name} of the wrong type ({w})"),
                        )
                    })
                    .boxed(),
            );
        }
    }
    // The right JSON under another content type: the spec names only one, but does not say
    // that others are refused. Observed, never failed.
    if let Some(s) = fields.first() {
        let name = s.0.clone();
        out.push(
            prop::sample::select(vec!["text/plain", "application/x-www-form-urlencoded"])
                .prop_map(move |other| Mutation {
                    edit: Edit::Body(Some((
                        other.to_string(),
                        json!({ name.clone(): format!("{ID_PREFIX}content_type") })
                            .to_string()
                            .into_bytes(),
                    ))),
                    why: format!(
                        "a JSON body sent as {other} (the spec names {ct_s})",
                        ct_s = "application/json"
                    ),
                    expect: Expect::Any,
                    observe: true,
                })
                .boxed(),
        );
    }
    out
}

/// Invalid cases: one mutation making the request invalid per the spec, the rest valid. None
/// when nothing in the spec makes a request to `op` invalid (no parameters, no body).
pub fn invalid(op: &Operation) -> Option<BoxedStrategy<Case>> {
    // Mutations of parameters whose name the spec does not show say less: drawn less often.
    let mut mutations: Vec<(u32, BoxedStrategy<Mutation>)> = op
        .params
        .iter()
        .filter(|p| generated(p))
        .flat_map(|p| {
            let w = if unnamed(p) { 1 } else { 3 };
            param_mutations(p).into_iter().map(move |m| (w, m))
        })
        .collect();
    mutations.extend(body_mutations(op).into_iter().map(|m| (3, m)));
    if mutations.is_empty() {
        return None;
    }
    let any = observed_only(op);
    Some(
        (
            base_params(op, true),
            valid_body(op),
            Union::new_weighted(mutations),
        )
            .prop_map(move |(params, body, m)| {
                let mut vals: Vec<(String, Val)> = params
                    .into_iter()
                    .filter_map(|(k, v)| v.map(|v| (k, v)))
                    .collect();
                let mut body = body;
                match &m.edit {
                    Edit::Drop(name) => vals.retain(|(k, _)| k != name),
                    Edit::Set(name, text) => {
                        vals.retain(|(k, _)| k != name);
                        vals.push((name.clone(), Val::closed(text.clone())));
                    }
                    Edit::Body(b) => body = b.clone(),
                }
                let mut tolerated: Vec<u16> =
                    vals.iter().filter_map(|(_, v)| v.tolerated).collect();
                tolerated.dedup();
                Case {
                    params: vals.into_iter().map(|(k, v)| (k, v.text)).collect(),
                    body,
                    expect: if any { Expect::Any } else { m.expect },
                    tolerated,
                    why: m.why,
                    observe: m.observe,
                }
            })
            .boxed(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;

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
                        let val = crate::spec::schema::validator(&p.schema).unwrap();
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
                                hex || !crate::spec::schema::validator(&p.schema)
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
        let invalid = sample(qr, Property::Invalid, 1, 200);
        assert!(
            invalid
                .iter()
                .any(|c| !c.params.iter().any(|(k, _)| k == "url"))
        );
    }
}
