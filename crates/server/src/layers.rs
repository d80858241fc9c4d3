//! The cross-cutting concerns, each written once: the error envelope, panics, auth, rate
//! limit, permission (plan gating) and validation against the spec, run in order by one
//! middleware (`ServiceLayer`). Handlers see only requests that passed them all.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use tower::ServiceExt;

use super::error::{ApiError, envelope, panic_response};
use super::ratelimit::{Decision, RateHeaders};
use super::{App, OpRuntime};
use linkcert_spec::{Limit, QueryValueError};

/// Largest request body read; larger is a 400 (the spec's table has no 413).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// A body past `MAX_BODY_BYTES`, or one an operation does not take, is still read (and
/// discarded) up to this much and for at most `DRAIN_TIME`, so the client finishes sending and
/// reads the answer: closing on unread data resets the connection under it (RFC 9112 9.6).
const DRAIN_BYTES: usize = 64 * 1024 * 1024;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Who is calling: set by the auth layer.
#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub key: usize,
    pub workspace: usize,
}

/// The request's parameters, typed, with defaults applied, and its JSON body: set by the
/// validation step, in an `Arc` so handlers read it without copying.
#[derive(Clone, Debug, Default)]
pub struct Validated {
    pub params: BTreeMap<String, Value>,
    pub body: Option<Value>,
}

impl Validated {
    pub fn str(&self, name: &str) -> Option<&str> {
        self.params.get(name).and_then(Value::as_str)
    }
    pub fn f64(&self, name: &str) -> Option<f64> {
        self.params.get(name).and_then(Value::as_f64)
    }
    pub fn i64(&self, name: &str) -> Option<i64> {
        self.params.get(name).and_then(Value::as_i64)
    }
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.params.get(name).and_then(Value::as_bool)
    }
    pub fn strings(&self, name: &str) -> Option<Vec<&str>> {
        let items = self.params.get(name)?.as_array()?;
        Some(items.iter().filter_map(Value::as_str).collect())
    }
}

/// The one middleware around the router, as a tower layer. Every answer leaves in the error
/// envelope when it is an error (`error::envelope`), a panic anywhere inside becomes a 500 that
/// does not leak its text, and the service's rules run in the order they apply (`rules`). Each
/// concern is written once, as a function; a request pays for one boxed future and one
/// operation lookup instead of one per layer.
#[derive(Clone)]
pub struct ServiceLayer(pub Arc<App>);

impl<S> tower::Layer<S> for ServiceLayer {
    type Service = Service<S>;
    fn layer(&self, inner: S) -> Service<S> {
        Service {
            app: self.0.clone(),
            inner,
        }
    }
}

#[derive(Clone)]
pub struct Service<S> {
    app: Arc<App>,
    inner: S,
}

impl<S> tower::Service<Request> for Service<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Readiness is the inner service's, awaited per request by `oneshot`.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let (app, inner) = (self.app.clone(), self.inner.clone());
        Box::pin(async move {
            // Cloning these shares their bytes; they are kept for the envelope's messages.
            let (method, uri) = (req.method().clone(), req.uri().clone());
            let resp = AssertUnwindSafe(rules(&app, req, inner))
                .catch_unwind()
                .await
                .unwrap_or_else(panic_response);
            Ok(envelope(&app, &method, &uri, resp))
        })
    }
}

/// The handler (the router below this middleware).
async fn handle<S>(inner: S, req: Request) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    match inner.oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// Resolve the operation (once), authenticate, count against the rate limit, check the plan,
/// validate, then the handler.
async fn rules<S>(app: &App, mut req: Request, next: S) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    let op = app
        .resolve(req.method(), req.uri().path())
        .map(|id| app.op(id));
    let caller = match authenticate(app, req.headers()) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(caller);
    let Counted {
        decision,
        headers,
        limit,
        window,
        class,
    } = count(app, caller, op);
    let mut resp = match decision {
        Decision::Admitted { .. } => admitted(app, caller, op, req, next).await,
        Decision::Throttled { .. } => ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "rate limit of {limit} requests per {window:?} exceeded for this key; retry after {} s",
                headers.retry_after.unwrap_or(1)
            ),
        )
        .into_response(),
    };
    stamp(resp.headers_mut(), &headers);
    if app.ratelimit_fields {
        stamp_ietf(resp.headers_mut(), class, &headers, window);
    }
    resp
}

/// Past the limiter: plan gating and validation for a known operation, then the handler.
async fn admitted<S>(
    app: &App,
    caller: Caller,
    op: Option<&OpRuntime>,
    req: Request,
    next: S,
) -> Response
where
    S: tower::Service<Request, Response = Response, Error = Infallible>,
{
    let Some(rt) = op else {
        return handle(next, req).await;
    };
    if let Err(e) = permit(app, caller, rt, req.uri().query().unwrap_or("")) {
        return e.into_response();
    }
    match validated(rt, req).await {
        Ok(req) => handle(next, req).await,
        Err(e) => e.into_response(),
    }
}

