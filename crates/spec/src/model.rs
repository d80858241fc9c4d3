//! The typed model of the spec: operations, parameters, bodies, responses, plans, limits and
//! the error table, as every part of linkcert reads them.

use super::*;

/// A plan's limit in one rate class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Requests per window of the rate class.
    Fixed(u64),
    /// Set per workspace (Enterprise).
    Custom,
    /// The plan has no access to this rate class.
    Unavailable,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Fixed(n) => write!(f, "{n}"),
            Limit::Custom => f.write_str("custom"),
            Limit::Unavailable => f.write_str("none"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    /// Position in rank order: "Advanced or higher" compares ranks.
    pub rank: usize,
    pub paid: bool,
    /// Limit per rate class name.
    pub limits: BTreeMap<String, Limit>,
}

impl Plan {
    pub fn limit(&self, class: &str) -> Limit {
        self.limits
            .get(class)
            .copied()
            .unwrap_or(Limit::Unavailable)
    }
}

/// The spec's Errors table: the one code of each status, and where codes are documented.
#[derive(Clone, Debug)]
pub struct ErrorTable {
    pub docs: String,
    pub codes: BTreeMap<u16, String>,
}

impl ErrorTable {
    pub fn code(&self, status: u16) -> Option<&str> {
        self.codes.get(&status).map(String::as_str)
    }
    pub fn status_of(&self, code: &str) -> Option<u16> {
        self.codes
            .iter()
            .find(|(_, c)| c.as_str() == code)
            .map(|(s, _)| *s)
    }
    /// The documentation link of a code: its fragment names the code.
    pub fn doc_url(&self, code: &str) -> String {
        format!("{}#{}", self.docs, code)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Location {
    Query,
    Header,
    Path,
    Cookie,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub location: Location,
    pub required: bool,
    pub deprecated: bool,
    pub kind: ParamKind,
    /// JSON Schema of the value: what the spec says, nothing more.
    pub schema: Value,
    /// The same with the reference server's own choices (`x-linkcert-reference`) merged in.
    pub reference_schema: Value,
    /// `format`, when the spec gives one (e.g. `hex-color`).
    pub format: Option<String>,
    /// The role in a list operation (`x-linkcert-pagination`): page, page-size, sort-by, ...
    pub pagination: Option<String>,
    /// Only with a paid plan (`x-linkcert-paid-only`).
    pub paid_only: bool,
}

impl Param {
    /// The default the spec states.
    pub fn default(&self) -> Option<&Value> {
        self.schema.get("default")
    }
    /// The default the reference server applies (the spec's, or its own where the spec is silent).
    pub fn reference_default(&self) -> Option<&Value> {
        self.reference_schema.get("default")
    }
    /// A numeric keyword of the spec's schema (minimum, maximum, maxLength, ...).
    pub fn bound(&self, keyword: &str) -> Option<f64> {
        self.schema.get(keyword).and_then(Value::as_f64)
    }
    /// The enumerated values, when the spec gives them (for arrays, of the items).
    pub fn enum_values(&self) -> Option<Vec<&str>> {
        let s = match self.kind {
            ParamKind::Array => self.schema.get("items")?,
            _ => &self.schema,
        };
        let values = s.get("enum")?.as_array()?;
        Some(values.iter().filter_map(Value::as_str).collect())
    }
    /// The spec does not show the parameter's name ("GET /tags: the exact query-parameter
    /// names of the sort field, order, search term and id filter: not shown"). Our spec names
    /// them as the real service does, but a target may call them otherwise: for it they are
    /// unknown parameters, which the spec neither requires tolerating nor rejecting.
    pub fn name_unshown(&self) -> bool {
        self.pagination
            .as_deref()
            .is_some_and(|r| UNNAMED_ROLES.contains(&r))
    }
}

/// Roles whose query-parameter names the spec does not show (`Param::name_unshown`).
const UNNAMED_ROLES: &[&str] = &["sort-by", "sort-order", "search", "ids"];

/// A request's query made into one the spec forbids (`Operation::forbidden_query`).
#[derive(Clone, Debug, PartialEq)]
pub struct Forbidden {
    pub query: Vec<(String, String)>,
    /// What makes it forbidden, in words ("url missing (required)").
    pub why: String,
}

#[derive(Clone, Debug)]
pub struct Body {
    pub content_type: String,
    pub required: bool,
    pub schema: Value,
    pub reference_schema: Value,
}

#[derive(Clone, Debug)]
pub struct HeaderSpec {
    pub name: String,
    pub required: bool,
    pub schema: Value,
}

#[derive(Clone, Debug)]
pub struct ResponseSpec {
    pub status: u16,
    pub description: String,
    /// Media type and JSON Schema of the body, when it has one.
    pub content: Option<(String, Value)>,
    pub headers: Vec<HeaderSpec>,
}

#[derive(Clone, Debug)]
pub struct Operation {
    pub id: String,
    pub method: http::Method,
    pub path: String,
    pub summary: String,
    /// The section of the reference document the operation comes from.
    pub clause: Option<String>,
    pub rate_class: String,
    pub min_plan: Option<String>,
    /// Ours, not the service's (`x-linkcert-extension`).
    pub extension: bool,
    pub requires_auth: bool,
    pub params: Vec<Param>,
    pub body: Option<Body>,
    pub responses: BTreeMap<u16, ResponseSpec>,
}

impl Operation {
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
    /// The parameter playing a pagination role, if any.
    pub fn param_with_role(&self, role: &str) -> Option<&Param> {
        self.params
            .iter()
            .find(|p| p.pagination.as_deref() == Some(role))
    }
    pub fn declares_status(&self, status: u16) -> bool {
        self.responses.contains_key(&status)
    }
    /// `GET /tags`-style label used in reports.
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// `query` (a valid request's) with one change the spec forbids, every target bound to
    /// refuse: a required query parameter left out, else a named numeric one past a bound the
    /// spec states, else a named enumerated one given a value outside it. None when the spec
    /// forbids nothing of the operation's query.
    pub fn forbidden_query(&self, query: &[(String, String)]) -> Option<Forbidden> {
        let named = || {
            self.params
                .iter()
                .filter(|p| p.location == Location::Query && !p.name_unshown())
        };
        let without = |name: &str| -> Vec<(String, String)> {
            query.iter().filter(|(k, _)| k != name).cloned().collect()
        };
        let with = |name: &str, v: String| {
            let mut q = without(name);
            q.push((name.to_string(), v));
            q
        };
        if let Some(p) = named().find(|p| p.required && query.iter().any(|(k, _)| *k == p.name)) {
            return Some(Forbidden {
                query: without(&p.name),
                why: format!("{} missing (required)", p.name),
            });
        }
        let numeric = |p: &&Param| matches!(p.kind, ParamKind::Integer | ParamKind::Number);
        for (bound, step, past) in [("maximum", 1.0, "above"), ("minimum", -1.0, "below")] {
            if let Some((p, b)) = named()
                .filter(numeric)
                .find_map(|p| Some((p, p.bound(bound)?)))
            {
                return Some(Forbidden {
                    query: with(&p.name, format!("{}", b + step)),
                    why: format!("{} {past} its {bound} {b}", p.name),
                });
            }
        }
        let p = named().find(|p| p.kind == ParamKind::String && p.enum_values().is_some())?;
        Some(Forbidden {
            query: with(&p.name, "not-one-of-its-values".into()),
            why: format!("{} outside its values", p.name),
        })
    }
}
