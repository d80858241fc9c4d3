//! Deliberately broken servers for the runner's tests: a small proxy in front of an
//! implementation (our reference, or the second implementation in `variant`) that injects one
//! defect, before the request reaches it and/or into the answer it gives back. Plain HTTP on
//! 127.0.0.1. Every defect test runs in front of both (`on_both`), so a defect is found
//! whatever legal choices sit under it.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use linkcert::check::{self, CheckOptions};
use linkcert::report::Report;
use linkcert::server::RunningServer;
use linkcert::target::Target;

/// The request as the proxy got it; a defect may rewrite it before it is forwarded.
pub struct Incoming {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Incoming {
    /// Whether the request carries `Bearer key`.
    pub fn key_is(&self, key: &str) -> bool {
        self.headers
            .get("authorization")
            .is_some_and(|v| v.as_bytes() == format!("Bearer {key}").as_bytes())
    }
    /// The Authorization header as sent ("" when absent or not visible ASCII).
    pub fn authorization(&self) -> &str {
        self.headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
    /// The request goes on carrying `Bearer key` instead.
    pub fn use_key(&mut self, key: &str) {
        let v = HeaderValue::from_str(&format!("Bearer {key}")).unwrap();
        self.headers.insert("authorization", v);
    }
}

/// The reference's answer; a defect may rewrite it before the runner sees it.
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// Break the connection instead of answering.
    pub drop_connection: bool,
}

impl Answer {
    pub fn set_header(&mut self, name: &'static str, value: impl ToString) {
        self.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(&value.to_string()).unwrap(),
        );
    }
    pub fn header_u64(&self, name: &str) -> Option<u64> {
        self.headers.get(name)?.to_str().ok()?.parse().ok()
    }
}

type Before = dyn Fn(&mut Incoming) + Send + Sync;
type After = dyn Fn(&Incoming, &mut Answer) + Send + Sync;

pub struct Defect {
    pub before: Option<Box<Before>>,
    pub after: Option<Box<After>>,
    /// Each request held this long before it is forwarded (after `before`): a slow target.
    pub hold: Option<std::time::Duration>,
}

impl Defect {
    pub fn after(f: impl Fn(&Incoming, &mut Answer) + Send + Sync + 'static) -> Defect {
        Defect {
            before: None,
            after: Some(Box::new(f)),
            hold: None,
        }
    }
    pub fn before(f: impl Fn(&mut Incoming) + Send + Sync + 'static) -> Defect {
        Defect {
            before: Some(Box::new(f)),
            after: None,
            hold: None,
        }
    }
    pub fn none() -> Defect {
        Defect {
            before: None,
            after: None,
            hold: None,
        }
    }
}

/// The two implementations a defect can sit in front of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    Reference,
    Variant,
}

pub const BOTH: [Impl; 2] = [Impl::Reference, Impl::Variant];

/// A running implementation.
pub enum Upstream {
    Reference(RunningServer),
    Variant(super::variant::Variant),
}

impl Upstream {
    pub async fn start(imp: Impl, window_secs: f64) -> Upstream {
        match imp {
            Impl::Reference => Upstream::Reference(super::reference(Some(window_secs)).await),
            Impl::Variant => Upstream::Variant(super::variant::start(window_secs).await),
        }
    }
    /// The implementation also sending the IETF RateLimit fields: the reference draft -11's
    /// (`serve --ratelimit-fields`), the variant draft -07's.
    pub async fn start_with_fields(imp: Impl, window_secs: f64) -> Upstream {
        match imp {
            Impl::Reference => Upstream::Reference(super::reference_with_fields(window_secs).await),
            Impl::Variant => {
                let v = super::variant::start(window_secs).await;
                v.serve_fields();
                Upstream::Variant(v)
            }
        }
    }
    pub fn base_url(&self) -> &str {
        match self {
            Upstream::Reference(r) => &r.base_url,
            Upstream::Variant(v) => &v.url,
        }
    }
    pub fn client(&self) -> reqwest::Client {
        match self {
            Upstream::Reference(r) => super::client(r),
            Upstream::Variant(_) => {
                linkcert::http::ClientConfig::new(std::time::Duration::from_secs(20), usize::MAX)
                    .build()
                    .expect("the test client builds")
            }
        }
    }
    /// The runner's target for this implementation: all its keys, its window, fixtures of
    /// its strongest partner-capable workspace bound to that key.
    pub fn target(&self) -> Target {
        match self {
            Upstream::Reference(r) => r.target(&super::spec()),
            Upstream::Variant(v) => v.target(),
        }
    }
    /// The reference, for tests that read its state.
    pub fn reference(&self) -> Option<&RunningServer> {
        match self {
            Upstream::Reference(r) => Some(r),
            Upstream::Variant(_) => None,
        }
    }
}

