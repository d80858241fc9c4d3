//! A hostile target: HTTPS with a self-signed certificate in front of the reference. Every
//! request is forwarded to the reference, and one behaviour of the answer is turned hostile
//! per `Mode` (a body that never ends, a gzip bomb, one byte a second, bytes that are not
//! HTTP, ...). What a mode does not change is the reference's own (status, headers, body), so
//! a run sees a real implementation but for that one behaviour, and `Mode::Faithful` (nothing
//! turned) must pass.
//!
//! The server bounds itself as well, so a broken client cannot fill the machine through it: an
//! endless body stops after `ENDLESS_CAP` (or when the client goes away), and a connection
//! lives at most `CONNECTION_LIFETIME`. Each server runs on threads of its own, so one whose
//! tasks are always ready (endless bodies at full speed) cannot starve the others' answers
//! when they run side by side: the OS shares the cores between them.
//!
//! And `run_binary`: the real `linkcert` as a child process, measured on the process itself
//! (wall time, exit code, peak RSS from the kernel's high-water mark), and killed past ceilings
//! beyond any bound the tests assert (`KILL_AFTER`, `KILL_ABOVE_MB`).

use std::convert::Infallible;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{Stream, StreamExt, stream};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use linkcert::target::Target;

use super::broken::{Impl, Upstream};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// The one behaviour a hostile server turns. Each applies to the answers named, every other
/// answer is forwarded as the reference gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing turned: the control, which must pass.
    Faithful,
    /// 2xx answers: chunked, the reference's body followed by filler at full speed, forever
    /// (until `ENDLESS_CAP`, then the connection is cut).
    EndlessBody,
    /// JSON 2xx answers: a JSON array of about 200 MB at full speed, with its Content-Length.
    HugeJsonArray,
    /// 2xx answers: `content-encoding: gzip` and a gzip stream of about 2 MB that inflates to
    /// `GZIP_INFLATED` bytes.
    GzipBomb,
    /// Every answer, head included, one byte a second.
    Trickle,
    /// Every answer with a body: a Content-Length of at least 5000, 200 bytes of the body, then
    /// silence with the connection kept open.
    ShortBody,
    /// Every answer: 1 MB of extra headers.
    HugeHeaders,
    /// Every connection: bytes that are not HTTP once the TLS handshake is done.
    NotHttp,
    /// `GET /qr` 2xx answers: a PNG whose IHDR declares 60000×60000.
    HugePng,
    /// JSON answers: `[[[[...]]]]` nested a million deep.
    DeepJson,
    /// JSON answers: invalid UTF-8 (`\xff\xfe`) at the start of every string value.
    BadUtf8,
    /// Every request: 302 to its own path and query.
    RedirectLoop,
    /// Every answer: absurd rate-limit header values (`X-RateLimit-Remaining:
    /// -99999999999999999999`, `Retry-After: 1e400`, ...).
    AbsurdHeaders,
}

impl Mode {
    /// Every hostile mode (not the control).
    pub const HOSTILE: [Mode; 12] = [
        Mode::EndlessBody,
        Mode::HugeJsonArray,
        Mode::GzipBomb,
        Mode::Trickle,
        Mode::ShortBody,
        Mode::HugeHeaders,
        Mode::NotHttp,
        Mode::HugePng,
        Mode::DeepJson,
        Mode::BadUtf8,
        Mode::RedirectLoop,
        Mode::AbsurdHeaders,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Faithful => "faithful",
            Mode::EndlessBody => "endless-body",
            Mode::HugeJsonArray => "huge-json-array",
            Mode::GzipBomb => "gzip-bomb",
            Mode::Trickle => "trickle",
            Mode::ShortBody => "short-body",
            Mode::HugeHeaders => "huge-headers",
            Mode::NotHttp => "not-http",
            Mode::HugePng => "huge-png",
            Mode::DeepJson => "deep-json",
            Mode::BadUtf8 => "bad-utf8",
            Mode::RedirectLoop => "redirect-loop",
            Mode::AbsurdHeaders => "absurd-headers",
        }
    }
}

