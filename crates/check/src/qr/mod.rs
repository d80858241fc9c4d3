//! `qr.*`: GET /qr renders what was asked. Every 200 is decoded (a valid PNG, size x size,
//! the two colours, the url back out of the code, at the requested level or higher); margins
//! grow the quiet zone; requests the spec makes invalid are refused cleanly; and the choices
//! the spec leaves open (bounds of size and margin, colour forms, capacity, logo) are
//! observed, never failed.
//!
//! The target may be hostile: nothing here indexes or unwraps response data, bodies that are
//! truncated, huge or not PNG fail `qr.png`, and decoding is bounded (`linkcert_qr_read` limits) and
//! runs off the reactor.

use super::Ctx;
use super::conformance::{Expect, Outcome};
use super::probe::{Exchange, Req};
use linkcert_http::error_code;
use linkcert_qr_read::{self as qr, DecodeFailure, EcLevel, Inspection, Rgb};
use linkcert_registry::check_id;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

mod choices;
mod judge;
mod logo;
mod margins;
mod matrix;
mod png;
mod ranges;
mod rejects;

const OP: &str = "getQRCode";
/// Largest side the runner asks to be decoded; anything bigger is judged from its header.
const DECODE_SIDE: u32 = 4096;
/// Below this fraction of exact fg/bg pixels the colours were not honoured.
const MIN_EXACT_COLOUR: f64 = 0.90;
/// Modules across a version-40 code, the largest there is.
const LARGEST_CODE_MODULES: u32 = 177;
const TYPICAL_URL: &str = "https://example.com/l/linkcert-qr?utm_source=linkcert&utm_medium=qr";
const BLACK: Rgb = Rgb([0, 0, 0]);
const WHITE: Rgb = Rgb([255, 255, 255]);

