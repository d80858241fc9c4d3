//! `qr.margin`: a larger margin grows the quiet zone; the deprecated `includeMargin` the SDKs
//! send.

use super::*;
use linkcert_registry::check_id;

/// The size the margins of `ranges` are drawn at.
const MARGIN_SIZE_PX: u32 = ranges::MARGIN_SIZE;

impl Family<'_> {
    /// The quiet zone grows with margin at the same size, url and level.
    pub(super) async fn margins(&self) {
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
                check_id!("qr.margin"),
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
            rec.pass(check_id!("qr.margin"), label);
        } else {
            rec.violation(
                check_id!("qr.margin"),
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
        rec.observe(
            check_id!("qr.choices"),
            label,
            format!("{unit} ({shown})"),
            None,
        );
    }

    /// Over the margins sampled across the accepted range (same size, url and level), the
    /// quiet zone never shrinks as the margin grows (by more than a pixel of rounding). Only
    /// that: how much it grows depends on the unit and on where the pixels a module grid
    /// cannot fill go, which the spec leaves open.
    pub(super) fn margin_series(&self, mut seen: Vec<(u32, Option<f64>)>) {
        let (rec, label) = (&self.ctx.rec, self.label.as_str());
        seen.sort_by_key(|(m, _)| *m);
        seen.dedup_by_key(|(m, _)| *m);
        let read: Vec<(u32, f64)> = seen
            .iter()
            .filter_map(|(m, q)| q.map(|q| (*m, q)))
            .collect();
        if read.len() < 2 {
            return;
        }
        match read.windows(2).find(|w| w[1].1 < w[0].1 - 1.0) {
            None => rec.pass(check_id!("qr.margin"), label),
            Some(w) => rec.violation(
                check_id!("qr.margin"),
                label,
                format!(
                    "a quiet zone that never shrinks as margin grows (size {MARGIN_SIZE_PX}, same url and level)"
                ),
                format!(
                    "margin {}: {:.0} px, margin {}: {:.0} px",
                    w[0].0, w[0].1, w[1].0, w[1].1
                ),
                None,
            ),
        }
    }

    /// Deprecated includeMargin=false: accepted? Is the margin still included?
    pub(super) async fn include_margin(&self) {
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
                check_id!("qr.choices"),
                &self.label,
                format!("includeMargin=false: accepted; {verdict} ({b:.1} modules against {a:.1})"),
                None,
            );
        }
    }
}