/// One endless body stops here (the connection is cut): past anything a client should read,
/// and past the memory bound the tests assert, so a client that keeps it all is seen to.
pub const ENDLESS_CAP: u64 = 512 << 20;
/// What `Mode::GzipBomb`'s stream inflates to.
pub const GZIP_INFLATED: u64 = 2 << 30;
/// The size `Mode::HugePng` declares, each side.
pub const PNG_SIDE: u32 = 60_000;
/// How deep `Mode::DeepJson` nests.
pub const JSON_DEPTH: usize = 1_000_000;
/// `Mode::ShortBody`: what the Content-Length says at least, and what is sent of the body.
pub const SHORT_DECLARED: usize = 5000;
pub const SHORT_SENT: usize = 200;
/// Any connection, trickling or silent ones included, ends after this.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(600);

/// A running hostile server and the reference behind it.
pub struct Hostile {
    pub url: String,
    pub mode: Mode,
    /// The certificate it serves (self-signed), for clients that verify.
    pub cert: CertificateDer<'static>,
    pub upstream: Upstream,
    /// Where both run; shut down with the server, its connections with it.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Hostile {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

struct State {
    mode: Mode,
    /// Only answers to paths ending so are turned (None: every answer).
    only: Option<&'static str>,
    client: reqwest::Client,
    base: String,
}

/// Start the reference (window in seconds) and a hostile server in `mode` in front of it, on
/// threads of their own.
pub async fn start(mode: Mode, window_secs: f64) -> Hostile {
    start_in_front_of(Impl::Reference, mode, window_secs, None).await
}

/// `start`, in front of either implementation, turning only the answers to paths that end
/// with `only` when it is given (one route misbehaves, the others are the implementation's).
pub async fn start_in_front_of(
    imp: Impl,
    mode: Mode,
    window_secs: f64,
    only: Option<&'static str>,
) -> Hostile {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(format!("hostile-{}", mode.name()))
        .enable_all()
        .build()
        .unwrap();
    let mut h = runtime
        .spawn(serve(imp, mode, window_secs, only))
        .await
        .expect("the hostile server starts");
    h.runtime = Some(runtime);
    h
}

async fn serve(imp: Impl, mode: Mode, window_secs: f64, only: Option<&'static str>) -> Hostile {
    let upstream = Upstream::start(imp, window_secs).await;
    // Built before the first answer, off the runtime: the bomb takes a moment.
    tokio::task::spawn_blocking(move || match mode {
        Mode::GzipBomb => drop(gzip_bomb()),
        Mode::HugePng => drop(huge_png()),
        Mode::DeepJson => drop(deep_json()),
        _ => {}
    })
    .await
    .unwrap();
    let state = Arc::new(State {
        mode,
        only,
        client: upstream.client(),
        base: upstream.base_url().to_string(),
    });
    let (acceptor, cert) = tls();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                // Out of file descriptors: back off rather than spin.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let (state, acceptor) = (state.clone(), acceptor.clone());
            tokio::spawn(async move {
                let _ = tokio::time::timeout(CONNECTION_LIFETIME, async {
                    let Ok(Ok(tls)) =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
                    else {
                        return;
                    };
                    match state.mode {
                        Mode::NotHttp => not_http(tls).await,
                        Mode::Trickle => serve_http(state, Trickle::new(tls)).await,
                        _ => serve_http(state, tls).await,
                    }
                })
                .await;
            });
        }
    });
    Hostile {
        url,
        mode,
        cert,
        upstream,
        runtime: None,
    }
}

impl Hostile {
    /// The reference's target (its keys, window and fixtures) at this server's URL.
    pub fn target(&self) -> Target {
        let mut t = self.upstream.target();
        t.base_url = self.url.parse().expect("a base URL");
        t.trust_pem = None;
        t.insecure = true;
        t
    }

    /// `--target`, `--insecure`, `--rate-window` and every key of the reference, for `check`
    /// and `load` alike.
    pub fn target_args(&self) -> Vec<String> {
        let t = self.target();
        let mut args = vec![
            "--target".to_string(),
            self.url.clone(),
            "--insecure".into(),
            "--rate-window".into(),
            t.rate_window.secs().to_string(),
        ];
        for k in &t.keys {
            args.extend(["--key".into(), format!("{}={}", k.plan, k.key)]);
        }
        args
    }

    /// The reference's partner fixtures, bound to their plan, and `--allow-destructive`: what
    /// `check` needs to run every family.
    pub fn fixture_args(&self) -> Vec<String> {
        let t = self.target();
        let mut args = vec!["--allow-destructive".to_string()];
        let bound = |f: &linkcert::target::Fixture| match &f.plan {
            Some(p) => format!("{p}={}", f.id),
            None => f.id.clone(),
        };
        for f in &t.partner_ids {
            args.extend(["--partner".into(), bound(f)]);
        }
        for f in &t.tenant_ids {
            args.extend(["--tenant".into(), bound(f)]);
        }
        args
    }
}

