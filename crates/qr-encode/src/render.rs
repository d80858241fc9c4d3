//! Rendering: a QR matrix drawn straight into a packed 1-bit palette PNG (the reference's hot
//! path), reusing identical rows.

use super::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

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

/// Symbols encoded lately, kept: encoding (choosing the mask above all) costs more than drawing
/// the pixels, and clients ask for the same content at many sizes and colours.
const RECENT_SYMBOLS: usize = 32;

/// A symbol's modules across and its modules, row by row.
type Symbol = (usize, Arc<Vec<Color>>);

static RECENT: Mutex<VecDeque<(Vec<u8>, EcLevel, Symbol)>> = Mutex::new(VecDeque::new());

/// The symbol for `data` at `level`: a recent one, or encoded now and kept.
fn encoded(data: &[u8], level: EcLevel) -> Result<Symbol, QrError> {
    let lock = || RECENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, symbol)) = lock().iter().find(|(d, l, _)| *l == level && d == data) {
        return Ok(symbol.clone());
    }
    let (width, colors) = mask::encode(data, qrcode_level(level))?;
    let symbol = (width, Arc::new(colors));
    let mut recent = lock();
    if recent.len() == RECENT_SYMBOLS {
        recent.pop_front();
    }
    recent.push_back((data.to_vec(), level, symbol.clone()));
    Ok(symbol)
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
    let (modules, colors) = encoded(data, level).map_err(|e| match e {
        QrError::DataTooLong => too_long,
        other => RenderError::Encode(other.to_string()),
    })?;

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
