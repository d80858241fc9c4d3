//! The reference implementation of the service, built on the loaded spec.
//!
//! Routes come from the spec's operations (each must have a handler in `handlers`); every
//! request passes one middleware (`layers::ServiceLayer`) whose steps are, outermost first:
//! envelope → catch panic → resolve the operation (once) → auth → rate limit → permission →
//! validation → handler. Each step is a function, written once.

mod data;
mod error;
mod handlers;
mod keys;
pub(crate) mod layers;
pub mod ratelimit;
mod reference;
mod tls;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::http::Method;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use data::{
    Link, PartnerStatus, TAG_COUNT_MIN, Tag, TagList, WorkspaceData, compare_tags, name_matches,
};
pub use error::ApiError;
pub use keys::{DEVELOPMENT_KEYS, KeySet, KeysError, Workspace};
pub use layers::MAX_BODY_BYTES;
pub use tls::TlsMode;

use linkcert_spec::window::RateWindow;
use linkcert_spec::{Operation, Param, Spec};
use ratelimit::Limiter;

/// A workspace whose limits are out of the way: for benchmarks of everything but the limiter.
pub const UNLIMITED_KEYS: &str = r#"
[[workspace]]
name = "bench"
plan = "enterprise"
keys = ["lk_bench"]
rate_limit_per_minute = 1000000000
analytics_per_second = 1000000
"#;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Keys(#[from] KeysError),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the spec and the server disagree: {0}")]
    Spec(String),
}

#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    /// None: the development keys.
    pub keys: Option<KeySet>,
    /// The standard window (the spec's minute); every other class shrinks in proportion.
    /// None: the spec's windows.
    pub window: Option<RateWindow>,
    pub tls: TlsMode,
    /// Send the IETF RateLimit fields beside X-RateLimit-* (`linkcert_rate::headers::ietf`).
    pub ratelimit_fields: bool,
}

impl ServeConfig {
    /// HTTPS with a self-signed certificate on an ephemeral loopback port: tests and `check`.
    pub fn in_process() -> ServeConfig {
        ServeConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            keys: None,
            window: None,
            tls: TlsMode::SelfSigned,
            ratelimit_fields: false,
        }
    }
}

/// An operation with what the layers need at hand: its compiled validators, its class.
pub struct OpRuntime {
    pub op: Operation,
    params: Vec<(Param, jsonschema::Validator)>,
    body_validator: Option<jsonschema::Validator>,
}

/// An operation's place in `App::ops`: the rules layer resolves it once per request.
#[derive(Clone, Copy, Debug)]
pub struct OpId(usize);

/// The state every layer and handler shares.
pub struct App {
    pub spec: Arc<Spec>,
    pub keys: KeySet,
    limiter: Limiter,
    /// Rate classes in a fixed order (the limiter's class index) with their windows.
    classes: Vec<(String, Duration)>,
    /// The standard class's window, every other class scaled with it.
    standard_window: RateWindow,
    /// The IETF RateLimit fields on every answer that carries X-RateLimit-* (`serve
    /// --ratelimit-fields`).
    ratelimit_fields: bool,
    ops: Vec<OpRuntime>,
    /// Path → (method, index in `ops`): looked up with the request's own `&str`.
    routes: HashMap<String, Vec<(Method, OpId)>>,
    data: Vec<Mutex<WorkspaceData>>,
    /// Each workspace's tags, read without the data lock (they never change).
    tags: Vec<Arc<TagList>>,
}