/// A self-signed certificate for 127.0.0.1 and localhost, as `serve` makes its own.
fn tls() -> (TlsAcceptor, CertificateDer<'static>) {
    let ck =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    let cert = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (TlsAcceptor::from(Arc::new(config)), cert)
}

/// What `Mode::NotHttp` answers: another protocol's greeting and binary noise.
pub const NOT_HTTP: &[u8] = b"SSH-2.0-OpenSSH_9.6 hostile\r\n\x00\x00\x01\x14\x0a\x14\xff\xfe\xfd\x00 this is not HTTP\r\n\r\n";

async fn not_http<S: AsyncRead + AsyncWrite + Unpin>(mut s: S) {
    let mut buf = vec![0u8; 16 << 10];
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf)).await;
    let _ = s.write_all(NOT_HTTP).await;
    let _ = s.flush().await;
    let _ = s.shutdown().await;
}

type Body = UnsyncBoxBody<Bytes, std::io::Error>;

async fn serve_http<S>(state: Arc<State>, io: S)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(answer(&state, req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await;
}

/// The reference's answer to a request.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// Hop-by-hop headers, and the length: the hostile server frames its own answers.
const NOT_FORWARDED: [&str; 7] = [
    "host",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "content-length",
];

async fn answer(state: &State, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    // The runner's largest bodies are 16 MiB.
    let body = match Limited::new(body, 64 << 20).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return respond(
                StatusCode::BAD_REQUEST,
                HeaderMap::new(),
                full(e.to_string()),
            );
        }
    };
    match forward(state, &parts, body).await {
        Ok(reply) => turn(state, &parts, reply),
        Err(e) => respond(
            StatusCode::BAD_GATEWAY,
            HeaderMap::new(),
            full(e.to_string()),
        ),
    }
}

async fn forward(state: &State, req: &Parts, body: Bytes) -> reqwest::Result<Reply> {
    let path = req.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut rb = state
        .client
        .request(req.method.clone(), format!("{}{path}", state.base))
        .body(body);
    for (k, v) in &req.headers {
        if !NOT_FORWARDED.contains(&k.as_str()) {
            rb = rb.header(k, v);
        }
    }
    let r = rb.send().await?;
    let status = r.status();
    let mut headers = r.headers().clone();
    let body = r.bytes().await?;
    for h in NOT_FORWARDED {
        // A HEAD answer's length is the GET's: kept as the reference said it.
        if !(h == "content-length" && req.method == Method::HEAD) {
            headers.remove(h);
        }
    }
    Ok(Reply {
        status,
        headers,
        body,
    })
}

/// The reference's answer with the mode's one behaviour turned.
fn turn(state: &State, req: &Parts, r: Reply) -> Response<Body> {
    let Reply {
        status,
        mut headers,
        body,
    } = r;
    if state.only.is_some_and(|p| !req.uri.path().ends_with(p)) {
        return respond(status, headers, full(body));
    }
    let has_body = req.method != Method::HEAD && !body.is_empty();
    let ok = status.is_success() && req.method != Method::HEAD;
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    match state.mode {
        Mode::EndlessBody if ok => {
            // Spaces after JSON (still one valid document), zeros after anything else.
            let filler = Bytes::from(vec![if json { b' ' } else { 0 }; 64 << 10]);
            respond(status, headers, stream_body(endless(body, filler)))
        }
        Mode::HugeJsonArray if ok && json => {
            let (chunks, len) = huge_json_array();
            headers.insert(header::CONTENT_LENGTH, len.into());
            respond(status, headers, stream_body(chunks))
        }
        Mode::GzipBomb if ok => {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            respond(status, headers, full(gzip_bomb().clone()))
        }
        Mode::ShortBody if has_body => {
            let declared = body.len().max(SHORT_DECLARED);
            headers.insert(header::CONTENT_LENGTH, declared.into());
            let sent = body.slice(..body.len().min(SHORT_SENT));
            let silence = async {
                tokio::time::sleep(CONNECTION_LIFETIME).await;
                Err(std::io::Error::other("silence is over"))
            };
            let chunks = stream::once(async { Ok(sent) }).chain(stream::once(silence));
            respond(status, headers, stream_body(chunks))
        }
        Mode::HugeHeaders => {
            for i in 0..1024 {
                let name = HeaderName::try_from(format!("x-hostile-padding-{i:04}")).unwrap();
                headers.insert(name, HeaderValue::from_static(PADDING));
            }
            respond(status, headers, full(body))
        }
        Mode::HugePng if ok && req.method == Method::GET && req.uri.path().ends_with("/qr") => {
            respond(status, headers, full(huge_png().clone()))
        }
        Mode::DeepJson if json && has_body => respond(status, headers, full(deep_json().clone())),
        Mode::BadUtf8 if json && has_body => respond(status, headers, full(bad_utf8(&body))),
        Mode::RedirectLoop => {
            let itself = req.uri.path_and_query().map_or("/", |p| p.as_str());
            headers.remove(header::CONTENT_TYPE);
            headers.remove(header::CONTENT_LENGTH);
            headers.insert(header::LOCATION, HeaderValue::from_str(itself).unwrap());
            respond(StatusCode::FOUND, headers, full(Bytes::new()))
        }
        Mode::AbsurdHeaders => {
            for (name, value) in ABSURD {
                headers.insert(*name, HeaderValue::from_static(value));
            }
            respond(status, headers, full(body))
        }
        _ => respond(status, headers, full(body)),
    }
}

