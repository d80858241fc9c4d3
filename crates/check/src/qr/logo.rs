//! `qr.logo-hidden` and `qr.logo-unpaid`: a logo that must not be drawn is not. A paid key
//! asking for a logo with hideLogo=true, and a key of a plan without logos asking for one, may
//! be refused (status.* judges how); accepted, the picture is the one the same request draws
//! without the logo, at the level and version the target drew it (a target may raise the level
//! for a logo, as the real service does, or keep it). Judged only where the target draws one
//! request the same way twice: a target may choose its mask as it likes, even at random, and
//! then pictures are only observed. Whether a logo asked for and not hidden on a paid plan is
//! drawn is the target's choice: what a logo is, is not shown, and the real service draws
//! none for a url that is not its own.

use super::*;
use linkcert_registry::Check;

/// The logo asked for: any string names one, as far as the spec shows.
const LOGO: &str = "https://example.com/logo.png";

impl Family<'_> {
    /// One key of each plan that may call GET /qr: the paid ones ask for a hidden logo, the
    /// others for a logo.
    pub(super) async fn logos(&self) {
        if self.op.param("logo").is_none() {
            return;
        }
        let mut plans = Vec::new();
        for key in self.ctx.keys_for(self.op) {
            if plans.contains(&key.plan) {
                continue;
            }
            plans.push(key.plan.clone());
            let paid = self.ctx.spec.plan(&key.plan).is_some_and(|p| p.paid);
            let (id, extra): (Check, &[(&str, &str)]) = if paid {
                if self.op.param("hideLogo").is_none() {
                    continue;
                }
                (
                    check_id!("qr.logo-hidden"),
                    &[("logo", LOGO), ("hideLogo", "true")],
                )
            } else {
                (check_id!("qr.logo-unpaid"), &[("logo", LOGO)])
            };
            if self.ctx.enabled(id) {
                self.drawn_as_without(key, id, extra).await;
            }
        }
    }

    /// GET /qr of the typical url at level L with `extra`, and, when accepted, the same
    /// without it at the level the target drew: one picture.
    async fn drawn_as_without(&self, key: &PlanKey, id: Check, extra: &[(&str, &str)]) {
        let asked: Vec<String> = extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let what = format!("{} with the {} key", asked.join("&"), key.plan);
        let plain = |level: EcLevel| {
            Req::new(self.op.method.clone(), &self.op.path)
                .query("url", TYPICAL_URL)
                .query("level", level.as_str())
                .key(key)
        };
        let mut req = plain(EcLevel::L);
        for (k, v) in extra {
            req = req.query(k, *v);
        }
        let (x, o) = self.ctx.exchange(self.op, req, Expect::Any).await;
        let (Outcome::Accepted, Some(r)) = (o, x.resp()) else {
            let status = x
                .resp()
                .map_or("no answer".into(), |r| r.status.to_string());
            self.ctx
                .rec
                .observe(id, &self.label, format!("{what}: {status}"), Some(&x));
            return;
        };
        let Some(drawn) = decoded(&r.body) else {
            self.ctx.rec.observe(
                id,
                &self.label,
                format!("{what}: accepted, the picture holds no code read"),
                Some(&x),
            );
            return;
        };
        // The same without it, twice: a target that draws one request two ways is not judged.
        let mut without = Vec::new();
        for _ in 0..2 {
            let (y, o) = self
                .ctx
                .exchange(self.op, plain(drawn.level), Expect::Any)
                .await;
            match (o, y.resp()) {
                (Outcome::Accepted, Some(r)) => without.push(r.body.clone()),
                _ => return,
            }
        }
        let (Some(a), Some(b)) = (without.first(), without.get(1)) else {
            return;
        };
        let unjudged = |why: String| {
            self.ctx.rec.observe(
                id,
                &self.label,
                format!("{what}: {why}: not judged"),
                Some(&x),
            );
        };
        if !off_reactor(|| qr::same_picture(a, b, BLACK, WHITE)).unwrap_or(false) {
            return unjudged("the target draws one request two ways".into());
        }
        match decoded(a) {
            Some(d) if d.version == drawn.version => {}
            _ => return unjudged("without it, the code is drawn at another version".into()),
        }
        if off_reactor(|| qr::same_picture(&r.body, a, BLACK, WHITE)).unwrap_or(false) {
            self.ctx.rec.pass(id, &self.label);
        } else {
            self.ctx.rec.violation(
                id,
                &self.label,
                format!(
                    "{what}: the picture the request draws without the logo (level {}, version {}), or a clean refusal",
                    drawn.level.as_str(),
                    drawn.version
                ),
                "another picture of the same code: a logo drawn",
                Some(&x),
            );
        }
    }
}

/// The code a PNG holds, read off the reactor (None: not a PNG, or no code read).
fn decoded(body: &[u8]) -> Option<qr::Decoded> {
    off_reactor(|| qr::inspect_png(body, BLACK, WHITE))
        .ok()?
        .decoded
        .ok()
}
