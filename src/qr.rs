//! QR codes as PNG, both directions.
//!
//! Rendering is the reference server's hot path, so it draws straight into a packed 1-bit
//! palette image and reuses identical rows. Inspection runs on PNGs from any server, possibly
//! hostile, so every size is bounded and nothing on that path may panic.

use std::fmt;
use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use image::{DynamicImage, ImageError, ImageFormat, ImageReader, Limits};
use qrcode::QrCode;
use qrcode::types::{Color, QrError};
use thiserror::Error;

/// Largest image side either direction accepts; anything bigger is a mistake or an attack.
pub const MAX_SIDE: u32 = 8192;
/// Allocation ceiling for decoding a PNG (a decompression bomb must not take the checker down).
pub const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;
/// Below this module width (pixels) we do not try to decode: the checker reports it instead.
pub const MIN_MODULE_PX: f64 = 2.0;

/// Error-correction level, ordered by strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EcLevel {
    L,
    M,
    Q,
    H,
}

impl EcLevel {
    /// "L", "M", "Q" or "H" (either case); anything else is None.
    pub fn parse(s: &str) -> Option<EcLevel> {
        match s {
            "L" | "l" => Some(EcLevel::L),
            "M" | "m" => Some(EcLevel::M),
            "Q" | "q" => Some(EcLevel::Q),
            "H" | "h" => Some(EcLevel::H),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EcLevel::L => "L",
            EcLevel::M => "M",
            EcLevel::Q => "Q",
            EcLevel::H => "H",
        }
    }

    fn to_qrcode(self) -> qrcode::EcLevel {
        match self {
            EcLevel::L => qrcode::EcLevel::L,
            EcLevel::M => qrcode::EcLevel::M,
            EcLevel::Q => qrcode::EcLevel::Q,
            EcLevel::H => qrcode::EcLevel::H,
        }
    }

    /// rqrr reports the raw two format-info bits (see rqrr's `read_format` and the order of
    /// `VersionInfo::ecc`): 0 = M, 1 = L, 2 = H, 3 = Q, as in ISO/IEC 18004.
    fn from_format_bits(bits: u16) -> Option<EcLevel> {
        match bits {
            0 => Some(EcLevel::M),
            1 => Some(EcLevel::L),
            2 => Some(EcLevel::H),
            3 => Some(EcLevel::Q),
            _ => None,
        }
    }
}

impl fmt::Display for EcLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub [u8; 3]);

/// "#RRGGBB" or "#RGB" (case-insensitive hex; #RGB expands like CSS: #abc = #aabbcc).
/// Anything else: None.
pub fn parse_hex_color(s: &str) -> Option<Rgb> {
    let hex = s.strip_prefix('#')?.as_bytes();
    // Work on bytes: a multi-byte UTF-8 character is never a hex digit, so no slicing hazard.
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    match hex.len() {
        3 => {
            let mut out = [0u8; 3];
            for (o, &b) in out.iter_mut().zip(hex) {
                let d = digit(b)?;
                *o = d * 17;
            }
            Some(Rgb(out))
        }
        6 => {
            let mut out = [0u8; 3];
            for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
                *o = digit(pair[0])? * 16 + digit(pair[1])?;
            }
            Some(Rgb(out))
        }
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Side of the square image in pixels, quiet zone included.
    pub size: u32,
    /// Quiet zone on each side, in modules.
    pub margin: u32,
    pub level: EcLevel,
    pub fg: Rgb,
    pub bg: Rgb,
    /// Blank the centre where the real service draws a logo (and raise the level to Q).
    pub logo: bool,
}

/// Largest payload in bytes (byte mode, version 40) at a level.
pub fn capacity_bytes(level: EcLevel) -> usize {
    match level {
        EcLevel::L => 2953,
        EcLevel::M => 2331,
        EcLevel::Q => 1663,
        EcLevel::H => 1273,
    }
}

/// The level a code is actually encoded at: a logo hides modules, so the service never
/// goes below Q when drawing one.
pub fn effective_level(level: EcLevel, logo: bool) -> EcLevel {
    if logo { level.max(EcLevel::Q) } else { level }
}

