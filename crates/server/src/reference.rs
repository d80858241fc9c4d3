//! The built-in reference as the target of `check` and `load`: what it serves, handed over as
//! a `Target`, so that neither `check` nor `load` depends on the server.

use linkcert_http::BaseUrl;
use linkcert_run::target::{Fixture, PlanKey, Target};
use linkcert_spec::Spec;

use crate::RunningServer;

impl RunningServer {
    /// This reference as the target of `check` and `load`, from what it serves: all its keys,
    /// its standard window, its certificate, and fixtures from the strongest key's workspace
    /// (deactivation uses that key). Destructive checks are allowed: its data lives only as
    /// long as it does.
    pub fn target(&self, spec: &Spec) -> Target {
        let keys = self
            .plan_keys()
            .into_iter()
            .map(|(plan, key)| PlanKey { plan, key })
            .collect();
        let mut t = Target {
            base_url: BaseUrl::parse(&self.base_url)
                .expect("the reference's own address is an http(s) URL"),
            keys,
            rate_window: self.standard_window(),
            allow_destructive: true,
            trust_pem: self.self_signed_pem.clone(),
            ..Target::default()
        };
        self.lend_fixtures(&mut t, spec);
        t
    }

    /// Fixtures from this reference's workspace of the target's strongest key, bound to its
    /// plan.
    pub fn lend_fixtures(&self, target: &mut Target, spec: &Spec) {
        if let Some(k) = target.strongest_key(spec) {
            let (p, t) = self.fixtures_for(&k.key);
            let bind = |ids: Vec<String>| {
                ids.into_iter()
                    .map(|id| Fixture::bound(id, k.plan.clone()))
                    .collect()
            };
            (target.partner_ids, target.tenant_ids) = (bind(p), bind(t));
        }
    }
}
