//! Crafted datastreams: each violation found, and good images (the renderer's, interlaced,
//! palette with tRNS, ancillary chunks where they belong) pass.

use std::io::Write;

use super::*;

fn chunk(ty: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend(ty);
    out.extend(data);
    let mut crc = flate2::Crc::new();
    crc.update(ty);
    crc.update(data);
    out.extend(crc.sum().to_be_bytes());
    out
}

fn ihdr(w: u32, h: u32, depth: u8, colour: u8, interlace: u8) -> Vec<u8> {
    let mut d = w.to_be_bytes().to_vec();
    d.extend(h.to_be_bytes());
    d.extend([depth, colour, 0, 0, interlace]);
    chunk(b"IHDR", &d)
}

fn zlib(raw: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(raw).unwrap();
    e.finish().unwrap()
}

/// The image data a header implies, every scanline filter type 0 and samples 0.
fn raw_for(w: u32, h: u32, depth: u8, colour: u8, interlaced: bool) -> Vec<u8> {
    let header = Header {
        width: w,
        height: h,
        bit_depth: depth,
        colour_type: colour,
        interlaced,
    };
    vec![0; header.implied_bytes() as usize]
}

fn png(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for p in parts {
        out.extend(p);
    }
    out
}

/// An 8x8 greyscale image: IHDR, IDAT, IEND, with `extra` chunks at `at` (index among them).
fn grey_with(at: usize, extra: Vec<Vec<u8>>) -> Vec<u8> {
    let mut parts = vec![
        ihdr(8, 8, 8, 0, 0),
        chunk(b"IDAT", &zlib(&raw_for(8, 8, 8, 0, false))),
        chunk(b"IEND", &[]),
    ];
    for (i, e) in extra.into_iter().enumerate() {
        parts.insert(at + i, e);
    }
    png(&parts)
}

/// A 4x4 palette image of bit depth 2 with `plte` entries, then `after_plte` chunks.
fn palette(entries: usize, after_plte: Vec<Vec<u8>>) -> Vec<u8> {
    let mut parts = vec![ihdr(4, 4, 2, 3, 0), chunk(b"PLTE", &vec![7; entries * 3])];
    parts.extend(after_plte);
    parts.push(chunk(b"IDAT", &zlib(&raw_for(4, 4, 2, 3, false))));
    parts.push(chunk(b"IEND", &[]));
    png(&parts)
}

#[test]
fn good_images_pass() {
    let rendered = linkcert_qr_encode::render_png(
        b"https://example.com/",
        &linkcert_qr_encode::RenderOptions {
            size: 300,
            margin: 2,
            level: crate::EcLevel::M,
            fg: crate::Rgb([0, 0, 0]),
            bg: crate::Rgb([255, 255, 255]),
            logo: false,
        },
    )
    .unwrap();
    assert_eq!(validate(&rendered).map(|h| h.width), Ok(300));
    let mut rgb = Vec::new();
    image::RgbImage::from_pixel(33, 17, image::Rgb([1, 2, 3]))
        .write_to(&mut std::io::Cursor::new(&mut rgb), image::ImageFormat::Png)
        .unwrap();
    assert!(validate(&rgb).is_ok());
    for (w, h) in [(1, 1), (3, 2), (9, 13), (17, 5)] {
        let interlaced = png(&[
            ihdr(w, h, 16, 6, 1),
            chunk(b"IDAT", &zlib(&raw_for(w, h, 16, 6, true))),
            chunk(b"IEND", &[]),
        ]);
        assert!(validate(&interlaced).is_ok(), "{w}x{h}");
    }
    let text = chunk(b"tEXt", b"Comment\0ok");
    assert!(validate(&grey_with(1, vec![chunk(b"gAMA", &[0, 0, 0xB1, 0x8F])])).is_ok());
    assert!(validate(&grey_with(2, vec![text.clone(), text.clone()])).is_ok());
    assert!(validate(&grey_with(1, vec![chunk(b"prVt", b"any")])).is_ok());
    assert!(validate(&palette(4, vec![chunk(b"tRNS", &[0, 255])])).is_ok());
    // IDAT split over several chunks, as encoders do.
    let data = zlib(&raw_for(8, 8, 8, 0, false));
    let (a, b) = data.split_at(5);
    let split = png(&[
        ihdr(8, 8, 8, 0, 0),
        chunk(b"IDAT", a),
        chunk(b"IDAT", &[]),
        chunk(b"IDAT", b),
        chunk(b"IEND", &[]),
    ]);
    assert!(validate(&split).is_ok());
}

