//! The body's neighbours: each field of the plain body is a parameter too ("each parameter's
//! forms"). A field given twice in one object (RFC 8259 4: names SHOULD be unique, and a
//! parser keeps one or refuses), with the same value and, for a string, with another; a
//! string with its first character as a JSON escape (`\u0070...`: the same string once
//! parsed); a string with each of `http.chars`' hostile strings appended (SQL quotes, shell
//! substitution, URL delimiters, control characters...).
//!
//! The plain body names nothing a target has (`plain.rs`), and so does every neighbour: no
//! fixture is spent. A value the plain body does not hold names nothing either, so its
//! answer is any clean one (never a 5xx, an error outside the envelope): which refusal an id
//! that names nothing gets is the target's choice.

use serde_json::Value;

use super::Neighbour;
use crate::probe::Req;

/// The fields of the plain body, in order, as JSON text: the object rebuilt by hand, so that
/// a name may come twice.
fn object(fields: &[(&str, String)]) -> Vec<u8> {
    let inner: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::from(*k)))
        .collect();
    format!("{{{}}}", inner.join(",")).into_bytes()
}

fn with_body(plain: &Req, body: Vec<u8>) -> Req {
    let mut r = plain.clone();
    r.body = Some(body.into());
    r
}

/// `s` as a JSON string with its first character written as a `\u` escape.
fn escaped_first(s: &str) -> Option<String> {
    let c = s.chars().next()?;
    let mut units = [0u16; 2];
    let first: String = c
        .encode_utf16(&mut units)
        .iter()
        .map(|u| format!("\\u{u:04x}"))
        .collect();
    let rest = Value::from(&s[c.len_utf8()..]).to_string();
    Some(format!("\"{first}{}", &rest[1..]))
}

/// Every neighbour of the plain request's JSON object body (none for another body).
pub(super) fn neighbours(plain: &Req) -> Vec<Neighbour> {
    let Some(Value::Object(map)) = plain
        .body
        .as_ref()
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
    else {
        return Vec::new();
    };
    let fields: Vec<(&str, String)> = map
        .iter()
        .map(|(k, v)| (k.as_str(), v.to_string()))
        .collect();
    let mut out = Vec::new();
    for (i, (name, value)) in fields.iter().enumerate() {
        let with = |v: String| {
            let mut f = fields.clone();
            f[i].1 = v;
            f
        };
        let mut twice = fields.clone();
        twice.push((name, value.clone()));
        out.push(Neighbour {
            what: format!("the body's {name} given twice ({name}: {value}, twice)"),
            req: with_body(plain, object(&twice)),
            meant: vec![plain.clone()],
            not: None,
        });
        let Some(s) = map.get(*name).and_then(Value::as_str) else {
            continue;
        };
        let other = Value::from(format!("{s}2")).to_string();
        let mut two = fields.clone();
        two.push((name, other.clone()));
        out.push(Neighbour {
            what: format!("the body's {name} given twice with two values ({value}, then {other})"),
            req: with_body(plain, object(&two)),
            meant: vec![plain.clone(), with_body(plain, object(&with(other)))],
            not: None,
        });
        if let Some(e) = escaped_first(s) {
            out.push(Neighbour {
                what: format!("the body's {name} with its first character escaped ({e})"),
                req: with_body(plain, object(&with(e.clone()))),
                meant: vec![plain.clone()],
                not: None,
            });
        }
        for (kind, tail) in crate::cases::hostile_strings() {
            let v = Value::from(format!("{s}{tail}")).to_string();
            out.push(Neighbour {
                what: format!("the body's {name} with {kind} appended ({v})"),
                req: with_body(plain, object(&with(v))),
                meant: Vec::new(),
                not: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(r: &Req) -> String {
        String::from_utf8(r.body.as_deref().unwrap_or_default().to_vec()).unwrap()
    }

    /// Each neighbour is the plain body with one field's form changed: a name twice is
    /// kept in the text, an escape parses to the same string.
    #[test]
    fn each_field_is_given_twice_escaped_and_with_hostile_characters() {
        let plain = Req::post_json("/partners/deactivate", &json!({ "partnerId": "pn_x" }));
        let near = neighbours(&plain);
        let bodies: Vec<String> = near.iter().map(|n| body(&n.req)).collect();
        assert_eq!(bodies[0], r#"{"partnerId":"pn_x","partnerId":"pn_x"}"#);
        assert_eq!(bodies[1], r#"{"partnerId":"pn_x","partnerId":"pn_x2"}"#);
        assert_eq!(body(&near[1].meant[1]), r#"{"partnerId":"pn_x2"}"#);
        assert_eq!(bodies[2], r#"{"partnerId":"\u0070n_x"}"#);
        let parsed: Value = serde_json::from_str(&bodies[2]).unwrap();
        assert_eq!(parsed, json!({ "partnerId": "pn_x" }));
        assert!(bodies[3].contains("pn_xit's"), "{}", bodies[3]);
        assert_eq!(near.len(), 3 + crate::cases::hostile_strings().len());
        assert!(near[3..].iter().all(|n| n.meant.is_empty()));
        // A number field: only given twice.
        let plain = Req::post_json("/x", &json!({ "n": 0 }));
        assert_eq!(neighbours(&plain).len(), 1);
        assert!(neighbours(&Req::get("/tags")).is_empty());
    }

    #[test]
    fn a_character_outside_the_basic_plane_is_escaped_as_a_surrogate_pair() {
        assert_eq!(escaped_first("😀a").unwrap(), r#""\ud83d\ude00a""#);
        assert_eq!(escaped_first("").as_deref(), None);
        let e = escaped_first("\"q").unwrap();
        assert_eq!(serde_json::from_str::<String>(&e).unwrap(), "\"q");
    }
}
