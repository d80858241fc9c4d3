//! The OpenAPI document everything is driven by, loaded with `openapiv3` into a typed view.
//!
//! `Spec` is what the server routes and validates with, what `check` generates cases from and
//! what `load` reads plan limits from. The `x-linkcert-*` extensions are read here and nowhere
//! else; `specs/README.md` documents them.

mod params;
pub mod schema;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use indexmap::IndexMap;
use openapiv3::{OpenAPI, ReferenceOr};
use serde_json::Value;

pub use params::{ParamKind, QueryValueError};

/// The document shipped in `specs/`, compiled in so the binary works from any directory.
pub const EMBEDDED_YAML: &str = include_str!("../../specs/link-attribution.openapi.yaml");
/// Where the document lives in the repository (for messages and the schema drift test).
pub const SPEC_PATH: &str = "specs/link-attribution.openapi.yaml";

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read the spec {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("the spec is not a valid OpenAPI 3.0 document: {0}")]
    Parse(String),
    #[error("the spec is inconsistent: {0}")]
    Invalid(String),
}

fn invalid(msg: impl Into<String>) -> SpecError {
    SpecError::Invalid(msg.into())
}

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
}

#[derive(Clone, Debug)]
pub struct Spec {
    pub title: String,
    pub version: String,
    pub plans: Vec<Plan>,
    /// Window of each rate class, by name.
    pub rate_classes: BTreeMap<String, Duration>,
    /// The class "all other endpoints" use; also what a request counts against when its plan
    /// has no access to its operation's class (so even that 403 carries rate-limit headers).
    pub default_rate_class: String,
    pub errors: ErrorTable,
    /// Headers every response to an authenticated request carries.
    pub rate_headers: Vec<String>,
    pub operations: Vec<Operation>,
    /// Component schemas converted to JSON Schema (refs inlined).
    pub schemas: BTreeMap<String, Value>,
    /// Component headers' schemas, converted likewise.
    pub header_schemas: BTreeMap<String, Value>,
}

impl Spec {
    /// The document compiled into the binary.
    pub fn embedded() -> Result<Spec, SpecError> {
        Spec::from_yaml(EMBEDDED_YAML)
    }

    pub fn from_file(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Spec::from_yaml(&text)
    }

    pub fn from_yaml(text: &str) -> Result<Spec, SpecError> {
        let doc: OpenAPI =
            serde_yaml_ng::from_str(text).map_err(|e| SpecError::Parse(e.to_string()))?;
        Loader::new(&doc)?.load()
    }

    pub fn plan(&self, name: &str) -> Option<&Plan> {
        self.plans
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    pub fn operation(&self, id: &str) -> Option<&Operation> {
        self.operations.iter().find(|o| o.id == id)
    }

    pub fn find_operation(&self, method: &http::Method, path: &str) -> Option<&Operation> {
        self.operations
            .iter()
            .find(|o| o.method == *method && o.path == path)
    }

    /// Whether a plan may call an operation (its minimum plan).
    pub fn plan_allows(&self, plan: &Plan, op: &Operation) -> bool {
        match op.min_plan.as_deref().and_then(|m| self.plan(m)) {
            Some(min) => plan.rank >= min.rank,
            None => true,
        }
    }

    pub fn window(&self, class: &str) -> Option<Duration> {
        self.rate_classes.get(class).copied()
    }

    /// The JSON Schema of every body and header the document defines, as the files in
    /// `specs/schemas/` hold them (generated from here; a test fails when they drift).
    pub fn json_schema_files(&self) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        let all = self.schemas.iter().map(|(n, s)| (n.clone(), s)).chain(
            self.header_schemas
                .iter()
                .map(|(n, s)| (format!("header.{n}"), s)),
        );
        for (name, schema) in all {
            let mut doc = serde_json::Map::new();
            doc.insert(
                "$schema".into(),
                "http://json-schema.org/draft-04/schema#".into(),
            );
            doc.insert(
                "title".into(),
                Value::String(format!("{name} ({} {})", self.title, self.version)),
            );
            if let Some(obj) = schema.as_object() {
                doc.extend(obj.clone());
            }
            let text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
            files.insert(format!("{name}.json"), text + "\n");
        }
        files
    }
}