pub struct Broken {
    pub url: String,
    pub imp: Impl,
    pub upstream: Upstream,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Broken {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Broken {
    /// The runner's target: the implementation's, through the proxy.
    pub fn target(&self) -> Target {
        let mut t = self.upstream.target();
        t.base_url = self.url.parse().expect("a base URL");
        t
    }
}

/// Start the reference (window in seconds) and a proxy injecting `defect` in front of it.
pub async fn broken(window_secs: f64, defect: Defect) -> Broken {
    broken_on(Impl::Reference, window_secs, defect).await
}

/// Start an implementation and a proxy injecting `defect` in front of it.
pub async fn broken_on(imp: Impl, window_secs: f64, defect: Defect) -> Broken {
    proxy(Upstream::start(imp, window_secs).await, defect).await
}

/// As `broken_on`, the implementation serving `n` keys per plan (`lk_<plan>_1` to
/// `lk_<plan>_<n>`, as `serve --dev-keys n`).
pub async fn broken_fleet(imp: Impl, window_secs: f64, n: usize, defect: Defect) -> Broken {
    let upstream = match imp {
        Impl::Reference => Upstream::Reference(super::reference_fleet(window_secs, n).await),
        Impl::Variant => Upstream::Variant(super::variant::start_fleet(window_secs, n).await),
    };
    proxy(upstream, defect).await
}

/// A proxy injecting `defect` in front of an implementation sending the IETF RateLimit fields
/// (`Upstream::start_with_fields`).
pub async fn broken_with_fields(imp: Impl, window_secs: f64, defect: Defect) -> Broken {
    proxy(Upstream::start_with_fields(imp, window_secs).await, defect).await
}

/// A proxy injecting `defect` in front of a running implementation.
pub async fn proxy(upstream: Upstream, defect: Defect) -> Broken {
    let client = upstream.client();
    let base = upstream.base_url().to_string();
    let defect = Arc::new(defect);
    let app = axum::Router::new().fallback(move |req: Request| {
        let (client, base, defect) = (client.clone(), base.clone(), defect.clone());
        async move { forward(&client, &base, &defect, req).await }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let imp = match upstream {
        Upstream::Reference(_) => Impl::Reference,
        Upstream::Variant(_) => Impl::Variant,
    };
    Broken {
        url,
        imp,
        upstream,
        task,
    }
}

/// `test` against each implementation side by side: for tests that mostly wait for
/// rate-limit windows, where running both at once halves the time without crowding the machine.
pub async fn side_by_side<T, F, Fut>(test: F) -> Vec<T>
where
    F: Fn(Impl) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    futures::future::join_all(BOTH.map(test)).await
}

/// Run the runner (checks `only`) against `defect()` in front of each implementation in turn.
pub async fn on_both(
    window_secs: f64,
    defect: impl Fn() -> Defect,
    only: &[&str],
) -> Vec<(Impl, Report)> {
    let mut out = Vec::new();
    for imp in BOTH {
        let b = broken_on(imp, window_secs, defect()).await;
        out.push((imp, run_check(b.target(), only).await));
    }
    out
}

async fn forward(client: &reqwest::Client, base: &str, defect: &Defect, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    // Read whole (the runner's oversized bodies are 16 MiB), so the defect sees what was sent.
    let body = axum::body::to_bytes(body, 32 << 20)
        .await
        .unwrap_or_default()
        .to_vec();
    let mut inc = Incoming {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers: parts.headers.clone(),
        body,
    };
    if let Some(b) = &defect.before {
        b(&mut inc);
    }
    if let Some(d) = defect.hold {
        tokio::time::sleep(d).await;
    }
    let url = if inc.query.is_empty() {
        format!("{base}{}", inc.path)
    } else {
        format!("{base}{}?{}", inc.path, inc.query)
    };
    let send = || {
        let mut rb = client
            .request(
                inc.method.parse().unwrap_or(reqwest::Method::GET),
                url.as_str(),
            )
            .body(inc.body.clone());
        for (k, v) in inc.headers.iter() {
            if k != "host" && k != "content-length" {
                rb = rb.header(k, v);
            }
        }
        async move {
            let r = rb.send().await?;
            let (status, headers) = (r.status().as_u16(), r.headers().clone());
            Ok::<_, reqwest::Error>((status, headers, r.bytes().await?.to_vec()))
        }
    };
    // A pooled connection the upstream closes as it is reused resets under the request (a
    // busy machine widens that race): sent again once, as clients do. What still fails is
    // the proxy's 502, never a panic that leaves the runner's request unanswered.
    let upstream = match send().await {
        Ok(a) => Ok(a),
        Err(_) => send().await,
    };
    let (status, headers, body) = match upstream {
        Ok(a) => a,
        Err(e) => {
            let body = serde_json::json!({"error": {
                "code": "internal_server_error",
                "message": format!("the test proxy's upstream failed: {e}"),
            }});
            let mut resp = Response::new(Body::from(body.to_string()));
            *resp.status_mut() = StatusCode::BAD_GATEWAY;
            return resp;
        }
    };
    let mut ans = Answer {
        status,
        headers,
        body,
        drop_connection: false,
    };
    if let Some(a) = &defect.after {
        a(&inc, &mut ans);
    }
    if ans.drop_connection {
        // A body that fails at once: the connection is cut with no answer to read.
        let broken = futures::stream::once(async {
            Err::<Vec<u8>, _>(std::io::Error::other("the defect drops the connection"))
        });
        return Response::new(Body::from_stream(broken));
    }
    ans.headers.remove("content-length");
    ans.headers.remove("transfer-encoding");
    let mut resp = Response::new(Body::from(ans.body));
    *resp.status_mut() = StatusCode::from_u16(ans.status).unwrap();
    *resp.headers_mut() = ans.headers;
    resp
}

/// Run the runner on `target`, only the given check patterns, few cases.
pub async fn run_check(target: Target, only: &[&str]) -> Report {
    let opts = CheckOptions {
        seed: 7,
        cases: 24,
        concurrency: 2,
        only: only.iter().map(|s| s.to_string()).collect(),
        ..CheckOptions::default()
    };
    check::run(super::spec(), target, opts)
        .await
        .expect("the runner runs")
}

/// Ids of the checks that failed.
pub fn failed(report: &Report) -> Vec<String> {
    let mut v: Vec<String> = report
        .checks
        .iter()
        .filter(|c| c.verdict == linkcert::verdict::Verdict::Fail)
        .map(|c| c.id.clone())
        .collect();
    v.dedup();
    v
}

/// What a run in front of a defect must show, per implementation.
#[derive(Clone, Copy, Debug)]
pub enum Then {
    /// The check fails.
    Fails(&'static str),
    /// The check judged cases and did not fail.
    Passes(&'static str),
    /// No check fails.
    NothingFails,
    /// A finding of the check says this (in its message).
    Says(&'static str, &'static str),
    /// The check's rows, as `Debug` prints them, say this (findings with their exchanges).
    Shows(&'static str, &'static str),
}

impl Then {
    /// What went wrong, or None when the report shows it.
    fn unmet(self, r: &Report) -> Option<String> {
        let rows = |id: &'static str| r.checks.iter().filter(move |c| c.id == id);
        let failed = failed(r);
        let held = match self {
            Then::Fails(id) => failed.iter().any(|f| f == id),
            Then::Passes(id) => {
                rows(id).map(|c| c.cases).sum::<u64>() > 0 && !failed.iter().any(|f| f == id)
            }
            Then::NothingFails => failed.is_empty(),
            Then::Says(id, text) => rows(id)
                .flat_map(|c| &c.findings)
                .any(|f| f.message.contains(text)),
            Then::Shows(id, text) => format!("{:?}", rows(id).collect::<Vec<_>>()).contains(text),
        };
        (!held).then(|| format!("{self:?}"))
    }
}

/// A row of a defect table: the defect, the checks the runner runs (`--only`), what the run
/// must show, and the implementations it sits in front of.
#[derive(Clone, Copy)]
pub struct Row {
    pub defect: &'static str,
    pub make: fn() -> Defect,
    pub only: &'static [&'static str],
    pub then: &'static [Then],
    pub on: &'static [Impl],
    /// The implementations send the IETF RateLimit fields (`broken_with_fields`).
    pub fields: bool,
}

impl Row {
    /// In front of both implementations.
    pub const fn new(
        defect: &'static str,
        make: fn() -> Defect,
        only: &'static [&'static str],
        then: &'static [Then],
    ) -> Row {
        Row {
            defect,
            make,
            only,
            then,
            on: &BOTH,
            fields: false,
        }
    }

    /// The implementations behind the defect send the IETF RateLimit fields.
    pub const fn with_fields(self) -> Row {
        Row {
            fields: true,
            ..self
        }
    }

    /// In front of these implementations only (a defect in what only one of them serves).
    pub const fn on(self, on: &'static [Impl]) -> Row {
        Row { on, ..self }
    }
}

/// Runs at once: as many as the tests' threads, as when each row was a test of its own.
const AT_ONCE: usize = 2;

/// Every row of a table in front of each of its implementations, `AT_ONCE` runs at a time.
/// Fails listing every row and implementation whose run did not show what the row says.
pub async fn run_table(rows: &[Row]) {
    use futures::StreamExt;
    assert!(!rows.is_empty(), "a table with rows");
    let runs: Vec<(Row, Impl)> = rows
        .iter()
        .flat_map(|row| row.on.iter().map(move |imp| (*row, *imp)))
        .collect();
    let unmet: Vec<String> = futures::stream::iter(runs)
        // Each run on a runtime of its own, as each row had as a test of its own: a run's
        // decoding and drawing do not hold up another's answers.
        .map(|(row, imp)| async move {
            tokio::task::spawn_blocking(move || {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a runtime")
                    .block_on(run_row(row, imp))
            })
            .await
            .expect("the row's run")
        })
        .buffer_unordered(AT_ONCE)
        .filter_map(|u| async move { u })
        .collect()
        .await;
    assert!(unmet.is_empty(), "{}", unmet.join("\n\n"));
}

/// One row in front of one implementation: what it did not show, if anything.
async fn run_row(row: Row, imp: Impl) -> Option<String> {
    let started = std::time::Instant::now();
    let b = if row.fields {
        broken_with_fields(imp, 6.0, (row.make)()).await
    } else {
        broken_on(imp, 6.0, (row.make)()).await
    };
    let r = run_check(b.target(), row.only).await;
    eprintln!("{imp:?} {}: {:?}", row.defect, started.elapsed());
    let unmet: Vec<String> = row.then.iter().filter_map(|t| t.unmet(&r)).collect();
    (!unmet.is_empty()).then(|| {
        format!(
            "{} ({imp:?}, --only {:?}): expected {}\n{}",
            row.defect,
            row.only,
            unmet.join(", "),
            r.summary()
        )
    })
}
