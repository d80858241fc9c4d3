//! The second implementation of the service (the `linkcert-variant` crate, `tests/variant/`),
//! and the runner's `Target` for it, which that crate cannot build: it does not depend on
//! linkcert.

use std::ops::Deref;

use linkcert::target::{Fixture, PlanKey, Target};

/// A running variant: its own API (`url`, `admitted`, `partner_active`, ...) and `target`.
pub struct Variant(linkcert_variant::Variant);

impl Deref for Variant {
    type Target = linkcert_variant::Variant;

    fn deref(&self) -> &linkcert_variant::Variant {
        &self.0
    }
}

/// Start the variant on a free loopback port with a standard window of `window_secs`.
pub async fn start(window_secs: f64) -> Variant {
    Variant(linkcert_variant::start(window_secs).await)
}

/// `lk_<plan>_1` to `lk_<plan>_<n>` for each of `plans`: the keys both implementations accept
/// when started with a fleet of `n` (as `serve --dev-keys n`), each plan's in order.
pub fn fleet_keys(plans: &[&str], n: usize) -> Vec<PlanKey> {
    plans
        .iter()
        .flat_map(|plan| {
            (1..=n).map(move |i| PlanKey {
                plan: plan.to_string(),
                key: format!("lk_{plan}_{i}"),
            })
        })
        .collect()
}

/// The variant also accepting `lk_<plan>_1` to `lk_<plan>_<n>`, as `serve --dev-keys n`.
pub async fn start_fleet(window_secs: f64, n: usize) -> Variant {
    Variant(linkcert_variant::start_with_fleet(window_secs, n).await)
}

impl Variant {
    /// What the runner needs to certify this variant: every key, the window, and fixtures of
    /// the Advanced workspace bound to the Advanced key.
    pub fn target(&self) -> Target {
        let keys = self
            .keys()
            .map(|(plan, key)| PlanKey {
                plan: plan.to_string(),
                key: key.to_string(),
            })
            .collect();
        let mut t = Target {
            base_url: self.url.parse().expect("a base URL"),
            keys,
            rate_window: linkcert::window::RateWindow::from_secs(self.window().as_secs_f64())
                .expect("a window"),
            allow_destructive: true,
            ..Target::default()
        };
        let (p, tn) = self.fixtures("advanced");
        let bind = |ids: Vec<String>| ids.into_iter().map(|id| Fixture::bound(id, "advanced"));
        t.partner_ids = bind(p).collect();
        t.tenant_ids = bind(tn).collect();
        t
    }
}
