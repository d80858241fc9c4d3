//! `transport.*`: the spec allows only HTTPS.

use super::Ctx;
use linkcert_registry::check_id;

pub async fn run(ctx: &Ctx) {
    if !ctx.enabled(check_id!("transport.https")) {
        return;
    }
    if ctx.target.is_https() {
        ctx.rec.pass(check_id!("transport.https"), "*");
    } else {
        ctx.rec.violation(
            check_id!("transport.https"),
            "*",
            "an https:// target",
            ctx.target.base_url.to_string(),
            None,
        );
    }
}