#[derive(Debug, Error)]
pub enum RenderError {
    #[error("the url is {bytes} bytes; a QR code at level {level} holds at most {capacity}")]
    DataTooLong {
        level: EcLevel,
        bytes: usize,
        capacity: usize,
    },
    #[error("image size {size} px is out of range (1..={MAX_SIDE})")]
    InvalidSize { size: u32 },
    #[error("the QR encoder refused the data: {0}")]
    Encode(String),
    #[error("PNG encoding failed: {0}")]
    Png(#[from] png::EncodingError),
}

/// Render `data` as a `size` x `size` two-colour PNG (1-bit palette: 0 = bg, 1 = fg).
pub fn render_png(data: &[u8], opts: &RenderOptions) -> Result<Vec<u8>, RenderError> {
    let size = opts.size;
    if size == 0 || size > MAX_SIDE {
        return Err(RenderError::InvalidSize { size });
    }
    let level = effective_level(opts.level, opts.logo);
    let too_long = RenderError::DataTooLong {
        level,
        bytes: data.len(),
        capacity: capacity_bytes(level),
    };
    // Check up front so the limit is the documented byte-mode one whatever the content
    // (the encoder's mode optimisation could squeeze digits past it).
    if data.len() > capacity_bytes(level) {
        return Err(too_long);
    }
    let code =
        QrCode::with_error_correction_level(data, level.to_qrcode()).map_err(|e| match e {
            QrError::DataTooLong => too_long,
            other => RenderError::Encode(other.to_string()),
        })?;
    let modules = code.width();
    let colors = code.into_colors();

    // u64 throughout: margin is caller-controlled and `x * units` must not overflow.
    let margin = u64::from(opts.margin);
    let units = modules as u64 + 2 * margin;
    let size64 = u64::from(size);
    let side = size as usize;
    let module_of = |px: usize| -> Option<usize> {
        let unit = px as u64 * units / size64;
        unit.checked_sub(margin)
            .filter(|&m| m < modules as u64)
            .map(|m| m as usize)
    };
    // Column -> module lookup, computed once instead of per row.
    let col_module: Vec<Option<usize>> = (0..side).map(module_of).collect();

    let row_bytes = side.div_ceil(8);
    let mut pixels = vec![0u8; row_bytes * side];
    let logo = if opts.logo {
        let blank = side / 4;
        let start = (side - blank) / 2;
        start..start + blank
    } else {
        0..0
    };

    // Consecutive pixel rows in the same module row are identical: build each distinct row
    // once and copy it.
    let mut cached_row = vec![0u8; row_bytes];
    let mut cached_module: Option<Option<usize>> = None;
    for (y, row) in pixels.chunks_exact_mut(row_bytes).enumerate() {
        let my = module_of(y);
        if cached_module != Some(my) {
            cached_row.fill(0);
            if let Some(my) = my {
                let code_row = &colors[my * modules..(my + 1) * modules];
                for (x, mx) in col_module.iter().enumerate() {
                    if let Some(mx) = *mx
                        && code_row[mx] == Color::Dark
                    {
                        cached_row[x / 8] |= 0x80 >> (x % 8);
                    }
                }
            }
            cached_module = Some(my);
        }
        row.copy_from_slice(&cached_row);
        if logo.contains(&y) {
            for x in logo.clone() {
                row[x / 8] &= !(0x80 >> (x % 8));
            }
        }
    }

    let [br, bg, bb] = opts.bg.0;
    let [fr, fg, fb] = opts.fg.0;
    let mut out = Vec::with_capacity(pixels.len() / 4 + 256);
    {
        let mut encoder = png::Encoder::new(&mut out, size, size);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::One);
        encoder.set_palette(vec![br, bg, bb, fr, fg, fb]);
        // Fastest = fdeflate + Up filter: the cheapest setting that still compresses.
        encoder.set_compression(png::Compression::Fastest);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&pixels)?;
        writer.finish()?;
    }
    Ok(out)
}

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

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Inspect a PNG: dimensions, colour fidelity, and the QR code in it.
/// Err only when the bytes are not a decodable PNG at all (or exceed the limits).
pub fn inspect_png(bytes: &[u8], fg: Rgb, bg: Rgb) -> Result<Inspection, InspectError> {
    if bytes.is_empty() {
        return Err(InspectError::Empty);
    }
    if !bytes.starts_with(&PNG_SIGNATURE) {
        return Err(InspectError::NotPng);
    }
    let Pixels {
        width,
        height,
        dark,
        exact,
    } = match classify_indexed(bytes, fg, bg)? {
        Some(pixels) => pixels,
        None => {
            let img = decode_png_limited(bytes)?;
            classify(&img, fg, bg)
        }
    };
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
        locate_and_decode(&dark, width as usize, height as usize)
    };
    Ok(Inspection {
        width,
        height,
        exact_colour_fraction,
        decoded,
    })
}

