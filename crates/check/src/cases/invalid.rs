//! Invalid cases: exactly one thing the spec forbids (a mutation of one parameter or of the
//! body), the rest valid.

use super::*;

// ---------------------------------------------------------------------------------------------
// Invalid cases: one mutation.

#[derive(Clone, Debug)]
pub(super) enum Edit {
    Drop(String),
    Set(String, String),
    Body(Option<(String, Vec<u8>)>),
}

#[derive(Clone, Debug)]
pub(super) struct Mutation {
    pub(super) edit: Edit,
    pub(super) why: String,
    pub(super) expect: Expect,
    pub(super) observe: bool,
}

pub(super) fn set(p: &Param, value: impl Into<String>, why: impl Into<String>) -> Mutation {
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
pub(super) fn param_mutations(p: &Param) -> Vec<BoxedStrategy<Mutation>> {
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
    match p.kind {
        ParamKind::Integer => out.extend(integer_mutations(p)),
        ParamKind::Number => {
            out.push(sampled(
                p,
                strings(&["abc", "twelve", "1.2.3"]),
                "not a number",
            ));
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
        ParamKind::Boolean => out.push(sampled(
            p,
            strings(&["maybe", "notabool"]),
            "not true or false",
        )),
        ParamKind::String | ParamKind::Array => out.extend(text_mutations(p)),
    }
    out
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// `p` set to one of `values`, each `what` the parameter must not be.
fn sampled(p: &Param, values: Vec<String>, what: &'static str) -> BoxedStrategy<Mutation> {
    let pc = p.clone();
    prop::sample::select(values)
        .prop_map(move |v| {
            let why = format!("{} {what} ({v:?})", pc.name);
            set(&pc, v, why)
        })
        .boxed()
}

/// An integer parameter: not an integer, below its minimum, above its maximum.
fn integer_mutations(p: &Param) -> Vec<BoxedStrategy<Mutation>> {
    let mut out = vec![sampled(
        p,
        strings(&["abc", "1.5", "1e3", "0x10"]),
        "not an integer",
    )];
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
    out
}

/// A string or array parameter: outside its enum, not a hex colour, over its maxLength.
fn text_mutations(p: &Param) -> Vec<BoxedStrategy<Mutation>> {
    let mut out = Vec::new();
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
        out.push(sampled(p, bogus, what));
    }
    if p.kind == ParamKind::String && p.format.as_deref() == Some("hex-color") {
        out.push(sampled(
            p,
            // The last three with characters other layers read (a quote and a comment, an
            // escape, a right-to-left mark), as `hostile` draws for free text.
            strings(&[
                "#GGGGGG",
                "#12345",
                "red",
                "#1234567",
                "#12 456",
                "#00'0;--",
                "#00%2300",
                "#\u{202e}000000",
            ]),
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
        let why = format!(
            "{} over its maxLength {max} ({} characters)",
            p.name,
            max + 1
        );
        out.push(Just(set(p, value, why)).boxed());
    }
    out
}

/// A body made invalid, sent with the spec's content type.
type Reject = std::sync::Arc<dyn Fn(Vec<u8>, String) -> Mutation + Send + Sync>;

/// The ways a body can be made invalid per the spec, and the ambiguous wrong content type.
pub(super) fn body_mutations(op: &Operation) -> Vec<BoxedStrategy<Mutation>> {
    let Some(body) = &op.body else {
        return Vec::new();
    };
    let mut out: Vec<BoxedStrategy<Mutation>> = Vec::new();
    let ct = body.content_type.clone();
    let reject: Reject = std::sync::Arc::new(move |bytes: Vec<u8>, why: String| Mutation {
        edit: Edit::Body(Some((ct.clone(), bytes))),
        why,
        expect: Expect::Reject,
        observe: false,
    });
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
        out.extend(wrong_types(&fields, &reject));
    }
    out.extend(other_content_type(&fields));
    out
}

/// Values of another JSON type than the schema's.
fn wrong_for(schema: &Value) -> Vec<Value> {
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => vec![json!(5), json!(true), json!(["a"]), json!({"a": 1})],
        Some("integer") | Some("number") => vec![json!("x"), json!(true), json!([1])],
        Some("boolean") => vec![json!("x"), json!(5)],
        Some("object") => vec![json!("x"), json!(5)],
        Some("array") => vec![json!("x"), json!(5)],
        _ => Vec::new(),
    }
}

/// A declared property of the wrong type; the others valid.
fn wrong_types(fields: &[(String, Value)], reject: &Reject) -> Vec<BoxedStrategy<Mutation>> {
    let mut out = Vec::new();
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
    out
}

/// The right JSON under another content type: the spec names only one, but does not say
/// that others are refused. Observed, never failed.
fn other_content_type(fields: &[(String, Value)]) -> Option<BoxedStrategy<Mutation>> {
    let name = fields.first()?.0.clone();
    Some(
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
    )
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
                Case {
                    params: vals.into_iter().map(|(k, v)| (k, v.text)).collect(),
                    body,
                    expect: if any { Expect::Any } else { m.expect },
                    why: m.why,
                    observe: m.observe,
                }
            })
            .boxed(),
    )
}