#[test]
fn the_frame_of_the_datastream_is_judged() {
    let good = grey_with(0, vec![]);
    assert_eq!(validate(b"GIF89a"), Err(Fault::Signature));
    let mut after = good.clone();
    after.extend(b"\0\0");
    assert_eq!(validate(&after), Err(Fault::AfterIend(2)));
    let no_iend = &good[..good.len() - 12];
    assert_eq!(validate(no_iend), Err(Fault::NoIend("IDAT".into())));
    assert_eq!(
        validate(&good[..8]),
        Err(Fault::NoIend("the signature".into()))
    );
    assert!(matches!(
        validate(&good[..good.len() - 2]),
        Err(Fault::Truncated { index: 2, .. })
    ));
    let iend = png(&[
        ihdr(8, 8, 8, 0, 0),
        chunk(b"IDAT", &zlib(&raw_for(8, 8, 8, 0, false))),
        chunk(b"IEND", b"x"),
    ]);
    assert_eq!(validate(&iend), Err(Fault::IendNotEmpty(1)));
    let mut long = good.clone();
    long[33..37].copy_from_slice(&0x8000_0000u32.to_be_bytes());
    assert!(matches!(
        validate(&long),
        Err(Fault::ChunkLength { index: 1, .. })
    ));
    let digit = grey_with(1, vec![chunk(b"te1t", b"")]);
    assert!(matches!(validate(&digit), Err(Fault::ChunkType { .. })));
}

#[test]
fn every_crc_is_checked() {
    let good = grey_with(0, vec![]);
    // The IDAT's CRC: its last byte is 16 bytes from the end (IEND is 12).
    let mut bad = good.clone();
    let at = bad.len() - 13;
    bad[at] ^= 1;
    assert!(matches!(
        validate(&bad),
        Err(Fault::Crc {
            index: 1,
            ty: ChunkType::IDAT,
            ..
        })
    ));
    let mut bad_ihdr = good.clone();
    bad_ihdr[29] ^= 0x80;
    assert!(matches!(
        validate(&bad_ihdr),
        Err(Fault::Crc { index: 0, .. })
    ));
}

#[test]
fn ihdr_fields_are_judged() {
    let with = |h: Vec<u8>| {
        png(&[
            h,
            chunk(b"IDAT", &zlib(&raw_for(8, 8, 8, 0, false))),
            chunk(b"IEND", &[]),
        ])
    };
    let ihdr_fault = |h: Vec<u8>| matches!(validate(&with(h)), Err(Fault::Ihdr(_)));
    assert!(ihdr_fault(chunk(b"IHDR", &[0; 12])));
    assert!(ihdr_fault(ihdr(0, 8, 8, 0, 0)));
    assert!(ihdr_fault(ihdr(8, 0x8000_0000, 8, 0, 0)));
    assert!(ihdr_fault(ihdr(8, 8, 16, 3, 0)));
    assert!(ihdr_fault(ihdr(8, 8, 4, 2, 0)));
    assert!(ihdr_fault(ihdr(8, 8, 8, 5, 0)));
    assert!(ihdr_fault(ihdr(8, 8, 8, 0, 2)));
    let mut method = ihdr(8, 8, 8, 0, 0);
    method[18] = 1; // compression method, then its CRC made right again
    let fixed = chunk(b"IHDR", &method[8..21]);
    assert!(ihdr_fault(fixed));
    let mut filter = ihdr(8, 8, 8, 0, 0)[8..21].to_vec();
    filter[11] = 1;
    assert!(ihdr_fault(chunk(b"IHDR", &filter)));
}

