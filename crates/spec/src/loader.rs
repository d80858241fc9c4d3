//! Reading the OpenAPI document (`openapiv3`) into the model: references resolved, schemas
//! converted, and our `x-linkcert-*` extensions read here and nowhere else.

use super::*;

pub(super) struct Loader<'a> {
    pub(super) doc: &'a OpenAPI,
    pub(super) components: Value,
}

impl<'a> Loader<'a> {
    pub(super) fn new(doc: &'a OpenAPI) -> Result<Self, SpecError> {
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

    pub(super) fn ext(&self, name: &str) -> Result<&'a Value, SpecError> {
        self.doc
            .extensions
            .get(name)
            .ok_or_else(|| invalid(format!("the top-level extension {name} is missing")))
    }

    pub(super) fn load(&self) -> Result<Spec, SpecError> {
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

    pub(super) fn rate_classes(&self) -> Result<BTreeMap<String, Duration>, SpecError> {
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

    pub(super) fn plans(
        &self,
        classes: &BTreeMap<String, Duration>,
    ) -> Result<Vec<Plan>, SpecError> {
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

    pub(super) fn errors(&self) -> Result<ErrorTable, SpecError> {
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

    pub(super) fn operation(
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

    pub(super) fn param(
        &self,
        op: &str,
        p: &ReferenceOr<openapiv3::Parameter>,
    ) -> Result<Param, SpecError> {
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

    pub(super) fn body(
        &self,
        op: &str,
        b: &ReferenceOr<openapiv3::RequestBody>,
    ) -> Result<Body, SpecError> {
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

    pub(super) fn response(
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
    pub(super) fn resolve<'b, T: 'a>(
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

    pub(super) fn convert(&self, s: &Value, reference: bool) -> Result<Value, SpecError> {
        schema::to_json_schema(s, &self.components, reference).map_err(SpecError::Invalid)
    }
}

/// A media type's schema as JSON (no schema: anything goes).
pub(super) fn media_schema(media: &openapiv3::MediaType) -> Result<Value, SpecError> {
    Ok(media
        .schema
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| SpecError::Parse(e.to_string()))?
        .unwrap_or(Value::Bool(true)))
}
