//! QR codes drawn as PNG: the reference server's side. Rendering is its hot path, so it draws
//! straight into a packed 1-bit palette image and reuses identical rows.

use qrcode::types::{Color, QrError};

use thiserror::Error;

mod mask;
mod render;

pub use linkcert_qr::*;
pub use render::*;

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

fn qrcode_level(level: EcLevel) -> qrcode::EcLevel {
    match level {
        EcLevel::L => qrcode::EcLevel::L,
        EcLevel::M => qrcode::EcLevel::M,
        EcLevel::Q => qrcode::EcLevel::Q,
        EcLevel::H => qrcode::EcLevel::H,
    }
}
