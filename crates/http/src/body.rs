//! Reading an answer's body whatever the target sends: under a cap that fits what the spec
//! allows for that answer (counted after decompression), within the answer's time budget and
//! an idle timeout, and with what went wrong in words that name what the target did ("the
//! body was still arriving after 4 MB", "the body trickled: 40 bytes in 30 s", "a
//! Content-Length of 5000 with 200 bytes sent, then silence"). One reader for every client of
//! ours: `check`'s (reqwest) and the generator's (`BareClient`) feed it chunks.

use std::time::Duration;

use tokio::time::Instant;

use crate::decode::Decoder;
use crate::failure::{Failure, FailureKind, describe};

/// The most any JSON answer of the spec can need: a page of at most 100 tags, an error
/// envelope, a partner. Generous (about 40 KB per tag), so no legal answer comes near it.
pub const MAX_JSON_BODY: usize = 4 * 1024 * 1024;
/// GET /qr's image: the spec bounds neither `size` nor the PNG, so this is linkcert's own
/// cap, stated in the docs; an image past it is reported as cut there, not judged whole.
pub const MAX_IMAGE_BODY: usize = 8 * 1024 * 1024;
/// Longest silence between two pieces of a body once its head has come: at least this, or
/// half the answer's budget when that is longer (`Intake::idle`).
pub const BODY_IDLE: Duration = Duration::from_secs(10);

/// The cap for an answer with this Content-Type: images get the image cap (and are cut, not
/// refused, past it), everything else the JSON cap.
pub fn cap_for(content_type: Option<&str>) -> (usize, OverCap) {
    let image = content_type.is_some_and(|c| c.trim().to_ascii_lowercase().starts_with("image/"));
    if image {
        (MAX_IMAGE_BODY, OverCap::Cut)
    } else {
        (MAX_JSON_BODY, OverCap::Refuse)
    }
}

/// What happens to a body past its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverCap {
    /// Keep what fits and mark the answer truncated (an image the spec does not bound).
    Cut,
    /// No answer the spec allows is this large: the answer is a failure, named.
    Refuse,
}

/// A body read up to a cap.
#[derive(Clone, Debug, Default)]
pub struct Capped {
    pub bytes: Vec<u8>,
    /// There was more than the cap; the rest was not read.
    pub truncated: bool,
}

/// Why a body could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the {}body was still arriving after {}, more than any answer the spec allows", compressed_words(.encoding), size(*.cap))]
    TooLarge {
        cap: usize,
        encoding: Option<&'static str>,
    },
    #[error(
        "the body trickled: {bytes} bytes in {secs:.0} s, past the {budget:.0} s budget for one answer"
    )]
    Trickled { bytes: u64, secs: f64, budget: f64 },
    #[error("a Content-Length of {declared} with {got} bytes sent, then silence for {silent:.0} s")]
    ShortThenSilent {
        declared: u64,
        got: u64,
        silent: f64,
    },
    #[error("the body stopped arriving: {got} bytes, then silence for {silent:.0} s")]
    Silent { got: u64, silent: f64 },
    #[error("the {} body does not inflate: {reason}", .encoding)]
    BadCompression {
        encoding: &'static str,
        reason: String,
    },
    #[error("{0}")]
    Transport(Failure),
}

impl BodyError {
    /// The failure of an answer with `status` whose body broke off this way, as data.
    pub fn failure(self, status: u16) -> Failure {
        let kind = match &self {
            BodyError::Trickled { .. }
            | BodyError::ShortThenSilent { .. }
            | BodyError::Silent { .. } => FailureKind::Stalled,
            BodyError::TooLarge { .. } | BodyError::BadCompression { .. } => FailureKind::BadBody,
            BodyError::Transport(f) => f.kind,
        };
        match self {
            BodyError::Transport(f) => f.after_status(status),
            other => Failure::new(kind, other.to_string()).after_status(status),
        }
    }
}

fn compressed_words(e: &Option<&'static str>) -> String {
    e.map_or(String::new(), |e| format!("{e}-compressed "))
}

