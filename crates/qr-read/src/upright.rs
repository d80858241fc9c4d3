//! A symbol drawn upright on the pixel grid, as a renderer serves it, read straight off its
//! modules: one sample at each module's centre, then decoded. Searching the image for finder
//! patterns and fitting a perspective grid (rqrr's way, which any photo needs) is most of what
//! inspecting a large or dense code costs; a served PNG has no perspective to fit.
//!
//! Only a symbol whose every function pattern is exactly in place is read this way (finders,
//! separators, timing, alignment patterns, the dark module), and only a decode that the
//! error correction accepts counts. Anything else returns None and the full search decides as
//! before, so this path can make a verdict faster, never different.

use super::*;
use dark::Dark;
use inspect::BBox;

/// The decoded symbol, read upright, or None when it is not a clean upright symbol.
pub(super) fn read(dark: &Dark, bbox: BBox) -> Option<(Vec<u8>, EcLevel, u8)> {
    let side = bbox.right - bbox.left + 1;
    if side != bbox.bottom - bbox.top + 1 {
        return None;
    }
    // The top-left finder's top edge: 7 modules dark from the corner.
    let run = dark.run_from(bbox.left, bbox.top);
    // The versions whose module width makes that run nearest 7 modules, nearest first: a
    // fractional module width rounds the run, so neighbours are tried too.
    let off = |v: usize| (run as f64 - 7.0 * side as f64 / (17 + 4 * v) as f64).abs();
    let mut versions: Vec<usize> = (1..=40).collect();
    versions.sort_by(|&a, &b| off(a).total_cmp(&off(b)));
    let (version, grid) = versions.into_iter().take(3).find_map(|version| {
        let n = 17 + 4 * version;
        let px = side as f64 / n as f64;
        if px < MIN_MODULE_PX || off(version) > px {
            return None;
        }
        // Each module's centre, in pixels from the box's corner: once per axis, not per module.
        let centres: Vec<usize> = (0..n).map(|i| ((i as f64 + 0.5) * px) as usize).collect();
        let at = |x: usize, y: usize| dark.get(bbox.left + centres[x], bbox.top + centres[y]);
        let grid = rqrr::SimpleGrid::from_func(n, at);
        function_patterns_hold(&grid, version).then_some((version, grid))
    })?;
    // rqrr is third-party code: contain any panic, as the full search does.
    let decoded = catch_unwind(AssertUnwindSafe(|| {
        let mut content = Vec::new();
        let meta = rqrr::Grid::new(grid).decode_to(&mut content).ok()?;
        let level = level_of_format_bits(meta.ecc_level)?;
        (meta.version.0 == version).then_some((content, level, version as u8))
    }));
    decoded.ok().flatten()
}

