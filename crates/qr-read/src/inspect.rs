//! Inspection of a PNG from any server, possibly hostile: every size bounded, nothing on this
//! path may panic. Classifies pixels against the colours asked for, finds the symbol and
//! decodes it (rqrr).

use super::*;
use dark::Dark;

/// What the checker learns from a PNG a server returned.
#[derive(Clone, Debug, PartialEq)]
pub struct Inspection {
    pub width: u32,
    pub height: u32,
    /// fraction (0..=1) of pixels exactly equal to the expected fg or bg colour
    pub exact_colour_fraction: f64,
    pub decoded: Result<Decoded, DecodeFailure>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// the decoded payload bytes
    pub content: Vec<u8>,
    /// error-correction level read from the code's format info
    pub level: EcLevel,
    /// 1..=40
    pub version: u8,
    /// 17 + 4*version
    pub modules: u32,
    /// width of one module in pixels, measured
    pub module_px: f64,
    /// measured quiet zone (min over the four sides), in modules
    pub quiet_zone_modules: f64,
}

#[derive(Clone, Debug, PartialEq, Error)]
pub enum DecodeFailure {
    #[error("no QR code found in the image")]
    NoCodeFound,
    #[error("modules are about {module_px:.2} px wide, too small to read reliably")]
    ModulesTooSmall { module_px: f64 },
    #[error("a QR code was found but could not be read: {0}")]
    Unreadable(String),
}

#[derive(Debug, Error)]
pub enum InspectError {
    #[error("the body is empty, not a PNG")]
    Empty,
    #[error("the body is not a PNG (it does not start with the PNG signature)")]
    NotPng,
    #[error("the PNG exceeds the inspection limits ({MAX_SIDE}x{MAX_SIDE} px, 256 MiB): {0}")]
    TooLarge(String),
    #[error("the PNG could not be decoded: {0}")]
    Malformed(String),
}

pub(super) const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Inspect a PNG: dimensions, colour fidelity, and the QR code in it.
/// Err only when the bytes are not a decodable PNG at all (or exceed the limits).
pub fn inspect_png(bytes: &[u8], fg: Rgb, bg: Rgb) -> Result<Inspection, InspectError> {
    let Pixels {
        width,
        height,
        dark,
        exact,
    } = pixels(bytes, fg, bg)?;
    let total = u64::from(width) * u64::from(height);
    let exact_colour_fraction = if total == 0 {
        0.0
    } else {
        exact as f64 / total as f64
    };
    let decoded = if fg == bg {
        Err(DecodeFailure::Unreadable(
            "foreground and background colours are identical".into(),
        ))
    } else {
        locate_and_decode(&dark)
    };
    Ok(Inspection {
        width,
        height,
        exact_colour_fraction,
        decoded,
    })
}

/// Whether two PNGs show the same picture to a reader: the same size, and the same pixels
/// nearer `fg` than `bg`, however each was encoded (palette or not, bit depth, filters).
pub fn same_picture(a: &[u8], b: &[u8], fg: Rgb, bg: Rgb) -> Result<bool, InspectError> {
    Ok(pixels(a, fg, bg)?.dark == pixels(b, fg, bg)?.dark)
}

/// A PNG's pixels classified against `fg` and `bg`, within the decode limits.
fn pixels(bytes: &[u8], fg: Rgb, bg: Rgb) -> Result<Pixels, InspectError> {
    if bytes.is_empty() {
        return Err(InspectError::Empty);
    }
    if !bytes.starts_with(&PNG_SIGNATURE) {
        return Err(InspectError::NotPng);
    }
    match classify_indexed(bytes, fg, bg)? {
        Some(pixels) => Ok(pixels),
        None => Ok(classify(&decode_png_limited(bytes)?, fg, bg)),
    }
}

/// Pixels reduced to what the inspection needs.
pub(super) struct Pixels {
    pub(super) width: u32,
    pub(super) height: u32,
    /// Where the pixel is nearer fg than bg.
    pub(super) dark: Dark,
    /// Opaque pixels exactly equal to fg or bg.
    pub(super) exact: u64,
}