/// `4 MB`, `64 KB`, `12 bytes`.
pub fn size(n: usize) -> String {
    if n >= 1024 * 1024 {
        format!("{} MB", n / (1024 * 1024))
    } else if n >= 1024 {
        format!("{} KB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

/// A body as it comes in: decoded, counted and capped. Feed it chunks (`push`), then `finish`;
/// on a timeout, `stalled` says what the target did.
pub struct Intake {
    decoder: Decoder,
    encoding: Option<&'static str>,
    over_cap: OverCap,
    cap: usize,
    /// Bytes as they came over the wire (before decompression).
    wire: u64,
    declared: Option<u64>,
    started: Instant,
    last: Instant,
    budget: Duration,
}

impl Intake {
    /// `content_encoding` and `content_length`: the answer's headers; `keep`: whether the
    /// bytes are kept (false: counted and dropped, as the generator drains 2xx bodies).
    pub fn new(
        content_type: Option<&str>,
        content_encoding: Option<&str>,
        content_length: Option<u64>,
        budget: Duration,
        keep: bool,
    ) -> Intake {
        let (cap, over_cap) = cap_for(content_type);
        Intake::with_cap(
            cap,
            over_cap,
            content_encoding,
            content_length,
            budget,
            keep,
        )
    }

    pub fn with_cap(
        cap: usize,
        over_cap: OverCap,
        content_encoding: Option<&str>,
        content_length: Option<u64>,
        budget: Duration,
        keep: bool,
    ) -> Intake {
        let (decoder, encoding) = Decoder::for_encoding(content_encoding, cap, keep);
        let now = Instant::now();
        Intake {
            decoder,
            encoding,
            over_cap,
            cap,
            wire: 0,
            declared: content_length,
            started: now,
            last: now,
            budget,
        }
    }

    /// Takes the next chunk. `Ok(false)`: the cap is reached and the answer is cut there (the
    /// rest is left unread); `Err`: the body is refused or broken.
    pub fn push(&mut self, chunk: &[u8]) -> Result<bool, BodyError> {
        self.wire += chunk.len() as u64;
        self.last = Instant::now();
        let written = self.decoder.write_all(chunk);
        if self.decoder.sink().over {
            return match self.over_cap {
                OverCap::Cut => Ok(false),
                OverCap::Refuse => Err(self.too_large()),
            };
        }
        written.map(|()| true).map_err(|e| self.bad(e))
    }

    fn too_large(&self) -> BodyError {
        BodyError::TooLarge {
            cap: self.cap,
            encoding: self.encoding,
        }
    }

    fn bad(&self, e: std::io::Error) -> BodyError {
        BodyError::BadCompression {
            encoding: self.encoding.unwrap_or("compressed"),
            reason: e.to_string(),
        }
    }

    /// The body is all in.
    pub fn finish(self) -> Result<Capped, BodyError> {
        // No body at all (HEAD, 204, 304) is no compressed stream to finish.
        if self.wire == 0 {
            return Ok(Capped::default());
        }
        let over_cap = self.over_cap;
        let (cap, encoding) = (self.cap, self.encoding);
        let sink = self
            .decoder
            .finish()
            .map_err(|e| BodyError::BadCompression {
                encoding: encoding.unwrap_or("compressed"),
                reason: e.to_string(),
            })?;
        if sink.over && over_cap == OverCap::Refuse {
            return Err(BodyError::TooLarge { cap, encoding });
        }
        Ok(Capped {
            bytes: sink.out,
            truncated: sink.over,
        })
    }

    /// What the target did when the body's time ran out: trickled, or went silent (after a
    /// Content-Length it did not honour).
    pub fn stalled(&self) -> BodyError {
        let now = Instant::now();
        let silent = now.saturating_duration_since(self.last).as_secs_f64();
        let secs = now.saturating_duration_since(self.started).as_secs_f64();
        if silent + 0.5 >= self.idle().as_secs_f64() {
            return match self.declared {
                Some(declared) if declared > self.wire => BodyError::ShortThenSilent {
                    declared,
                    got: self.wire,
                    silent,
                },
                _ => BodyError::Silent {
                    got: self.wire,
                    silent,
                },
            };
        }
        BodyError::Trickled {
            bytes: self.wire,
            secs,
            budget: self.budget.as_secs_f64(),
        }
    }

    /// Longest silence between two pieces of this body: `BODY_IDLE`, or half the answer's
    /// budget when that is longer (a target given 60 s may think for 12 s mid-body).
    pub fn idle(&self) -> Duration {
        BODY_IDLE.max(self.budget / 2).min(self.budget)
    }

    /// How long to wait for the next chunk: the idle timeout, within the answer's deadline.
    pub fn next_deadline(&self, deadline: Instant) -> Instant {
        Instant::now()
            .checked_add(self.idle())
            .map_or(deadline, |t| deadline.min(t))
    }
}

/// Reads `r`'s body under `intake`'s cap, before `deadline` and the idle timeout.
pub async fn read_reqwest(
    r: &mut reqwest::Response,
    mut intake: Intake,
    deadline: Instant,
) -> Result<Capped, BodyError> {
    loop {
        let next = tokio::time::timeout_at(intake.next_deadline(deadline), r.chunk()).await;
        match next {
            Err(_) => return Err(intake.stalled()),
            Ok(Err(e)) if e.is_timeout() => return Err(intake.stalled()),
            Ok(Err(e)) => {
                return Err(BodyError::Transport(describe(&e)));
            }
            Ok(Ok(None)) => return intake.finish(),
            Ok(Ok(Some(chunk))) => {
                if !intake.push(&chunk)? {
                    return intake.finish();
                }
            }
        }
    }
}

/// An answer's body read as `check` keeps it: the cap of its Content-Type, decoded.
pub async fn read_answer(
    r: &mut reqwest::Response,
    budget: Duration,
    deadline: Instant,
) -> Result<Capped, BodyError> {
    let h = |name: http::HeaderName| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let intake = Intake::new(
        h(http::header::CONTENT_TYPE).as_deref(),
        h(http::header::CONTENT_ENCODING).as_deref(),
        r.content_length(),
        budget,
        true,
    );
    read_reqwest(r, intake, deadline).await
}

/// Reads `r`'s body up to `cap` bytes and leaves the rest unread (a plain cap: no decoding).
pub async fn read_capped(r: &mut reqwest::Response, cap: usize) -> Result<Capped, BodyError> {
    let hour = Duration::from_secs(3600);
    let intake = Intake::with_cap(cap, OverCap::Cut, None, None, hour, true);
    read_reqwest(r, intake, Instant::now() + hour).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_json_body_past_its_cap_is_refused_and_an_image_cut() {
        let mut json = Intake::with_cap(8, OverCap::Refuse, None, None, Duration::MAX, true);
        assert!(json.push(b"[1,2,").unwrap());
        let e = json.push(b"3,4,5]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the body was still arriving after 8 bytes, more than any answer the spec allows"
        );
        let mut png = Intake::with_cap(8, OverCap::Cut, None, None, Duration::MAX, true);
        assert!(!png.push(b"0123456789").unwrap());
        let c = png.finish().unwrap();
        assert_eq!((c.bytes.as_slice(), c.truncated), (&b"01234567"[..], true));
    }

    fn br(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        e.write_all(data).unwrap();
        drop(e);
        out
    }

    fn zstd(data: &[u8]) -> Vec<u8> {
        zstd::encode_all(data, 3).unwrap()
    }

    /// Reads `body` sent with `encoding` under a 1 MiB cap, in 1 KiB chunks.
    fn read(encoding: &str, body: &[u8]) -> Result<Vec<u8>, BodyError> {
        let mut i = Intake::with_cap(
            1024 * 1024,
            OverCap::Refuse,
            Some(encoding),
            None,
            Duration::MAX,
            true,
        );
        for c in body.chunks(1024) {
            i.push(c)?;
        }
        i.finish().map(|c| c.bytes)
    }

    #[test]
    fn br_and_zstd_are_decoded_under_the_same_cap_and_named() {
        let tags = br#"[{"id":"t","name":"a"}]"#;
        for (name, encode) in [("br", br as fn(&[u8]) -> Vec<u8>), ("zstd", zstd)] {
            assert_eq!(read(name, &encode(tags)).unwrap(), tags, "{name}");
            let bomb = encode(&vec![0u8; 8 * 1024 * 1024]);
            assert!(bomb.len() < 64 * 1024, "{name}: a bomb of {}", bomb.len());
            let e = read(name, &bomb).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "the {name}-compressed body was still arriving after 1 MB, more than any \
                     answer the spec allows"
                )
            );
            let e = read(name, b"this is not compressed at all").unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("the {name} body does not inflate")),
                "{name}: {e}"
            );
        }
        // A br stream cut short is broken, not a shorter body.
        let whole = br(&vec![7u8; 100_000]);
        let e = read("br", &whole[..whole.len() / 2]).unwrap_err();
        assert!(
            e.to_string().starts_with("the br body does not inflate"),
            "{e}"
        );
    }

    #[test]
    fn a_zstd_frame_asking_for_a_window_past_the_image_cap_is_refused_not_allocated() {
        let mut big = Vec::new();
        let mut e = zstd::stream::write::Encoder::new(&mut big, 3).unwrap();
        e.set_parameter(zstd::zstd_safe::CParameter::WindowLog(27))
            .unwrap();
        e.include_contentsize(false).unwrap();
        e.write_all(&vec![1u8; 64 * 1024 * 1024]).unwrap();
        e.finish().unwrap();
        let err = read("zstd", &big).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the zstd body does not inflate"),
            "{err}"
        );
    }

    #[test]
    fn gzip_is_inflated_under_the_same_cap_and_named() {
        let bomb = gzip(&vec![0u8; 4 * 1024 * 1024]);
        assert!(bomb.len() < 64 * 1024, "a bomb: {} bytes", bomb.len());
        let mut i = Intake::with_cap(
            1024 * 1024,
            OverCap::Refuse,
            Some("gzip"),
            None,
            Duration::MAX,
            true,
        );
        let e = bomb
            .chunks(1024)
            .map(|c| i.push(c))
            .find_map(Result::err)
            .expect("refused");
        assert_eq!(
            e.to_string(),
            "the gzip-compressed body was still arriving after 1 MB, more than any answer the spec allows"
        );
        let mut ok = Intake::new(
            Some("application/json"),
            Some("gzip"),
            None,
            Duration::MAX,
            true,
        );
        ok.push(&gzip(br#"[{"id":"t"}]"#)).unwrap();
        assert_eq!(ok.finish().unwrap().bytes, br#"[{"id":"t"}]"#);
        let mut broken = Intake::new(None, Some("gzip"), None, Duration::MAX, true);
        let e = broken
            .push(b"not gzip at all")
            .err()
            .or_else(|| broken.finish().err());
        assert!(e.is_some_and(|e| e.to_string().starts_with("the gzip body does not inflate")),);
    }

    #[test]
    fn caps_follow_the_content_type() {
        assert_eq!(cap_for(Some("image/png")), (MAX_IMAGE_BODY, OverCap::Cut));
        assert_eq!(
            cap_for(Some("application/json; charset=utf-8")),
            (MAX_JSON_BODY, OverCap::Refuse)
        );
        assert_eq!(cap_for(None), (MAX_JSON_BODY, OverCap::Refuse));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stall_says_whether_the_target_trickled_or_fell_silent() {
        let mut i = Intake::new(None, None, Some(5000), Duration::from_secs(30), true);
        assert_eq!(i.idle(), Duration::from_secs(15), "half the budget");
        i.push(&[b'x'; 200]).unwrap();
        tokio::time::advance(i.idle()).await;
        assert_eq!(
            i.stalled().to_string(),
            "a Content-Length of 5000 with 200 bytes sent, then silence for 15 s"
        );
        let empty = Intake::new(None, Some("gzip"), Some(0), Duration::MAX, true);
        assert!(
            empty.finish().unwrap().bytes.is_empty(),
            "no body to inflate"
        );
        let mut t = Intake::new(None, None, None, Duration::from_secs(30), true);
        for _ in 0..30 {
            tokio::time::advance(Duration::from_secs(1)).await;
            t.push(b"x").unwrap();
        }
        assert_eq!(
            t.stalled().to_string(),
            "the body trickled: 30 bytes in 30 s, past the 30 s budget for one answer"
        );
    }
}