#[test]
fn chunk_order_is_judged() {
    let gama = chunk(b"gAMA", &[0, 0, 0xB1, 0x8F]);
    let before_ihdr = grey_with(0, vec![gama.clone()]);
    assert_eq!(
        validate(&before_ihdr),
        Err(Fault::FirstNotIhdr(ChunkType(*b"gAMA")))
    );
    assert_eq!(
        validate(&grey_with(1, vec![ihdr(8, 8, 8, 0, 0)])),
        Err(Fault::Duplicate(ChunkType::IHDR))
    );
    assert_eq!(
        validate(&grey_with(1, vec![gama.clone(), gama.clone()])),
        Err(Fault::Duplicate(ChunkType(*b"gAMA")))
    );
    assert!(matches!(
        validate(&grey_with(2, vec![gama.clone()])),
        Err(Fault::Misplaced { .. })
    ));
    assert_eq!(
        validate(&grey_with(1, vec![chunk(b"ABCD", b"")])),
        Err(Fault::UnknownCritical(ChunkType(*b"ABCD")))
    );
    let data = zlib(&raw_for(8, 8, 8, 0, false));
    let (a, b) = data.split_at(5);
    let apart = png(&[
        ihdr(8, 8, 8, 0, 0),
        chunk(b"IDAT", a),
        chunk(b"tEXt", b"a\0b"),
        chunk(b"IDAT", b),
        chunk(b"IEND", &[]),
    ]);
    assert_eq!(validate(&apart), Err(Fault::IdatNotConsecutive));
    let no_idat = png(&[ihdr(8, 8, 8, 0, 0), chunk(b"IEND", &[])]);
    assert_eq!(validate(&no_idat), Err(Fault::NoIdat));
}

#[test]
fn palettes_and_transparency_are_judged() {
    let plte_fault = |b: Vec<u8>| matches!(validate(&b), Err(Fault::Plte(_)));
    let missing = png(&[
        ihdr(4, 4, 2, 3, 0),
        chunk(b"IDAT", &zlib(&raw_for(4, 4, 2, 3, false))),
        chunk(b"IEND", &[]),
    ]);
    assert!(plte_fault(missing));
    assert!(plte_fault(grey_with(1, vec![chunk(b"PLTE", &[0; 6])])));
    assert!(plte_fault(palette(5, vec![])), "5 entries at bit depth 2");
    let four_bytes = png(&[
        ihdr(4, 4, 2, 3, 0),
        chunk(b"PLTE", &[0; 4]),
        chunk(b"IDAT", &zlib(&raw_for(4, 4, 2, 3, false))),
        chunk(b"IEND", &[]),
    ]);
    assert!(plte_fault(four_bytes));
    let rgb_after_idat = png(&[
        ihdr(2, 2, 8, 2, 0),
        chunk(b"IDAT", &zlib(&raw_for(2, 2, 8, 2, false))),
        chunk(b"PLTE", &[0; 3]),
        chunk(b"IEND", &[]),
    ]);
    assert!(matches!(
        validate(&rgb_after_idat),
        Err(Fault::Misplaced { .. })
    ));
    let trns_fault = |b: Vec<u8>| matches!(validate(&b), Err(Fault::Trns(_)));
    assert!(trns_fault(palette(2, vec![chunk(b"tRNS", &[0, 0, 0])])));
    assert!(trns_fault(grey_with(1, vec![chunk(b"tRNS", &[0; 6])])));
    let rgba = png(&[
        ihdr(2, 2, 8, 6, 0),
        chunk(b"tRNS", &[0; 6]),
        chunk(b"IDAT", &zlib(&raw_for(2, 2, 8, 6, false))),
        chunk(b"IEND", &[]),
    ]);
    assert!(trns_fault(rgba));
    let trns_first = png(&[
        ihdr(4, 4, 2, 3, 0),
        chunk(b"tRNS", &[0]),
        chunk(b"PLTE", &[0; 6]),
        chunk(b"IDAT", &zlib(&raw_for(4, 4, 2, 3, false))),
        chunk(b"IEND", &[]),
    ]);
    assert!(matches!(
        validate(&trns_first),
        Err(Fault::Misplaced { .. })
    ));
}

/// An 8x8 greyscale image whose IDAT holds `data` as is.
fn grey_data(data: &[u8]) -> Vec<u8> {
    png(&[
        ihdr(8, 8, 8, 0, 0),
        chunk(b"IDAT", data),
        chunk(b"IEND", &[]),
    ])
}

