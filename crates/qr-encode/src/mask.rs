//! Encoding a symbol, the mask chosen by ISO/IEC 18004 7.8.3's penalty exactly as `qrcode`
//! scores it, but on a flat grid of booleans. `qrcode` scores each of the eight candidates
//! through a boxed closure per module and position: that was most of the reference's CPU under
//! `check`, whose probes ask for many new contents. The symbol is the one `qrcode` draws,
//! module for module (tested against it).

use qrcode::canvas::{Canvas, MaskPattern};
use qrcode::types::{Color, QrResult, Version};

/// The eight patterns in `qrcode`'s order: the first of equal scores wins, as there.
const PATTERNS: [MaskPattern; 8] = [
    MaskPattern::Checkerboard,
    MaskPattern::HorizontalLines,
    MaskPattern::VerticalLines,
    MaskPattern::DiagonalLines,
    MaskPattern::LargeCheckerboard,
    MaskPattern::Fields,
    MaskPattern::Diamonds,
    MaskPattern::Meadow,
];

/// `data` as a symbol at `level`: its width in modules and its modules row by row, what
/// `QrCode::with_error_correction_level(data, level)` gives.
pub(super) fn encode(data: &[u8], level: qrcode::EcLevel) -> QrResult<(usize, Vec<Color>)> {
    let bits = qrcode::bits::encode_auto(data, level)?;
    let version = bits.version();
    if let Version::Micro(_) = version {
        // Not chosen by `encode_auto`; scored differently. Left to `qrcode` whole.
        let code = qrcode::QrCode::with_bits(bits, level)?;
        return Ok((code.width(), code.into_colors()));
    }
    let (codewords, ec) = qrcode::ec::construct_codewords(&bits.into_bytes(), version, level)?;
    let mut canvas = Canvas::new(version, level);
    canvas.draw_all_functional_patterns();
    canvas.draw_data(&codewords, &ec);
    let width = version.width() as usize;
    let mut best: Option<(u16, Vec<Color>)> = None;
    let mut dark = Vec::with_capacity(width * width);
    for pattern in PATTERNS {
        let mut masked = canvas.clone();
        masked.apply_mask(pattern);
        let colors = masked.into_colors();
        dark.clear();
        dark.extend(colors.iter().map(|c| *c == Color::Dark));
        let score = penalty(&dark, width);
        if best.as_ref().is_none_or(|(b, _)| score < *b) {
            best = Some((score, colors));
        }
    }
    let (_, colors) = best.expect("eight patterns scored");
    Ok((width, colors))
}

/// The four penalties summed (N1 and N3 along rows and columns), in `qrcode`'s 16-bit arithmetic (wrapping, as its release
/// build does; real symbols stay far below it).
fn penalty(dark: &[bool], w: usize) -> u16 {
    // Columns as rows of a transposed copy: every line scan then reads contiguous memory.
    let mut transposed = vec![false; dark.len()];
    for (y, row) in dark.chunks_exact(w).enumerate() {
        for (x, &m) in row.iter().enumerate() {
            transposed[x * w + y] = m;
        }
    }
    let mut total = 0u16;
    for grid in [dark, &transposed] {
        let (mut found, mut run) = (0u32, 0u16);
        for line in grid.chunks_exact(w) {
            run = run.wrapping_add(runs(line));
            found += finder_like(line);
        }
        total = total
            .wrapping_add(run)
            .wrapping_add((found as u16).wrapping_sub(360));
    }
    total
        .wrapping_add(blocks(dark, w))
        .wrapping_add(balance(dark))
}

/// N1: every run of 5 + k modules of one colour in a line scores 3 + k. Branch-free: which
/// way a module goes is data, and a mispredicted branch per module was most of the cost.
fn runs(line: &[bool]) -> u16 {
    let Some((&first, rest)) = line.split_first() else {
        return 0;
    };
    let (mut score, mut len, mut prev) = (0u32, 1u32, first);
    for &m in rest {
        let same = m == prev;
        let ended = if len >= 5 { len - 2 } else { 0 };
        score += if same { 0 } else { ended };
        len = if same { len + 1 } else { 1 };
        prev = m;
    }
    if len >= 5 {
        score += len - 2;
    }
    score as u16
}

/// N2: every 2x2 block of one colour, overlaps counted, scores 3.
fn blocks(dark: &[bool], w: usize) -> u16 {
    let mut score = 0u32;
    for (top, bottom) in dark.chunks_exact(w).zip(dark.chunks_exact(w).skip(1)) {
        // Dark modules counted, without a branch: all four light or all four dark.
        let pairs = top
            .iter()
            .zip(&top[1..])
            .zip(bottom.iter().zip(&bottom[1..]));
        for ((&a, &b), (&c, &d)) in pairs {
            let n = u8::from(a) + u8::from(b) + u8::from(c) + u8::from(d);
            score += u32::from((n == 0) | (n == 4));
        }
    }
    (3 * score) as u16
}