/// `Authorization: Bearer <key>`, scheme case-insensitive. The key itself is never logged.
fn authenticate(app: &App, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let presented = bearer_token(headers).map_err(ApiError::unauthorized)?;
    let (key, workspace) = app
        .keys
        .lookup(presented)
        .ok_or_else(|| ApiError::unauthorized("unknown API key"))?;
    Ok(Caller { key, workspace })
}

fn bearer_token(headers: &HeaderMap) -> Result<&str, &'static str> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or("missing Authorization header; send Authorization: Bearer <API_KEY>")?;
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not visible ASCII")?;
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or("the Authorization header must be: Bearer <API_KEY>")?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err("the Authorization scheme must be Bearer");
    }
    // RFC 9110 11.4: 1*SP between scheme and key, nothing else; a key trimmed of any other
    // whitespace (a tab) would let a mutated credential in (`auth.mutations`).
    let token = token.trim_start_matches(' ');
    if token.is_empty() {
        return Err("the Authorization header carries an empty key");
    }
    Ok(token)
}

/// What counting a request gave: the limiter's decision, the headers it sends, and the class
/// it was counted in with that class's limit and window.
struct Counted<'a> {
    decision: Decision,
    headers: RateHeaders,
    limit: u64,
    window: std::time::Duration,
    class: &'a str,
}

/// Counts the request against its key's window; the headers go on whatever answer it gets. A
/// request whose plan lacks its operation's class counts against the default class, so the
/// 403 it is about to get carries headers too.
fn count<'a>(app: &'a App, caller: Caller, op: Option<&'a OpRuntime>) -> Counted<'a> {
    let ws = &app.keys.workspaces[caller.workspace];
    let class = op
        .map(|o| o.op.rate_class.as_str())
        .filter(|c| matches!(ws.limits.get(*c), Some(Limit::Fixed(_))))
        .unwrap_or(app.spec.default_rate_class.as_str());
    let limit = match ws.limits.get(class) {
        Some(Limit::Fixed(n)) => *n,
        _ => 0,
    };
    let (class_index, window) = app.class(class);
    let now = Instant::now();
    let decision = app
        .limiter
        .check(caller.key, class_index, limit, window, now);
    let headers = decision.headers(now, SystemTime::now());
    Counted {
        decision,
        headers,
        limit,
        window,
        class,
    }
}

fn stamp(h: &mut HeaderMap, r: &RateHeaders) {
    for (name, v) in r.pairs() {
        h.insert(HeaderName::from_static(name), HeaderValue::from(v));
    }
}

/// The IETF fields beside X-RateLimit-*, saying the same: the class counted in is the policy,
/// its limit the quota, Remaining `r` and the seconds to the reset `t` (Retry-After's on a
/// 429).
fn stamp_ietf(h: &mut HeaderMap, class: &str, r: &RateHeaders, window: std::time::Duration) {
    use linkcert_rate::headers::ietf;
    let fields = [
        (ietf::POLICY, ietf::policy_field(class, r.limit, window)),
        (
            ietf::RATELIMIT,
            ietf::ratelimit_field(class, r.remaining, r.reset_in),
        ),
    ];
    for (name, value) in fields {
        if let Some(v) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
            h.insert(HeaderName::from_static(name), v);
        }
    }
}

/// Plan gating: the operation's minimum plan, access to its rate class, paid-only parameters.
fn permit(app: &App, caller: Caller, rt: &OpRuntime, query: &str) -> Result<(), ApiError> {
    let ws = &app.keys.workspaces[caller.workspace];
    let Some(plan) = app.spec.plan(&ws.plan) else {
        return Ok(());
    };
    let op = &rt.op;
    if !app.spec.plan_allows(plan, op) {
        let min = op.min_plan.as_deref().unwrap_or("a higher plan");
        return Err(ApiError::forbidden(format!(
            "{} requires the {min} plan or higher; this workspace is on {}",
            op.label(),
            plan.name
        )));
    }
    if ws.limits.get(&op.rate_class) == Some(&Limit::Unavailable) {
        return Err(ApiError::forbidden(format!(
            "the {} plan has no access to {} endpoints",
            plan.name, op.rate_class
        )));
    }
    if !plan.paid {
        // A paid-only parameter sent at its default (the SDKs send `hideLogo=false` on every
        // call) asks for no paid feature.
        let paid_feature = |(name, raw): (std::borrow::Cow<str>, std::borrow::Cow<str>)| {
            let p = op.params.iter().find(|p| p.paid_only && p.name == name)?;
            let at_default = p.default().is_some() && p.decode(&raw).ok().as_ref() == p.default();
            (!at_default).then_some(p)
        };
        if let Some(p) = url::form_urlencoded::parse(query.as_bytes()).find_map(paid_feature) {
            return Err(ApiError::forbidden(format!(
                "{} is only available on a paid plan; this workspace is on {}",
                p.name, plan.name
            )));
        }
    }
    Ok(())
}