/// `Mode::AbsurdHeaders`' values: out of every integer type, negative, overflowing a double.
pub const ABSURD: &[(&str, &str)] = &[
    ("x-ratelimit-limit", "99999999999999999999999999"),
    ("x-ratelimit-remaining", "-99999999999999999999"),
    ("x-ratelimit-reset", "1e400"),
    ("retry-after", "1e400"),
];

/// One header's worth of `Mode::HugeHeaders`: 1,000 bytes, 1,024 of them.
const PADDING: &str = concat!(
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
);

fn respond(status: StatusCode, headers: HeaderMap, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    *resp.headers_mut() = headers;
    resp
}

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn stream_body(chunks: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static) -> Body {
    StreamBody::new(chunks.map(|c| c.map(Frame::data))).boxed_unsync()
}

/// `Mode::EndlessBody`'s body: the reference's, then `filler` until `ENDLESS_CAP`, then the
/// connection is cut (no last chunk: the body never ends well).
fn endless(
    body: Bytes,
    filler: Bytes,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    let fillers = (ENDLESS_CAP / filler.len() as u64) as usize;
    stream::once(async { Ok(body) })
        .chain(stream::repeat(filler).take(fillers).map(Ok))
        .chain(stream::once(async {
            Err(std::io::Error::other("the hostile server's cap"))
        }))
}

/// `Mode::HugeJsonArray`'s body in 1 MiB chunks, and its length.
fn huge_json_array() -> (
    impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
    usize,
) {
    const ELEMENT: &[u8] =
        br#"{"id":"lk_hostile","url":"https://example.com/a-huge-array","clicks":0},"#;
    const CHUNKS: usize = 200;
    let chunk = Bytes::from(ELEMENT.repeat((1 << 20) / ELEMENT.len()));
    let last = Bytes::from([&ELEMENT[..ELEMENT.len() - 1], b"]"].concat());
    let len = 1 + chunk.len() * CHUNKS + last.len();
    let chunks = stream::once(async { Bytes::from_static(b"[") })
        .chain(stream::repeat(chunk).take(CHUNKS))
        .chain(stream::once(async { last }));
    (chunks.map(Ok), len)
}

/// `Mode::GzipBomb`'s body: `GZIP_INFLATED` zeros, gzipped.
pub fn gzip_bomb() -> &'static Bytes {
    static BOMB: OnceLock<Bytes> = OnceLock::new();
    BOMB.get_or_init(|| Bytes::from(gzip_of_zeros((GZIP_INFLATED >> 24) as usize)))
}

/// A gzip stream of `segments` × 16 MiB zeros, built from two deflated segments: a sync flush
/// ends each byte-aligned, and the second, preceded by zeros like every copy of it, is repeated.
/// The trailer holds the real CRC-32 and length, so a decoder that inflates it all accepts it.
pub fn gzip_of_zeros(segments: usize) -> Vec<u8> {
    use flate2::write::DeflateEncoder;
    const SEGMENT: usize = 16 << 20;
    assert!(segments >= 2);
    let zeros = vec![0u8; SEGMENT];
    let mut enc = DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&zeros).unwrap();
    enc.flush().unwrap();
    let first = enc.get_ref().len();
    enc.write_all(&zeros).unwrap();
    enc.flush().unwrap();
    let second = enc.get_ref().len();
    let deflated = enc.finish().unwrap();
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend_from_slice(&deflated[..second]);
    for _ in 2..segments {
        out.extend_from_slice(&deflated[first..second]);
    }
    out.extend_from_slice(&deflated[second..]);
    let mut one = flate2::Crc::new();
    one.update(&zeros);
    let mut crc = flate2::Crc::new();
    for _ in 0..segments {
        crc.combine(&one);
    }
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&((SEGMENT * segments) as u32).to_le_bytes());
    out
}

