//! The chunk walk: signature, every chunk's length, type and CRC-32, the order the PNG
//! specification gives chunks (table 7 of the 3rd edition: "chunk ordering"), and the fields
//! of IHDR, PLTE and tRNS. The IDAT data is gathered for `zlib.rs`.

use super::{ChunkType, Fault, Header};

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
/// Chunk lengths are at most 2^31-1 (PNG 3rd ed. 5.3).
const MAX_CHUNK: u32 = 0x7FFF_FFFF;

/// Ancillary chunks the specification places: (type, before PLTE, after PLTE, before IDAT,
/// may repeat). Unknown ancillary chunks may go anywhere between IHDR and IEND.
const ANCILLARY: &[(&[u8; 4], bool, bool, bool, bool)] = &[
    (b"cHRM", true, false, true, false),
    (b"gAMA", true, false, true, false),
    (b"iCCP", true, false, true, false),
    (b"sBIT", true, false, true, false),
    (b"sRGB", true, false, true, false),
    (b"cICP", true, false, true, false),
    (b"mDCV", true, false, true, false),
    (b"cLLI", true, false, true, false),
    (b"bKGD", false, true, true, false),
    (b"hIST", false, true, true, false),
    (b"tRNS", false, true, true, false),
    (b"pHYs", false, false, true, false),
    (b"sPLT", false, false, true, true),
    (b"eXIf", false, false, true, false),
    (b"acTL", false, false, true, false),
    (b"tIME", false, false, false, false),
    (b"iTXt", false, false, false, true),
    (b"tEXt", false, false, false, true),
    (b"zTXt", false, false, false, true),
    (b"fcTL", false, false, false, true),
    (b"fdAT", false, false, false, true),
];

/// What the walk found: the header and the IDAT data, concatenated.
pub(super) struct Walked {
    pub header: Header,
    pub idat: Vec<u8>,
}

/// Where the walk is: what has been seen so far.
#[derive(Default)]
struct Seen {
    header: Option<Header>,
    /// Palette entries, once PLTE was read.
    palette: Option<usize>,
    /// IDAT: 0 none yet, 1 in the run, 2 the run is over.
    idat: u8,
    once: Vec<ChunkType>,
}

/// Walk every chunk of `body`, judging each as it comes.
pub(super) fn walk(body: &[u8]) -> Result<Walked, Fault> {
    if body.get(..8) != Some(&SIGNATURE[..]) {
        return Err(Fault::Signature);
    }
    let (mut at, mut index, mut seen) = (8usize, 0usize, Seen::default());
    let mut idat = Vec::new();
    let mut last = None;
    while at < body.len() {
        let (ty, data, next) = chunk(body, at, index)?;
        if let (Some(h), ChunkType::IDAT) = (seen.header, ty) {
            seen.before_idat(h)?;
        }
        seen.place(ty, index)?;
        seen.fields(ty, data)?;
        if ty == ChunkType::IDAT {
            idat.extend_from_slice(data);
        }
        if ty == ChunkType::IEND {
            if seen.idat == 0 {
                return Err(Fault::NoIdat);
            }
            return match body.len() - next {
                0 => seen
                    .header
                    .map(|header| Walked { header, idat })
                    .ok_or(Fault::NoIdat),
                extra => Err(Fault::AfterIend(extra)),
            };
        }
        (at, index, last) = (next, index + 1, Some(ty));
    }
    Err(Fault::NoIend(match last {
        Some(ty) => format!("{ty}"),
        None => "the signature".into(),
    }))
}

