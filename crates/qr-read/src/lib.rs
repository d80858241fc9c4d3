//! QR codes read back from PNG: `check`'s side. Inspection runs on PNGs from any server,
//! possibly hostile, so every size is bounded and nothing on this path may panic.

use std::io::Cursor;

use std::panic::{AssertUnwindSafe, catch_unwind};

use image::{DynamicImage, ImageError, ImageFormat, ImageReader, Limits};

use thiserror::Error;

mod dark;
pub mod datastream;
mod inspect;
mod upright;

pub use inspect::*;
pub use linkcert_qr::*;

/// Allocation ceiling for decoding a PNG (a decompression bomb must not take the checker down).
pub const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;

/// Below this module width (pixels) we do not try to decode: the checker reports it instead.
pub const MIN_MODULE_PX: f64 = 2.0;

/// rqrr reports the raw two format-info bits (see rqrr's `read_format` and the order of
/// `VersionInfo::ecc`): 0 = M, 1 = L, 2 = H, 3 = Q, as in ISO/IEC 18004.
fn level_of_format_bits(bits: u16) -> Option<EcLevel> {
    match bits {
        0 => Some(EcLevel::M),
        1 => Some(EcLevel::L),
        2 => Some(EcLevel::H),
        3 => Some(EcLevel::Q),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkcert_qr_encode::{RenderError, RenderOptions, render_png};

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

    /// The same picture however it is encoded; a logo drawn over the code is another.
    #[test]
    fn the_same_picture_is_the_same_whatever_its_encoding_and_a_logo_is_not() {
        let q = opts(300, 2, EcLevel::Q);
        let plain = render_png(URL, &q).unwrap();
        let img = image::load_from_memory(&plain).unwrap().to_rgba8();
        let mut rgba = Vec::new();
        img.write_to(&mut Cursor::new(&mut rgba), ImageFormat::Png)
            .unwrap();
        assert_ne!(plain, rgba, "another encoding of the same pixels");
        assert!(same_picture(&plain, &rgba, BLACK, WHITE).unwrap());
        let logo = render_png(URL, &RenderOptions { logo: true, ..q }).unwrap();
        assert!(!same_picture(&plain, &logo, BLACK, WHITE).unwrap());
        let other = render_png(URL, &opts(301, 2, EcLevel::Q)).unwrap();
        assert!(!same_picture(&plain, &other, BLACK, WHITE).unwrap());
        assert!(matches!(
            same_picture(b"not a png", &plain, BLACK, WHITE),
            Err(InspectError::NotPng)
        ));
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

    /// Palette images of every bit depth, rows not a whole number of bytes: the palette path
    /// classifies every pixel as the general path does, bit for bit.
    #[test]
    fn palette_images_of_every_depth_classify_as_the_general_path_does() {
        // Index 0 exact bg, 1 exact fg, 2 near fg, 3 near bg, 4.. dark-ish; one partly clear.
        let palette = [
            255, 255, 255, 0, 0, 0, 30, 30, 30, 220, 220, 220, 90, 10, 10,
        ];
        let trns = [255, 255, 255, 255, 100];
        for (depth, bits, colours) in [
            (png::BitDepth::One, 1, 2u32),
            (png::BitDepth::Two, 2, 4),
            (png::BitDepth::Four, 4, 5),
            (png::BitDepth::Eight, 8, 5),
        ] {
            let (w, h) = (37u32, 9u32);
            let per_byte = 8 / bits;
            let stride = (w as usize).div_ceil(per_byte);
            let mut data = vec![0u8; stride * h as usize];
            for y in 0..h as usize {
                for x in 0..w as usize {
                    let index = ((x * 7 + y * 3) % colours as usize) as u8;
                    let shift = 8 - bits * (x % per_byte + 1);
                    data[y * stride + x / per_byte] |= index << shift;
                }
            }
            let mut png = Vec::new();
            let mut enc = png::Encoder::new(&mut png, w, h);
            enc.set_color(png::ColorType::Indexed);
            enc.set_depth(depth);
            enc.set_palette(palette[..3 * colours as usize].to_vec());
            enc.set_trns(trns[..colours as usize].to_vec());
            let mut writer = enc.write_header().expect("header");
            writer.write_image_data(&data).expect("data");
            writer.finish().expect("finish");

            let fast = classify_indexed(&png, BLACK, WHITE)
                .expect("decodes")
                .expect("palette path");
            let img = decode_png_limited(&png).expect("decodes");
            let slow = classify(&img, BLACK, WHITE);
            assert_eq!((fast.width, fast.height), (w, h), "depth {bits}");
            assert_eq!(fast.dark, slow.dark, "depth {bits}");
            assert_eq!(fast.exact, slow.exact, "depth {bits}");
            assert!(
                fast.exact > 0 && fast.dark.row_span(0).is_some(),
                "depth {bits}"
            );
        }
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
        let (content, level, _) = run_rqrr(&px.dark, 7).expect("downscaled decode");
        assert_eq!((content.as_slice(), level), (URL, EcLevel::M));
    }

    /// A code drawn upside down is a code, and so is one with a mark in the image's corner:
    /// the run at the dark box's corner is then no finder's edge, and says nothing of the
    /// modules' width.
    #[test]
    fn a_code_upside_down_or_with_a_mark_in_the_corner_is_read() {
        let png = render_png(URL, &opts(400, 4, EcLevel::M)).expect("render");
        let img = image::load_from_memory(&png).expect("png").to_rgb8();
        let turned = image::imageops::rotate180(&img);
        let mut marked = img.clone();
        for x in 2..5 {
            for y in 2..5 {
                marked.put_pixel(x, y, image::Rgb([0, 0, 0]));
            }
        }
        for (what, pic) in [("upside down", &turned), ("marked", &marked)] {
            let as_rgb = encode_rgb(400, 400, |x, y| pic.get_pixel(x, y).0);
            let insp = inspect_png(&as_rgb, BLACK, WHITE).expect("inspect");
            assert_eq!(decoded(&insp).content, URL, "{what}");
        }
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
