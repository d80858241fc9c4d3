//! Parameter values as they travel in a query string: decoded by the server, encoded by the
//! runner. One place, so the two can never disagree.

use serde_json::Value;

use super::Param;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    String,
    Integer,
    Number,
    Boolean,
    /// Comma-separated (style form, explode false).
    Array,
}

impl ParamKind {
    pub fn of(schema: &Value) -> Option<ParamKind> {
        Some(match schema.get("type")?.as_str()? {
            "string" => ParamKind::String,
            "integer" => ParamKind::Integer,
            "number" => ParamKind::Number,
            "boolean" => ParamKind::Boolean,
            "array" => ParamKind::Array,
            _ => return None,
        })
    }

    fn noun(self) -> &'static str {
        match self {
            ParamKind::String => "a string",
            ParamKind::Integer => "an integer",
            ParamKind::Number => "a number",
            ParamKind::Boolean => "true or false",
            ParamKind::Array => "a comma-separated list",
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryValueError {
    /// Not of the declared type: a malformed request (400 in the spec's table).
    #[error("{name} must be {expected}, got {got:?}")]
    WrongType {
        name: String,
        expected: &'static str,
        got: String,
    },
    /// Of the type, but beyond what can be represented: invalid data (422).
    #[error("{name} is out of range: {got}")]
    OutOfRange { name: String, got: String },
}

impl Param {
    /// The typed value of a raw query-string value.
    pub fn decode(&self, raw: &str) -> Result<Value, QueryValueError> {
        let item_kind = match self.kind {
            ParamKind::Array => {
                let items = self.schema.get("items").unwrap_or(&Value::Null);
                ParamKind::of(items).unwrap_or(ParamKind::String)
            }
            k => k,
        };
        if self.kind == ParamKind::Array {
            return raw
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| self.decode_scalar(item_kind, s))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array);
        }
        self.decode_scalar(item_kind, raw)
    }

    fn decode_scalar(&self, kind: ParamKind, raw: &str) -> Result<Value, QueryValueError> {
        let wrong = || QueryValueError::WrongType {
            name: self.name.clone(),
            expected: kind.noun(),
            got: raw.chars().take(64).collect(),
        };
        match kind {
            ParamKind::String | ParamKind::Array => Ok(Value::String(raw.to_string())),
            ParamKind::Boolean => match raw {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(wrong()),
            },
            ParamKind::Integer => {
                let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(wrong());
                }
                raw.parse::<i64>()
                    .map(Value::from)
                    .map_err(|_| QueryValueError::OutOfRange {
                        name: self.name.clone(),
                        got: raw.chars().take(64).collect(),
                    })
            }
            ParamKind::Number => {
                // Rust also parses "inf" and "NaN"; JSON numbers are finite decimals.
                let plausible = !raw.is_empty()
                    && raw.bytes().all(|b| {
                        b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')
                    });
                let n: f64 = raw.parse().ok().filter(|_| plausible).ok_or_else(wrong)?;
                if !n.is_finite() {
                    return Err(QueryValueError::OutOfRange {
                        name: self.name.clone(),
                        got: raw.chars().take(64).collect(),
                    });
                }
                Ok(number(n))
            }
        }
    }

    /// The query-string spelling of a typed value.
    pub fn encode(&self, value: &Value) -> String {
        encode_value(value)
    }
}

/// Whole numbers as integers, so 600 stays "600" and satisfies `multipleOf: 1`.
pub(crate) fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

pub(crate) fn encode_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => items.iter().map(encode_value).collect::<Vec<_>>().join(","),
        Value::Null => String::new(),
        Value::Object(_) => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::Spec;
    use serde_json::json;

    #[test]
    fn decode_follows_declared_types_and_round_trips_with_encode() {
        let spec = Spec::embedded().unwrap();
        let tags = spec.operation("getTags").unwrap();
        let page = tags.param("page").unwrap();
        assert_eq!(page.decode("3"), Ok(json!(3)));
        assert!(matches!(
            page.decode("x"),
            Err(super::QueryValueError::WrongType { .. })
        ));
        assert!(matches!(
            page.decode("1.5"),
            Err(super::QueryValueError::WrongType { .. })
        ));
        assert!(matches!(
            page.decode("99999999999999999999999"),
            Err(super::QueryValueError::OutOfRange { .. })
        ));
        let ids = tags.param("ids").unwrap();
        assert_eq!(ids.decode("a,b"), Ok(json!(["a", "b"])));
        assert_eq!(ids.encode(&json!(["a", "b"])), "a,b");
        let qr = spec.operation("getQRCode").unwrap();
        let size = qr.param("size").unwrap();
        assert_eq!(size.decode("600"), Ok(json!(600)));
        assert_eq!(size.decode("600.5"), Ok(json!(600.5)));
        assert!(size.decode("NaN").is_err());
        assert!(size.decode("inf").is_err());
        let hide = qr.param("hideLogo").unwrap();
        assert_eq!(hide.decode("true"), Ok(json!(true)));
        assert!(hide.decode("yes").is_err());
    }
}
