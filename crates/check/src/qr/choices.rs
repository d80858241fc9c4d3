//! `qr.choices`: what the target chose where the spec is silent (bounds of size and margin,
//! colour forms, capacity, logo), observed, never failed.

use super::*;
use linkcert_registry::check_id;

impl Family<'_> {
    /// What the spec leaves open: observed; whatever is accepted must still be honoured.
    pub(super) async fn choices(&self) {
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
                    check_id!("qr.choices"),
                    &self.label,
                    format!("{}: accepted ({}x{})", case.what, insp.width, insp.height),
                    None,
                );
            }
        }
        self.include_margin().await;
    }
}