/// Pixels reduced to what the inspection needs.
struct Pixels {
    width: u32,
    height: u32,
    /// Row-major, true where the pixel is nearer fg than bg.
    dark: Vec<bool>,
    /// Opaque pixels exactly equal to fg or bg.
    exact: u64,
}

/// Fast path for palette PNGs (what the reference server emits): classify the at most 256
/// palette entries once and map indices, instead of letting `image` expand every pixel to RGB
/// (that expansion alone costs ~40 ms at 4096x4096). Ok(None) means "not a palette PNG this
/// path handles": the general `image` path then decides, and words any error.
fn classify_indexed(bytes: &[u8], fg: Rgb, bg: Rgb) -> Result<Option<Pixels>, InspectError> {
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
    let mut dark = vec![false; w * h];
    let mut exact = 0u64;
    for (line, out) in buf
        .chunks_exact(frame.line_size)
        .zip(dark.chunks_exact_mut(w))
    {
        for (x, d) in out.iter_mut().enumerate() {
            let byte = line.get(x / per_byte).copied().unwrap_or(0);
            let shift = 8 - depth * (x % per_byte + 1);
            let (is_dark, is_exact) = verdicts[usize::from((byte >> shift) & mask)];
            *d = is_dark;
            exact += u64::from(is_exact);
        }
    }
    Ok(Some(Pixels {
        width: frame.width,
        height: frame.height,
        dark,
        exact,
    }))
}

