//! The content codings an answer's body may come in (gzip, deflate, br, zstd), decoded as it
//! arrives into a sink that stops at the body's cap: a bomb inflates no further than the cap,
//! and a coding's own memory is bounded (zstd's window). `body::Intake` feeds it.

use std::io::Write;

/// Stops a decoder writing past the cap.
pub(crate) struct Sink {
    pub(crate) out: Vec<u8>,
    cap: usize,
    keep: bool,
    written: usize,
    pub(crate) over: bool,
}

impl Sink {
    pub(crate) fn new(cap: usize, keep: bool) -> Sink {
        Sink {
            out: Vec::new(),
            cap,
            keep,
            written: 0,
            over: false,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_sub(self.written);
        if buf.len() > room {
            if self.keep {
                self.out.extend_from_slice(&buf[..room]);
            }
            self.written = self.cap;
            self.over = true;
            // Refuse the rest: the decoder stops here, having inflated no more than the cap.
            return Err(std::io::Error::other("past the cap"));
        }
        if self.keep {
            self.out.extend_from_slice(buf);
        }
        self.written += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The content coding a Content-Encoding names, as this reader decodes it; `None` for one it
/// does not (the body is kept as it came).
fn coding(content_encoding: &str) -> Option<&'static str> {
    match content_encoding.trim().to_ascii_lowercase().as_str() {
        "gzip" | "x-gzip" => Some("gzip"),
        "deflate" => Some("deflate"),
        "br" => Some("br"),
        "zstd" => Some("zstd"),
        _ => None,
    }
}

/// Whether a body with this Content-Encoding is read as the target meant it: none, identity,
/// or a coding this reader decodes.
pub fn decodes(content_encoding: Option<&str>) -> bool {
    content_encoding.is_none_or(|e| {
        let e = e.trim();
        e.is_empty() || e.eq_ignore_ascii_case("identity") || coding(e).is_some()
    })
}

/// The largest zstd window a body may ask for: the image cap. RFC 8878 advises decoders to
/// allow at least 8 MiB; a frame asking more would make the reader allocate what it says.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;
/// The brotli decoder's input buffer (its window is at most 16 MiB by the format).
const BROTLI_BUFFER: usize = 4096;

pub(crate) enum Decoder {
    Identity(Sink),
    Gzip(flate2::write::GzDecoder<Sink>),
    Deflate(flate2::write::ZlibDecoder<Sink>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Sink>>),
    Zstd(zstd::stream::write::Decoder<'static, Sink>),
}

impl Decoder {
    /// The decoder for a Content-Encoding, and its name; `None` for one we do not decode
    /// (the body is kept as it came).
    pub(crate) fn for_encoding(
        enc: Option<&str>,
        cap: usize,
        keep: bool,
    ) -> (Decoder, Option<&'static str>) {
        let sink = Sink::new(cap, keep);
        let name = enc.and_then(coding);
        let decoder = match name {
            Some("gzip") => Decoder::Gzip(flate2::write::GzDecoder::new(sink)),
            Some("deflate") => Decoder::Deflate(flate2::write::ZlibDecoder::new(sink)),
            Some("br") => Decoder::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(
                sink,
                BROTLI_BUFFER,
            ))),
            Some("zstd") => match zstd::stream::write::Decoder::new(sink) {
                Ok(mut d) => match d.window_log_max(ZSTD_WINDOW_LOG_MAX) {
                    Ok(()) => Decoder::Zstd(d),
                    Err(_) => return (Decoder::Identity(d.into_inner()), None),
                },
                // The library could not allocate its context: keep the bytes as they came.
                Err(_) => return (Decoder::Identity(Sink::new(cap, keep)), None),
            },
            _ => Decoder::Identity(sink),
        };
        (decoder, name)
    }

    pub(crate) fn sink(&self) -> &Sink {
        match self {
            Decoder::Identity(s) => s,
            Decoder::Gzip(d) => d.get_ref(),
            Decoder::Deflate(d) => d.get_ref(),
            Decoder::Brotli(d) => d.get_ref(),
            Decoder::Zstd(d) => d.get_ref(),
        }
    }

    pub(crate) fn write_all(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        match self {
            Decoder::Identity(s) => s.write_all(chunk),
            Decoder::Gzip(d) => d.write_all(chunk),
            Decoder::Deflate(d) => d.write_all(chunk),
            Decoder::Brotli(d) => d.write_all(chunk),
            Decoder::Zstd(d) => d.write_all(chunk),
        }
    }

    /// The stream is all in: what it decoded to, or why it is broken.
    pub(crate) fn finish(self) -> std::io::Result<Sink> {
        match self {
            Decoder::Identity(s) => Ok(s),
            Decoder::Gzip(d) => d.finish(),
            Decoder::Deflate(d) => d.finish(),
            Decoder::Brotli(d) => (*d)
                .into_inner()
                .map_err(|_| std::io::Error::other("the stream ends before its last block")),
            Decoder::Zstd(mut d) => {
                d.flush()?;
                Ok(d.into_inner())
            }
        }
    }
}
