//! A second implementation of the Link Attribution Service, written from the reference document
//! (`specs/link-attribution-service.md`) alone and sharing no code with `crates/server/src`.
//! Wherever the document is silent it makes a *different* legal choice from the reference
//! (listed in `specs/README.md`, "Points of freedom"), so the runner's tests can tell a
//! requirement of the spec from an assumption of the reference.
//!
//! Plain HTTP on 127.0.0.1 (the runner reports that as non-strict, never a failure). One
//! handler dispatches by hand: no stand-in operations, no routes beyond the three the document
//! shapes.
//!
//! A crate of its own (a dev-dependency of linkcert) so it is compiled once, not into every
//! test binary. It knows nothing of linkcert: `tests/common/variant.rs` builds the runner's
//! `Target` from what [`Variant`] reports.

mod limiter;
mod partners;
mod qr;
mod tags;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

/// Plans in rank order with their per-window standard limit (Enterprise: this variant's own
/// custom figure, not the reference's).
const PLANS: [(&str, u64); 5] = [
    ("free", 60),
    ("pro", 600),
    ("business", 1200),
    ("advanced", 3000),
    ("enterprise", 20000),
];

/// The development keys (the same strings as the reference's, so the tests' defects that
/// swap credentials work in front of either implementation).
const KEYS: [(&str, &str); 6] = [
    ("lk_free_1", "free"),
    ("lk_free_2", "free"),
    ("lk_pro_1", "pro"),
    ("lk_business_1", "business"),
    ("lk_advanced_1", "advanced"),
    ("lk_enterprise_1", "enterprise"),
];

/// The key and its plan, if the key is one this variant accepts.
fn plan_of<'k>(app: &App, key: &'k str) -> Option<(&'k str, &'static &'static str)> {
    if let Some((_, plan)) = KEYS.iter().find(|(known, _)| *known == key) {
        return Some((key, plan));
    }
    let (plan, n) = key.strip_prefix("lk_")?.rsplit_once('_')?;
    let n: usize = n.parse().ok().filter(|n| (1..=app.fleet).contains(n))?;
    // Only the plain decimal form names a key (no leading zeros, no sign).
    let plan = &PLANS.iter().find(|(p, _)| *p == plan)?.0;
    (n.to_string() == key.rsplit('_').next()?).then_some((key, plan))
}

pub(crate) struct Workspace {
    pub tags: Vec<tags::Tag>,
    pub partners: Mutex<Vec<partners::Partner>>,
}

struct App {
    window: Duration,
    /// Keys per plan beyond the development ones: `lk_<plan>_<n>` for n up to this
    /// (`start_with_fleet`); 0 for the development keys only.
    fleet: usize,
    /// By workspace name (= plan: one workspace per plan).
    workspaces: HashMap<&'static str, Workspace>,
    limiter: limiter::FixedWindow,
    /// Whether answers carry the IETF RateLimit fields, in draft -07's form (`serve_fields`).
    fields: std::sync::atomic::AtomicBool,
}