fn decode_png_limited(bytes: &[u8]) -> Result<DynamicImage, InspectError> {
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
fn classify(img: &DynamicImage, fg: Rgb, bg: Rgb) -> Pixels {
    // Borrow the common 8-bit layouts; convert the rest (the decode limits bound the copy).
    let (dark, exact) = match img {
        DynamicImage::ImageRgb8(buf) => classify_raw::<3>(buf.as_raw(), fg, bg),
        DynamicImage::ImageRgba8(buf) => classify_raw::<4>(buf.as_raw(), fg, bg),
        other if other.color().has_alpha() => classify_raw::<4>(other.to_rgba8().as_raw(), fg, bg),
        other => classify_raw::<3>(other.to_rgb8().as_raw(), fg, bg),
    };
    Pixels {
        width: img.width(),
        height: img.height(),
        dark,
        exact,
    }
}

/// (nearer fg than bg, exactly fg or bg and opaque) for one RGBA pixel.
fn verdict(px: [u8; 4], fg: Rgb, bg: Rgb) -> (bool, bool) {
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

/// `N` is 3 (RGB) or 4 (RGBA) bytes per pixel.
fn classify_raw<const N: usize>(raw: &[u8], fg: Rgb, bg: Rgb) -> (Vec<bool>, u64) {
    let pixels = raw.chunks_exact(N);
    let mut dark = vec![false; pixels.len()];
    let mut exact = 0u64;
    // QR images are long runs of one colour: reuse the previous verdict when the pixel repeats.
    let mut last: Option<([u8; 4], (bool, bool))> = None;
    for (d, px) in dark.iter_mut().zip(pixels) {
        let key = [px[0], px[1], px[2], if N == 4 { px[3] } else { 255 }];
        let v = match last {
            Some((prev, v)) if prev == key => v,
            _ => {
                let v = verdict(key, fg, bg);
                last = Some((key, v));
                v
            }
        };
        *d = v.0;
        exact += u64::from(v.1);
    }
    (dark, exact)
}

fn dist2(a: [u8; 3], b: [u8; 3]) -> u32 {
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
struct BBox {
    left: usize,
    top: usize,
    right: usize,
    bottom: usize,
}

fn dark_bbox(dark: &[bool], w: usize) -> Option<BBox> {
    let mut bbox: Option<BBox> = None;
    for (y, row) in dark.chunks_exact(w).enumerate() {
        let Some(first) = row.iter().position(|&d| d) else {
            continue;
        };
        let last = row.iter().rposition(|&d| d).unwrap_or(first);
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

fn locate_and_decode(dark: &[bool], w: usize, h: usize) -> Result<Decoded, DecodeFailure> {
    if w == 0 || h == 0 {
        return Err(DecodeFailure::NoCodeFound);
    }
    let bbox = dark_bbox(dark, w).ok_or(DecodeFailure::NoCodeFound)?;
    let side = (bbox.right - bbox.left + 1).max(bbox.bottom - bbox.top + 1);

    // Estimate the module width before decoding: a code has at least 21 modules across, and
    // the top-left finder's top edge is a run of 7 dark modules starting at the box corner.
    let mut estimate = side as f64 / 21.0;
    let corner_row = &dark[bbox.top * w..(bbox.top + 1) * w];
    if corner_row[bbox.left] {
        let run = corner_row[bbox.left..].iter().take_while(|&&d| d).count();
        estimate = estimate.min(run as f64 / 7.0);
    }
    if estimate < MIN_MODULE_PX {
        return Err(DecodeFailure::ModulesTooSmall {
            module_px: estimate,
        });
    }

    // Wide modules: sample down to ~4 px per module so big images decode fast. If that fails
    // (e.g. the estimate was fooled), fall back to full resolution once.
    let factor = ((estimate / 4.0).floor() as usize).max(1);
    let mut result = run_rqrr(dark, w, h, factor);
    if factor > 1 && result.is_err() {
        result = run_rqrr(dark, w, h, 1);
    }
    let (content, level, version) = result?;

    let modules = 17 + 4 * u32::from(version);
    let module_px = side as f64 / f64::from(modules);
    let edges = [bbox.left, bbox.top, w - 1 - bbox.right, h - 1 - bbox.bottom];
    let quiet_px = edges.into_iter().min().unwrap_or(0);
    Ok(Decoded {
        content,
        level,
        version,
        modules,
        module_px,
        quiet_zone_modules: quiet_px as f64 / module_px,
    })
}

/// Detect and decode with rqrr on the (optionally downsampled) dark map.
fn run_rqrr(
    dark: &[bool],
    w: usize,
    h: usize,
    factor: usize,
) -> Result<(Vec<u8>, EcLevel, u8), DecodeFailure> {
    let (sw, sh) = (w / factor, h / factor);
    if sw == 0 || sh == 0 {
        return Err(DecodeFailure::NoCodeFound);
    }
    let half = factor / 2;
    // rqrr is third-party code fed attacker-controlled pixels: contain any panic in it so a
    // broken server cannot take the checker down (this relies on panic=unwind).
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut prepared = rqrr::PreparedImage::prepare_from_bitmap(sw, sh, |x, y| {
            dark[(y * factor + half) * w + x * factor + half]
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
                    let Some(level) = EcLevel::from_format_bits(meta.ecc_level) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &[u8] = b"https://example.com/l/abc123?utm_source=linkcert";
    const BLACK: Rgb = Rgb([0, 0, 0]);
    const WHITE: Rgb = Rgb([255, 255, 255]);

    fn opts(size: u32, margin: u32, level: EcLevel) -> RenderOptions {
        RenderOptions {
            size,
            margin,
            level,
            fg: BLACK,
            bg: WHITE,
            logo: false,
        }
    }

    fn decoded(insp: &Inspection) -> &Decoded {
        match &insp.decoded {
            Ok(d) => d,
            Err(e) => panic!("expected a decoded code, got {e:?}"),
        }
    }

    fn roundtrip(data: &[u8], o: &RenderOptions) -> Inspection {
        let png = render_png(data, o).expect("render");
        inspect_png(&png, o.fg, o.bg).expect("inspect")
    }

    #[test]
    fn round_trip_keeps_payload_and_exact_size() {
        for size in [100, 333, 600, 1000] {
            let insp = roundtrip(URL, &opts(size, 4, EcLevel::M));
            assert_eq!((insp.width, insp.height), (size, size), "size {size}");
            assert_eq!(decoded(&insp).content, URL, "size {size}");
            assert_eq!(insp.exact_colour_fraction, 1.0);
        }
    }

    #[test]
    fn binary_payload_round_trips() {
        let data: Vec<u8> = (0..=255u8).collect();
        let insp = roundtrip(&data, &opts(600, 4, EcLevel::L));
        assert_eq!(decoded(&insp).content, data);
    }

    #[test]
    fn level_read_back_equals_requested() {
        for level in [EcLevel::L, EcLevel::M, EcLevel::Q, EcLevel::H] {
            let insp = roundtrip(URL, &opts(400, 4, level));
            let d = decoded(&insp);
            assert_eq!(d.level, level);
            assert_eq!(d.modules, 17 + 4 * u32::from(d.version));
        }
    }

    #[test]
    fn logo_raises_low_levels_to_q_and_still_decodes() {
        for (asked, expected) in [
            (EcLevel::L, EcLevel::Q),
            (EcLevel::M, EcLevel::Q),
            (EcLevel::H, EcLevel::H),
        ] {
            let o = RenderOptions {
                logo: true,
                ..opts(400, 4, asked)
            };
            let insp = roundtrip(URL, &o);
            let d = decoded(&insp);
            assert_eq!(d.level, expected);
            assert_eq!(d.content, URL);
        }
    }

    #[test]
    fn logo_blanks_the_centre_to_bg() {
        let o = RenderOptions {
            logo: true,
            ..opts(400, 4, EcLevel::Q)
        };
        let png = render_png(URL, &o).expect("render");
        let img = image::load_from_memory(&png).expect("png").to_rgb8();
        // Centred square of side 100: [150, 250).
        for y in 150..250 {
            for x in 150..250 {
                assert_eq!(img.get_pixel(x, y).0, WHITE.0, "({x},{y})");
            }
        }
    }

    #[test]
    fn quiet_zone_measured_matches_margin() {
        for margin in [0, 2, 4, 10] {
            let insp = roundtrip(URL, &opts(600, margin, EcLevel::M));
            let d = decoded(&insp);
            assert!(
                (d.quiet_zone_modules - f64::from(margin)).abs() <= 1.0,
                "margin {margin}: measured {}",
                d.quiet_zone_modules
            );
            let expected_px = 600.0 / f64::from(d.modules + 2 * margin);
            assert!((d.module_px - expected_px).abs() < 0.5, "margin {margin}");
        }
    }

    #[test]
    fn custom_and_inverted_colours_are_exact_and_decode() {
        let pairs = [
            ("#FF0000", "#00FF00"),
            ("#fff", "#000"),       // inverted: light code on dark
            ("#777777", "#888888"), // low contrast
        ];
        for (fg, bg) in pairs {
            let o = RenderOptions {
                fg: parse_hex_color(fg).expect("fg"),
                bg: parse_hex_color(bg).expect("bg"),
                ..opts(300, 4, EcLevel::M)
            };
            let insp = roundtrip(URL, &o);
            assert_eq!(insp.exact_colour_fraction, 1.0, "{fg} on {bg}");
            assert_eq!(decoded(&insp).content, URL, "{fg} on {bg}");
        }
    }

    #[test]
    fn wrong_expected_colours_lower_the_exact_fraction() {
        let png = render_png(URL, &opts(200, 4, EcLevel::M)).expect("render");
        let insp = inspect_png(&png, Rgb([10, 10, 10]), WHITE).expect("inspect");
        assert!(insp.exact_colour_fraction < 1.0);
        assert_eq!(decoded(&insp).content, URL);
    }

    #[test]
    fn identical_colours_are_unreadable() {
        let o = RenderOptions {
            fg: WHITE,
            ..opts(200, 4, EcLevel::M)
        };
        let insp = roundtrip(URL, &o);
        assert!(matches!(insp.decoded, Err(DecodeFailure::Unreadable(_))));
    }

    #[test]
    fn capacity_limit_is_enforced() {
        let o = opts(1000, 4, EcLevel::L);
        match render_png(&vec![b'a'; 2954], &o) {
            Err(e @ RenderError::DataTooLong { .. }) => {
                assert_eq!(
                    e.to_string(),
                    "the url is 2954 bytes; a QR code at level L holds at most 2953"
                );
            }
            other => panic!("expected DataTooLong, got {other:?}"),
        }
        assert!(render_png(&vec![b'a'; 2953], &o).is_ok());
        // With a logo the effective level is Q, so its capacity applies.
        let logo = RenderOptions { logo: true, ..o };
        assert!(matches!(
            render_png(&vec![b'a'; 1664], &logo),
            Err(RenderError::DataTooLong {
                level: EcLevel::Q,
                capacity: 1663,
                ..
            })
        ));
    }

    #[test]
    fn bad_sizes_are_errors() {
        for size in [0, 8193, u32::MAX] {
            assert!(matches!(
                render_png(URL, &opts(size, 4, EcLevel::M)),
                Err(RenderError::InvalidSize { .. })
            ));
        }
        // A huge margin only makes the code vanish; it must not overflow.
        assert!(render_png(URL, &opts(64, u32::MAX, EcLevel::M)).is_ok());
    }

    #[test]
    fn png_is_one_bit_palette() {
        let png = render_png(URL, &opts(600, 4, EcLevel::M)).expect("render");
        let decoder = png::Decoder::new(Cursor::new(&png));
        let reader = decoder.read_info().expect("header");
        let info = reader.info();
        assert_eq!(info.color_type, png::ColorType::Indexed);
        assert_eq!(info.bit_depth, png::BitDepth::One);
        assert_eq!(info.palette.as_deref().map(<[u8]>::len), Some(6));
    }

    #[test]
    fn parse_hex_color_forms() {
        assert_eq!(parse_hex_color("#abc"), Some(Rgb([0xaa, 0xbb, 0xcc])));
        assert_eq!(parse_hex_color("#AABBCC"), Some(Rgb([0xaa, 0xbb, 0xcc])));
        assert_eq!(parse_hex_color("#aAbBcC"), Some(Rgb([0xaa, 0xbb, 0xcc])));
        for bad in [
            "red", "#12345", "#GGGGGG", "abc", "", "#", "#abcd", "#ééé", "#+12",
        ] {
            assert_eq!(parse_hex_color(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ec_level_parse_and_order() {
        assert_eq!(EcLevel::parse("Q"), Some(EcLevel::Q));
        assert_eq!(EcLevel::parse("h"), Some(EcLevel::H));
        assert_eq!(EcLevel::parse("X"), None);
        assert!(EcLevel::L < EcLevel::M && EcLevel::M < EcLevel::Q && EcLevel::Q < EcLevel::H);
        assert_eq!(EcLevel::M.as_str(), "M");
    }

    #[test]
    fn garbage_truncated_and_empty_bodies_are_errors() {
        assert!(matches!(
            inspect_png(b"", BLACK, WHITE),
            Err(InspectError::Empty)
        ));
        assert!(matches!(
            inspect_png(b"<html>not a png</html>", BLACK, WHITE),
            Err(InspectError::NotPng)
        ));
        let png = render_png(URL, &opts(200, 4, EcLevel::M)).expect("render");
        for cut in [8, 20, 40, png.len() / 2, png.len() - 13] {
            let err = inspect_png(&png[..cut], BLACK, WHITE);
            assert!(
                matches!(err, Err(InspectError::Malformed(_))),
                "cut {cut}: {err:?}"
            );
        }
        // Signature followed by noise.
        let mut noise = PNG_SIGNATURE.to_vec();
        noise.extend((0..500u32).map(|i| (i * 7919 % 251) as u8));
        assert!(inspect_png(&noise, BLACK, WHITE).is_err());
    }

    #[test]
    fn huge_declared_dimensions_are_refused() {
        let png = png_declaring(100_000, 100_000);
        let err = inspect_png(&png, BLACK, WHITE);
        assert!(matches!(err, Err(InspectError::TooLarge(_))), "{err:?}");
        assert!(!err.map(|_| ()).unwrap_err().to_string().is_empty());
    }

    fn encode_rgb(w: u32, h: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
        let mut data = Vec::new();
        for y in 0..h {
            for x in 0..w {
                data.extend(pixel(x, y));
            }
        }
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().expect("header");
        writer.write_image_data(&data).expect("data");
        writer.finish().expect("finish");
        out
    }

    #[test]
    fn valid_png_without_code_is_no_code_found() {
        let blank = encode_rgb(200, 200, |_, _| [255, 255, 255]);
        let insp = inspect_png(&blank, BLACK, WHITE).expect("inspect");
        assert_eq!(insp.decoded, Err(DecodeFailure::NoCodeFound));
        assert_eq!(insp.exact_colour_fraction, 1.0);

        let square = encode_rgb(200, 200, |x, y| {
            if (50..150).contains(&x) && (50..150).contains(&y) {
                [0, 0, 0]
            } else {
                [255, 255, 255]
            }
        });
        let insp = inspect_png(&square, BLACK, WHITE).expect("inspect");
        assert_eq!(insp.decoded, Err(DecodeFailure::NoCodeFound));
    }

    #[test]
    fn alpha_is_composited_over_bg() {
        // Transparent where the code is light: still decodes, but is not "exact".
        let png = render_png(URL, &opts(300, 4, EcLevel::M)).expect("render");
        let rgb = image::load_from_memory(&png).expect("png").to_rgb8();
        let rgba = image::RgbaImage::from_fn(300, 300, |x, y| {
            let dark = rgb.get_pixel(x, y).0 == BLACK.0;
            image::Rgba(if dark { [0, 0, 0, 255] } else { [0, 0, 0, 0] })
        });
        let mut out = Vec::new();
        rgba.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .expect("encode");
        let insp = inspect_png(&out, BLACK, WHITE).expect("inspect");
        assert_eq!(decoded(&insp).content, URL);
        assert!(insp.exact_colour_fraction < 1.0);
    }

    #[test]
    fn rgb_and_palette_paths_agree() {
        // Same picture through the `image` (RGB) path and the palette fast path.
        let o = RenderOptions {
            fg: Rgb([0x12, 0x34, 0x56]),
            bg: Rgb([0xfe, 0xdc, 0xba]),
            ..opts(300, 4, EcLevel::Q)
        };
        let png = render_png(URL, &o).expect("render");
        let rgb = image::load_from_memory(&png).expect("png").to_rgb8();
        let as_rgb = encode_rgb(300, 300, |x, y| rgb.get_pixel(x, y).0);
        let a = inspect_png(&png, o.fg, o.bg).expect("palette path");
        let b = inspect_png(&as_rgb, o.fg, o.bg).expect("rgb path");
        assert_eq!(a, b);
        assert_eq!(decoded(&a).level, EcLevel::Q);
    }

    #[test]
    fn downscaled_detection_decodes_wide_modules() {
        let png = render_png(URL, &opts(1200, 4, EcLevel::M)).expect("render");
        let img = image::load_from_memory(&png).expect("png");
        let px = classify(&img, BLACK, WHITE);
        // ~29 px modules: a factor of 7 leaves ~4 px per module.
        let (content, level, _) = run_rqrr(&px.dark, 1200, 1200, 7).expect("downscaled decode");
        assert_eq!((content.as_slice(), level), (URL, EcLevel::M));
    }

    #[test]
    fn tiny_modules_are_reported_not_decoded() {
        let insp = roundtrip(URL, &opts(21, 2, EcLevel::M));
        assert_eq!((insp.width, insp.height), (21, 21));
        match insp.decoded {
            Err(DecodeFailure::ModulesTooSmall { module_px }) => assert!(module_px < 2.0),
            other => panic!("expected ModulesTooSmall, got {other:?}"),
        }
    }

    #[test]
    fn large_image_decodes() {
        let insp = roundtrip(URL, &opts(2048, 4, EcLevel::H));
        let d = decoded(&insp);
        assert_eq!(d.content, URL);
        assert_eq!(d.level, EcLevel::H);
    }
}
