//! `qr.rejects`: requests the spec makes invalid are refused cleanly (400 or 422 in the
//! envelope).

use super::*;
use linkcert_registry::check_id;

impl Family<'_> {
    /// Requests the spec makes invalid.
    pub(super) async fn rejects(&self) {
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
                Outcome::CleanRejection(_) => self.ctx.rec.pass(check_id!("qr.rejects"), label),
                Outcome::Throttled | Outcome::Transport => {}
                Outcome::Accepted | Outcome::Other(_) => self.ctx.rec.violation(
                    check_id!("qr.rejects"),
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
}
