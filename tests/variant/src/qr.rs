//! GET /qr. Choices where the document is silent: size 64..=2048 and margin 1..=16 (whole
//! numbers, `300.0` included), colours `#RRGGBB` only, `logo` and `hideLogo` accepted and
//! ignored on every plan (logos are never drawn), every validation error 400. The image is an
//! 8-bit RGB PNG of exactly size x size px (with sRGB, pHYs and tEXt chunks, its data over
//! several IDAT chunks); margin counts modules, and the pixels a module grid
//! cannot fill are split evenly around it.

use axum::body::Body;
use axum::http::HeaderValue;
use axum::response::Response;
use qrcode::{Color, EcLevel, QrCode};

use super::{Workspace, error, query};

fn number(v: Option<&String>, name: &str, default: u32, lo: u32, hi: u32) -> Result<u32, String> {
    let Some(v) = v else { return Ok(default) };
    match v.parse::<f64>() {
        Ok(n) if n.fract() == 0.0 && n >= f64::from(lo) && n <= f64::from(hi) => Ok(n as u32),
        _ => Err(format!("{name} must be a whole number from {lo} to {hi}")),
    }
}

fn colour(v: Option<&String>, default: [u8; 3]) -> Result<[u8; 3], String> {
    let Some(v) = v else { return Ok(default) };
    let hex = v.strip_prefix('#').filter(|h| h.len() == 6 && h.is_ascii());
    let parse = |i: usize| hex.and_then(|h| u8::from_str_radix(&h[i..i + 2], 16).ok());
    match (parse(0), parse(2), parse(4)) {
        (Some(r), Some(g), Some(b)) => Ok([r, g, b]),
        _ => Err(format!("{v:?} is not a colour of the form #RRGGBB")),
    }
}

fn boolean(v: Option<&String>, name: &str) -> Result<(), String> {
    match v.map(String::as_str) {
        None | Some("true") | Some("false") => Ok(()),
        Some(_) => Err(format!("{name} must be true or false")),
    }
}

pub fn get(_ws: &Workspace, q: Option<&str>) -> Response {
    match render(q) {
        Ok(png) => {
            let mut r = Response::new(Body::from(png));
            r.headers_mut()
                .insert("content-type", HeaderValue::from_static("image/png"));
            r
        }
        Err(Rejected(msg)) => error(400, msg),
    }
}

struct Rejected(String);

impl From<String> for Rejected {
    fn from(s: String) -> Self {
        Rejected(s)
    }
}

fn render(q: Option<&str>) -> Result<Vec<u8>, Rejected> {
    let q = query(q)?;
    let url = q.get("url").ok_or_else(|| "url is required".to_string())?;
    if url.is_empty() || url.chars().count() > 32000 {
        return Err("url must have 1 to 32000 characters".to_string().into());
    }
    let size = number(q.get("size"), "size", 600, 64, 2048)?;
    let margin = number(q.get("margin"), "margin", 2, 1, 16)?;
    let level = match q.get("level").map(String::as_str) {
        None | Some("L") => EcLevel::L,
        Some("M") => EcLevel::M,
        Some("Q") => EcLevel::Q,
        Some("H") => EcLevel::H,
        Some(_) => return Err("level must be one of L, M, Q, H".to_string().into()),
    };
    let fg = colour(q.get("fgColor"), [0, 0, 0])?;
    let bg = colour(q.get("bgColor"), [255, 255, 255])?;
    boolean(q.get("hideLogo"), "hideLogo")?;
    boolean(q.get("includeMargin"), "includeMargin")?;
    let code = QrCode::with_error_correction_level(url.as_bytes(), level)
        .map_err(|_| "url is too long for a QR code at this level".to_string())?;
    let modules = code.width() as u32;
    let total = modules + 2 * margin;
    let px = size / total;
    if px == 0 {
        return Err(format!("size {size} is too small for a {total}-module code").into());
    }
    let offset = (size - px * total) / 2 + margin * px;
    let colors = code.to_colors();
    let mut data = Vec::with_capacity((size * size * 3) as usize);
    for y in 0..size {
        for x in 0..size {
            let (mx, my) = (x.wrapping_sub(offset) / px, y.wrapping_sub(offset) / px);
            let dark = x >= offset
                && y >= offset
                && mx < modules
                && my < modules
                && colors[(my * modules + mx) as usize] == Color::Dark;
            data.extend_from_slice(if dark { &fg } else { &bg });
        }
    }
    Ok(encode(size, &data).map_err(|e| e.to_string())?)
}

/// The PNG, with legal choices the reference does not make (so `qr.png-datastream` is held to
/// the specification, not to the reference's encoder): sRGB and pHYs before the image data,
/// the data split over IDAT chunks of 8 KiB, a tEXt chunk after them.
fn encode(size: u32, rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    use std::io::Write;
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, size, size);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
    enc.set_pixel_dims(Some(png::PixelDimensions {
        xppu: 2835,
        yppu: 2835,
        unit: png::Unit::Meter,
    }));
    let mut w = enc.write_header()?;
    let mut stream = w.stream_writer_with_size(8192)?;
    stream.write_all(rgb)?;
    stream.finish()?;
    w.write_chunk(
        png::chunk::ChunkType(*b"tEXt"),
        b"Software\0linkcert-variant",
    )?;
    w.finish()?;
    Ok(out)
}