/// Fast path for palette PNGs (what the reference server emits): classify the at most 256
/// palette entries once and map indices, instead of letting `image` expand every pixel to RGB
/// (that expansion alone costs ~40 ms at 4096x4096). Ok(None) means "not a palette PNG this
/// path handles": the general `image` path then decides, and words any error.
pub(super) fn classify_indexed(
    bytes: &[u8],
    fg: Rgb,
    bg: Rgb,
) -> Result<Option<Pixels>, InspectError> {
    let limits = png::Limits {
        bytes: MAX_DECODE_ALLOC as usize,
    };
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let Ok(mut reader) = decoder.read_info() else {
        return Ok(None);
    };
    let info = reader.info();
    if info.color_type != png::ColorType::Indexed || info.width > MAX_SIDE || info.height > MAX_SIDE
    {
        return Ok(None);
    }
    let Some(palette) = info.palette.as_deref() else {
        return Ok(None);
    };
    let trns = info.trns.as_deref().unwrap_or(&[]);
    let depth = info.bit_depth as usize;
    // Indices beyond the palette are invalid PNG; treat them as opaque black, as decoders do.
    let verdicts: Vec<(bool, bool)> = (0..256usize)
        .map(|i| {
            let rgb = palette.get(i * 3..i * 3 + 3).unwrap_or(&[0, 0, 0]);
            let alpha = trns.get(i).copied().unwrap_or(255);
            verdict([rgb[0], rgb[1], rgb[2], alpha], fg, bg)
        })
        .collect();
    let Some(size) = reader.output_buffer_size() else {
        return Ok(None);
    };
    let mut buf = vec![0u8; size];
    let frame = reader
        .next_frame(&mut buf)
        .map_err(|e| InspectError::Malformed(e.to_string()))?;
    let (w, h) = (frame.width as usize, frame.height as usize);
    if !matches!(depth, 1 | 2 | 4 | 8) || frame.line_size * h > buf.len() {
        return Ok(None);
    }
    let per_byte = 8 / depth;
    let mask = ((1u16 << depth) - 1) as u8;
    // Every byte value's pixels, classified once: a row is then a lookup per byte, not per
    // pixel (a 4096 px square is 16.7 million pixels). Bits most significant first, as `Dark`.
    let bytes: Vec<(u8, u8)> = (0..=255u8)
        .map(|byte| {
            let (mut bits, mut n) = (0u8, 0u8);
            for k in 0..per_byte {
                let (is_dark, is_exact) =
                    verdicts[usize::from((byte >> (8 - depth * (k + 1))) & mask)];
                bits = (bits << 1) | u8::from(is_dark);
                n += u8::from(is_exact);
            }
            (bits, n)
        })
        .collect();
    let mut dark = Dark::new(w, h);
    let mut exact = 0u64;
    let whole = w / per_byte;
    for (y, line) in buf.chunks_exact(frame.line_size).take(h).enumerate() {
        exact += pack_row(
            &line[..whole.min(line.len())],
            dark.row_mut(y),
            per_byte,
            &bytes,
        );
        // The last byte's pixels inside the row (the rest is padding).
        for x in whole * per_byte..w {
            let byte = line.get(x / per_byte).copied().unwrap_or(0);
            let shift = 8 - depth * (x % per_byte + 1);
            let (is_dark, is_exact) = verdicts[usize::from((byte >> shift) & mask)];
            dark.set(x, y, is_dark);
            exact += u64::from(is_exact);
        }
    }
    // A frame shorter than its header says (the decoder would have refused it): the rest is
    // background, as `Dark::new` left it.
    Ok(Some(Pixels {
        width: frame.width,
        height: frame.height,
        dark,
        exact,
    }))
}

/// Whole source bytes of one row (`per_byte` pixels each; `per_byte` divides 8) into `Dark`'s
/// packed row, through `table` (each byte value's dark bits and exact pixels). Returns how
/// many pixels were exact.
fn pack_row(line: &[u8], row: &mut [u8], per_byte: usize, table: &[(u8, u8)]) -> u64 {
    let mut exact = 0u64;
    if per_byte == 8 {
        // One source byte is one byte of the row (1-bit images: what renderers serve).
        for (out, &byte) in row.iter_mut().zip(line) {
            let (bits, n) = table[usize::from(byte)];
            *out = bits;
            exact += u64::from(n);
        }
        return exact;
    }
    // Every 8 / per_byte source bytes fill one byte of the row.
    let (mut acc, mut filled) = (0u8, 0usize);
    let mut out = row.iter_mut();
    for &byte in line {
        let (bits, n) = table[usize::from(byte)];
        acc = (acc << per_byte) | bits;
        filled += per_byte;
        exact += u64::from(n);
        if filled == 8 {
            if let Some(o) = out.next() {
                *o = acc;
            }
            (acc, filled) = (0, 0);
        }
    }
    if filled > 0
        && let Some(o) = out.next()
    {
        *o = acc << (8 - filled);
    }
    exact
}

pub(super) fn decode_png_limited(bytes: &[u8]) -> Result<DynamicImage, InspectError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), ImageFormat::Png);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    reader.decode().map_err(|e| match e {
        ImageError::Limits(l) => InspectError::TooLarge(l.to_string()),
        other => InspectError::Malformed(other.to_string()),
    })
}

