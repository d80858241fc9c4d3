//! `qr.*` requests: the matrix of cases asked for (sizes, colours, levels, margins, url
//! lengths), each with what the spec says the answer must be.

use super::*;

impl Family<'_> {
    pub(super) fn case(&self, what: impl Into<String>, url: &str) -> Case {
        Case::new(self.op, what, url)
    }

    /// Accepted renders: sizes, margins, levels, colours, url lengths, and a few seeded ones.
    pub(super) fn matrix(&self) -> Vec<Case> {
        let mut v = self.fixed_cases();
        v.extend(self.level_cases());
        // Seeded variety: one generator, drawn in this order.
        let mut rng = Rng(self.ctx.opts.seed ^ 0x5152_4331);
        v.extend(self.seeded_cases(&mut rng));
        v.extend(self.seeded_url_cases(&mut rng));
        v
    }

    /// What every other plan's key is asked, each rendering parameter inside its bounds: a
    /// size, a margin (0 too), every level above L, colours. A plan may refuse cleanly (what a
    /// plan may do is not all shown); what it accepts it must honour, as the first key's.
    pub(super) fn every_plan_cases(&self, plan: &str) -> Vec<Case> {
        self.fixed_cases()
            .into_iter()
            .filter(|c| {
                c.params
                    .iter()
                    .any(|(k, _)| matches!(k.as_str(), "margin" | "level" | "fgColor"))
                    && c.expect == Expect::Accept
            })
            .map(|mut c| {
                c.what = format!("{}, with the {plan} key", c.what);
                c.expect = Expect::AcceptOrRefuse;
                c
            })
            .collect()
    }

    /// Sizes, margins, levels, colours and urls chosen by hand.
    fn fixed_cases(&self) -> Vec<Case> {
        use EcLevel::{H, L, M, Q};
        let t = TYPICAL_URL;
        vec![
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
        ]
    }

    /// One url at each level from L up, asked one after another: each answer must be at its
    /// own level or higher, whatever the target kept from the one before (a cache keyed on
    /// the url alone answers the level it drew first).
    pub(super) fn levels_in_turn(&self) -> Vec<Case> {
        [EcLevel::L, EcLevel::M, EcLevel::Q, EcLevel::H]
            .into_iter()
            .map(|level| {
                self.case(
                    format!("level {level}, the levels asked in turn from L"),
                    TYPICAL_URL,
                )
                .size(400.0)
                .level(level)
            })
            .collect()
    }

    /// Each level, then the byte-mode capacity of each level, exactly and one more.
    fn level_cases(&self) -> Vec<Case> {
        use EcLevel::{H, L, M, Q};
        let t = TYPICAL_URL;
        let mut v = Vec::new();
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
        v
    }

    /// Six seeded renders: size, margin, level, colours (sometimes inverted) and url length.
    fn seeded_cases(&self, rng: &mut Rng) -> Vec<Case> {
        use EcLevel::{H, L, M, Q};
        let mut v = Vec::new();
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

    /// Url lengths across the range each level holds, with a query string, seeded.
    fn seeded_url_cases(&self, rng: &mut Rng) -> Vec<Case> {
        use EcLevel::{H, L, M, Q};
        let mut v = Vec::new();
        // Url lengths across the range each level holds, with a query string (a target that
        // rewrites long urls, e.g. drops their query, is seen), seeded: accepting one is a
        // promise the code holds it, byte for byte.
        for i in 0..3 {
            let level = [L, M, Q, H][rng.below(4) as usize];
            let cap = qr::capacity_bytes(level);
            let len = 100 + rng.below(cap.saturating_sub(100) as u64 + 1) as usize;
            v.push(
                self.case(
                    format!("seeded url #{i}: {len} bytes with a query string, level {level}"),
                    &url_with_query(len),
                )
                .size(600.0)
                .level(level)
                .expect(Expect::AcceptOrReject),
            );
        }
        v
    }
}

/// A url of exactly `len` bytes (at least 30), ASCII, most of it a query string.
fn url_with_query(len: usize) -> String {
    let mut s = String::from("https://example.com/l/qr?");
    let mut i = 0u32;
    while s.len() < len {
        s.push_str(&format!("k{i}=v{}&", i.wrapping_mul(7919) % 1000));
        i += 1;
    }
    s.truncate(len.max(30));
    s
}