struct Loader<'a> {
    doc: &'a OpenAPI,
    components: Value,
}

impl<'a> Loader<'a> {
    fn new(doc: &'a OpenAPI) -> Result<Self, SpecError> {
        if !doc.openapi.starts_with("3.0") {
            return Err(SpecError::Parse(format!(
                "openapi {} is not 3.0.x",
                doc.openapi
            )));
        }
        let components = match &doc.components {
            Some(c) => serde_json::to_value(c).map_err(|e| SpecError::Parse(e.to_string()))?,
            None => Value::Null,
        };
        Ok(Loader { doc, components })
    }

    fn ext(&self, name: &str) -> Result<&'a Value, SpecError> {
        self.doc
            .extensions
            .get(name)
            .ok_or_else(|| invalid(format!("the top-level extension {name} is missing")))
    }

    fn load(&self) -> Result<Spec, SpecError> {
        let rate_classes = self.rate_classes()?;
        let default_rate_class = self
            .ext("x-linkcert-rate-classes")?
            .as_object()
            .and_then(|m| {
                m.iter()
                    .find(|(_, v)| v.get("default").and_then(Value::as_bool) == Some(true))
            })
            .map(|(k, _)| k.clone())
            .ok_or_else(|| invalid("x-linkcert-rate-classes must mark one class default: true"))?;
        let plans = self.plans(&rate_classes)?;
        let errors = self.errors()?;
        let rate_headers = self
            .ext("x-linkcert-rate-headers")?
            .as_object()
            .ok_or_else(|| invalid("x-linkcert-rate-headers must map header names"))?
            .keys()
            .cloned()
            .collect();
        let mut operations = Vec::new();
        for (path, method, op) in self.doc.operations() {
            operations.push(self.operation(path, method, op, &plans, &rate_classes)?);
        }
        let mut schemas = BTreeMap::new();
        if let Some(map) = self.components.get("schemas").and_then(Value::as_object) {
            for (name, s) in map {
                schemas.insert(name.clone(), self.convert(s, false)?);
            }
        }
        let mut header_schemas = BTreeMap::new();
        if let Some(map) = self.components.get("headers").and_then(Value::as_object) {
            for (name, h) in map {
                if let Some(s) = h.get("schema") {
                    let mut schema = self.convert(s, false)?;
                    if let (Some(obj), Some(d)) = (schema.as_object_mut(), h.get("description")) {
                        obj.entry("description").or_insert_with(|| d.clone());
                    }
                    header_schemas.insert(name.clone(), schema);
                }
            }
        }
        Ok(Spec {
            title: self.doc.info.title.clone(),
            version: self.doc.info.version.clone(),
            plans,
            rate_classes,
            default_rate_class,
            errors,
            rate_headers,
            operations,
            schemas,
            header_schemas,
        })
    }

    fn rate_classes(&self) -> Result<BTreeMap<String, Duration>, SpecError> {
        let map = self
            .ext("x-linkcert-rate-classes")?
            .as_object()
            .ok_or_else(|| invalid("x-linkcert-rate-classes must be a map"))?;
        let mut out = BTreeMap::new();
        for (name, v) in map {
            let secs = v
                .get("window-seconds")
                .and_then(Value::as_f64)
                .filter(|s| *s > 0.0)
                .ok_or_else(|| invalid(format!("rate class {name} needs window-seconds > 0")))?;
            out.insert(name.clone(), Duration::from_secs_f64(secs));
        }
        Ok(out)
    }

    fn plans(&self, classes: &BTreeMap<String, Duration>) -> Result<Vec<Plan>, SpecError> {
        let list = self
            .ext("x-linkcert-plans")?
            .as_array()
            .ok_or_else(|| invalid("x-linkcert-plans must be a list in rank order"))?;
        let mut plans = Vec::new();
        for (rank, p) in list.iter().enumerate() {
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("every plan needs a name"))?;
            let mut limits = BTreeMap::new();
            for class in classes.keys() {
                let limit = match p.get("limits").and_then(|l| l.get(class)) {
                    Some(Value::Number(n)) => Limit::Fixed(n.as_u64().ok_or_else(|| {
                        invalid(format!("plan {name}: limit {class} is not a whole number"))
                    })?),
                    Some(Value::String(s)) if s == "custom" => Limit::Custom,
                    Some(Value::Null) | None => Limit::Unavailable,
                    Some(other) => {
                        return Err(invalid(format!(
                            "plan {name}: limit {class} is {other}, not a number, custom or null"
                        )));
                    }
                };
                limits.insert(class.clone(), limit);
            }
            plans.push(Plan {
                name: name.to_string(),
                rank,
                paid: p.get("paid").and_then(Value::as_bool).unwrap_or(true),
                limits,
            });
        }
        if plans.is_empty() {
            return Err(invalid("x-linkcert-plans lists no plan"));
        }
        Ok(plans)
    }

    fn errors(&self) -> Result<ErrorTable, SpecError> {
        let e = self.ext("x-linkcert-error-codes")?;
        let docs = e
            .get("docs")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("x-linkcert-error-codes needs docs"))?
            .to_string();
        let mut codes = BTreeMap::new();
        for (status, code) in e
            .get("codes")
            .and_then(Value::as_object)
            .ok_or_else(|| invalid("x-linkcert-error-codes needs codes"))?
        {
            let status: u16 = status
                .parse()
                .map_err(|_| invalid(format!("error status {status} is not a number")))?;
            let code = code
                .as_str()
                .ok_or_else(|| invalid(format!("error code of {status} is not a string")))?;
            codes.insert(status, code.to_string());
        }
        Ok(ErrorTable { docs, codes })
    }

    fn operation(
        &self,
        path: &str,
        method: &str,
        op: &openapiv3::Operation,
        plans: &[Plan],
        classes: &BTreeMap<String, Duration>,
    ) -> Result<Operation, SpecError> {
        let id = op
            .operation_id
            .clone()
            .ok_or_else(|| invalid(format!("{method} {path} has no operationId")))?;
        let ext = |k: &str| op.extensions.get(k);
        let rate_class = ext("x-linkcert-rate-class")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(format!("{id}: x-linkcert-rate-class is missing")))?
            .to_string();
        if !classes.contains_key(&rate_class) {
            return Err(invalid(format!("{id}: unknown rate class {rate_class}")));
        }
        let min_plan = ext("x-linkcert-min-plan")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(m) = &min_plan
            && !plans.iter().any(|p| &p.name == m)
        {
            return Err(invalid(format!("{id}: unknown minimum plan {m}")));
        }
        let security = op.security.as_ref().or(self.doc.security.as_ref());
        let requires_auth =
            security.is_some_and(|s| !s.is_empty() && s.iter().all(|r| !r.is_empty()));
        let mut params = Vec::new();
        for p in &op.parameters {
            params.push(self.param(&id, p)?);
        }
        let body = match &op.request_body {
            Some(b) => Some(self.body(&id, b)?),
            None => None,
        };
        let mut responses = BTreeMap::new();
        for (status, r) in &op.responses.responses {
            let status = match status {
                openapiv3::StatusCode::Code(c) => *c,
                openapiv3::StatusCode::Range(_) => {
                    return Err(invalid(format!("{id}: status ranges are not supported")));
                }
            };
            responses.insert(status, self.response(&id, status, r)?);
        }
        Ok(Operation {
            method: method
                .to_ascii_uppercase()
                .parse()
                .map_err(|_| invalid(format!("{id}: bad method {method}")))?,
            path: path.to_string(),
            summary: op.summary.clone().unwrap_or_default(),
            clause: ext("x-linkcert-clause")
                .and_then(Value::as_str)
                .map(str::to_string),
            rate_class,
            min_plan,
            extension: ext("x-linkcert-extension")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            requires_auth,
            params,
            body,
            responses,
            id,
        })
    }

    fn param(&self, op: &str, p: &ReferenceOr<openapiv3::Parameter>) -> Result<Param, SpecError> {
        let p = self.resolve(p, "parameters", |c| &c.parameters)?;
        let location = match p {
            openapiv3::Parameter::Query { .. } => Location::Query,
            openapiv3::Parameter::Header { .. } => Location::Header,
            openapiv3::Parameter::Path { .. } => Location::Path,
            openapiv3::Parameter::Cookie { .. } => Location::Cookie,
        };
        if let openapiv3::Parameter::Query {
            style,
            parameter_data,
            ..
        } = p
            && !matches!(style, openapiv3::QueryStyle::Form)
        {
            return Err(invalid(format!(
                "{op}: parameter {} uses a query style other than form",
                parameter_data.name
            )));
        }
        let data = p.parameter_data_ref();
        let raw = match &data.format {
            openapiv3::ParameterSchemaOrContent::Schema(s) => {
                serde_json::to_value(s).map_err(|e| SpecError::Parse(e.to_string()))?
            }
            openapiv3::ParameterSchemaOrContent::Content(_) => {
                return Err(invalid(format!(
                    "{op}: parameter {} uses content, not a schema",
                    data.name
                )));
            }
        };
        let schema = self.convert(&raw, false)?;
        let reference_schema = self.convert(&raw, true)?;
        let kind = ParamKind::of(&schema).ok_or_else(|| {
            invalid(format!(
                "{op}: parameter {} has no supported type",
                data.name
            ))
        })?;
        if kind == ParamKind::Array && data.explode != Some(false) {
            // Only comma-separated lists (form, explode false) are spelled out by the spec.
            return Err(invalid(format!(
                "{op}: array parameter {} must set explode: false",
                data.name
            )));
        }
        Ok(Param {
            name: data.name.clone(),
            location,
            required: data.required,
            deprecated: data.deprecated.unwrap_or(false),
            kind,
            format: schema
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_string),
            schema,
            reference_schema,
            pagination: data
                .extensions
                .get("x-linkcert-pagination")
                .and_then(Value::as_str)
                .map(str::to_string),
            paid_only: data
                .extensions
                .get("x-linkcert-paid-only")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    fn body(&self, op: &str, b: &ReferenceOr<openapiv3::RequestBody>) -> Result<Body, SpecError> {
        let b = self.resolve(b, "requestBodies", |c| &c.request_bodies)?;
        let (content_type, media) = b
            .content
            .first()
            .ok_or_else(|| invalid(format!("{op}: request body has no content")))?;
        let raw = media_schema(media)?;
        Ok(Body {
            content_type: content_type.clone(),
            required: b.required,
            schema: self.convert(&raw, false)?,
            reference_schema: self.convert(&raw, true)?,
        })
    }

    fn response(
        &self,
        op: &str,
        status: u16,
        r: &ReferenceOr<openapiv3::Response>,
    ) -> Result<ResponseSpec, SpecError> {
        let r = self.resolve(r, "responses", |c| &c.responses)?;
        let content = match r.content.first() {
            Some((ct, media)) => Some((ct.clone(), self.convert(&media_schema(media)?, false)?)),
            None => None,
        };
        let mut headers = Vec::new();
        for (name, h) in &r.headers {
            let h = self
                .resolve(h, "headers", |c| &c.headers)
                .map_err(|e| invalid(format!("{op} {status}: header {name}: {e}")))?;
            let schema = match &h.format {
                openapiv3::ParameterSchemaOrContent::Schema(s) => self.convert(
                    &serde_json::to_value(s).map_err(|e| SpecError::Parse(e.to_string()))?,
                    false,
                )?,
                openapiv3::ParameterSchemaOrContent::Content(_) => Value::Bool(true),
            };
            headers.push(HeaderSpec {
                name: name.clone(),
                required: h.required,
                schema,
            });
        }
        Ok(ResponseSpec {
            status,
            description: r.description.clone(),
            content,
            headers,
        })
    }

    /// Follow a `#/components/<kind>/<name>` reference.
    fn resolve<'b, T: 'a>(
        &'b self,
        item: &'b ReferenceOr<T>,
        kind: &str,
        pick: impl Fn(&'a openapiv3::Components) -> &'a IndexMap<String, ReferenceOr<T>>,
    ) -> Result<&'b T, SpecError>
    where
        'a: 'b,
    {
        let mut current = item;
        // Bounded: a chain of references longer than this is a cycle.
        for _ in 0..16 {
            match current {
                ReferenceOr::Item(t) => return Ok(t),
                ReferenceOr::Reference { reference } => {
                    let prefix = format!("#/components/{kind}/");
                    let name = reference
                        .strip_prefix(&prefix)
                        .ok_or_else(|| invalid(format!("unsupported reference {reference}")))?;
                    current = self
                        .doc
                        .components
                        .as_ref()
                        .and_then(|c| pick(c).get(name))
                        .ok_or_else(|| invalid(format!("dangling reference {reference}")))?;
                }
            }
        }
        Err(invalid(format!(
            "reference cycle under #/components/{kind}"
        )))
    }

    fn convert(&self, s: &Value, reference: bool) -> Result<Value, SpecError> {
        schema::to_json_schema(s, &self.components, reference).map_err(SpecError::Invalid)
    }
}

/// A media type's schema as JSON (no schema: anything goes).
fn media_schema(media: &openapiv3::MediaType) -> Result<Value, SpecError> {
    Ok(media
        .schema
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| SpecError::Parse(e.to_string()))?
        .unwrap_or(Value::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_spec_loads_with_the_spec_s_numbers() {
        let spec = Spec::embedded().expect("embedded spec loads");
        assert_eq!(spec.version, "0.0.1");
        let free = spec.plan("free").unwrap();
        assert_eq!(free.limit("standard"), Limit::Fixed(60));
        assert_eq!(free.limit("analytics"), Limit::Unavailable);
        assert_eq!(
            spec.plan("advanced").unwrap().limit("analytics"),
            Limit::Fixed(8)
        );
        assert_eq!(
            spec.plan("enterprise").unwrap().limit("standard"),
            Limit::Custom
        );
        assert_eq!(spec.window("standard"), Some(Duration::from_secs(60)));
        assert_eq!(spec.errors.code(429), Some("rate_limit_exceeded"));
        let qr = spec.operation("getQRCode").unwrap();
        assert_eq!(qr.params.len(), 9);
        assert_eq!(qr.param("url").unwrap().bound("maxLength"), Some(32000.0));
        assert!(qr.param("includeMargin").unwrap().deprecated);
        assert_eq!(
            qr.param("level").unwrap().enum_values().unwrap(),
            ["L", "M", "Q", "H"]
        );
        // The spec is silent on size bounds: only the reference schema carries them.
        assert_eq!(qr.param("size").unwrap().bound("maximum"), None);
        assert!(
            qr.param("size")
                .unwrap()
                .reference_schema
                .get("maximum")
                .is_some()
        );
        let deactivate = spec.operation("deactivatePartner").unwrap();
        assert_eq!(deactivate.min_plan.as_deref(), Some("advanced"));
        let tags = spec.operation("getTags").unwrap();
        assert_eq!(
            tags.param_with_role("page-size").unwrap().bound("maximum"),
            Some(100.0)
        );
        for op in &spec.operations {
            assert!(op.requires_auth, "{} must require the bearer key", op.id);
            for status in [400, 401, 403, 404, 422, 429, 500] {
                assert!(op.declares_status(status), "{} lacks {status}", op.id);
            }
            let r429 = &op.responses[&429];
            assert!(
                r429.headers
                    .iter()
                    .any(|h| h.name == "Retry-After" && h.required)
            );
        }
    }

    #[test]
    fn error_codes_enumerated_in_the_envelope_are_the_table_s() {
        let spec = Spec::embedded().unwrap();
        let envelope = &spec.schemas["ErrorEnvelope"];
        let listed: Vec<&str> = envelope["properties"]["error"]["properties"]["code"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let table: Vec<&str> = spec.errors.codes.values().map(String::as_str).collect();
        let mut a = listed.clone();
        a.sort();
        let mut b = table.clone();
        b.sort();
        assert_eq!(a, b);
    }

    #[test]
    fn broken_documents_are_errors_not_panics() {
        assert!(matches!(
            Spec::from_yaml("not: [valid"),
            Err(SpecError::Parse(_))
        ));
        let without_plans = EMBEDDED_YAML.replace("x-linkcert-plans:", "x-other-plans:");
        assert!(matches!(
            Spec::from_yaml(&without_plans),
            Err(SpecError::Invalid(m)) if m.contains("x-linkcert-plans")
        ));
        let dangling = EMBEDDED_YAML.replace(
            "$ref: \"#/components/schemas/Tag\"",
            "$ref: \"#/components/schemas/Nope\"",
        );
        assert!(Spec::from_yaml(&dangling).is_err());
    }
}