/// `Mode::HugePng`'s body: a valid signature and IHDR declaring `PNG_SIDE` a side (RGB), one
/// IDAT holding a few zero rows, IEND.
pub fn huge_png() -> &'static Bytes {
    static PNG: OnceLock<Bytes> = OnceLock::new();
    PNG.get_or_init(|| {
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = [PNG_SIDE.to_be_bytes(), PNG_SIDE.to_be_bytes()].concat();
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        png_chunk(&mut png, b"IHDR", &ihdr);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&[0u8; 64 << 10]).unwrap();
        png_chunk(&mut png, b"IDAT", &z.finish().unwrap());
        png_chunk(&mut png, b"IEND", &[]);
        Bytes::from(png)
    })
}

fn png_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    png.extend_from_slice(&crc.sum().to_be_bytes());
}

/// `Mode::DeepJson`'s body.
pub fn deep_json() -> &'static Bytes {
    static DEEP: OnceLock<Bytes> = OnceLock::new();
    DEEP.get_or_init(|| Bytes::from([b"[".repeat(JSON_DEPTH), b"]".repeat(JSON_DEPTH)].concat()))
}

/// The reference's JSON with `\xff\xfe` before every string value (keys kept): the structure
/// parses, the strings are not UTF-8. A body with no string value is left as it is.
fn bad_utf8(body: &[u8]) -> Bytes {
    /// A character no answer holds (private use), replaced by the invalid bytes once written.
    const MARK: char = '\u{E000}';
    fn mark(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => s.insert(0, MARK),
            serde_json::Value::Array(a) => a.iter_mut().for_each(mark),
            serde_json::Value::Object(o) => o.values_mut().for_each(mark),
            _ => {}
        }
    }
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Bytes::copy_from_slice(body);
    };
    mark(&mut v);
    let text = serde_json::to_vec(&v).unwrap();
    let mut utf8 = [0u8; 3];
    let mark = MARK.encode_utf8(&mut utf8).as_bytes();
    let mut out = Vec::with_capacity(text.len());
    let mut rest = &text[..];
    while let Some(i) = rest.windows(mark.len()).position(|w| w == mark) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(b"\xff\xfe");
        rest = &rest[i + mark.len()..];
    }
    out.extend_from_slice(rest);
    Bytes::from(out)
}

/// `Mode::Trickle`'s connection: what it writes leaves one byte a second, each byte flushed
/// on its own (a TLS record each); reads pass as they are.
struct Trickle<S> {
    inner: S,
    next: Pin<Box<tokio::time::Sleep>>,
}

impl<S> Trickle<S> {
    fn new(inner: S) -> Trickle<S> {
        Trickle {
            inner,
            next: Box::pin(tokio::time::sleep(Duration::ZERO)),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Trickle<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Trickle<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        ready!(this.next.as_mut().poll(cx));
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, &buf[..1]))?;
        // Out now, not when the whole answer is flushed; a flush still pending finishes with
        // the next byte's.
        if let Poll::Ready(Err(e)) = Pin::new(&mut this.inner).poll_flush(cx) {
            return Poll::Ready(Err(e));
        }
        let due = tokio::time::Instant::now() + Duration::from_secs(1);
        this.next.as_mut().reset(due);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Past this a child is killed: beyond the time bound the tests assert (120 s), so what it
/// cuts short has failed already, and the module waits no longer for a run that hangs.
pub const KILL_AFTER: Duration = Duration::from_secs(150);
/// Past this resident size a child is killed: over three times the memory bound the tests
/// assert (300 MB), and a broken build reading endless bodies cannot fill the machine.
pub const KILL_ABOVE_MB: f64 = 1024.0;
/// What every run in front of a hostile server must stay under.
pub const MAX_SECS: f64 = 120.0;
pub const MAX_MB: f64 = 300.0;

/// A run of the binary, measured on the process.
#[derive(Clone, Debug)]
pub struct Measured {
    /// None: ended by a signal.
    pub exit: Option<i32>,
    pub secs: f64,
    /// Peak resident set size (VmHWM, read every 20 ms while it runs), MB.
    pub peak_mb: f64,
    /// Why the runner killed it, if it did.
    pub killed: Option<String>,
    pub dir: PathBuf,
}

impl Measured {
    pub fn exit_text(&self) -> String {
        match (&self.killed, self.exit) {
            (Some(_), _) => "killed".into(),
            (None, Some(c)) => c.to_string(),
            (None, None) => "signal".into(),
        }
    }