/// Parses and validates parameters and body against the operation's schemas (with the
/// reference's own choices), so handlers never see an invalid value.
async fn validated(rt: &OpRuntime, req: Request) -> Result<Request, ApiError> {
    let mut v = Validated {
        params: parse_query(rt, req.uri().query().unwrap_or(""))?,
        body: None,
    };
    let Some(spec_body) = &rt.op.body else {
        // A body the operation does not take is ignored, once read.
        let (mut parts, body) = req.into_parts();
        if body.size_hint().exact() != Some(0) {
            let _ = read_body(body).await;
        }
        parts.extensions.insert(Arc::new(v));
        return Ok(Request::from_parts(parts, Body::empty()));
    };
    let (mut parts, body) = req.into_parts();
    let media = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|c| c.to_str().ok())
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    let bytes = read_body(body).await;
    if media.as_deref() != Some(spec_body.content_type.as_str()) {
        return Err(ApiError::bad_request(format!(
            "the body must be sent as Content-Type: {}",
            spec_body.content_type
        )));
    }
    let bytes = bytes?;
    if bytes.is_empty() && spec_body.required {
        return Err(ApiError::bad_request("the request body is required"));
    }
    let json: Value = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    if let Some(validator) = &rt.body_validator {
        check_schema(validator, &json, "body")?;
    }
    v.body = Some(json);
    parts.extensions.insert(Arc::new(v));
    Ok(Request::from_parts(parts, Body::empty()))
}

/// The body, up to `MAX_BODY_BYTES`; a larger one is a 400, answered once the rest is read
/// and discarded (within `DRAIN_BYTES` and `DRAIN_TIME`).
async fn read_body(body: Body) -> Result<Vec<u8>, ApiError> {
    let mut stream = body.into_data_stream();
    let (mut kept, mut seen) = (Vec::new(), 0usize);
    let mut deadline = None;
    loop {
        let next = match deadline {
            None => stream.next().await,
            Some(d) => match tokio::time::timeout_at(d, stream.next()).await {
                Ok(n) => n,
                Err(_) => break,
            },
        };
        let Some(chunk) = next else { break };
        let chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("the body could not be read: {e}")))?;
        seen = seen.saturating_add(chunk.len());
        if seen <= MAX_BODY_BYTES {
            kept.extend_from_slice(&chunk);
        } else if seen > DRAIN_BYTES {
            break;
        } else if deadline.is_none() {
            deadline = Some(tokio::time::Instant::now() + DRAIN_TIME);
        }
    }
    if seen > MAX_BODY_BYTES {
        return Err(ApiError::bad_request(format!(
            "the body is larger than {MAX_BODY_BYTES} bytes"
        )));
    }
    Ok(kept)
}

fn parse_query(rt: &OpRuntime, query: &str) -> Result<BTreeMap<String, Value>, ApiError> {
    let mut params = BTreeMap::new();
    for (name, raw) in url::form_urlencoded::parse(query.as_bytes()) {
        // Parameters the operation does not declare are ignored, as most services do.
        let Some((p, validator)) = rt.params.iter().find(|(p, _)| p.name == name) else {
            continue;
        };
        let mut value = p.decode(&raw).map_err(|e| match e {
            QueryValueError::WrongType { .. } => ApiError::bad_request(e.to_string()),
            QueryValueError::OutOfRange { .. } => ApiError::unprocessable(e.to_string()),
        })?;
        match (params.remove(&p.name), &mut value) {
            (None, _) => {}
            // A list may come repeated (`ids=a&ids=b`, as the SDKs send it), comma-separated,
            // or both: the items add up.
            (Some(Value::Array(mut earlier)), Value::Array(items)) => {
                earlier.append(items);
                value = Value::Array(earlier);
            }
            (Some(_), _) => {
                return Err(ApiError::bad_request(format!(
                    "{} is given more than once",
                    p.name
                )));
            }
        }
        check_schema(validator, &value, &p.name)?;
        params.insert(p.name.clone(), value);
    }
    for (p, _) in &rt.params {
        if params.contains_key(&p.name) {
            continue;
        }
        if p.required {
            return Err(ApiError::bad_request(format!(
                "the query parameter {} is required",
                p.name
            )));
        }
        if let Some(d) = p.reference_default() {
            params.insert(p.name.clone(), d.clone());
        }
    }
    Ok(params)
}

/// Wrong type or a missing required field is a malformed request (400); any other violation
/// is invalid data (422), as the spec's Errors table tells them apart.
fn check_schema(
    validator: &jsonschema::Validator,
    value: &Value,
    what: &str,
) -> Result<(), ApiError> {
    // The common case first: a valid value costs no error iterator.
    if validator.is_valid(value) {
        return Ok(());
    }
    let Some(err) = validator.iter_errors(value).next() else {
        return Ok(());
    };
    let at = err.instance_path().to_string();
    let place = if at.is_empty() {
        what.to_string()
    } else {
        format!("{what}{at}")
    };
    let message = format!("{place}: {}", err.masked());
    Err(match err.kind() {
        jsonschema::error::ValidationErrorKind::Type { .. }
        | jsonschema::error::ValidationErrorKind::Required { .. } => ApiError::bad_request(message),
        _ => ApiError::unprocessable(message),
    })
}