impl App {
    fn new(spec: Arc<Spec>, keys: KeySet, window: Option<RateWindow>) -> Result<App, ServerError> {
        let standard = spec
            .standard_window()
            .ok_or_else(|| ServerError::Spec("the default rate class has no window".into()))?;
        // None: the spec's own windows.
        let window = match window {
            Some(w) => w,
            None => RateWindow::from_secs(standard.as_secs_f64())
                .map_err(|e| ServerError::Spec(e.to_string()))?,
        };
        let classes = spec
            .rate_classes
            .iter()
            .map(|(c, w)| (c.clone(), window.scale(*w, standard)))
            .collect();
        let standard_window = window;
        let mut ops = Vec::new();
        let mut routes: HashMap<String, Vec<(Method, OpId)>> = HashMap::new();
        for op in &spec.operations {
            let compile = |schema: &serde_json::Value, what: &str| {
                linkcert_spec::schema::validator(schema)
                    .map_err(|e| ServerError::Spec(format!("{} {what}: {e}", op.id)))
            };
            let mut params = Vec::new();
            for p in &op.params {
                params.push((p.clone(), compile(&p.reference_schema, &p.name)?));
            }
            let body_validator = match &op.body {
                Some(b) => Some(compile(&b.reference_schema, "body")?),
                None => None,
            };
            routes
                .entry(op.path.clone())
                .or_default()
                .push((op.method.clone(), OpId(ops.len())));
            ops.push(OpRuntime {
                op: op.clone(),
                params,
                body_validator,
            });
        }
        let seeded: Vec<WorkspaceData> = keys
            .workspaces
            .iter()
            .map(|w| WorkspaceData::seeded(&w.name))
            .collect();
        let tags = seeded.iter().map(|d| d.tags.clone()).collect();
        let data = seeded.into_iter().map(Mutex::new).collect();
        Ok(App {
            limiter: Limiter::new(keys.key_count(), spec.rate_classes.len()),
            spec,
            keys,
            classes,
            standard_window,
            ratelimit_fields: false,
            ops,
            routes,
            data,
            tags,
        })
    }

    /// The operation of a method and path, if the spec has one. HEAD is GET's (RFC 9110
    /// 9.3.2): the router serves it through the GET handler and drops the body, so it passes
    /// the same rules.
    fn resolve(&self, method: &Method, path: &str) -> Option<OpId> {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        let by_method = self.routes.get(path)?;
        by_method
            .iter()
            .find(|(m, _)| m == method)
            .map(|(_, id)| *id)
    }

    fn op(&self, id: OpId) -> &OpRuntime {
        &self.ops[id.0]
    }

    /// The limiter's index of a class and its (possibly shrunk) window.
    fn class(&self, name: &str) -> (usize, Duration) {
        self.classes
            .iter()
            .enumerate()
            .find(|(_, (c, _))| c == name)
            .map_or((0, Duration::from_secs(60)), |(i, (_, w))| (i, *w))
    }

    fn tags(&self, workspace: usize) -> Arc<TagList> {
        self.tags[workspace].clone()
    }

    /// A workspace's data. A poisoned lock means a handler panicked mid-update; the data is
    /// plain values and stays usable.
    fn data(&self, workspace: usize) -> MutexGuard<'_, WorkspaceData> {
        self.data[workspace]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn router(self: &Arc<App>) -> Result<Router, ServerError> {
        let mut by_path: HashMap<&str, axum::routing::MethodRouter<Arc<App>>> = HashMap::new();
        for op in &self.spec.operations {
            let h = handlers::for_operation(&op.id)
                .ok_or_else(|| ServerError::Spec(format!("operation {} has no handler", op.id)))?;
            let entry = by_path
                .remove(op.path.as_str())
                .map_or(h.clone(), |m| m.merge(h));
            by_path.insert(&op.path, entry);
        }
        let mut router = Router::new();
        for (path, m) in by_path {
            router = router.route(path, m);
        }
        let app = self.clone();
        Ok(router
            .fallback(|| async { ApiError::not_found("nothing matches the request URI") })
            .layer(layers::ServiceLayer(app.clone()))
            .with_state(app))
    }
}