#[test]
fn the_image_data_is_one_exact_zlib_stream() {
    let raw = raw_for(8, 8, 8, 0, false);
    let good = zlib(&raw);
    let mut adler = good.clone();
    let n = adler.len();
    adler[n - 1] ^= 1;
    assert!(matches!(
        validate(&grey_data(&adler)),
        Err(Fault::Adler { .. })
    ));
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(matches!(
        validate(&grey_data(&trailing)),
        Err(Fault::Zlib(_))
    ));
    let no_adler = &good[..good.len() - 4];
    assert!(matches!(
        validate(&grey_data(no_adler)),
        Err(Fault::Zlib(_))
    ));
    let unfinished = &good[..good.len() / 2];
    assert!(matches!(
        validate(&grey_data(unfinished)),
        Err(Fault::Zlib(_))
    ));
    let mut header = good.clone();
    header[1] ^= 1;
    assert!(matches!(validate(&grey_data(&header)), Err(Fault::Zlib(_))));
    assert!(matches!(validate(&grey_data(b"x")), Err(Fault::Zlib(_))));
    assert!(matches!(
        validate(&grey_data(&[0x78, 0xBB, 0, 0])),
        Err(Fault::Zlib(e)) if e.contains("dictionary")
    ));
    let short = zlib(&raw[..raw.len() - 9]);
    assert!(matches!(
        validate(&grey_data(&short)),
        Err(Fault::InflatedLength { .. })
    ));
    let mut more = raw.clone();
    more.extend([0; 9]);
    assert!(matches!(
        validate(&grey_data(&zlib(&more))),
        Err(Fault::InflatedLength { .. })
    ));
    let mut filtered = raw.clone();
    filtered[9 * 3] = 5;
    assert_eq!(
        validate(&grey_data(&zlib(&filtered))),
        Err(Fault::FilterType {
            pass: 1,
            row: 3,
            filter: 5
        })
    );
}

#[test]
fn bombs_are_not_inflated_and_nothing_panics() {
    let bomb = crate::png_declaring(100_000, 100_000);
    let verdict = validate(&bomb);
    assert!(
        verdict.as_ref().is_err_and(Fault::beyond_cap),
        "{verdict:?}"
    );
    // A small image's data inflating far past what it implies stops at once.
    let huge = zlib(&vec![0u8; 20 << 20]);
    assert!(matches!(
        validate(&grey_data(&huge)),
        Err(Fault::InflatedLength { .. })
    ));
    let good = grey_with(1, vec![chunk(b"tEXt", b"a\0b")]);
    for end in 0..good.len() {
        assert!(validate(&good[..end]).is_err(), "{end}");
    }
    for i in 0..good.len() {
        let mut flipped = good.clone();
        flipped[i] ^= 0x41;
        let _ = validate(&flipped);
    }
}

#[test]
fn a_run_inflates_no_more_than_its_budget() {
    // 8x8 grey, 8 bits: 8 rows of 9 bytes.
    let good = grey_with(1, vec![]);
    let implied = walk(&good).map(|w| w.implied_bytes()).unwrap_or(0);
    assert_eq!(implied, 72);
    let mut budget = Budget::new(2 * implied + 10);
    assert!(validate_within(&good, &mut budget).is_ok());
    assert!(validate_within(&good, &mut budget).is_ok());
    assert_eq!(budget.left(), 10);
    let over = validate_within(&good, &mut budget);
    assert_eq!(
        over,
        Err(Fault::OverBudget {
            implied: 72,
            left: 10
        })
    );
    assert!(over.is_err_and(|f| f.beyond_cap()), "observed, not failed");
    // A fault found before inflating is still found, and costs nothing.
    let mut bad = good.clone();
    bad[0] ^= 1;
    assert_eq!(validate_within(&bad, &mut budget), Err(Fault::Signature));
    assert_eq!(budget.left(), 10);
    // A bomb past the cap is never inflated and costs nothing either.
    let bomb = crate::png_declaring(100_000, 100_000);
    let mut fresh = Budget::default();
    assert!(validate_within(&bomb, &mut fresh).is_err_and(|f| f.beyond_cap()));
    assert_eq!(fresh.left(), RUN_BUDGET);
}