/// Classify every pixel as fg (dark for rqrr) or bg by nearest colour.
pub(super) fn classify(img: &DynamicImage, fg: Rgb, bg: Rgb) -> Pixels {
    // Borrow the common 8-bit layouts; convert the rest (the decode limits bound the copy).
    let w = img.width() as usize;
    let (dark, exact) = match img {
        DynamicImage::ImageRgb8(buf) => classify_raw::<3>(buf.as_raw(), w, fg, bg),
        DynamicImage::ImageRgba8(buf) => classify_raw::<4>(buf.as_raw(), w, fg, bg),
        other if other.color().has_alpha() => {
            classify_raw::<4>(other.to_rgba8().as_raw(), w, fg, bg)
        }
        other => classify_raw::<3>(other.to_rgb8().as_raw(), w, fg, bg),
    };
    Pixels {
        width: img.width(),
        height: img.height(),
        dark,
        exact,
    }
}

/// (nearer fg than bg, exactly fg or bg and opaque) for one RGBA pixel.
pub(super) fn verdict(px: [u8; 4], fg: Rgb, bg: Rgb) -> (bool, bool) {
    let [r, g, b, a] = px;
    let c = if a == 255 {
        [r, g, b]
    } else {
        // Composite over bg: what a browser shows on a page of the background colour.
        let mix = |c: u8, k: u8| {
            ((u32::from(c) * u32::from(a) + u32::from(k) * (255 - u32::from(a)) + 127) / 255) as u8
        };
        [mix(r, bg.0[0]), mix(g, bg.0[1]), mix(b, bg.0[2])]
    };
    let exact = a == 255 && (c == fg.0 || c == bg.0);
    (dist2(c, fg.0) < dist2(c, bg.0), exact)
}

/// `N` is 3 (RGB) or 4 (RGBA) bytes per pixel, `w` pixels a row.
pub(super) fn classify_raw<const N: usize>(raw: &[u8], w: usize, fg: Rgb, bg: Rgb) -> (Dark, u64) {
    let Some(row_bytes) = w.checked_mul(N).filter(|&b| b > 0) else {
        return (Dark::new(0, 0), 0);
    };
    let mut dark = Dark::new(w, raw.len() / row_bytes);
    let mut exact = 0u64;
    // QR images are long runs of one colour: reuse the previous verdict when the pixel repeats.
    let mut last: Option<([u8; 4], (bool, bool))> = None;
    for (y, row) in raw.chunks_exact(row_bytes).enumerate() {
        for (x, px) in row.chunks_exact(N).enumerate() {
            let key = [px[0], px[1], px[2], if N == 4 { px[3] } else { 255 }];
            let v = match last {
                Some((prev, v)) if prev == key => v,
                _ => {
                    let v = verdict(key, fg, bg);
                    last = Some((key, v));
                    v
                }
            };
            if v.0 {
                dark.set(x, y, true);
            }
            exact += u64::from(v.1);
        }
    }
    (dark, exact)
}

pub(super) fn dist2(a: [u8; 3], b: [u8; 3]) -> u32 {
    a.iter()
        .zip(b)
        .map(|(&x, y)| {
            let d = i32::from(x) - i32::from(y);
            (d * d) as u32
        })
        .sum()
}

/// Inclusive bounding box of the dark pixels.
#[derive(Clone, Copy, Debug)]
pub(super) struct BBox {
    pub(super) left: usize,
    pub(super) top: usize,
    pub(super) right: usize,
    pub(super) bottom: usize,
}

impl BBox {
    /// Its longer side, in pixels.
    fn side(&self) -> usize {
        (self.right - self.left + 1).max(self.bottom - self.top + 1)
    }
}

pub(super) fn dark_bbox(dark: &Dark) -> Option<BBox> {
    let mut bbox: Option<BBox> = None;
    for y in 0..dark.height() {
        let Some((first, last)) = dark.row_span(y) else {
            continue;
        };
        bbox = Some(match bbox {
            None => BBox {
                left: first,
                top: y,
                right: last,
                bottom: y,
            },
            Some(b) => BBox {
                left: b.left.min(first),
                top: b.top,
                right: b.right.max(last),
                bottom: y,
            },
        });
    }
    bbox
}