/// A running server: where it listens, what it accepts, and how to stop it.
pub struct RunningServer {
    pub base_url: String,
    pub addr: SocketAddr,
    /// The self-signed certificate clients should trust (PEM), when one was made.
    pub self_signed_pem: Option<String>,
    app: Arc<App>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningServer {
    pub fn keys(&self) -> &KeySet {
        &self.app.keys
    }
    /// Requests the limiter admitted for a key (by its position in the key set).
    pub fn admitted(&self, key: usize) -> u64 {
        self.app.limiter.admitted(key)
    }
    /// A copy of a workspace's current data (partners, links, tags).
    pub fn workspace_data(&self, workspace: usize) -> Option<WorkspaceData> {
        (workspace < self.app.data.len()).then(|| self.app.data(workspace).clone())
    }
    /// The windows in force, by rate class.
    pub fn windows(&self) -> Vec<(String, Duration)> {
        self.app.classes.clone()
    }

    /// Partners of the workspace a key belongs to that may be deactivated: three partnerIds
    /// and two tenantIds of other partners, then the spare pool `sequence` draws from (each
    /// replay of a sequence needs fresh partners): the next partners split between the lists.
    pub fn fixtures_for(&self, key: &str) -> (Vec<String>, Vec<String>) {
        let data = self
            .app
            .keys
            .lookup(key)
            .and_then(|(_, ws)| self.workspace_data(ws));
        let Some(data) = data else {
            return (Vec::new(), Vec::new());
        };
        let partners = data.partners.iter().take(3).map(|p| p.partner_id.clone());
        let tenants = data
            .partners
            .iter()
            .skip(3)
            .take(2)
            .map(|p| p.tenant_id.clone());
        let spare = data.partners.len().saturating_sub(5) / 2;
        let spare_partners = data.partners.iter().skip(5).take(spare);
        let spare_tenants = data.partners.iter().skip(5 + spare);
        (
            partners
                .chain(spare_partners.map(|p| p.partner_id.clone()))
                .collect(),
            tenants
                .chain(spare_tenants.map(|p| p.tenant_id.clone()))
                .collect(),
        )
    }

    /// Every key it serves with its plan, in the key set's order.
    pub fn plan_keys(&self) -> Vec<(String, String)> {
        self.app
            .keys
            .keys()
            .map(|(k, w)| (w.plan.clone(), k.to_string()))
            .collect()
    }
    /// Its standard window, as it was started.
    pub fn standard_window(&self) -> RateWindow {
        self.app.standard_window
    }

    pub async fn shutdown(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Start the reference server: it listens before this returns.
pub async fn start(spec: Arc<Spec>, config: ServeConfig) -> Result<RunningServer, ServerError> {
    let keys = config.keys.unwrap_or_else(|| KeySet::development(&spec));
    let mut app = App::new(spec, keys, config.window)?;
    app.ratelimit_fields = config.ratelimit_fields;
    let app = Arc::new(app);
    let router = app.router()?;
    let listener = TcpListener::bind(config.addr)
        .await
        .map_err(|source| ServerError::Bind {
            addr: config.addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServerError::Bind {
        addr: config.addr,
        source,
    })?;
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let tls = tls::setup(&config.tls, Some(host.clone()))?;
    let scheme = if tls.acceptor.is_some() {
        "https"
    } else {
        "http"
    };
    let base_url = match addr {
        SocketAddr::V6(_) if !addr.ip().is_unspecified() => {
            format!("{scheme}://[{host}]:{}", addr.port())
        }
        _ => format!("{scheme}://{host}:{}", addr.port()),
    };
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, router, tls.acceptor, stopped));
    Ok(RunningServer {
        base_url,
        addr,
        self_signed_pem: tls.self_signed_pem,
        app,
        stop: Some(stop),
        task,
    })
}

/// Slow or silent clients are cut off instead of holding a task forever.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

async fn accept_loop(
    listener: TcpListener,
    router: Router,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            // Out of file descriptors and the like: back off instead of spinning.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HANDSHAKE_TIMEOUT);
            match acceptor {
                Some(acceptor) => {
                    let Ok(Ok(tls)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    let _ = http.serve_connection(TokioIo::new(tls), service).await;
                }
                None => {
                    let _ = http.serve_connection(TokioIo::new(stream), service).await;
                }
            }
        });
    }
}
