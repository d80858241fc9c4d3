//! `qr.png`, `qr.size`, `qr.colours`, `qr.content`, `qr.level`: one answer read and decoded
//! once, then judged by one function per check.

use super::*;
use linkcert_registry::check_id;

impl Family<'_> {
    /// Send a render request and judge a 200; a clean rejection of an AcceptOrReject case is
    /// observed. Returns the inspection when there was one.
    pub(super) async fn render(&self, case: &Case) -> Option<Inspection> {
        let (x, o) = self
            .ctx
            .exchange(self.op, case.request(&self.key, self.op), case.expect)
            .await;
        self.answered(case, &x, o)
    }

    /// Renders of `cases`, sent side by side (`Ctx::exchange_each`) and judged in order.
    pub(super) async fn render_each(&self, cases: &[Case]) {
        let sends = cases
            .iter()
            .map(|c| (self.op, c.request(&self.key, self.op), c.expect))
            .collect();
        self.ctx
            .exchange_each(sends, |i, x, o| {
                if let Some(case) = cases.get(i) {
                    self.answered(case, &x, o);
                }
            })
            .await;
    }

    /// `render`'s judgement of an answer.
    fn answered(&self, case: &Case, x: &Exchange, o: Outcome) -> Option<Inspection> {
        match o {
            Outcome::Accepted => self.judge(case, x),
            // A clean refusal where the case allows one (a plan's: any 4xx in the envelope)
            // is the target's choice; status.* judged every other.
            Outcome::CleanRejection(s) | Outcome::Other(s) if refusal_allowed(case, x, o) => {
                let code = x.resp().and_then(error_code).unwrap_or_default();
                let how = match o {
                    Outcome::CleanRejection(_) => "rejected",
                    _ => "refused",
                };
                self.ctx.rec.observe(
                    check_id!("qr.choices"),
                    &self.label,
                    format!("{}: {how} with {s} {code}", case.what),
                    Some(x),
                );
                None
            }
            // status.* judged it already; a 429 is nobody's failure.
            _ => None,
        }
    }

    /// The `qr.*` checks on one accepted exchange: the body is read once, then each check
    /// judges what it turned out to be.
    pub(super) fn judge(&self, case: &Case, x: &Exchange) -> Option<Inspection> {
        let r = x.resp()?;
        let image = read(case, &r.body, r.truncated);
        self.qr_png(case, x, &r.media_type().unwrap_or_default(), &image);
        self.qr_size(case, x, &image);
        let Image::Decoded(insp) = image else {
            return None;
        };
        self.qr_colours(case, x, &insp);
        self.qr_content(case, x, &insp);
        self.qr_level(case, x, &insp);
        Some(insp)
    }

    /// `qr.png`: served as image/png, complete, within bounds, and a PNG the decoder reads.
    fn qr_png(&self, case: &Case, x: &Exchange, media: &str, image: &Image) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        if media != "image/png" {
            rec.violation(
                check_id!("qr.png"),
                label,
                format!("Content-Type image/png ({what})"),
                if media.is_empty() {
                    "no Content-Type".into()
                } else {
                    media.to_string()
                },
                Some(x),
            );
        }
        match image {
            Image::Truncated => rec.violation(
                check_id!("qr.png"),
                label,
                format!("a complete PNG ({what})"),
                format!(
                    "a body longer than the runner reads ({} MiB)",
                    crate::probe::MAX_BODY / (1024 * 1024)
                ),
                Some(x),
            ),
            Image::Oversized { w, h, .. } if (*w).max(*h) > qr::MAX_SIDE => rec.violation(
                check_id!("qr.png"),
                label,
                format!("a PNG within {} px a side ({what})", qr::MAX_SIDE),
                format!("a PNG declaring {w}x{h} px"),
                Some(x),
            ),
            Image::Invalid(e) => rec.violation(
                check_id!("qr.png"),
                label,
                format!("a valid PNG image ({what})"),
                e.clone(),
                Some(x),
            ),
            Image::Decoded(_) => rec.pass(check_id!("qr.png"), label),
            Image::Large { .. } | Image::Oversized { .. } => {}
        }
    }

    /// `qr.size`: the image is as many pixels a side as asked.
    fn qr_size(&self, case: &Case, x: &Exchange, image: &Image) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        match image {
            Image::Large { w, h } => {
                self.size_verdict(case, x, *w, *h);
                rec.observe(
                    check_id!("qr.choices"),
                    label,
                    format!("{what}: accepted ({w}x{h}, judged from its header)"),
                    Some(x),
                );
            }
            Image::Oversized { w, h, asked } => rec.violation(
                check_id!("qr.size"),
                label,
                format!(
                    "{} ({what})",
                    asked.map_or("an image of the size asked".into(), |n| format!(
                        "{n}x{n} px"
                    ))
                ),
                format!("{w}x{h} px"),
                Some(x),
            ),
            Image::Decoded(insp) => self.size_verdict(case, x, insp.width, insp.height),
            Image::Truncated | Image::Invalid(_) => {}
        }
    }

    /// `qr.colours`: the colours asked for are the image's, exactly.
    fn qr_colours(&self, case: &Case, x: &Exchange, insp: &Inspection) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        let Some((fg, bg)) = case.colours else {
            return;
        };
        if insp.exact_colour_fraction >= MIN_EXACT_COLOUR {
            rec.pass(check_id!("qr.colours"), label)
        } else {
            rec.violation(
                check_id!("qr.colours"),
                label,
                format!(
                    "at least {:.0}% of pixels exactly {} or {} ({what})",
                    MIN_EXACT_COLOUR * 100.0,
                    hex(fg),
                    hex(bg)
                ),
                format!("{:.1}%", insp.exact_colour_fraction * 100.0),
                Some(x),
            )
        }
    }

    /// `qr.content`: the code holds the url (or, where the case leaves it open, what it holds
    /// is observed).
    fn qr_content(&self, case: &Case, x: &Exchange, insp: &Inspection) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        let url = case.url.as_bytes();
        // The smallest modules any code at this image's size could have: a version-40 code's.
        let largest = self.module_px(case, insp, LARGEST_CODE_MODULES);
        match (&insp.decoded, case.content) {
            (_, ContentWant::Unread) => {}
            (_, ContentWant::Impossible) => rec.violation(
                check_id!("qr.content"),
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
            (Ok(d), ContentWant::Strict) => self.content_held(case, x, &d.content),
            // The reader measures modules off the image; a drawing that is not a code at the
            // size asked (stripes, a code in one corner) would excuse itself. At a size where
            // even a version-40 code's modules are wide enough to read, it excuses nothing.
            (Err(e @ DecodeFailure::ModulesTooSmall { .. }), ContentWant::Strict)
                if largest >= qr::MIN_MODULE_PX =>
            {
                rec.violation(
                    check_id!("qr.content"),
                    label,
                    format!(
                        "a readable code holding the url ({what}): at {} px a side even a \
                         version-40 code's modules are {largest:.1} px",
                        insp.width.min(insp.height),
                    ),
                    format!("no code drawn at the size asked: {}", describe_failure(e)),
                    Some(x),
                )
            }
            (Err(DecodeFailure::ModulesTooSmall { module_px }), _) => rec.observe(
                check_id!("qr.content"),
                label,
                format!(
                    "{what}: modules about {module_px:.1} px wide, too small to decode reliably; content not judged"
                ),
                Some(x),
            ),
            (Err(e), ContentWant::Strict) => self.content_unread(case, x, insp, e),
            (decoded, ContentWant::Observe) => rec.observe(
                check_id!("qr.choices"),
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
    }

    /// A decoded code that must hold the url: it does, byte for byte.
    fn content_held(&self, case: &Case, x: &Exchange, content: &[u8]) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        let url = case.url.as_bytes();
        if content == url {
            rec.pass(check_id!("qr.content"), label);
        } else {
            rec.violation(
                check_id!("qr.content"),
                label,
                format!("the code to hold the {}-byte url ({what})", url.len()),
                format!(
                    "{} bytes: {}",
                    content.len(),
                    String::from_utf8_lossy(content)
                        .chars()
                        .take(120)
                        .collect::<String>()
                ),
                Some(x),
            );
        }
    }

    /// Pixels a module of a `modules`-wide code would have in this image, with the quiet
    /// zone asked for (or the spec's default).
    fn module_px(&self, case: &Case, insp: &Inspection, modules: u32) -> f64 {
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
        f64::from(side) / (f64::from(modules) + 2.0 * margin)
    }

    /// A code that must hold the url and could not be read: a failure only where modules are
    /// wide enough to read whatever version the target picked (the smallest possible code,
    /// measured against the image); observed otherwise.
    fn content_unread(&self, case: &Case, x: &Exchange, insp: &Inspection, e: &DecodeFailure) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        let modules = case
            .level
            .and_then(|l| min_modules(case.url.as_bytes(), l))
            .unwrap_or(LARGEST_CODE_MODULES);
        let px = self.module_px(case, insp, modules);
        if px >= 2.5 {
            rec.violation(
                check_id!("qr.content"),
                label,
                format!("a readable code holding the url ({what})"),
                describe_failure(e),
                Some(x),
            );
        } else {
            rec.observe(
                check_id!("qr.content"),
                label,
                format!("{what}: not decoded ({e}); modules about {px:.1} px"),
                Some(x),
            );
        }
    }

    /// `qr.level`: a code that must hold the url is at the level asked for or higher.
    fn qr_level(&self, case: &Case, x: &Exchange, insp: &Inspection) {
        let (rec, label, what) = (&self.ctx.rec, self.label.as_str(), &case.what);
        let (Ok(d), ContentWant::Strict, Some(asked)) = (&insp.decoded, case.content, case.level)
        else {
            return;
        };
        if d.level >= asked {
            rec.pass(check_id!("qr.level"), label);
        } else {
            rec.violation(
                check_id!("qr.level"),
                label,
                format!("level {asked} or higher ({what})"),
                format!("level {}", d.level),
                Some(x),
            );
        }
    }

    /// The size verdict on an image of `w` x `h` px; a size the spec gives no meaning is
    /// observed.
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
                    check_id!("qr.choices"),
                    label,
                    format!("{}: accepted, image {w}x{h} px", case.what),
                    Some(x),
                );
                return;
            }
        };
        if holds {
            rec.pass(check_id!("qr.size"), label);
        } else {
            rec.violation(
                check_id!("qr.size"),
                label,
                format!("{expected} ({})", case.what),
                format!("{w}x{h} px"),
                Some(x),
            );
        }
    }
}

