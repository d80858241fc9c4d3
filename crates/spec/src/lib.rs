//! The OpenAPI document everything is driven by, loaded with `openapiv3` into a typed view.
//!
//! `Spec` is what the server routes and validates with, what `check` generates cases from and
//! what `load` reads plan limits from. The `x-linkcert-*` extensions are read here and nowhere
//! else; `specs/README.md` documents them.

mod params;

pub mod clauses;
pub mod clock;
pub mod schema;
pub mod verdict;
pub mod window;

use std::collections::BTreeMap;

use std::path::Path;

use std::time::Duration;

use indexmap::IndexMap;

use openapiv3::{OpenAPI, ReferenceOr};

use serde_json::Value;

pub use params::{ParamKind, QueryValueError};

mod loader;
mod model;

use loader::*;
pub use model::*;

/// The document shipped in `specs/`, compiled in so the binary works from any directory.
pub const EMBEDDED_YAML: &str = include_str!("../../../specs/link-attribution.openapi.yaml");

/// Where the document lives in the repository (for messages and the schema drift test).
pub const SPEC_PATH: &str = "specs/link-attribution.openapi.yaml";

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read the spec {path}")]
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

    /// Title and version of the document compiled in, read from its `info` alone (what
    /// `linkcert --version` names, without loading every operation).
    pub fn embedded_info() -> Result<(String, String), SpecError> {
        #[derive(serde::Deserialize)]
        struct Doc {
            info: Info,
        }
        #[derive(serde::Deserialize)]
        struct Info {
            title: String,
            version: String,
        }
        let doc: Doc =
            serde_yaml_ng::from_str(EMBEDDED_YAML).map_err(|e| SpecError::Parse(e.to_string()))?;
        Ok((doc.info.title, doc.info.version))
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

    /// The standard class's window (the spec's minute): what every other class scales with.
    pub fn standard_window(&self) -> Option<Duration> {
        self.window(&self.default_rate_class)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The one change the spec forbids of a valid query: what `load` sends as its share of
    /// requests every target must refuse (a required parameter left out first, then a bound,
    /// never a parameter whose name the spec does not show).
    #[test]
    fn a_forbidden_query_breaks_what_the_spec_states() {
        let spec = Spec::embedded().unwrap();
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let qr = spec.operation("getQRCode").unwrap();
        let f = qr
            .forbidden_query(&q(&[("url", "https://e.com"), ("level", "M")]))
            .unwrap();
        assert_eq!(f.query, q(&[("level", "M")]));
        assert_eq!(f.why, "url missing (required)");
        let tags = spec.operation("getTags").unwrap();
        let f = tags.forbidden_query(&q(&[("pageSize", "1")])).unwrap();
        assert_eq!(f.query, q(&[("pageSize", "101")]));
        assert_eq!(f.why, "pageSize above its maximum 100");
        // sortBy's name is not shown: a target may ignore it, so it is never the one broken.
        assert!(tags.param("sortBy").unwrap().name_unshown());
        let analytics = spec.operation("retrieveAnalytics").unwrap();
        assert_eq!(analytics.forbidden_query(&[]), None);
    }

    #[test]
    fn embedded_spec_loads_with_the_spec_s_numbers() {
        let spec = Spec::embedded().expect("embedded spec loads");
        assert_eq!(spec.version, "0.0.1");
        let (title, version) = Spec::embedded_info().expect("its info reads");
        assert_eq!((title, version), (spec.title.clone(), spec.version.clone()));
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