/// Every function pattern of a symbol of `version` is in place (ISO/IEC 18004 §6.3).
fn function_patterns_hold(g: &impl rqrr::BitGrid, version: usize) -> bool {
    let n = g.size();
    let last = n - 7;
    // Finders and their separators: rings around each finder's centre.
    for (cy, cx) in [(3, 3), (3, last + 3), (last + 3, 3)] {
        for y in cy.saturating_sub(4)..=(cy + 4).min(n - 1) {
            for x in cx.saturating_sub(4)..=(cx + 4).min(n - 1) {
                let d = y.abs_diff(cy).max(x.abs_diff(cx));
                if g.bit(y, x) != (d != 2 && d != 4) {
                    return false;
                }
            }
        }
    }
    // Timing patterns: row and column 6 alternate between the finders, dark on even modules.
    for i in 8..last - 1 {
        if g.bit(6, i) != (i % 2 == 0) || g.bit(i, 6) != (i % 2 == 0) {
            return false;
        }
    }
    // The dark module beside the bottom-left finder.
    if !g.bit(4 * version + 9, 8) {
        return false;
    }
    let centres = alignment_centres(version);
    let outer = centres.last().copied().unwrap_or(0);
    for &cy in &centres {
        for &cx in &centres {
            // Where a finder sits, there is no alignment pattern.
            if (cy == 6 && (cx == 6 || cx == outer)) || (cx == 6 && cy == outer) {
                continue;
            }
            for y in cy - 2..=cy + 2 {
                for x in cx - 2..=cx + 2 {
                    let d = y.abs_diff(cy).max(x.abs_diff(cx));
                    if g.bit(y, x) != (d != 1) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// Row and column coordinates of the alignment patterns' centres (ISO/IEC 18004 Annex E),
/// empty for version 1.
fn alignment_centres(version: usize) -> Vec<usize> {
    if version < 2 {
        return Vec::new();
    }
    let count = version / 7 + 2;
    let step = if version == 32 {
        26
    } else {
        (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
    };
    let mut centres = vec![6; count];
    let mut at = 17 + 4 * version - 7;
    for c in centres.iter_mut().skip(1).rev() {
        *c = at;
        at = at.saturating_sub(step);
    }
    centres
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkcert_qr_encode::{RenderOptions, render_png};

    const BLACK: Rgb = Rgb([0, 0, 0]);
    const WHITE: Rgb = Rgb([255, 255, 255]);

    /// Annex E's table, for the versions where the formula is easiest to get wrong.
    #[test]
    fn alignment_centres_are_the_standards() {
        assert_eq!(alignment_centres(1), Vec::<usize>::new());
        assert_eq!(alignment_centres(2), [6, 18]);
        assert_eq!(alignment_centres(7), [6, 22, 38]);
        assert_eq!(alignment_centres(15), [6, 26, 48, 70]);
        assert_eq!(alignment_centres(32), [6, 34, 60, 86, 112, 138]);
        assert_eq!(alignment_centres(36), [6, 24, 50, 76, 102, 128, 154]);
        assert_eq!(alignment_centres(40), [6, 30, 58, 86, 114, 142, 170]);
    }

    fn pixels(data: &[u8], size: u32, level: EcLevel) -> Dark {
        let o = RenderOptions {
            size,
            margin: 4,
            level,
            fg: BLACK,
            bg: WHITE,
            logo: false,
        };
        let png = render_png(data, &o).expect("render");
        let img = image::load_from_memory(&png).expect("png");
        inspect::classify(&img, BLACK, WHITE).dark
    }

    /// Rendered symbols of many versions and sizes (fractional module widths too) read
    /// upright, with what rqrr's full search reads.
    #[test]
    fn rendered_symbols_read_upright_as_the_full_search_reads_them() {
        for (len, size, level) in [
            (10, 100, EcLevel::L),
            (60, 333, EcLevel::M),
            (300, 600, EcLevel::H),
            (1200, 1000, EcLevel::Q),
            (2953, 1500, EcLevel::L),
        ] {
            let data: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let dark = pixels(&data, size, level);
            let bbox = inspect::dark_bbox(&dark).expect("a symbol");
            let fast = read(&dark, bbox).expect("read upright");
            let full = inspect::run_rqrr(&dark, 1).expect("full search");
            assert_eq!(fast, full, "{len} bytes at {size} px");
            assert_eq!(fast.0, data);
        }
    }

    /// One module of a function pattern flipped: not read upright (the full search decides).
    #[test]
    fn a_broken_function_pattern_is_left_to_the_full_search() {
        let data = b"https://example.com/l/abc123";
        let dark = pixels(data, 600, EcLevel::M);
        let bbox = inspect::dark_bbox(&dark).expect("a symbol");
        assert!(read(&dark, bbox).is_some());
        let (n, px) = {
            let side = bbox.right - bbox.left + 1;
            let v = read(&dark, bbox).map(|r| r.2).unwrap_or(0) as usize;
            (17 + 4 * v, side as f64 / (17 + 4 * v) as f64)
        };
        // The timing pattern's module at (6, 9), light, painted dark.
        let mut broken = dark.clone();
        let (x0, y0) = (
            bbox.left + (9.0 * px) as usize,
            bbox.top + (6.0 * px) as usize,
        );
        for y in y0..y0 + px as usize {
            for x in x0..x0 + px as usize {
                broken.set(x, y, true);
            }
        }
        assert!(n > 21);
        assert_eq!(read(&broken, bbox), None);
    }
}
