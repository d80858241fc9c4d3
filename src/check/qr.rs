//! `qr.*`: GET /qr renders what was asked. Every 200 is decoded (a valid PNG, size x size,
//! the two colours, the url back out of the code, at the requested level or higher); margins
//! grow the quiet zone; requests the spec makes invalid are refused cleanly; and the choices
//! the spec leaves open (bounds of size and margin, colour forms, capacity, logo) are
//! observed, never failed.
//!
//! The target may be hostile: nothing here indexes or unwraps response data, bodies that are
//! truncated, huge or not PNG fail `qr.png`, and decoding is bounded (`crate::qr` limits) and
//! runs off the reactor.

use super::Ctx;
use super::conformance::{Expect, Outcome, error_code};
use super::probe::{Exchange, Req};
use crate::qr::{self, DecodeFailure, EcLevel, Inspection, Rgb};
use crate::spec::Operation;
use crate::target::PlanKey;

const OP: &str = "getQRCode";
/// Largest side the runner asks to be decoded; anything bigger is judged from its header.
const DECODE_SIDE: u32 = 4096;
/// Below this fraction of exact fg/bg pixels the colours were not honoured.
const MIN_EXACT_COLOUR: f64 = 0.90;
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

/// Decode off the reactor when the runtime allows it (block_in_place needs the multi-threaded
/// runtime; on a current-thread runtime the work runs inline).
fn inspect(body: &[u8], fg: Rgb, bg: Rgb) -> Result<Inspection, qr::InspectError> {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi {
        tokio::task::block_in_place(|| qr::inspect_png(body, fg, bg))
    } else {
        qr::inspect_png(body, fg, bg)
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
    qrcode::QrCode::with_error_correction_level(data, l)
        .ok()
        .map(|c| c.width() as u32)
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
    let renders = ["qr.png", "qr.size", "qr.colours", "qr.content", "qr.level"]
        .iter()
        .any(|id| ctx.enabled(id));
    if renders {
        for case in f.matrix() {
            f.render(&case).await;
        }
    }
    if renders || ctx.enabled("qr.margin") {
        f.margins().await;
    }
    if ctx.enabled("qr.rejects") {
        f.rejects().await;
    }
    if ctx.enabled("qr.choices") || renders {
        f.choices().await;
    }
}

impl Family<'_> {
    fn case(&self, what: impl Into<String>, url: &str) -> Case {
        Case::new(self.op, what, url)
    }

    /// Accepted renders: sizes, margins, levels, colours, url lengths, and a few seeded ones.
    fn matrix(&self) -> Vec<Case> {
        use EcLevel::{H, L, M, Q};
        let t = TYPICAL_URL;
        let mut v = vec![
            self.case("all defaults", t),
            self.case("size 600, level M", t).size(600.0).level(M),
            self.case("size 333, margin 4, level Q", t)
                .size(333.0)
                .margin(4.0)
                .level(Q),
            self.case("size 1000, margin 0, level H", t)
                .size(1000.0)
                .margin(0.0)
                .level(H),
            self.case("size 100, short url", "https://ex.am/p")
                .size(100.0)
                .level(L),
            self.case("#336699 on #FFEEDD", t)
                .size(400.0)
                .level(M)
                .colours(
                    "#336699",
                    "#FFEEDD",
                    Some((Rgb([0x33, 0x66, 0x99]), Rgb([0xff, 0xee, 0xdd]))),
                ),
            self.case("inverted: #F0F0F0 on #101820", t)
                .size(400.0)
                .colours(
                    "#F0F0F0",
                    "#101820",
                    Some((Rgb([0xf0, 0xf0, 0xf0]), Rgb([0x10, 0x18, 0x20]))),
                ),
            self.case("lower-case hex #1a2b3c on #fafbfc", t)
                .level(Q)
                .colours(
                    "#1a2b3c",
                    "#fafbfc",
                    Some((Rgb([0x1a, 0x2b, 0x3c]), Rgb([0xfa, 0xfb, 0xfc]))),
                ),
            self.case(
                "percent-encoded url",
                "https://example.com/caf%C3%A9?q=%E6%97%A5%E6%9C%AC&x=a%20b",
            )
            .level(M),
            // A one-character string and a non-ASCII IRI are strings the spec allows, but a
            // target may insist on a URL.
            self.case("one-character url", "x")
                .expect(Expect::AcceptOrReject),
            self.case("non-ASCII url", "https://example.com/café?q=日本")
                .level(M)
                .expect(Expect::AcceptOrReject),
        ];
        for level in [L, M, Q, H] {
            v.push(
                self.case(format!("level {level}"), t)
                    .size(500.0)
                    .level(level),
            );
        }
        // Byte-mode capacity at each level, exactly and one more: the spec is silent on
        // capacity, so refusing is a choice; accepting must still decode at the level asked.
        for level in [L, M, Q, H] {
            let cap = qr::capacity_bytes(level);
            for (len, tag) in [(cap, "at"), (cap + 1, "one byte past")] {
                v.push(
                    self.case(
                        format!("{len}-byte url, {tag} the byte-mode capacity of level {level}"),
                        &url_of_len(len),
                    )
                    // Version 40 at 600 px: modules of about 3.3 px, still readable.
                    .size(600.0)
                    .level(level)
                    .expect(Expect::AcceptOrReject),
                );
            }
        }
        // Seeded variety.
        let mut rng = Rng(self.ctx.opts.seed ^ 0x5152_4331);
        for i in 0..6 {
            let size = 200 + rng.below(801) as u32;
            let margin = rng.below(9) as u32;
            let level = [L, M, Q, H][rng.below(4) as usize];
            let len = 1 + rng.below(160) as usize;
            let url = url_of_len(len.max(21));
            let dark = Rgb([
                rng.below(96) as u8,
                rng.below(96) as u8,
                rng.below(96) as u8,
            ]);
            let light = Rgb([
                160 + rng.below(96) as u8,
                160 + rng.below(96) as u8,
                160 + rng.below(96) as u8,
            ]);
            let (fg, bg) = if rng.below(4) == 0 {
                (light, dark)
            } else {
                (dark, light)
            };
            let hex = |c: Rgb| format!("#{:02X}{:02X}{:02X}", c.0[0], c.0[1], c.0[2]);
            v.push(
                self.case(
                    format!(
                        "seeded #{i}: size {size}, margin {margin}, level {level}, {} on {}, {}-byte url",
                        hex(fg),
                        hex(bg),
                        url.len()
                    ),
                    &url,
                )
                .size(f64::from(size))
                .margin(f64::from(margin))
                .level(level)
                .colours(&hex(fg), &hex(bg), Some((fg, bg))),
            );
        }
        v
    }

    /// Send a render request and judge a 200; a clean rejection of an AcceptOrReject case is
    /// observed. Returns the inspection when there was one.
    async fn render(&self, case: &Case) -> Option<Inspection> {
        let (x, o) = self
            .ctx
            .exchange(self.op, case.request(&self.key, self.op), case.expect)
            .await;
        match o {
            Outcome::Accepted => self.judge(case, &x),
            Outcome::CleanRejection(s) => {
                if case.expect == Expect::AcceptOrReject {
                    let code = x.resp().and_then(error_code).unwrap_or_default();
                    self.ctx.rec.observe(
                        "qr.choices",
                        &self.label,
                        format!("{}: rejected with {s} {code}", case.what),
                        Some(&x),
                    );
                }
                None
            }
            // status.* judged it already; a 429 is nobody's failure.
            _ => None,
        }
    }

    /// The `qr.*` checks on one accepted exchange.
    fn judge(&self, case: &Case, x: &Exchange) -> Option<Inspection> {
        let (rec, label) = (&self.ctx.rec, self.label.as_str());
        let r = x.resp()?;
        let what = &case.what;
        let media = r.media_type().unwrap_or_default();
        if media != "image/png" {
            rec.violation(
                "qr.png",
                label,
                format!("Content-Type image/png ({what})"),
                if media.is_empty() {
                    "no Content-Type".into()
                } else {
                    media
                },
                Some(x),
            );
        }
        if r.truncated {
            rec.violation(
                "qr.png",
                label,
                format!("a complete PNG ({what})"),
                format!(
                    "a body longer than the runner reads ({} MiB)",
                    super::probe::MAX_BODY / (1024 * 1024)
                ),
                Some(x),
            );
            return None;
        }
        // Judge the declared dimensions before decoding anything big.
        if let Some((w, h)) = png_dimensions(&r.body) {
            let asked = match &case.size {
                SizeWant::Exact(n) => Some(*n),
                SizeWant::OneOf(v) => v.iter().max().copied(),
                SizeWant::Unknown => None,
            };
            let too_big = w.max(h) > DECODE_SIDE;
            if too_big {
                match asked {
                    Some(n) if n > DECODE_SIDE => {
                        // The runner asked for a big image (a bound probe): header only.
                        self.size_verdict(case, x, w, h);
                        rec.observe(
                            "qr.choices",
                            label,
                            format!("{what}: accepted ({w}x{h}, judged from its header)"),
                            Some(x),
                        );
                    }
                    _ => {
                        rec.violation(
                            "qr.size",
                            label,
                            format!(
                                "{} ({what})",
                                asked.map_or("an image of the size asked".into(), |n| format!(
                                    "{n}x{n} px"
                                ))
                            ),
                            format!("{w}x{h} px"),
                            Some(x),
                        );
                        if w.max(h) > qr::MAX_SIDE {
                            rec.violation(
                                "qr.png",
                                label,
                                format!("a PNG within {} px a side ({what})", qr::MAX_SIDE),
                                format!("a PNG declaring {w}x{h} px"),
                                Some(x),
                            );
                        }
                    }
                }
                return None;
            }
        }
        let (fg, bg) = case.colours.unwrap_or((BLACK, WHITE));
        let insp = match inspect(&r.body, fg, bg) {
            Ok(i) => i,
            Err(e) => {
                rec.violation(
                    "qr.png",
                    label,
                    format!("a valid PNG image ({what})"),
                    e.to_string(),
                    Some(x),
                );
                return None;
            }
        };
        rec.pass("qr.png", label);
        self.size_verdict(case, x, insp.width, insp.height);
        match case.colours {
            Some(_) if insp.exact_colour_fraction >= MIN_EXACT_COLOUR => {
                rec.pass("qr.colours", label)
            }
            Some(_) => rec.violation(
                "qr.colours",
                label,
                format!(
                    "at least {:.0}% of pixels exactly {} or {} ({what})",
                    MIN_EXACT_COLOUR * 100.0,
                    hex(fg),
                    hex(bg)
                ),
                format!("{:.1}%", insp.exact_colour_fraction * 100.0),
                Some(x),
            ),
            None => {}
        }
        let url = case.url.as_bytes();
        match (&insp.decoded, case.content) {
            (_, ContentWant::Impossible) => rec.violation(
                "qr.content",
                label,
                format!(
                    "a clean rejection: a {}-character url is beyond any QR code's capacity ({what})",
                    case.url.chars().count()
                ),
                match &insp.decoded {
                    Ok(d) => format!(
                        "200 with a code holding {} bytes of it",
                        d.content.len()
                    ),
                    Err(e) => format!("200 with an image: {}", describe_failure(e)),
                },
                Some(x),
            ),
            (Ok(d), ContentWant::Strict) => {
                if d.content == url {
                    rec.pass("qr.content", label);
                } else {
                    rec.violation(
                        "qr.content",
                        label,
                        format!("the code to hold the {}-byte url ({what})", url.len()),
                        format!(
                            "{} bytes: {}",
                            d.content.len(),
                            String::from_utf8_lossy(&d.content)
                                .chars()
                                .take(120)
                                .collect::<String>()
                        ),
                        Some(x),
                    );
                }
                if let Some(asked) = case.level {
                    if d.level >= asked {
                        rec.pass("qr.level", label);
                    } else {
                        rec.violation(
                            "qr.level",
                            label,
                            format!("level {asked} or higher ({what})"),
                            format!("level {}", d.level),
                            Some(x),
                        );
                    }
                }
            }
            (Err(DecodeFailure::ModulesTooSmall { module_px }), _) => rec.observe(
                "qr.content",
                label,
                format!(
                    "{what}: modules about {module_px:.1} px wide, too small to decode reliably; content not judged"
                ),
                Some(x),
            ),
            (Err(e), ContentWant::Strict) => {
                // Only where modules are wide enough to read whatever version the target
                // picked (the smallest possible code, measured against the image).
                let side = insp.width.min(insp.height);
                let margin = case
                    .margin_value()
                    .or_else(|| {
                        self.op
                            .param("margin")
                            .and_then(|p| p.default())
                            .and_then(serde_json::Value::as_f64)
                    })
                    .unwrap_or(2.0)
                    .max(0.0);
                let modules = case
                    .level
                    .and_then(|l| min_modules(url, l))
                    .unwrap_or(177);
                let px = f64::from(side) / (f64::from(modules) + 2.0 * margin);
                if px >= 2.5 {
                    rec.violation(
                        "qr.content",
                        label,
                        format!("a readable code holding the url ({what})"),
                        describe_failure(e),
                        Some(x),
                    );
                } else {
                    rec.observe(
                        "qr.content",
                        label,
                        format!("{what}: not decoded ({e}); modules about {px:.1} px"),
                        Some(x),
                    );
                }
            }
            (decoded, ContentWant::Observe) => rec.observe(
                "qr.choices",
                label,
                match decoded {
                    Ok(d) if d.content == url => format!(
                        "{what}: accepted; decodes to the url at level {}",
                        d.level
                    ),
                    Ok(_) => format!("{what}: accepted; decodes to something else"),
                    Err(e) => format!("{what}: accepted; {e}"),
                },
                Some(x),
            ),
        }
        Some(insp)
    }

    fn size_verdict(&self, case: &Case, x: &Exchange, w: u32, h: u32) {
        let (rec, label) = (&self.ctx.rec, self.label.as_str());
        let ok = |n: u32| w == n && h == n;
        let (holds, expected) = match &case.size {
            SizeWant::Exact(n) => (ok(*n), format!("{n}x{n} px")),
            SizeWant::OneOf(v) => (
                v.iter().any(|&n| ok(n)),
                v.iter()
                    .map(|n| format!("{n}x{n}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
                    + " px",
            ),
            SizeWant::Unknown => {
                rec.observe(
                    "qr.choices",
                    label,
                    format!("{}: accepted, image {w}x{h} px", case.what),
                    Some(x),
                );
                return;
            }
        };
        if holds {
            rec.pass("qr.size", label);
        } else {
            rec.violation(
                "qr.size",
                label,
                format!("{expected} ({})", case.what),
                format!("{w}x{h} px"),
                Some(x),
            );
        }
    }

    /// The quiet zone grows with margin at the same size, url and level.
    async fn margins(&self) {
        let (rec, label) = (&self.ctx.rec, self.label.as_str());
        let mut seen: Vec<(f64, f64, f64)> = Vec::new(); // (margin, quiet px, quiet modules)
        for m in [0.0, 2.0, 4.0, 10.0] {
            let case = self
                .case(format!("margin {m}"), TYPICAL_URL)
                .size(600.0)
                .margin(m)
                .level(EcLevel::M);
            if let Some(insp) = self.render(&case).await
                && let Ok(d) = &insp.decoded
            {
                seen.push((m, d.quiet_zone_modules * d.module_px, d.quiet_zone_modules));
            }
        }
        if seen.len() < 2 {
            rec.skip(
                "qr.margin",
                label,
                "fewer than two margins were accepted and decoded",
            );
            return;
        }
        let shown = seen
            .iter()
            .map(|(m, px, q)| format!("margin {m}: {px:.0} px ({q:.1} modules)"))
            .collect::<Vec<_>>()
            .join(", ");
        // Strictly growing, by at least a pixel per step.
        let grows = seen.windows(2).all(|w| w[1].1 >= w[0].1 + 1.0);
        if grows {
            rec.pass("qr.margin", label);
        } else {
            rec.violation(
                "qr.margin",
                label,
                "a quiet zone that grows with margin (same size, url and level)",
                shown.clone(),
                None,
            );
        }
        let near = |a: f64, b: f64| (a - b).abs() <= 1.0;
        let unit = if seen.iter().all(|(m, _, q)| near(*q, *m)) {
            "margin counts modules"
        } else if seen.iter().all(|(m, px, _)| near(*px, *m)) {
            "margin counts pixels"
        } else {
            "margin's unit is neither modules nor pixels"
        };
        rec.observe("qr.choices", label, format!("{unit} ({shown})"), None);
    }

    /// Requests the spec makes invalid.
    async fn rejects(&self) {
        let op = self.op;
        let max_len = op
            .param("url")
            .and_then(|p| p.bound("maxLength"))
            .map_or(32000, |n| n as usize);
        let levels: Vec<String> = op
            .param("level")
            .and_then(|p| p.enum_values())
            .map(|v| v.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        let mut cases: Vec<(String, Req)> = Vec::new();
        let base = || {
            Req::new(op.method.clone(), &op.path)
                .key(&self.key)
                .query("url", TYPICAL_URL)
        };
        cases.push((
            "no url".into(),
            Req::new(op.method.clone(), &op.path)
                .key(&self.key)
                .query("size", "300"),
        ));
        cases.push((
            format!("a url of {} characters (maxLength {max_len})", max_len + 1),
            Req::new(op.method.clone(), &op.path)
                .key(&self.key)
                .query("url", url_of_len(max_len + 1)),
        ));
        for bad in ["Z", "bogus"] {
            if !levels.iter().any(|l| l == bad) {
                cases.push((format!("level {bad:?}"), base().query("level", bad)));
            }
        }
        // "Hex format": values that are not hex colours in any spelling are malformed.
        let format_hex = |name: &str| {
            op.param(name)
                .is_some_and(|p| p.format.as_deref() == Some("hex-color"))
        };
        for name in ["fgColor", "bgColor"] {
            if !format_hex(name) {
                continue;
            }
            for bad in ["#GGGGGG", "#12345", "red", "", "#1234567"] {
                cases.push((format!("{name} {bad:?}"), base().query(name, bad)));
            }
        }
        for (what, req) in cases {
            let (x, o) = self.ctx.exchange(op, req, Expect::Reject).await;
            let label = self.label.as_str();
            match o {
                Outcome::CleanRejection(_) => self.ctx.rec.pass("qr.rejects", label),
                Outcome::Throttled | Outcome::Transport => {}
                Outcome::Accepted | Outcome::Other(_) => self.ctx.rec.violation(
                    "qr.rejects",
                    label,
                    format!("400 or 422 in the error envelope for {what}"),
                    x.status().map_or("no answer".into(), |s| {
                        if o == Outcome::Accepted {
                            format!("{s} (accepted)")
                        } else {
                            s.to_string()
                        }
                    }),
                    Some(&x),
                ),
            }
        }
    }

    /// What the spec leaves open: observed; whatever is accepted must still be honoured.
    async fn choices(&self) {
        use EcLevel::M;
        let t = TYPICAL_URL;
        let navy = Rgb([0x33, 0x66, 0x99]);
        let cream = Rgb([0xff, 0xee, 0xdd]);
        let mut cases = vec![
            // Colour forms "hex format" does not clearly include or exclude.
            self.case("fgColor #abc (#RGB)", t)
                .level(M)
                .colours("#abc", "#FFFFFF", Some((Rgb([0xaa, 0xbb, 0xcc]), WHITE)))
                .expect(Expect::AcceptOrReject),
            self.case("bgColor #fed (#RGB)", t)
                .level(M)
                .colours("#000000", "#fed", Some((BLACK, Rgb([0xff, 0xee, 0xdd]))))
                .expect(Expect::AcceptOrReject),
            self.case("colours #RRGGBBAA (#336699FF on #FFEEDDFF)", t)
                .level(M)
                .colours("#336699FF", "#FFEEDDFF", Some((navy, cream)))
                .expect(Expect::AcceptOrReject),
            self.case("colours without # (336699 on FFEEDD)", t)
                .level(M)
                .colours("336699", "FFEEDD", Some((navy, cream)))
                .expect(Expect::AcceptOrReject),
            self.case("an empty url", "").expect(Expect::AcceptOrReject),
        ];
        // Bounds of size and margin: not shown in the spec.
        for size in [1.0, 10.0, 5000.0, 10000.0, -5.0, 600.5] {
            let mut c = self.case(format!("size {}", fmt_num(size)), t).size(size);
            if size < 1.0 {
                c.content = ContentWant::Observe;
            }
            cases.push(c);
        }
        for margin in [-1.0, 50.0, 100.5] {
            cases.push(
                self.case(format!("margin {}", fmt_num(margin)), t)
                    .level(M)
                    .margin(margin),
            );
        }
        // Paid-plan parameters with a paid key (the key in use is the strongest).
        let paid = self.ctx.spec.plan(&self.key.plan).is_some_and(|p| p.paid);
        if paid && self.op.param("logo").is_some() {
            let mut logo = self
                .case("logo on a paid plan, level L", t)
                .level(EcLevel::L)
                .set("logo", "https://example.com/logo.png")
                .expect(Expect::AcceptOrReject);
            logo.content = ContentWant::Observe;
            logo.colours = None;
            cases.push(logo.clone());
            if self.op.param("hideLogo").is_some() {
                let mut hidden = logo.clone().set("hideLogo", "true");
                hidden.what = "logo with hideLogo=true on a paid plan, level L".into();
                cases.push(hidden);
            }
        }
        // The url at its maximum length: valid per the spec, beyond any QR code's capacity.
        let max_len = self
            .op
            .param("url")
            .and_then(|p| p.bound("maxLength"))
            .map_or(32000, |n| n as usize);
        let mut longest = self
            .case(
                format!("a url of {max_len} characters (the spec's maximum)"),
                &url_of_len(max_len),
            )
            .expect(Expect::AcceptOrReject);
        longest.content = ContentWant::Impossible;
        cases.push(longest);
        for case in &cases {
            if let Some(insp) = self.render(case).await
                && case.content == ContentWant::Strict
            {
                self.ctx.rec.observe(
                    "qr.choices",
                    &self.label,
                    format!("{}: accepted ({}x{})", case.what, insp.width, insp.height),
                    None,
                );
            }
        }
        self.include_margin().await;
    }

    /// Deprecated includeMargin=false: accepted? Is the margin still included?
    async fn include_margin(&self) {
        if self.op.param("includeMargin").is_none() {
            return;
        }
        let base = self
            .case("margin 4", TYPICAL_URL)
            .size(600.0)
            .margin(4.0)
            .level(EcLevel::M);
        let mut off = base.clone().set("includeMargin", "false");
        off.what = "includeMargin=false with margin 4".into();
        let with = self.render(&base).await;
        let without = self.render(&off).await;
        let quiet = |i: &Option<Inspection>| {
            i.as_ref()
                .and_then(|i| i.decoded.as_ref().ok())
                .map(|d| d.quiet_zone_modules)
        };
        if let (Some(a), Some(b)) = (quiet(&with), quiet(&without)) {
            let verdict = if (a - b).abs() <= 0.5 {
                "the margin is still included"
            } else {
                "the margin changes"
            };
            self.ctx.rec.observe(
                "qr.choices",
                &self.label,
                format!("includeMargin=false: accepted; {verdict} ({b:.1} modules against {a:.1})"),
                None,
            );
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
    }

    #[test]
    fn png_dimensions_are_read_safely() {
        assert_eq!(png_dimensions(b""), None);
        assert_eq!(png_dimensions(b"\x89PNG\r\n\x1a\n"), None);
        let png = qr::render_png(
            b"x",
            &qr::RenderOptions {
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
