//! The image data: the IDAT chunks' data, concatenated, is one zlib stream (RFC 1950: its
//! header, deflate data, the Adler-32 of what it inflates to, nothing after) that inflates to
//! exactly the bytes IHDR implies, each scanline starting with a filter type from 0 to 4.
//! Inflation streams through a small buffer: memory stays bounded whatever the data claims.

use flate2::{Decompress, FlushDecompress, Status};

use super::{Fault, Header, MAX_INFLATED};

/// The inflation buffer.
const STEP: usize = 64 * 1024;

pub(super) fn judge_image_data(data: &[u8], h: Header) -> Result<(), Fault> {
    let implied = h.implied_bytes();
    if implied > MAX_INFLATED {
        return Err(Fault::BeyondCap(implied));
    }
    let deflate = zlib_header(data)?;
    let mut rows = Rows::new(h.passes());
    let mut adler = adler2::Adler32::new();
    let mut inflater = Decompress::new(false);
    let mut out = vec![0u8; STEP];
    let (mut got, mut done) = (0u64, false);
    while !done {
        let before = (inflater.total_in(), inflater.total_out());
        let input = deflate.get(before.0 as usize..).unwrap_or_default();
        let status = inflater
            .decompress(input, &mut out, FlushDecompress::None)
            .map_err(|e| Fault::Zlib(format!("bad deflate data: {e}")))?;
        let produced = (inflater.total_out() - before.1) as usize;
        let chunk = out.get(..produced).unwrap_or_default();
        if got + produced as u64 > implied {
            return Err(length(format!("more than {implied}"), implied, h));
        }
        rows.check(got, chunk)?;
        adler.write_slice(chunk);
        got += produced as u64;
        done = status == Status::StreamEnd;
        let stalled = inflater.total_in() == before.0 && produced == 0;
        if !done && stalled {
            return Err(Fault::Zlib(format!(
                "the deflate data ends unfinished, after {got} bytes inflated"
            )));
        }
    }
    if got != implied {
        return Err(length(got.to_string(), implied, h));
    }
    trailer(
        deflate
            .get(inflater.total_in() as usize..)
            .unwrap_or_default(),
        adler.checksum(),
    )
}

/// RFC 1950's two header bytes: deflate (CM 8) with a window of at most 32 KiB, the check
/// bits, and no preset dictionary (PNG allows none). Returns the deflate data after them.
fn zlib_header(data: &[u8]) -> Result<&[u8], Fault> {
    let (Some(&cmf), Some(&flg)) = (data.first(), data.get(1)) else {
        return Err(Fault::Zlib(format!(
            "{} bytes of IDAT data, short of the 2-byte header",
            data.len()
        )));
    };
    if cmf & 0x0F != 8 {
        return Err(Fault::Zlib(format!(
            "compression method {} (8, deflate)",
            cmf & 0x0F
        )));
    }
    if cmf >> 4 > 7 {
        return Err(Fault::Zlib(format!(
            "window size {} (CINFO at most 7)",
            cmf >> 4
        )));
    }
    if (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
        return Err(Fault::Zlib(format!(
            "header {cmf:02X} {flg:02X} fails its check bits (not a multiple of 31)"
        )));
    }
    if flg & 0x20 != 0 {
        return Err(Fault::Zlib("a preset dictionary (PNG allows none)".into()));
    }
    Ok(data.get(2..).unwrap_or_default())
}

/// After the deflate data: the Adler-32, then nothing.
fn trailer(rest: &[u8], computed: u32) -> Result<(), Fault> {
    let Some(stored) = rest.get(..4) else {
        return Err(Fault::Zlib(format!(
            "{} of the Adler-32's 4 bytes after the deflate data",
            rest.len()
        )));
    };
    let stored = u32::from_be_bytes([stored[0], stored[1], stored[2], stored[3]]);
    if stored != computed {
        return Err(Fault::Adler { stored, computed });
    }
    match rest.len() - 4 {
        0 => Ok(()),
        n => Err(Fault::Zlib(format!("{n} bytes after the Adler-32"))),
    }
}

fn length(got: String, implied: u64, h: Header) -> Fault {
    Fault::InflatedLength {
        got,
        implied,
        header: format!(
            "{}x{}, colour type {}, bit depth {}{}",
            h.width,
            h.height,
            h.colour_type,
            h.bit_depth,
            if h.interlaced { ", interlaced" } else { "" }
        ),
    }
}

/// Where the scanlines' filter bytes fall in the inflated data, pass by pass.
struct Rows {
    passes: Vec<(u64, u64)>,
    pass: usize,
    row: u64,
    /// Offset in the inflated data of the next filter byte.
    next: u64,
}

impl Rows {
    fn new(passes: Vec<(u64, u64)>) -> Rows {
        Rows {
            passes,
            pass: 0,
            row: 0,
            next: 0,
        }
    }

    /// The filter bytes within `chunk`, which starts `from` bytes into the inflated data.
    fn check(&mut self, from: u64, chunk: &[u8]) -> Result<(), Fault> {
        let end = from + chunk.len() as u64;
        while self.next < end {
            let Some(&(rows, bytes)) = self.passes.get(self.pass) else {
                return Ok(());
            };
            let filter = chunk
                .get((self.next - from) as usize)
                .copied()
                .unwrap_or_default();
            if filter > 4 {
                return Err(Fault::FilterType {
                    pass: self.pass + 1,
                    row: self.row,
                    filter,
                });
            }
            self.next += 1 + bytes;
            self.row += 1;
            if self.row == rows {
                (self.pass, self.row) = (self.pass + 1, 0);
            }
        }
        Ok(())
    }
}
