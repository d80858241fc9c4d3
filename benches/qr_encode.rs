//! The reference's cost of a QR code for content it has not drawn lately: encoding and choosing
//! the mask (ISO/IEC 18004 7.8.3's penalty, scored eight times) at the largest version, beside
//! `qrcode`'s own encoder, which chooses the same mask.
//!
//!   cargo bench --bench qr_encode
//!
//! Each content is new (the reference keeps its last 32 symbols), so every render encodes.
//! Prints the median of 50 of each.

use std::time::Instant;

use linkcert::qr_encode::{EcLevel, RenderOptions, Rgb, render_png};

fn median(mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn main() {
    // 2,900 bytes at level L: version 40, 177 modules across.
    let content = |i: usize| -> Vec<u8> {
        let mut c = format!("https://example.com/{i:08}/").into_bytes();
        c.extend((0..2900 - c.len()).map(|k| b'a' + ((k * 7 + i) % 26) as u8));
        c
    };
    let opts = RenderOptions {
        size: 600,
        margin: 4,
        level: EcLevel::L,
        fg: Rgb([0, 0, 0]),
        bg: Rgb([255, 255, 255]),
        logo: false,
    };
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for i in 0..50 {
        let data = content(i);
        let t = Instant::now();
        render_png(&data, &opts).expect("renders");
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let code = qrcode::QrCode::with_error_correction_level(&data, qrcode::EcLevel::L)
            .expect("encodes");
        std::hint::black_box(code.into_colors());
        theirs.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "version 40, new content: reference render (encode, mask, 600 px PNG) {:.2} ms; \
         qrcode's encode alone {:.2} ms (medians of 50)",
        median(ours),
        median(theirs)
    );
}