/// What the image must be, given what was asked.
#[derive(Clone, Debug, PartialEq)]
enum SizeWant {
    Exact(u32),
    /// A non-integral size: any rounding of it.
    OneOf(Vec<u32>),
    /// The spec gives the value no meaning (e.g. negative): observed only.
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ContentWant {
    /// The code must decode to the url.
    Strict,
    /// Decoding is observed (a logo, a nonsensical margin).
    Observe,
    /// The url is beyond any QR code's capacity: accepting it claims the impossible.
    Impossible,
    /// Not judged: the image is too small for any code holding the url to be read (a size
    /// probe: its size is what the case asks).
    Unread,
}

/// One GET /qr request and what a 200 to it must honour.
#[derive(Clone, Debug)]
struct Case {
    what: String,
    params: Vec<(String, String)>,
    url: String,
    size: SizeWant,
    level: Option<EcLevel>,
    /// Expected (fg, bg); None when the colours are not judged.
    colours: Option<(Rgb, Rgb)>,
    content: ContentWant,
    expect: Expect,
}

impl Case {
    fn new(op: &Operation, what: impl Into<String>, url: &str) -> Case {
        let default_size = op
            .param("size")
            .and_then(|p| p.default())
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(600.0);
        let default_level = op
            .param("level")
            .and_then(|p| p.default())
            .and_then(serde_json::Value::as_str)
            .and_then(EcLevel::parse);
        let colour = |name: &str, fallback: Rgb| {
            op.param(name)
                .and_then(|p| p.default())
                .and_then(serde_json::Value::as_str)
                .and_then(qr::parse_hex_color)
                .unwrap_or(fallback)
        };
        Case {
            what: what.into(),
            params: vec![("url".into(), url.into())],
            url: url.into(),
            size: size_want(default_size),
            level: default_level,
            colours: Some((colour("fgColor", BLACK), colour("bgColor", WHITE))),
            content: ContentWant::Strict,
            expect: Expect::Accept,
        }
    }
    fn set(mut self, name: &str, value: impl Into<String>) -> Case {
        self.params.retain(|(k, _)| k != name);
        self.params.push((name.into(), value.into()));
        self
    }
    /// An explicit size: the spec sets no bounds, so the target may refuse it.
    fn size(mut self, size: f64) -> Case {
        self.size = size_want(size);
        self.expect = Expect::AcceptOrReject;
        self.set("size", fmt_num(size))
    }
    /// An explicit margin: the spec sets no bounds, so the target may refuse it.
    fn margin(mut self, margin: f64) -> Case {
        self.expect = Expect::AcceptOrReject;
        if !(margin >= 0.0 && margin.fract() == 0.0) {
            self.content = ContentWant::Observe;
        }
        self.set("margin", fmt_num(margin))
    }
    fn level(mut self, level: EcLevel) -> Case {
        self.level = Some(level);
        self.set("level", level.as_str())
    }
    fn colours(mut self, fg: &str, bg: &str, expected: Option<(Rgb, Rgb)>) -> Case {
        self.colours = expected;
        self.set("fgColor", fg).set("bgColor", bg)
    }
    fn expect(mut self, e: Expect) -> Case {
        self.expect = e;
        self
    }
    fn request(&self, key: &PlanKey, op: &Operation) -> Req {
        let mut req = Req::new(op.method.clone(), &op.path);
        for (k, v) in &self.params {
            req = req.query(k, v.clone());
        }
        req.key(key)
    }
    /// The explicit margin asked for, if any.
    fn margin_value(&self) -> Option<f64> {
        self.params
            .iter()
            .find(|(k, _)| k == "margin")
            .and_then(|(_, v)| v.parse().ok())
    }
}

fn size_want(size: f64) -> SizeWant {
    if !size.is_finite() || size < 1.0 {
        SizeWant::Unknown
    } else if size.fract() == 0.0 {
        SizeWant::Exact(size as u32)
    } else {
        let (f, c) = (size.floor() as u32, size.ceil() as u32);
        SizeWant::OneOf(if f == c { vec![f] } else { vec![f, c] })
    }
}

fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// A small deterministic generator for the seeded cases (splitmix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

/// A url of exactly `len` bytes, lower-case ASCII, so every encoder must use byte mode.
fn url_of_len(len: usize) -> String {
    let head = "https://example.com/";
    if len <= head.len() {
        return "x".repeat(len);
    }
    let mut s = String::with_capacity(len);
    s.push_str(head);
    let alphabet = b"abcdefghijklmnopqrstuvwxyz";
    let mut i = 0usize;
    while s.len() < len {
        s.push(alphabet[i % alphabet.len()] as char);
        i = i.wrapping_mul(7).wrapping_add(3);
    }
    s
}

/// Width and height from a PNG's IHDR, if the bytes start like a PNG.
fn png_dimensions(body: &[u8]) -> Option<(u32, u32)> {
    const SIG: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    if body.get(..8)? != SIG || body.get(12..16)? != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes(body.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(body.get(20..24)?.try_into().ok()?);
    Some((w, h))
}

fn inspect(body: &[u8], fg: Rgb, bg: Rgb) -> Result<Inspection, qr::InspectError> {
    off_reactor(|| qr::inspect_png(body, fg, bg))
}

/// Decoding off the reactor when the runtime allows it (block_in_place needs the
/// multi-threaded runtime; on a current-thread runtime the work runs inline).
fn off_reactor<T>(f: impl FnOnce() -> T) -> T {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// Modules across of the smallest code holding `data` at `level` (None beyond capacity).
fn min_modules(data: &[u8], level: EcLevel) -> Option<u32> {
    let l = match level {
        EcLevel::L => qrcode::EcLevel::L,
        EcLevel::M => qrcode::EcLevel::M,
        EcLevel::Q => qrcode::EcLevel::Q,
        EcLevel::H => qrcode::EcLevel::H,
    };
    // The version the encoder picks, without drawing the symbol (choosing a mask is most of
    // what drawing costs).
    qrcode::bits::encode_auto(data, l)
        .ok()
        .map(|b| b.version().width() as u32)
}

fn describe_failure(d: &DecodeFailure) -> String {
    d.to_string()
}

struct Family<'a> {
    ctx: &'a Ctx,
    op: &'a Operation,
    key: PlanKey,
    label: String,
}

pub async fn run(ctx: &Ctx) {
    let spec = ctx.spec.clone();
    let Some(op) = spec.operation(OP) else {
        ctx.skip_family("qr", "the spec has no getQRCode operation");
        return;
    };
    let Some(key) = ctx.key_for(op).cloned() else {
        ctx.skip_family("qr", "no key whose plan may call GET /qr");
        return;
    };
    let f = Family {
        ctx,
        op,
        key,
        label: op.label(),
    };
    let renders = [
        check_id!("qr.png"),
        check_id!("qr.png-datastream"),
        check_id!("qr.size"),
        check_id!("qr.colours"),
        check_id!("qr.content"),
        check_id!("qr.level"),
    ]
    .iter()
    .any(|c| ctx.enabled(*c));
    // The ranges first (their own probes are side by side); then the renders beside the
    // rest: independent of each other, so a far target's round trips overlap.
    let picks = if ctx.enabled(check_id!("qr.size")) || ctx.enabled(check_id!("qr.margin")) {
        f.ranges().await
    } else {
        Vec::new()
    };
    tokio::join!(
        async {
            if renders {
                f.render_each(&f.matrix()).await;
            }
        },
        async {
            if renders || ctx.enabled(check_id!("qr.margin")) {
                f.margins().await;
            }
            if ctx.enabled(check_id!("qr.rejects")) {
                f.rejects().await;
            }
            if ctx.enabled(check_id!("qr.choices")) || renders {
                f.choices().await;
            }
            f.logos().await;
        },
    );
    if renders {
        for case in f.levels_in_turn() {
            f.render(&case).await;
        }
        f.every_plan(&picks).await;
    }
}

impl Family<'_> {
    /// The renders asked again with a key of each other plan that may call GET /qr: a
    /// feature honoured on the key that renders best may not be on the others. With them, the
    /// bounds of size and margin the run's key was given, and a value inside (`picks`).
    async fn every_plan(&self, picks: &[ranges::Pick]) {
        let mut plans = vec![self.key.plan.clone()];
        for key in self.ctx.keys_for(self.op) {
            if plans.contains(&key.plan) {
                continue;
            }
            plans.push(key.plan.clone());
            let g = Family {
                ctx: self.ctx,
                op: self.op,
                key: key.clone(),
                label: self.label.clone(),
            };
            let mut cases = g.every_plan_cases(&key.plan);
            cases.extend(g.pick_cases(picks, &key.plan));
            g.render_each(&cases).await;
        }
    }
}

fn hex(c: Rgb) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0[0], c.0[1], c.0[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_have_the_asked_length_and_need_byte_mode() {
        for len in [1, 20, 21, 1273, 2954, 32001] {
            let u = url_of_len(len);
            assert_eq!(u.len(), len);
            assert!(u.is_ascii());
        }
        assert!(min_modules(url_of_len(2953).as_bytes(), EcLevel::L).is_some());
        assert!(min_modules(url_of_len(2954).as_bytes(), EcLevel::L).is_none());
        assert!(min_modules(url_of_len(1274).as_bytes(), EcLevel::H).is_none());
        // The width the encoder draws, read without drawing.
        for (len, level, l) in [
            (20, EcLevel::L, qrcode::EcLevel::L),
            (300, EcLevel::M, qrcode::EcLevel::M),
            (1200, EcLevel::Q, qrcode::EcLevel::Q),
            (2953, EcLevel::L, qrcode::EcLevel::L),
        ] {
            let u = url_of_len(len);
            let drawn = qrcode::QrCode::with_error_correction_level(u.as_bytes(), l)
                .map(|c| c.width() as u32)
                .ok();
            assert_eq!(min_modules(u.as_bytes(), level), drawn, "{len} at {l:?}");
        }
    }

    #[test]
    fn png_dimensions_are_read_safely() {
        assert_eq!(png_dimensions(b""), None);
        assert_eq!(png_dimensions(b"\x89PNG\r\n\x1a\n"), None);
        let png = linkcert_qr_encode::render_png(
            b"x",
            &linkcert_qr_encode::RenderOptions {
                size: 77,
                margin: 2,
                level: EcLevel::L,
                fg: BLACK,
                bg: WHITE,
                logo: false,
            },
        )
        .unwrap();
        assert_eq!(png_dimensions(&png), Some((77, 77)));
        assert_eq!(png_dimensions(&png[..20]), None);
    }

    #[test]
    fn size_wants() {
        assert_eq!(size_want(600.0), SizeWant::Exact(600));
        assert_eq!(size_want(600.5), SizeWant::OneOf(vec![600, 601]));
        assert_eq!(size_want(-5.0), SizeWant::Unknown);
        assert_eq!(fmt_num(600.0), "600");
        assert_eq!(fmt_num(600.5), "600.5");
    }
}