    /// The time and memory bounds this run broke, in words.
    pub fn over_bounds(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(why) = &self.killed {
            v.push(format!("killed: {why}"));
        }
        if self.secs >= MAX_SECS {
            v.push(format!("took {:.0} s (bound {MAX_SECS:.0} s)", self.secs));
        }
        if self.peak_mb >= MAX_MB {
            v.push(format!(
                "peak {:.0} MB (bound {MAX_MB:.0} MB)",
                self.peak_mb
            ));
        }
        v
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }
}

/// A fresh directory for one run's reports and output.
pub fn run_dir(group: &str, name: &str) -> PathBuf {
    let name: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let d = std::env::temp_dir()
        .join(format!("linkcert-hostile-{}", std::process::id()))
        .join(format!("{group}-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `linkcert ARGS` with stdout and stderr in `dir`, on a blocking thread (the servers it
/// talks to run on the caller's runtime).
pub async fn run_binary(args: Vec<String>, dir: PathBuf, words: super::Words) -> Measured {
    tokio::task::spawn_blocking(move || run_blocking(&args, &dir, words))
        .await
        .unwrap()
}

fn run_blocking(args: &[String], dir: &Path, words: super::Words) -> Measured {
    let file = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    let start = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_linkcert"));
    words.apply(&mut cmd);
    let mut child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(file("stdout.txt"))
        .stderr(file("stderr.txt"))
        .spawn()
        .unwrap();
    let mut peak_mb: f64 = 0.0;
    let mut killed = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let (rss, hwm) = memory_mb(child.id());
        peak_mb = peak_mb.max(hwm);
        if killed.is_none() {
            killed = if start.elapsed() > KILL_AFTER {
                Some(format!("still running after {} s", KILL_AFTER.as_secs()))
            } else if rss > KILL_ABOVE_MB {
                Some(format!("resident memory past {KILL_ABOVE_MB:.0} MB"))
            } else {
                None
            };
            if killed.is_some() {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Measured {
        exit: status.code(),
        secs: start.elapsed().as_secs_f64(),
        peak_mb,
        killed,
        dir: dir.to_path_buf(),
    }
}

/// A process's resident size now and its high-water mark (VmRSS, VmHWM), MB; 0 once it is
/// gone. Not `wait4`'s `ru_maxrss`: Linux carries the spawning process's high-water mark over
/// `exec` into it, so every child of this test process would report at least its size.
fn memory_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// One run's line in a failure table.
pub struct Row {
    pub name: String,
    pub measured: Measured,
    /// The report's verdict or outcome.
    pub verdict: String,
    /// The text the phrase is looked for in (the first finding's).
    pub finding: String,
    /// What the run broke; empty when it held.
    pub problems: Vec<String>,
}

/// Every run's exit, time, peak memory, verdict and first finding, and what each broke: what
/// an implementer needs at a glance. The reports and output are under `run_dir`'s root.
pub fn table(title: &str, rows: &[Row]) -> String {
    let root = rows
        .first()
        .and_then(|r| r.measured.dir.parent())
        .map_or(String::new(), |d| {
            format!(" (reports and output in {})", d.display())
        });
    let mut t = format!(
        "{title}{root}\n{:<34} {:>6} {:>7} {:>8}  {:<11} first finding / problems\n",
        "mode", "exit", "secs", "peak MB", "verdict"
    );
    for r in rows {
        let finding: String = r.finding.chars().take(220).collect();
        t.push_str(&format!(
            "{:<34} {:>6} {:>7.1} {:>8.0}  {:<11} {}\n",
            r.name,
            r.measured.exit_text(),
            r.measured.secs,
            r.measured.peak_mb,
            r.verdict,
            finding.replace('\n', " ")
        ));
        let verdict = if r.problems.is_empty() {
            "ok".to_string()
        } else {
            format!("FAILS: {}", r.problems.join("; "))
        };
        t.push_str(&format!("{:<34} {verdict}\n", ""));
    }
    t
}