/// N3 for one line: 40 for every 1:1:3:1:1 dark-light pattern with four light modules (or the
/// edge) on at least one side. Read through a sliding window of the last 15 modules (the
/// edges light): patterns light before, plus light after, less light on both sides.
fn finder_like(line: &[bool]) -> u32 {
    // Grouped as light run and pattern, not by nibble.
    #![allow(clippy::unusual_byte_groupings)]
    const BEFORE: u32 = 0b0000_1011101; // 11 modules, oldest first
    const AFTER: u32 = 0b1011101_0000;
    const BOTH: u32 = 0b0000_1011101_0000; // 15 modules
    let mut window = 0u32;
    let mut found = 0u32;
    for &m in line.iter().chain(&[false; 4]) {
        window = ((window << 1) | u32::from(m)) & 0x7fff;
        let last11 = window & 0x7ff;
        found += u32::from(last11 == BEFORE) + u32::from(last11 == AFTER);
        found -= u32::from(window == BOTH);
    }
    40 * found
}

/// N4: the distance of the dark share from half, in percent.
fn balance(dark: &[bool]) -> u16 {
    let n = dark.iter().filter(|&&m| m).count();
    let ratio = n * 200 / dark.len();
    ratio.abs_diff(100) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use qrcode::{EcLevel, QrCode};

    /// The symbol is `qrcode`'s, module for module: every version from 1 to 40 at every level
    /// (160 symbols of random bytes, each the shortest content the encoder puts in that
    /// version), then digits and URL text, whose encoding modes differ.
    #[test]
    fn the_mask_chosen_is_the_one_qrcode_chooses() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut byte = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        };
        let same = |data: &[u8], level: EcLevel| -> Option<usize> {
            let theirs = QrCode::with_error_correction_level(data, level).ok()?;
            let (width, ours) = encode(data, level).expect("encodes where qrcode does");
            assert_eq!(width, theirs.width(), "{} bytes at {level:?}", data.len());
            assert!(
                ours == theirs.into_colors(),
                "{} bytes at {level:?}",
                data.len()
            );
            Some(width)
        };
        let random: Vec<u8> = (0..2953).map(|_| byte()).collect();
        for level in [EcLevel::L, EcLevel::M, EcLevel::Q, EcLevel::H] {
            let mut tested = Vec::new();
            let mut version = 0;
            for len in 1..=random.len() {
                // The encoder's choice of version alone is cheap: find where each one starts.
                let Ok(bits) = qrcode::bits::encode_auto(&random[..len], level) else {
                    break;
                };
                let Version::Normal(v) = bits.version() else {
                    continue;
                };
                if v != version {
                    version = v;
                    tested.extend(same(&random[..len], level));
                }
            }
            let expected: Vec<usize> = (1..=40).map(|v| 17 + 4 * v).collect();
            assert_eq!(tested, expected, "every version at {level:?}");
        }
        for len in [1usize, 20, 100, 400, 1273, 2331] {
            let digits: Vec<u8> = random[..len].iter().map(|b| b'0' + b % 10).collect();
            let url = format!("https://example.com/{}", "ab/c?d=1&".repeat(len / 9 + 1));
            for level in [EcLevel::L, EcLevel::H] {
                same(&digits, level);
                same(&url.as_bytes()[..len.max(20)], level);
            }
        }
    }

    #[test]
    fn each_penalty_scores_what_the_standard_says() {
        // A run of 7 scores 5; of 4, nothing.
        assert_eq!(runs(&[true; 7]), 5);
        assert_eq!(runs(&[true, true, true, true, false]), 0);
        // A 3x3 square of one colour holds four 2x2 blocks.
        assert_eq!(blocks(&[true; 9], 3), 12);
        // 1:1:3:1:1 with light on one side scores; dark on both does not.
        let lone = [
            true, false, true, true, true, false, true, false, false, false, false,
        ];
        assert_eq!(finder_like(&lone), 40);
        let mut boxed = vec![true; 4];
        boxed.extend([true, false, true, true, true, false, true]);
        boxed.extend([true; 4]);
        assert_eq!(finder_like(&boxed), 0);
        assert_eq!(balance(&[true, false]), 0);
        assert_eq!(balance(&[true, true, true, false]), 50);
    }
}
