//! The whole PNG datastream judged against the PNG specification (W3C PNG 3rd edition, ISO/IEC
//! 15948), not only whether a decoder manages to read it: lenient decoders skip a bad CRC,
//! stop at IEND and ignore what follows, so "it decodes" says little about "it is a PNG".
//!
//! One pass over the chunks (`chunks.rs`: signature, lengths, CRC-32, types, order, IHDR and
//! PLTE fields), then the image data (`zlib.rs`: one zlib stream, its Adler-32, exactly the
//! bytes IHDR implies, every scanline's filter type). Bounded: the chunk walk keeps the IDAT
//! data (no more than the body), inflation streams through a small buffer and stops at
//! `MAX_INFLATED` bytes or as soon as the data is longer than implied. Never panics on input.

mod chunks;
mod zlib;

use std::fmt;

use thiserror::Error;

/// Most image data inflated to judge one datastream (what IHDR implies): beyond it the image
/// data is not judged (`Fault::BeyondCap`). A 4096 px RGBA 16-bit image is 128 MiB.
pub const MAX_INFLATED: u64 = 256 * 1024 * 1024;

/// Most image data one run inflates, over all the datastreams it judges (`Budget`): four of
/// the largest images judged. A run sees a few hundred QR codes of a few hundred KiB each.
pub const RUN_BUDGET: u64 = 4 * MAX_INFLATED;

/// A chunk's type, as its four bytes (printed as text when they are letters).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkType(pub [u8; 4]);

impl ChunkType {
    pub const IHDR: ChunkType = ChunkType(*b"IHDR");
    pub const PLTE: ChunkType = ChunkType(*b"PLTE");
    pub const IDAT: ChunkType = ChunkType(*b"IDAT");
    pub const IEND: ChunkType = ChunkType(*b"IEND");

    /// Critical: the first letter is uppercase (bit 5 of the first byte clear).
    pub fn critical(self) -> bool {
        self.0[0].is_ascii_uppercase()
    }
}

impl fmt::Display for ChunkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.iter().all(u8::is_ascii_alphabetic) {
            f.write_str(&String::from_utf8_lossy(&self.0))
        } else {
            write!(f, "0x{:08X}", u32::from_be_bytes(self.0))
        }
    }
}

impl fmt::Debug for ChunkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// What IHDR declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub width: u32,
    pub height: u32,
    pub bit_depth: u8,
    pub colour_type: u8,
    pub interlaced: bool,
}

impl Header {
    /// Samples per pixel of the colour type (0 for an illegal one).
    fn channels(self) -> u64 {
        match self.colour_type {
            0 | 3 => 1,
            4 => 2,
            2 => 3,
            6 => 4,
            _ => 0,
        }
    }

    /// The scanlines of the image data, pass by pass: (rows, bytes per row without the filter
    /// byte). One pass, or Adam7's seven (an empty pass has no scanlines at all).
    pub fn passes(self) -> Vec<(u64, u64)> {
        const ADAM7: [(u64, u64, u64, u64); 7] = [
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ];
        let (w, h) = (u64::from(self.width), u64::from(self.height));
        let bits = self.channels() * u64::from(self.bit_depth);
        let row = |pw: u64| (pw * bits).div_ceil(8);
        if !self.interlaced {
            return vec![(h, row(w))];
        }
        let span = |len: u64, start: u64, step: u64| len.saturating_sub(start).div_ceil(step);
        ADAM7
            .iter()
            .map(|&(x0, y0, dx, dy)| (span(w, x0, dx), span(h, y0, dy)))
            .filter(|&(pw, ph)| pw > 0 && ph > 0)
            .map(|(pw, ph)| (ph, row(pw)))
            .collect()
    }

    /// Bytes of inflated image data the header implies (filter bytes included), saturating.
    pub fn implied_bytes(self) -> u64 {
        self.passes().iter().fold(0u64, |sum, &(rows, bytes)| {
            sum.saturating_add(rows.saturating_mul(bytes.saturating_add(1)))
        })
    }
}

