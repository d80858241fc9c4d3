//! `transport.*`: the spec allows only HTTPS.

use super::Ctx;

pub async fn run(ctx: &Ctx) {
    if !ctx.enabled("transport.https") {
        return;
    }
    if ctx.target.is_https() {
        ctx.rec.pass("transport.https", "*");
    } else {
        ctx.rec.violation(
            "transport.https",
            "*",
            "an https:// target",
            ctx.target.base_url.to_string(),
            None,
        );
    }
}
