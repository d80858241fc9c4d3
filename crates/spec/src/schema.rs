//! OpenAPI 3.0 schema objects to self-contained JSON Schema (draft 4, whose numeric keywords
//! OpenAPI 3.0 uses), with component references inlined.

use serde_json::{Map, Value};

/// Keywords of OpenAPI's schema object that JSON Schema does not have.
const OPENAPI_ONLY: &[&str] = &[
    "nullable",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "discriminator",
    "xml",
    "externalDocs",
];
/// Our schemas are small trees; deeper than this is a reference cycle.
const MAX_DEPTH: usize = 32;

/// Convert `schema`; `components` is the document's components object (for `$ref`).
/// With `reference`, the `x-linkcert-reference` choices of the reference server are merged in.
pub fn to_json_schema(
    schema: &Value,
    components: &Value,
    reference: bool,
) -> Result<Value, String> {
    convert(schema, components, reference, 0)
}

fn convert(s: &Value, components: &Value, reference: bool, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("schema nesting too deep (a reference cycle?)".into());
    }
    let Some(obj) = s.as_object() else {
        return Ok(s.clone());
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/components/schemas/")
            .ok_or_else(|| format!("unsupported schema reference {r}"))?;
        let target = components
            .get("schemas")
            .and_then(|m| m.get(name))
            .ok_or_else(|| format!("dangling reference {r}"))?;
        return convert(target, components, reference, depth + 1);
    }
    let mut out = Map::new();
    for (k, v) in obj {
        if k.starts_with("x-") || OPENAPI_ONLY.contains(&k.as_str()) {
            continue;
        }
        let v = match k.as_str() {
            "properties" => {
                let mut props = Map::new();
                for (name, p) in v.as_object().into_iter().flatten() {
                    props.insert(name.clone(), convert(p, components, reference, depth + 1)?);
                }
                Value::Object(props)
            }
            "items" | "not" | "additionalProperties" => {
                convert(v, components, reference, depth + 1)?
            }
            "allOf" | "anyOf" | "oneOf" => Value::Array(
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(|x| convert(x, components, reference, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    if obj.get("nullable").and_then(Value::as_bool) == Some(true)
        && let Some(t) = out.get("type").and_then(Value::as_str)
    {
        let t = t.to_string();
        out.insert("type".into(), serde_json::json!([t, "null"]));
    }
    if reference && let Some(own) = obj.get("x-linkcert-reference").and_then(Value::as_object) {
        for (k, v) in own {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

/// A draft-4 validator of a converted schema. Formats are annotations here: `hex-color` and
/// `binary` are not JSON Schema formats, and the spec defines no others.
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(false)
        .build(schema)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_are_inlined_and_reference_choices_merged_only_on_request() {
        let components = json!({"schemas": {"T": {"type": "object", "x-linkcert-clause": "c",
            "properties": {"n": {"type": "number", "nullable": true,
                                 "x-linkcert-reference": {"maximum": 5}}}}}});
        let s = json!({"type": "array", "items": {"$ref": "#/components/schemas/T"}});
        let plain = to_json_schema(&s, &components, false).unwrap();
        assert_eq!(
            plain["items"]["properties"]["n"],
            json!({"type": ["number", "null"]})
        );
        let own = to_json_schema(&s, &components, true).unwrap();
        assert_eq!(own["items"]["properties"]["n"]["maximum"], json!(5));
        assert!(
            to_json_schema(
                &json!({"$ref": "#/components/schemas/X"}),
                &components,
                false
            )
            .is_err()
        );
    }
}