pub(super) fn locate_and_decode(dark: &Dark) -> Result<Decoded, DecodeFailure> {
    let (w, h) = (dark.width(), dark.height());
    if w == 0 || h == 0 {
        return Err(DecodeFailure::NoCodeFound);
    }
    let bbox = dark_bbox(dark).ok_or(DecodeFailure::NoCodeFound)?;
    let side = bbox.side();

    // Estimate the module width before decoding: a code has at least 21 modules across, and
    // the top-left finder's top edge is a run of 7 dark modules starting at the box corner.
    let by_box = side as f64 / 21.0;
    if by_box < MIN_MODULE_PX {
        return Err(DecodeFailure::ModulesTooSmall { module_px: by_box });
    }
    let run = dark.run_from(bbox.left, bbox.top);
    let by_run = run as f64 / 7.0;
    if run > 0 && by_run < MIN_MODULE_PX {
        // Only an upright code with square finders starts its box with that run: a code
        // drawn rotated, or with other finders, is searched for before the run excuses it.
        return run_rqrr(dark, 1)
            .map_err(|_| DecodeFailure::ModulesTooSmall { module_px: by_run })
            .map(|(content, level, version)| decoded(dark, bbox, content, level, version));
    }
    let estimate = if run > 0 { by_box.min(by_run) } else { by_box };

    // A symbol upright on the pixel grid is read off its modules; anything else is searched
    // for. Wide modules: sample down to ~4 px per module so big images search fast. If that
    // fails (e.g. the estimate was fooled), search at full resolution once.
    let (content, level, version) = match upright::read(dark, bbox) {
        Some(read) => read,
        None => {
            let factor = ((estimate / 4.0).floor() as usize).max(1);
            let mut result = run_rqrr(dark, factor);
            if factor > 1 && result.is_err() {
                result = run_rqrr(dark, 1);
            }
            result?
        }
    };

    Ok(decoded(dark, bbox, content, level, version))
}

/// What was read, measured against the code's box in the image.
fn decoded(dark: &Dark, bbox: BBox, content: Vec<u8>, level: EcLevel, version: u8) -> Decoded {
    let (w, h) = (dark.width(), dark.height());
    let side = bbox.side();
    let modules = 17 + 4 * u32::from(version);
    let module_px = side as f64 / f64::from(modules);
    let edges = [bbox.left, bbox.top, w - 1 - bbox.right, h - 1 - bbox.bottom];
    let quiet_px = edges.into_iter().min().unwrap_or(0);
    Decoded {
        content,
        level,
        version,
        modules,
        module_px,
        quiet_zone_modules: quiet_px as f64 / module_px,
    }
}

/// Detect and decode with rqrr on the (optionally downsampled) dark map.
pub(super) fn run_rqrr(
    dark: &Dark,
    factor: usize,
) -> Result<(Vec<u8>, EcLevel, u8), DecodeFailure> {
    let (sw, sh) = (dark.width() / factor, dark.height() / factor);
    if sw == 0 || sh == 0 {
        return Err(DecodeFailure::NoCodeFound);
    }
    let half = factor / 2;
    // rqrr is third-party code fed attacker-controlled pixels: contain any panic in it so a
    // broken server cannot take the checker down (this relies on panic=unwind).
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut prepared = rqrr::PreparedImage::prepare_from_bitmap(sw, sh, |x, y| {
            dark.get(x * factor + half, y * factor + half)
        });
        let grids = prepared.detect_grids();
        if grids.is_empty() {
            return Err(DecodeFailure::NoCodeFound);
        }
        let mut last_error = String::new();
        for grid in &grids {
            let mut content = Vec::new();
            match grid.decode_to(&mut content) {
                Ok(meta) => {
                    let Some(level) = level_of_format_bits(meta.ecc_level) else {
                        last_error = format!("invalid error-correction bits {}", meta.ecc_level);
                        continue;
                    };
                    let Ok(version) = u8::try_from(meta.version.0) else {
                        last_error = format!("invalid version {}", meta.version.0);
                        continue;
                    };
                    if !(1..=40).contains(&version) {
                        last_error = format!("invalid version {version}");
                        continue;
                    }
                    return Ok((content, level, version));
                }
                Err(e) => last_error = e.to_string(),
            }
        }
        Err(DecodeFailure::Unreadable(last_error))
    }));
    outcome.unwrap_or_else(|_| Err(DecodeFailure::Unreadable("the QR decoder panicked".into())))
}

/// A PNG whose header declares `width` x `height` 8-bit RGB pixels and whose data is a token
/// few bytes: what a decompression bomb looks like to a client. For tests of hostile targets.
pub fn png_declaring(width: u32, height: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend(kind);
        out.extend(data);
        let crc = crc32(&out[start..]);
        out.extend(crc.to_be_bytes());
    }
    let mut png = PNG_SIGNATURE.to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(
        &mut png,
        b"IDAT",
        &[0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 1],
    );
    chunk(&mut png, b"IEND", &[]);
    png
}