/// What an accepted answer's body turned out to be: read (and decoded) once, then judged by
/// each `qr.*` check.
enum Image {
    /// Longer than the runner reads.
    Truncated,
    /// Declares more pixels a side than the runner decodes, as the case asked (a bound probe):
    /// judged from its header.
    Large {
        w: u32,
        h: u32,
    },
    /// Declares more pixels a side than the runner decodes, though the case did not ask for it.
    Oversized {
        w: u32,
        h: u32,
        asked: Option<u32>,
    },
    /// Not a PNG the decoder reads, and why.
    Invalid(String),
    Decoded(Inspection),
}

fn read(case: &Case, body: &[u8], truncated: bool) -> Image {
    if truncated {
        return Image::Truncated;
    }
    // Judge the declared dimensions before decoding anything big.
    if let Some((w, h)) = png_dimensions(body)
        && w.max(h) > DECODE_SIDE
    {
        let asked = match &case.size {
            SizeWant::Exact(n) => Some(*n),
            SizeWant::OneOf(v) => v.iter().max().copied(),
            SizeWant::Unknown => None,
        };
        return match asked {
            Some(n) if n > DECODE_SIDE => Image::Large { w, h },
            _ => Image::Oversized { w, h, asked },
        };
    }
    let (fg, bg) = case.colours.unwrap_or((BLACK, WHITE));
    match inspect(body, fg, bg) {
        Ok(insp) => Image::Decoded(insp),
        Err(e) => Image::Invalid(e.to_string()),
    }
}

/// Whether `o` is a refusal `case` lets the target make: 400/422 in the envelope where it may
/// reject, any 4xx in the envelope but 429 where the key's plan may be refused it.
fn refusal_allowed(case: &Case, x: &Exchange, o: Outcome) -> bool {
    match (case.expect, o) {
        (Expect::AcceptOrReject | Expect::AcceptOrRefuse, Outcome::CleanRejection(_)) => true,
        (Expect::AcceptOrRefuse, Outcome::Other(s)) => {
            (400..500).contains(&s) && x.resp().is_some_and(linkcert_http::is_envelope)
        }
        _ => false,
    }
}