/// What makes a body not a PNG datastream, and where.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Fault {
    #[error("no PNG signature (the first 8 bytes are not 89 50 4E 47 0D 0A 1A 0A)")]
    Signature,
    #[error("chunk {index} ({at} bytes in) ends past the datastream: {what}")]
    Truncated {
        index: usize,
        at: usize,
        what: String,
    },
    #[error("chunk {index} ({at} bytes in) declares {len} bytes of data, over 2^31-1")]
    ChunkLength { index: usize, at: usize, len: u32 },
    #[error("chunk {index} ({at} bytes in) has type {ty}: not four ASCII letters")]
    ChunkType {
        index: usize,
        at: usize,
        ty: ChunkType,
    },
    #[error(
        "chunk {index} ({ty}, {at} bytes in): CRC-32 {stored:08X} stored, {computed:08X} computed"
    )]
    Crc {
        index: usize,
        at: usize,
        ty: ChunkType,
        stored: u32,
        computed: u32,
    },
    #[error("the first chunk is {0}, not IHDR")]
    FirstNotIhdr(ChunkType),
    #[error("IHDR: {0}")]
    Ihdr(String),
    #[error("a second {0} chunk (it may appear once)")]
    Duplicate(ChunkType),
    #[error("{ty} {why}")]
    Misplaced { ty: ChunkType, why: &'static str },
    #[error("an unknown critical chunk {0} (a decoder must not display the image)")]
    UnknownCritical(ChunkType),
    #[error("PLTE: {0}")]
    Plte(String),
    #[error("tRNS: {0}")]
    Trns(String),
    #[error("IDAT chunks not consecutive (another chunk between them)")]
    IdatNotConsecutive,
    #[error("no IDAT chunk")]
    NoIdat,
    #[error("no IEND chunk: the datastream ends after {0}")]
    NoIend(String),
    #[error("IEND carries {0} bytes of data (it is empty)")]
    IendNotEmpty(u32),
    #[error("{0} bytes after IEND (IEND ends the datastream)")]
    AfterIend(usize),
    #[error("the image data is not a zlib stream: {0}")]
    Zlib(String),
    #[error("the image data's Adler-32 is {stored:08X}, its inflated bytes' is {computed:08X}")]
    Adler { stored: u32, computed: u32 },
    #[error("the image data inflates to {got} bytes; IHDR ({header}) implies {implied}")]
    InflatedLength {
        got: String,
        implied: u64,
        header: String,
    },
    #[error("scanline {row} (pass {pass}) has filter type {filter} (0 to 4 only)")]
    FilterType { pass: usize, row: u64, filter: u8 },
    /// Not the target's fault: the image data is more than the runner inflates.
    #[error("IHDR implies {0} bytes of image data, over the {MAX_INFLATED}-byte cap: not inflated")]
    BeyondCap(u64),
    /// Not the target's fault: the run has inflated nearly all it may (`Budget`).
    #[error(
        "IHDR implies {implied} bytes of image data and {left} bytes are left of the run's {RUN_BUDGET}-byte budget for inflating images: not inflated, not judged"
    )]
    OverBudget { implied: u64, left: u64 },
}

impl Fault {
    /// Whether this is the runner's limit, not a fault of the datastream.
    pub fn beyond_cap(&self) -> bool {
        matches!(self, Fault::BeyondCap(_) | Fault::OverBudget { .. })
    }
}

/// A datastream whose chunks were walked and judged, its image data not inflated yet: what
/// IHDR implies tells what inflating it may cost before it is paid.
pub struct Walked(chunks::Walked);

impl Walked {
    pub fn header(&self) -> Header {
        self.0.header
    }
    /// Bytes of image data inflating may produce: what IHDR implies.
    pub fn implied_bytes(&self) -> u64 {
        self.0.header.implied_bytes()
    }
    /// Judges the image data: the header when the whole datastream is a PNG.
    pub fn inflate(&self) -> Result<Header, Fault> {
        zlib::judge_image_data(&self.0.idat, self.0.header)?;
        Ok(self.0.header)
    }
}

/// What a run may still inflate: `RUN_BUDGET` bytes of image data in all.
#[derive(Debug)]
pub struct Budget {
    left: u64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(RUN_BUDGET)
    }
}

impl Budget {
    pub fn new(bytes: u64) -> Budget {
        Budget { left: bytes }
    }
    pub fn left(&self) -> u64 {
        self.left
    }
    /// Pays for inflating `w` before it is inflated: what IHDR implies (inflation stops
    /// there). Image data over `MAX_INFLATED` costs nothing: it is never inflated.
    pub fn charge(&mut self, w: &Walked) -> Result<(), Fault> {
        let implied = w.implied_bytes();
        if implied > MAX_INFLATED {
            return Ok(());
        }
        if implied > self.left {
            return Err(Fault::OverBudget {
                implied,
                left: self.left,
            });
        }
        self.left -= implied;
        Ok(())
    }
}

/// Walks the chunks of `body`, judging all but the image data (`Walked::inflate`).
pub fn walk(body: &[u8]) -> Result<Walked, Fault> {
    chunks::walk(body).map(Walked)
}

/// Judge a whole PNG datastream: its header when it is one, else the first fault found.
pub fn validate(body: &[u8]) -> Result<Header, Fault> {
    walk(body)?.inflate()
}

/// `validate`, the inflation paid from `budget`: past it, `Fault::OverBudget`.
pub fn validate_within(body: &[u8], budget: &mut Budget) -> Result<Header, Fault> {
    let walked = walk(body)?;
    budget.charge(&walked)?;
    walked.inflate()
}

#[cfg(test)]
mod tests;