pub struct Variant {
    pub url: String,
    app: Arc<App>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Variant {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start the variant on a free loopback port with a standard window of `window_secs`.
pub async fn start(window_secs: f64) -> Variant {
    start_with_fleet(window_secs, 0).await
}

/// As `start`, also accepting `lk_<plan>_1` to `lk_<plan>_<fleet>` for every plan (the names
/// the reference's `serve --dev-keys` gives), each key with its own limit.
pub async fn start_with_fleet(window_secs: f64, fleet: usize) -> Variant {
    let window = Duration::from_secs_f64(window_secs);
    let workspaces = PLANS
        .iter()
        .map(|(plan, _)| {
            (
                *plan,
                Workspace {
                    tags: tags::seed(plan),
                    partners: Mutex::new(partners::seed(plan)),
                },
            )
        })
        .collect();
    let app = Arc::new(App {
        window,
        fleet,
        workspaces,
        limiter: limiter::FixedWindow::new(window),
        fields: std::sync::atomic::AtomicBool::new(false),
    });
    let shared = app.clone();
    let router = axum::Router::new().fallback(move |req: Request| {
        let app = shared.clone();
        async move { handle(&app, req).await }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Variant { url, app, task }
}

impl Variant {
    /// The standard window its limiter counts in.
    pub fn window(&self) -> Duration {
        self.app.window
    }

    /// From now on, answers also carry the IETF RateLimit fields as draft -07 wrote them
    /// (`RateLimit: limit=60, remaining=59, reset=17`, a Dictionary, and `RateLimit-Policy:
    /// 60;w=60`), where the reference writes draft -11's: another target's legal choice.
    pub fn serve_fields(&self) {
        self.app
            .fields
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Every key it accepts, with its plan: `(plan, key)`.
    pub fn keys(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        KEYS.iter().map(|(key, plan)| (*plan, *key))
    }

    /// Active partners of a plan's workspace that may be deactivated: three partnerIds and
    /// two tenantIds of other partners.
    pub fn fixtures(&self, plan: &str) -> (Vec<String>, Vec<String>) {
        let ws = &self.app.workspaces[plan];
        let list = ws.partners.lock().unwrap();
        let active: Vec<_> = list.iter().filter(|p| p.active).collect();
        // Then the spare pool linkcert's `sequence` draws from, split between the lists.
        let spare = active.len().saturating_sub(5) / 2;
        (
            active
                .iter()
                .take(3)
                .chain(active.iter().skip(5).take(spare))
                .map(|p| p.id.clone())
                .collect(),
            active
                .iter()
                .skip(3)
                .take(2)
                .chain(active.iter().skip(5 + spare))
                .map(|p| p.tenant_id.clone())
                .collect(),
        )
    }

    /// Whether a partner of a plan's workspace is still active.
    pub fn partner_active(&self, plan: &str, partner_id: &str) -> Option<bool> {
        let ws = &self.app.workspaces[plan];
        let list = ws.partners.lock().unwrap();
        list.iter().find(|p| p.id == partner_id).map(|p| p.active)
    }

    /// Requests the limiter admitted for a key.
    pub fn admitted(&self, key: &str) -> u64 {
        self.app.limiter.admitted(key)
    }
}

/// An error answer in the document's envelope. This variant never sends the optional doc_url.
pub(crate) fn error(status: u16, message: impl Into<String>) -> Response {
    let code = match status {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        413 => "payload_too_large",
        422 => "unprocessable_entity",
        429 => "rate_limit_exceeded",
        _ => "internal_server_error",
    };
    let body = serde_json::json!({"error": {"code": code, "message": message.into()}});
    json(status, &body)
}

pub(crate) fn json(status: u16, body: &serde_json::Value) -> Response {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    r
}

/// Query parameters; a name given twice is rejected (this variant accepts lists
/// comma-separated only). Errors are the message of a 400.
pub(crate) fn query(q: Option<&str>) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(q.unwrap_or("").as_bytes()) {
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(format!("query parameter {k} given more than once"));
        }
    }
    Ok(out)
}

enum Route {
    Qr,
    Deactivate,
    Tags,
}

/// Largest body read; a larger one is 413 (standard HTTP, though not in the document's list).
const MAX_BODY: usize = 64 * 1024;
/// A refused body is still read up to this much before the answer, so the client can finish
/// sending and read it.
const DRAIN: usize = 64 * 1024 * 1024;

/// 413 in the envelope, once the body is read (up to `DRAIN`) and thrown away.
/// A choice the reference does not make: a strong ETag (a hash of the body) on every 200 to
/// GET, and 304 Not Modified when If-None-Match names it (RFC 9110 13.1.2).
async fn validated(resp: Response, headers: &axum::http::HeaderMap) -> Response {
    use std::hash::{Hash, Hasher};
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut h = std::hash::DefaultHasher::new();
    bytes.hash(&mut h);
    let etag = format!("\"{:016x}\"", h.finish());
    let matches = headers
        .get_all("if-none-match")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/") == etag
        });
    if let Ok(v) = HeaderValue::from_str(&etag) {
        parts.headers.insert("etag", v);
    }
    if matches {
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove("content-type");
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(bytes))
}

async fn too_large(body: Body) -> Response {
    let _ = axum::body::to_bytes(body, DRAIN).await;
    error(413, format!("the body is larger than {MAX_BODY} bytes"))
}

async fn handle(app: &App, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    // Routing first: an unknown path is 404 whatever the credentials; a known path with
    // another method is 405 with Allow (OPTIONS: 204 with Allow).
    let path = parts.uri.path();
    let allow = match path {
        "/qr" | "/tags" => "GET",
        "/partners/deactivate" => "POST",
        _ => return error(404, "no such endpoint"),
    };
    let route = match (parts.method.as_str(), path) {
        ("GET", "/qr") => Route::Qr,
        ("POST", "/partners/deactivate") => Route::Deactivate,
        ("GET", "/tags") => Route::Tags,
        (method, _) => {
            let mut r = if method == "OPTIONS" {
                let mut r = Response::new(Body::empty());
                *r.status_mut() = StatusCode::NO_CONTENT;
                r
            } else {
                error(
                    405,
                    format!("{path} does not take {method}; it takes {allow}"),
                )
            };
            r.headers_mut()
                .insert("allow", HeaderValue::from_static(allow));
            return r;
        }
    };
    // Size before credentials: any route, a body it could not take is 413.
    let declared = parts
        .headers
        .get("content-length")
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return too_large(body).await;
    }
    // Authentication: exactly `Bearer <key>`, the scheme as the document writes it.
    let key = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some((key, plan)) = key.and_then(|k| plan_of(app, k)) else {
        return error(401, "missing or invalid API key");
    };
    let limit = PLANS.iter().find(|(p, _)| p == plan).unwrap().1;
    // Rate limit before plan gating (as the real service): a 403 uses quota too.
    let state = app.limiter.admit(key, limit);
    let mut resp = if state.admitted {
        let ws = &app.workspaces[plan];
        match route {
            Route::Qr => qr::get(ws, parts.uri.query()),
            Route::Tags => tags::list(ws, parts.uri.query()),
            Route::Deactivate => {
                if !matches!(*plan, "advanced" | "enterprise") {
                    error(403, "partner endpoints need the Advanced plan or higher")
                } else {
                    match axum::body::to_bytes(body, MAX_BODY).await {
                        Ok(b) => partners::deactivate(ws, &parts.headers, &b),
                        // Without a Content-Length (chunked): past the limit, the rest is
                        // no longer readable here.
                        Err(_) => error(413, "the body is larger than the limit or unreadable"),
                    }
                }
            }
        }
    } else {
        let mut r = error(429, "rate limit exceeded; retry after the window resets");
        r.headers_mut()
            .insert("retry-after", HeaderValue::from(state.retry_after_secs));
        r
    };
    if matches!(route, Route::Qr | Route::Tags) && resp.status() == StatusCode::OK {
        resp = validated(resp, &parts.headers).await;
    }
    let h = resp.headers_mut();
    h.insert("x-ratelimit-limit", HeaderValue::from(limit));
    h.insert("x-ratelimit-remaining", HeaderValue::from(state.remaining));
    h.insert(
        "x-ratelimit-reset",
        HeaderValue::from(state.reset_epoch_secs),
    );
    if app.fields.load(std::sync::atomic::Ordering::Relaxed) {
        let (remaining, reset) = (state.remaining, state.retry_after_secs);
        let dict = format!("limit={limit}, remaining={remaining}, reset={reset}");
        h.insert("ratelimit", HeaderValue::from_str(&dict).unwrap());
        let window = app.window;
        if window.subsec_nanos() == 0 {
            let policy = format!("{limit};w={}", window.as_secs());
            h.insert("ratelimit-policy", HeaderValue::from_str(&policy).unwrap());
        }
    }
    resp
}
