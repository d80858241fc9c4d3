//! Valid cases: every parameter and body field within what the spec allows, from its schema.

use super::*;

// ---------------------------------------------------------------------------------------------
// Valid values.

pub(super) fn valid_value(p: &Param) -> BoxedStrategy<Val> {
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

pub(super) fn valid_by_kind(p: &Param) -> BoxedStrategy<Val> {
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

pub(super) fn valid_integer(p: &Param) -> BoxedStrategy<Val> {
    let (lo, hi) = int_bounds(p);
    let lo_v = lo.unwrap_or(0);
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
        // Past the last page too, for a page number (`check::past_end`).
        Val::open(
            v,
            format!("{n2} {v}: beyond 32/64 bits (the spec sets no maximum; representation is the target's)"),
        )
    });
    prop_oneof![9 => within, 1 => huge].boxed()
}

pub(super) fn valid_number(p: &Param) -> BoxedStrategy<Val> {
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

pub(super) fn valid_array(p: &Param) -> BoxedStrategy<Val> {
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
    let n2 = name.clone();
    prop_oneof![
        6 => prop::collection::vec("[a-z][a-z0-9_]{0,11}", 1..=3)
            .prop_map(|v| Val::closed(v.join(","))),
        1 => Just(Val::open("", format!("{name} empty: the spec does not say"))),
        // Lists of every length up to hundreds (the spec sets no bound: a target may refuse a
        // long one cleanly, never with a 5xx), shrinking towards the shortest that fails.
        1 => long_len(4, 300, &[50, 51, 100, 101, 300]).prop_map(move |n| {
            let items: Vec<String> = (0..n).map(|i| format!("lcid{i:03}")).collect();
            Val::open(
                items.join(","),
                format!("{n2} of {n} items: the spec sets no bound on the list"),
            )
        }),
    ]
    .boxed()
}

/// Lengths in `[lo, hi]`, the `edges` drawn on purpose (common limits and their neighbours),
/// shrinking towards `lo`.
pub(super) fn long_len(lo: usize, hi: usize, edges: &[usize]) -> BoxedStrategy<usize> {
    EdgeInt {
        lo: lo as i64,
        hi: hi as i64,
        edges: edges.iter().map(|&e| e as i64).collect(),
    }
    .prop_map(|n| n.max(0) as usize)
    .boxed()
}

/// A parameter whose value is a URL (the spec's "URL to encode"; `format: uri`).
pub(super) fn is_url(p: &Param) -> bool {
    p.format.as_deref() == Some("uri") || p.name.to_ascii_lowercase().ends_with("url")
}

pub(super) fn valid_url(p: &Param) -> BoxedStrategy<Val> {
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
        (1, hostile_val(&name, "https://example.com/")),
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

pub(super) fn valid_text(p: &Param) -> BoxedStrategy<Val> {
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
    // The search term is another family's (`pagination.search`), with its own alphabet.
    if p.pagination.as_deref() != Some("search") {
        options.push((1, hostile_val(&name, "")));
    }
    if let Some(max) = p.bound("maxLength").map(|m| m as usize) {
        options.push((
            1,
            Just(Val::closed("a".repeat(max)).noted(format!("{name} at its maxLength {max}")))
                .boxed(),
        ));
    } else {
        // No maximum: long strings, around common column limits and beyond. The spec allows
        // them; a target may refuse a length cleanly, never with a 5xx.
        let n3 = name.clone();
        options.push((
            1,
            long_len(17, 4096, &[255, 256, 257, 1024, 4096])
                .prop_map(move |n| {
                    Val::open(
                        "a".repeat(n),
                        format!("{n3} of {n} characters: the spec sets no maximum"),
                    )
                })
                .boxed(),
        ));
    }
    Union::new_weighted(options).boxed()
}

/// A valid body for the operation: a JSON object with each declared property present or not.
pub(super) fn valid_body(op: &Operation) -> BoxedStrategy<Option<(String, Vec<u8>)>> {
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
pub(super) fn body_fields(schema: &Value) -> Vec<(String, Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

pub(super) fn valid_json(schema: &Value) -> BoxedStrategy<Value> {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => (0i64..1000).prop_map(Value::from).boxed(),
        Some("number") => (0i64..1000).prop_map(Value::from).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        // Strings, and anything else: an id no target has.
        _ => prop_oneof![
            4 => "[a-z0-9]{10}".prop_map(|s| Value::from(format!("{ID_PREFIX}{s}"))),
            1 => hostile().prop_map(|(_, s)| Value::from(format!("{ID_PREFIX}{s}"))),
        ]
        .boxed(),
    }
}

/// A value of `p` every target must accept, if the spec gives one: the default, the first of
/// an enum, the lower bound... None where every value touches what the spec leaves open.
pub(crate) fn sure_value(p: &Param) -> Option<String> {
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

/// Another value of `p` every target must accept, beside `sure_value`: the second of an enum,
/// the lower bound plus one, the other boolean... None where the spec gives no second one.
pub(crate) fn other_value(p: &Param) -> Option<String> {
    let sure = sure_value(p)?;
    let other = if let Some(e) = p.enum_values() {
        e.iter().find(|v| **v != sure)?.to_string()
    } else {
        match p.kind {
            ParamKind::Boolean if sure == "false" => "true".into(),
            ParamKind::Boolean => "false".into(),
            ParamKind::Integer => {
                let (lo, hi) = int_bounds(p);
                let v: i64 = sure.parse().ok()?;
                let next = if hi.is_some_and(|h| v + 1 > h) {
                    v - 1
                } else {
                    v + 1
                };
                if lo.is_some_and(|l| next < l) || next == v {
                    return None;
                }
                next.to_string()
            }
            ParamKind::String if p.format.as_deref() == Some("hex-color") => {
                if sure.eq_ignore_ascii_case("#FFFFFF") {
                    "#000000"
                } else {
                    "#FFFFFF"
                }
                .into()
            }
            ParamKind::String if is_url(p) => "https://example.com/linkcert-other".into(),
            // A number's, a free string's or an array's second value touches what is open.
            _ => return None,
        }
    };
    (other != sure).then_some(other)
}

/// Parameters as (name, value when present): required ones always, optional ones at random.
/// With `sure`, only values every target must accept (the base of an invalid case, so that
/// its one mutation is what makes it invalid): open values become the sure one, parameters
/// without a sure value are left out.
pub(super) fn base_params(op: &Operation, sure: bool) -> BoxedStrategy<Vec<(String, Option<Val>)>> {
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
            Case {
                params: vals.into_iter().map(|(k, v)| (k, v.text)).collect(),
                body,
                expect,
                why,
                observe: false,
            }
        })
        .boxed()
}