/// The chunk at `at`: its type, data and where the next begins, once its length, type and
/// CRC-32 hold.
fn chunk(body: &[u8], at: usize, index: usize) -> Result<(ChunkType, &[u8], usize), Fault> {
    let truncated = |what: &str| Fault::Truncated {
        index,
        at,
        what: what.to_string(),
    };
    let head = body
        .get(at..at + 8)
        .ok_or_else(|| truncated("its length and type"))?;
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let ty = ChunkType([head[4], head[5], head[6], head[7]]);
    if len > MAX_CHUNK {
        return Err(Fault::ChunkLength { index, at, len });
    }
    if !ty.0.iter().all(u8::is_ascii_alphabetic) {
        return Err(Fault::ChunkType { index, at, ty });
    }
    let end = at + 8 + len as usize;
    let data = body.get(at + 8..end).ok_or_else(|| {
        truncated(&format!(
            "{len} bytes of {ty} data, {} there",
            body.len() - at - 8
        ))
    })?;
    let stored = body
        .get(end..end + 4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .ok_or_else(|| truncated(&format!("the CRC-32 of {ty}")))?;
    let mut crc = flate2::Crc::new();
    crc.update(&ty.0);
    crc.update(data);
    if crc.sum() != stored {
        return Err(Fault::Crc {
            index,
            at,
            ty,
            stored,
            computed: crc.sum(),
        });
    }
    Ok((ty, data, end + 4))
}

impl Seen {
    /// Whether a chunk of type `ty` may come where it does.
    fn place(&mut self, ty: ChunkType, index: usize) -> Result<(), Fault> {
        if index == 0 && ty != ChunkType::IHDR {
            return Err(Fault::FirstNotIhdr(ty));
        }
        if self.idat == 1 && ty != ChunkType::IDAT {
            self.idat = 2;
        }
        match ty {
            ChunkType::IHDR | ChunkType::IEND => {}
            ChunkType::PLTE if self.idat > 0 => {
                return Err(Fault::Misplaced {
                    ty,
                    why: "after IDAT (it comes before)",
                });
            }
            ChunkType::PLTE => self.plte_after_its_followers()?,
            ChunkType::IDAT if self.idat == 2 => return Err(Fault::IdatNotConsecutive),
            ChunkType::IDAT => self.idat = 1,
            t if t.critical() => return Err(Fault::UnknownCritical(t)),
            t => self.ancillary(t)?,
        }
        let repeats = ty == ChunkType::IDAT
            || ANCILLARY.iter().any(|a| ChunkType(*a.0) == ty && a.4)
            || (!ty.critical() && !ANCILLARY.iter().any(|a| ChunkType(*a.0) == ty));
        if !repeats {
            if self.once.contains(&ty) {
                return Err(Fault::Duplicate(ty));
            }
            self.once.push(ty);
        }
        Ok(())
    }

    /// A known ancillary chunk where the specification places it.
    fn ancillary(&self, ty: ChunkType) -> Result<(), Fault> {
        let Some(&(_, before_plte, after_plte, before_idat, _)) =
            ANCILLARY.iter().find(|a| ChunkType(*a.0) == ty)
        else {
            return Ok(());
        };
        let misplaced = |why| Err(Fault::Misplaced { ty, why });
        if before_idat && self.idat > 0 {
            return misplaced("after IDAT (it comes before)");
        }
        if before_plte && self.palette.is_some() {
            return misplaced("after PLTE (it comes before)");
        }
        let colour = self.header.map_or(0, |h| h.colour_type);
        if after_plte && colour == 3 && self.palette.is_none() {
            return misplaced("before PLTE (with a palette it comes after)");
        }
        if ty == ChunkType(*b"hIST") && self.palette.is_none() {
            return misplaced("without PLTE (it needs one)");
        }
        Ok(())
    }

    /// PLTE comes after the chunks that must precede it and before those that follow it.
    fn plte_after_its_followers(&self) -> Result<(), Fault> {
        match self
            .once
            .iter()
            .find(|t| ANCILLARY.iter().any(|a| ChunkType(*a.0) == **t && a.2))
        {
            Some(&ty) => Err(Fault::Misplaced {
                ty,
                why: "before PLTE (it comes after)",
            }),
            None => Ok(()),
        }
    }

    /// Before the first IDAT: a palette image has its PLTE.
    fn before_idat(&self, h: Header) -> Result<(), Fault> {
        if self.idat == 0 && h.colour_type == 3 && self.palette.is_none() {
            return Err(Fault::Plte(
                "missing: colour type 3 needs PLTE before IDAT".into(),
            ));
        }
        Ok(())
    }

    /// The fields of IHDR, PLTE, tRNS and IEND.
    fn fields(&mut self, ty: ChunkType, data: &[u8]) -> Result<(), Fault> {
        match ty {
            ChunkType::IHDR => self.header = Some(ihdr(data)?),
            ChunkType::PLTE => self.palette = Some(plte(data, self.header)?),
            ChunkType::IEND if !data.is_empty() => {
                return Err(Fault::IendNotEmpty(data.len() as u32));
            }
            t if t == ChunkType(*b"tRNS") => trns(data, self.header, self.palette)?,
            _ => {}
        }
        Ok(())
    }
}

/// IHDR's 13 bytes: dimensions, a bit depth legal for the colour type, and the only
/// compression, filter and interlace methods there are.
fn ihdr(data: &[u8]) -> Result<Header, Fault> {
    let bad = |s: String| Err(Fault::Ihdr(s));
    let Ok(d) = <[u8; 13]>::try_from(data) else {
        return bad(format!("{} bytes of data (it has 13)", data.len()));
    };
    let width = u32::from_be_bytes([d[0], d[1], d[2], d[3]]);
    let height = u32::from_be_bytes([d[4], d[5], d[6], d[7]]);
    let (bit_depth, colour_type) = (d[8], d[9]);
    if width == 0 || height == 0 || width > MAX_CHUNK || height > MAX_CHUNK {
        return bad(format!("{width}x{height} (each from 1 to 2^31-1)"));
    }
    let legal: &[u8] = match colour_type {
        0 => &[1, 2, 4, 8, 16],
        3 => &[1, 2, 4, 8],
        2 | 4 | 6 => &[8, 16],
        c => return bad(format!("colour type {c} (0, 2, 3, 4 or 6)")),
    };
    if !legal.contains(&bit_depth) {
        return bad(format!(
            "bit depth {bit_depth} with colour type {colour_type} (allowed: {legal:?})"
        ));
    }
    match (d[10], d[11], d[12]) {
        (0, 0, 0 | 1) => Ok(Header {
            width,
            height,
            bit_depth,
            colour_type,
            interlaced: d[12] == 1,
        }),
        (0, 0, i) => bad(format!("interlace method {i} (0 or 1)")),
        (0, f, _) => bad(format!("filter method {f} (0)")),
        (c, _, _) => bad(format!("compression method {c} (0)")),
    }
}

/// PLTE: allowed for the colour type, 1 to 256 entries of 3 bytes, no more than the bit depth
/// indexes in a palette image. Returns the entries.
fn plte(data: &[u8], header: Option<Header>) -> Result<usize, Fault> {
    // IHDR is first (`place`), so there is one; without it nothing more can be said.
    let Some(h) = header else {
        return Ok(data.len() / 3);
    };
    if matches!(h.colour_type, 0 | 4) {
        return Err(Fault::Plte(format!(
            "present with colour type {} (it must not appear)",
            h.colour_type
        )));
    }
    let entries = data.len() / 3;
    if !data.len().is_multiple_of(3) || entries == 0 || entries > 256 {
        return Err(Fault::Plte(format!(
            "{} bytes (a multiple of 3, 1 to 256 entries)",
            data.len()
        )));
    }
    if h.colour_type == 3 && entries > 1usize << h.bit_depth {
        return Err(Fault::Plte(format!(
            "{entries} entries, more than bit depth {} indexes",
            h.bit_depth
        )));
    }
    Ok(entries)
}

/// tRNS: not with an alpha channel; 2 bytes for greyscale, 6 for truecolour, no more entries
/// than the palette for a palette image.
fn trns(data: &[u8], header: Option<Header>, palette: Option<usize>) -> Result<(), Fault> {
    let Some(h) = header else { return Ok(()) };
    let bad = |s: String| Err(Fault::Trns(s));
    match h.colour_type {
        0 if data.len() != 2 => bad(format!("{} bytes for greyscale (2)", data.len())),
        2 if data.len() != 6 => bad(format!("{} bytes for truecolour (6)", data.len())),
        3 if data.len() > palette.unwrap_or(0) => bad(format!(
            "{} entries, more than the palette's {}",
            data.len(),
            palette.unwrap_or(0)
        )),
        c @ (4 | 6) => bad(format!(
            "present with colour type {c} (it has alpha already)"
        )),
        _ => Ok(()),
    }
}
