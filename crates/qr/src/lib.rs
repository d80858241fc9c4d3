//! What the QR encoder (`linkcert-qr-encode`, the reference's) and the reader
//! (`linkcert-qr-read`, `check`'s) both speak: error-correction levels, colours, capacities and
//! the largest image side. Kept apart from both so that a change to one side never rebuilds the
//! other.

use std::fmt;

/// Largest image side either direction accepts; anything bigger is a mistake or an attack.
pub const MAX_SIDE: u32 = 8192;

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
