//! The generator's client: hyper's pooled HTTP/1.1 client, configured as every client of ours
//! (`ClientConfig::build_bare`), without reqwest's layers. `load` uses none of them (redirects
//! are off, answers are not compressed, nothing is retried), yet they parse each request's URL
//! twice and wrap it four times: at the generator's cap, going around them took a quarter of
//! its CPU per request (docs/src/figures.md, "At its cap").

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, USER_AGENT};
use http::{HeaderValue, Uri};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use tokio::time::{Instant, timeout_at};

use super::failure::{Failure, FailureKind, classified};
use super::{BodyError, Capped, Intake, OverCap};

/// Made by `ClientConfig::build_bare`; cheap to share (one connection pool).
#[derive(Clone)]
pub struct BareClient {
    pub(super) client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
    /// Per request, answer included (as reqwest's timeout).
    pub(super) timeout: Duration,
    pub(super) user_agent: Option<HeaderValue>,
}

/// An answer's status and headers; its body is read before the request's deadline.
pub struct BareAnswer {
    pub head: http::response::Parts,
    body: Incoming,
    deadline: Instant,
}

/// What a request without an answer ran into.
#[derive(Debug, thiserror::Error)]
pub enum BareError {
    #[error("timed out")]
    Timeout,
    #[error("request failed")]
    Request(#[source] hyper_util::client::legacy::Error),
    #[error("request failed while reading the body")]
    Body(#[source] hyper::Error),
}

impl BareError {
    /// Classified and worded as `describe` does reqwest's failures.
    pub fn failure(&self) -> Failure {
        match self {
            BareError::Timeout => Failure::new(FailureKind::Timeout, "timed out"),
            BareError::Request(e) if e.is_connect() => {
                classified("could not connect", false, Some(e))
            }
            BareError::Request(e) => classified("request failed", false, Some(e)),
            BareError::Body(e) => classified("request failed", false, Some(e)),
        }
    }
}

impl BareClient {
    /// `GET uri` with `auth` as its Authorization, and the headers reqwest sends (Accept,
    /// User-Agent; hyper adds Host), but no Accept-Encoding: the body is read as it comes. The
    /// timeout runs until the body is read.
    pub async fn get(&self, uri: Uri, auth: &HeaderValue) -> Result<BareAnswer, BareError> {
        let deadline = Instant::now() + self.timeout;
        let mut req = http::Request::new(Empty::new());
        *req.uri_mut() = uri;
        let headers = req.headers_mut();
        headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
        if let Some(ua) = &self.user_agent {
            headers.insert(USER_AGENT, ua.clone());
        }
        headers.insert(AUTHORIZATION, auth.clone());
        let answer = timeout_at(deadline, self.client.request(req))
            .await
            .map_err(|_| BareError::Timeout)?
            .map_err(BareError::Request)?;
        let (head, body) = answer.into_parts();
        Ok(BareAnswer {
            head,
            body,
            deadline,
        })
    }
}

impl BareAnswer {
    pub fn status(&self) -> u16 {
        self.head.status.as_u16()
    }

    /// Reads the body up to `cap` bytes (the rest is not read, and the connection is not
    /// reused), within the request's timeout.
    pub async fn read_capped(self, cap: usize) -> Result<Capped, BodyError> {
        let intake = Intake::with_cap(cap, OverCap::Cut, None, None, self.budget(), true);
        self.read_into(intake).await
    }

    /// The answer's Content-Type, Content-Encoding and Content-Length, as `Intake::new` takes
    /// them.
    pub fn intake(&self, keep: bool) -> Intake {
        let h = |n: http::HeaderName| self.head.headers.get(n).and_then(|v| v.to_str().ok());
        Intake::new(
            h(http::header::CONTENT_TYPE),
            h(http::header::CONTENT_ENCODING),
            h(http::header::CONTENT_LENGTH).and_then(|v| v.trim().parse().ok()),
            self.budget(),
            keep,
        )
    }

    fn budget(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Reads the body into `intake` (its cap, decoding and words), within the request's
    /// timeout and the idle timeout.
    pub async fn read_into(mut self, mut intake: Intake) -> Result<Capped, BodyError> {
        loop {
            let frame = timeout_at(intake.next_deadline(self.deadline), self.body.frame()).await;
            let Ok(frame) = frame else {
                return Err(intake.stalled());
            };
            let Some(frame) = frame else {
                return intake.finish();
            };
            let frame = frame.map_err(|e| BodyError::Transport(BareError::Body(e).failure()))?;
            if let Ok(data) = frame.into_data()
                && !intake.push(&data)?
            {
                return intake.finish();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::{ClientConfig, HttpError, describe};

    const ANSWER: &[u8] =
        b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\ncontent-length: 10\r\n\r\n0123456789";

    /// Answers one request on each connection with `ANSWER` (or never, when `silent`), and
    /// hands back each request's head as it came.
    async fn server(
        tls: Option<tokio_rustls::TlsAcceptor>,
        silent: bool,
    ) -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let scheme = if tls.is_some() { "https" } else { "http" };
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (tx, tls) = (tx.clone(), tls.clone());
                tokio::spawn(async move {
                    match tls {
                        Some(acceptor) => {
                            if let Ok(s) = acceptor.accept(tcp).await {
                                answer(s, tx, silent).await;
                            }
                        }
                        None => answer(tcp, tx, silent).await,
                    }
                });
            }
        });
        (format!("{scheme}://127.0.0.1:{}", addr.port()), rx)
    }

    async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
        mut s: S,
        tx: tokio::sync::mpsc::UnboundedSender<String>,
        silent: bool,
    ) {
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.ends_with(b"\r\n\r\n") {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
        if silent {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        let _ = s.write_all(ANSWER).await;
        let _ = s.flush().await;
    }

    fn config() -> ClientConfig {
        ClientConfig {
            user_agent: Some("linkcert-test/1"),
            ..ClientConfig::new(Duration::from_secs(5), 8)
        }
    }

    fn auth() -> HeaderValue {
        HeaderValue::from_static("Bearer lk_test_1")
    }

    /// A head's request line and its headers, names lower-cased, sorted.
    fn parsed(head: &str) -> (String, Vec<String>) {
        let mut lines = head.lines().filter(|l| !l.is_empty());
        let first = lines.next().unwrap_or_default().to_string();
        let mut headers: Vec<String> = lines
            .map(|l| {
                let (k, v) = l.split_once(':').unwrap_or((l, ""));
                format!("{}: {}", k.to_ascii_lowercase(), v.trim())
            })
            .collect();
        headers.sort();
        (first, headers)
    }

    #[tokio::test]
    async fn sends_what_reqwest_sends_and_reads_the_answer_up_to_the_cap() {
        let (base, mut heads) = server(None, false).await;
        let url = format!("{base}/tags?pageSize=1");
        let cfg = config();
        let answer = cfg
            .build_bare()
            .unwrap()
            .get(url.parse().unwrap(), &auth())
            .await
            .unwrap();
        assert_eq!(answer.status(), 429);
        assert_eq!(answer.head.headers["retry-after"], "7");
        let body = answer.read_capped(4).await.unwrap();
        assert_eq!(
            (body.bytes.as_slice(), body.truncated),
            (&b"0123"[..], true)
        );
        let bare = parsed(&heads.recv().await.unwrap());

        let mut r = cfg
            .build()
            .unwrap()
            .get(&url)
            .header(AUTHORIZATION, auth())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 429);
        let body = crate::read_capped(&mut r, 100).await.unwrap();
        assert_eq!(
            (body.bytes.as_slice(), body.truncated),
            (&b"0123456789"[..], false)
        );
        let mut reqwest = parsed(&heads.recv().await.unwrap());
        // The one difference: reqwest decompresses (goose turns gzip on), the bare client
        // does not, so it asks for the body as it is.
        reqwest.1.retain(|h| h != "accept-encoding: gzip");

        assert_eq!(bare, reqwest, "the generator's request is check's");
        assert_eq!(bare.0, "GET /tags?pageSize=1 HTTP/1.1");
        for h in [
            "accept: */*",
            "authorization: Bearer lk_test_1",
            "user-agent: linkcert-test/1",
        ] {
            assert!(bare.1.iter().any(|x| x == h), "{h} in {:?}", bare.1);
        }
    }

    #[tokio::test]
    async fn failures_are_worded_as_reqwest_words_them() {
        // Nothing listens: refused, in both clients' words.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url = format!("http://127.0.0.1:{port}/tags");
        let bare = config()
            .build_bare()
            .unwrap()
            .get(url.parse().unwrap(), &auth())
            .await
            .err()
            .unwrap()
            .failure();
        let reqwest = describe(
            &config()
                .build()
                .unwrap()
                .get(&url)
                .send()
                .await
                .unwrap_err(),
        );
        assert_eq!(bare.kind, FailureKind::Refused, "{bare}");
        assert!(bare.detail.starts_with("could not connect"), "{bare}");
        assert!(bare.detail.contains("Connection refused"), "{bare}");
        assert_eq!(bare, reqwest);

        // A target that never answers: the request timeout, head and body alike.
        let (base, _heads) = server(None, true).await;
        let cfg = ClientConfig {
            timeout: Duration::from_millis(300),
            ..config()
        };
        let e = cfg
            .build_bare()
            .unwrap()
            .get(format!("{base}/tags").parse().unwrap(), &auth())
            .await
            .err()
            .unwrap();
        assert!(matches!(e, BareError::Timeout));
        assert_eq!(e.failure().kind, FailureKind::Timeout);
    }

    /// The same trust as reqwest: the target's certificate when given, any with `insecure`,
    /// and nothing the system does not trust otherwise.
    #[tokio::test]
    async fn trusts_what_reqwest_trusts() {
        let (acceptor, pem) = crate::tls::tests::self_signed("127.0.0.1");
        let (base, _heads) = server(Some(acceptor), false).await;
        let url = format!("{base}/tags");
        for (trust_pem, insecure, trusted) in [
            (Some(pem), false, true),
            (None, true, true),
            (None, false, false),
        ] {
            let cfg = ClientConfig {
                trust_pem,
                insecure,
                ..config()
            };
            let bare = cfg
                .build_bare()
                .unwrap()
                .get(url.parse().unwrap(), &auth())
                .await;
            let reqwest = cfg.build().unwrap().get(&url).send().await;
            assert_eq!(
                bare.is_ok(),
                trusted,
                "{:?}",
                bare.err().map(|e| e.failure())
            );
            assert_eq!(reqwest.is_ok(), trusted, "{reqwest:?}");
            if let Err(e) = bare {
                let words = e.failure().detail;
                assert!(words.starts_with("could not connect"), "{words}");
                assert!(words.contains("certificate"), "{words}");
            }
        }
        assert!(matches!(
            ClientConfig {
                trust_pem: Some("no certificate here".into()),
                ..config()
            }
            .build_bare(),
            Err(HttpError::NoCertificate)
        ));
    }
}
