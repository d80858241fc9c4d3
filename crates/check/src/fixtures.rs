//! The fixture ledger: the partners a run may deactivate (`--partner`, `--tenant`, the
//! profile's `[fixtures]`), handed out to the families that deactivate them. A deactivation
//! uses a fixture up, so each is claimed once, by kind (the body field that names it), in the
//! order given, whether it came from the profile or a flag: a family claims what it needs
//! when it runs, and a family not selected claims nothing.
//!
//! A fixture belongs to a workspace and is deactivated with that workspace's key. Bound
//! (`advanced=pn_1`), its owner is a key of that plan. Bare, the spec offers no way to learn
//! its owner without deactivating it (no operation reads a partner), so the first family to
//! deactivate a bare fixture tries each key that may, strongest first, until one does not
//! answer 404 (`owners`), and the ledger keeps the key found (`owner_found`). A family that
//! cannot try (a sequence names its owner before it plays) takes the presumed owner: the key
//! found so far, else the strongest key that may deactivate; a 404 from it is a setup problem
//! named with the flag that binds the fixture, never the target's failure.

use std::collections::VecDeque;
use std::sync::Mutex;

use linkcert_run::target::{Fixture, PlanKey, Target};

/// Which body field names a fixture, and so which list it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    PartnerId,
    TenantId,
}

impl Field {
    /// The body field (`partnerId`, `tenantId`).
    pub fn name(self) -> &'static str {
        match self {
            Field::PartnerId => "partnerId",
            Field::TenantId => "tenantId",
        }
    }

    /// The flag that gives one (`--partner`, `--tenant`).
    pub fn flag(self) -> &'static str {
        match self {
            Field::PartnerId => "--partner",
            Field::TenantId => "--tenant",
        }
    }
}

/// Fixtures of each kind: what a family claims, and what a run needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub partners: usize,
    pub tenants: usize,
}

impl Count {
    pub const fn new(partners: usize, tenants: usize) -> Count {
        Count { partners, tenants }
    }

    pub const fn plus(self, o: Count) -> Count {
        Count::new(self.partners + o.partners, self.tenants + o.tenants)
    }

    /// The flags that add what `self` lacks of `want`: "2 more --partner ID and 1 more
    /// --tenant ID"; None when nothing is lacking.
    pub fn lacking(self, want: Count) -> Option<String> {
        let more = |have: usize, want: usize, flag: &str| {
            (want > have).then(|| format!("{} more {flag} ID", want - have))
        };
        let parts: Vec<String> = [
            more(self.partners, want.partners, Field::PartnerId.flag()),
            more(self.tenants, want.tenants, Field::TenantId.flag()),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(" and "))
    }
}

/// What `http` deactivates: one partner, sent with a charset parameter (`http.media-type`).
pub const HTTP: Count = Count::new(1, 0);
/// What `partners` deactivates: a partnerId and a tenantId (`partners.deactivate`), then one
/// of each at once (which wins, `partners.choices`).
pub const PARTNERS: Count = Count::new(2, 2);
/// What one play of a sequence deactivates (its partner fixture and its tenant fixture).
pub const SEQUENCE_PLAY: Count = Count::new(1, 1);
/// The fewest fixtures with which no family is skipped for want of one (a sequence plays as
/// long as fixtures last; each play takes fresh ones).
pub const FEWEST: Count = HTTP.plus(PARTNERS).plus(SEQUENCE_PLAY);

/// A share of the fixtures, handed out in the order of `TURNS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// `partners`: one by partnerId, one by tenantId (its failing checks).
    PartnersById,
    /// `http.media-type`'s real deactivation.
    Http,
    /// The first play of `sequence`.
    FirstSequence,
    /// `partners.choices`: a partnerId and a tenantId at once (informational, so after the
    /// checks that can fail).
    PartnersBoth,
}

impl Turn {
    pub fn family(self) -> &'static str {
        match self {
            Turn::PartnersById | Turn::PartnersBoth => "partners",
            Turn::Http => "http",
            Turn::FirstSequence => "sequence",
        }
    }
}

/// Who gets fixtures first when there are too few for all: the checks that can fail before
/// an informational one; what is left after the turns goes to `sequence` (more plays).
pub const TURNS: [(Turn, Count); 4] = [
    (Turn::PartnersById, Count::new(1, 1)),
    (Turn::Http, HTTP),
    (Turn::FirstSequence, SEQUENCE_PLAY),
    (Turn::PartnersBoth, Count::new(1, 1)),
];

#[derive(Default)]
struct Books {
    /// Each family's share, not claimed yet, in the order given.
    shares: Vec<(&'static str, Field, Fixture)>,
    /// The key a bare fixture's deactivation found to own it.
    owner: Option<PlanKey>,
}

/// The run's fixtures and who takes which.
pub struct Ledger {
    books: Mutex<Books>,
    given: Count,
    /// What the selected families would take, all told (`TURNS`).
    wanted: Count,
}

impl Ledger {
    /// Shares the fixtures of `target` among the turns `takes` selects (a family not
    /// selected takes none), then the rest to `sequence` when it is selected.
    pub fn new(target: &Target, takes: impl Fn(Turn) -> bool) -> Ledger {
        let mut left: [VecDeque<Fixture>; 2] = [
            target.partner_ids.iter().cloned().collect(),
            target.tenant_ids.iter().cloned().collect(),
        ];
        let mut shares = Vec::new();
        let mut wanted = Count::default();
        for (turn, want) in TURNS.into_iter().filter(|(t, _)| takes(*t)) {
            wanted = wanted.plus(want);
            // A pair is taken whole or left for the sequences.
            if turn == Turn::PartnersBoth && (left[0].is_empty() || left[1].is_empty()) {
                continue;
            }
            for (i, field, n) in [
                (0, Field::PartnerId, want.partners),
                (1, Field::TenantId, want.tenants),
            ] {
                for _ in 0..n {
                    if let Some(f) = left[i].pop_front() {
                        shares.push((turn.family(), field, f));
                    }
                }
            }
        }
        if takes(Turn::FirstSequence) {
            let [partners, tenants] = left;
            shares.extend(
                partners
                    .into_iter()
                    .map(|f| ("sequence", Field::PartnerId, f)),
            );
            shares.extend(
                tenants
                    .into_iter()
                    .map(|f| ("sequence", Field::TenantId, f)),
            );
        }
        Ledger {
            books: Mutex::new(Books {
                shares,
                owner: None,
            }),
            given: Count::new(target.partner_ids.len(), target.tenant_ids.len()),
            wanted,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Books) -> R) -> R {
        f(&mut self.books.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The next fixture of `field` in `family`'s share, now used; None when none is left.
    pub fn claim(&self, field: Field, family: &str) -> Option<Fixture> {
        self.with(|b| {
            let at = b
                .shares
                .iter()
                .position(|(fam, f, _)| *fam == family && *f == field)?;
            Some(b.shares.remove(at).2)
        })
    }

    /// Every fixture of `field` left in `family`'s share.
    pub fn claim_all(&self, field: Field, family: &str) -> Vec<Fixture> {
        std::iter::from_fn(|| self.claim(field, family)).collect()
    }

    /// A partner fixture and a tenant fixture of `family`'s share at once, or neither.
    pub fn claim_pair(&self, family: &str) -> Option<(Fixture, Fixture)> {
        let both = self.with(|b| {
            let has = |field| {
                b.shares
                    .iter()
                    .any(|(fam, f, _)| *fam == family && *f == field)
            };
            has(Field::PartnerId) && has(Field::TenantId)
        });
        if !both {
            return None;
        }
        Some((
            self.claim(Field::PartnerId, family)?,
            self.claim(Field::TenantId, family)?,
        ))
    }

    /// Why `family`, which deactivates `wants`, went without, and the flags that add enough
    /// for every family selected.
    pub fn shortage(&self, family: &str, wants: Count) -> String {
        let lacking = self
            .given
            .lacking(self.wanted)
            .unwrap_or_else(|| "none".into());
        format!(
            "{family} deactivates {} and {} (fixtures: partners that may be deactivated, each \
             used up); {} and {} were given, shared among the families selected, the checks \
             that can fail first: add {lacking} ({} --partner and {} --tenant run every \
             family)",
            plural(wants.partners, "partnerId"),
            plural(wants.tenants, "tenantId"),
            plural(self.given.partners, "partnerId"),
            plural(self.given.tenants, "tenantId"),
            FEWEST.partners,
            FEWEST.tenants,
        )
    }

    /// The keys to try as the owner of `f`, in order, from `allowed` (the keys that may
    /// deactivate, strongest first): its plan's when bound; otherwise the key found to own an
    /// earlier fixture first, then the others.
    pub fn owners(&self, f: &Fixture, allowed: &[&PlanKey]) -> Vec<PlanKey> {
        if let Some(plan) = &f.plan {
            return allowed
                .iter()
                .filter(|k| k.plan == *plan)
                .map(|k| (*k).clone())
                .collect();
        }
        let found = self.with(|b| b.owner.clone());
        let mut keys: Vec<PlanKey> = allowed.iter().map(|k| (*k).clone()).collect();
        if let Some(at) = found.and_then(|o| keys.iter().position(|k| k.key == o.key)) {
            let k = keys.remove(at);
            keys.insert(0, k);
        }
        keys
    }

    /// The owner a family that cannot try keys takes for `f`, and whether it is presumed
    /// (the fixture is bare).
    pub fn owner(&self, f: &Fixture, allowed: &[&PlanKey]) -> Option<(PlanKey, Presumed)> {
        let key = self.owners(f, allowed).into_iter().next()?;
        let presumed = if f.plan.is_some() {
            Presumed::No
        } else {
            Presumed::Yes
        };
        Some((key, presumed))
    }

    /// A bare fixture's deactivation was served with `key`: the workspace of the fixtures
    /// given, most likely, so the next bare one is tried with it first.
    pub fn owner_found(&self, f: &Fixture, key: &PlanKey) {
        if f.plan.is_none() {
            self.with(|b| b.owner = Some(key.clone()));
        }
    }
}

/// What deactivating a fixture with its owner came to (`Ledger::deactivate`).
pub enum Tried<T> {
    /// Sent with this key (its plan's, or the first a bare fixture's 404s did not rule out),
    /// and what the sender made of it.
    Sent(PlanKey, T),
    /// No key given may deactivate it: why, with the flag to add.
    NoKey(String),
    /// Every key that may deactivate answered 404 for a bare fixture: a setup problem (or a
    /// target whose deactivation is broken: linkcert cannot tell), with the flag that binds it.
    NotOwned(String),
}

impl Ledger {
    /// Deactivates `f` (named by `field`) with its owner's key: its plan's when bound; when
    /// bare, each key that may deactivate (`owners`) until one does not answer 404 (another
    /// workspace's key changes nothing). `send` sends with a key and says the status it got.
    /// A 200 records the owner found, for the next bare fixture.
    pub async fn deactivate<T, Fut>(
        &self,
        field: Field,
        f: &Fixture,
        allowed: &[&PlanKey],
        mut send: impl FnMut(PlanKey) -> Fut,
    ) -> Tried<T>
    where
        Fut: std::future::Future<Output = (Option<u16>, T)>,
    {
        let keys = self.owners(f, allowed);
        if keys.is_empty() {
            let plan = f.plan.as_deref().unwrap_or("PLAN");
            return Tried::NoKey(format!(
                "the fixture {} {} is bound to the {plan} plan, but no key of that plan may \
                 deactivate (pass --key {plan}=...)",
                field.name(),
                f.id
            ));
        }
        let mut tried = Vec::new();
        for k in keys {
            let (status, got) = send(k.clone()).await;
            if f.plan.is_none() && status == Some(404) {
                tried.push(format!("the {} key", k.plan));
                continue;
            }
            if status == Some(200) {
                self.owner_found(f, &k);
            }
            return Tried::Sent(k, got);
        }
        Tried::NotOwned(format!(
            "setup: no key given owns the fixture {field_name} {id}: {} answered 404. Bind it to \
             the key of the workspace that owns it: {flag} PLAN={id} (or \"PLAN={id}\" in the \
             profile's [fixtures])",
            tried.join(", "),
            field_name = field.name(),
            flag = field.flag(),
            id = f.id
        ))
    }
}

/// Whether a fixture's owner was bound or presumed (`Ledger::owner`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Presumed {
    /// Bound to a plan: a 404 from its key is the target's.
    #[default]
    No,
    /// Bare: a 404 may mean another workspace owns it.
    Yes,
}

/// "1 partnerId", "2 tenantIds".
fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(partners: &[&str], tenants: &[&str]) -> Target {
        let plans = ["free", "advanced", "enterprise"];
        Target {
            partner_ids: partners.iter().map(|s| Fixture::parse(s, &plans)).collect(),
            tenant_ids: tenants.iter().map(|s| Fixture::parse(s, &plans)).collect(),
            ..Target::default()
        }
    }

    fn key(plan: &str, key: &str) -> PlanKey {
        PlanKey {
            plan: plan.into(),
            key: key.into(),
        }
    }

    fn ids(l: &Ledger, field: Field, family: &str) -> Vec<String> {
        l.claim_all(field, family)
            .into_iter()
            .map(|f| f.id)
            .collect()
    }

    #[test]
    fn the_checks_that_can_fail_get_fixtures_first_and_the_sequences_the_rest() {
        let all = |_| true;
        // One of each: both go to `partners`, whose deactivation can fail.
        let l = Ledger::new(&target(&["p1"], &["t1"]), all);
        assert_eq!(l.claim(Field::PartnerId, "http"), None);
        assert_eq!(ids(&l, Field::PartnerId, "partners"), ["p1"]);
        assert_eq!(ids(&l, Field::TenantId, "partners"), ["t1"]);
        // A tenant short of the fewest: the informational pair goes without, not a sequence.
        let l = Ledger::new(
            &target(&["p1", "advanced=p2", "p3", "p4", "p5"], &["t1", "t2"]),
            all,
        );
        assert_eq!(l.claim(Field::PartnerId, "http").unwrap().id, "p2");
        assert_eq!(ids(&l, Field::PartnerId, "sequence"), ["p3", "p4", "p5"]);
        assert_eq!(ids(&l, Field::TenantId, "sequence"), ["t2"]);
        assert!(l.claim(Field::PartnerId, "partners").is_some());
        assert_eq!(l.claim_pair("partners"), None);
        assert_eq!(l.given, Count::new(5, 2));
        // A family not selected takes none.
        let l = Ledger::new(&target(&["p1", "p2"], &["t1"]), |t| {
            t.family() == "sequence"
        });
        assert_eq!(ids(&l, Field::PartnerId, "sequence"), ["p1", "p2"]);
        assert_eq!(l.claim(Field::TenantId, "partners"), None);
    }

    #[test]
    fn a_pair_is_claimed_whole_or_not_at_all() {
        let l = Ledger::new(
            &target(&["p1", "p2", "p3", "p4"], &["t1", "t2", "t3"]),
            |_| true,
        );
        assert!(l.claim(Field::PartnerId, "partners").is_some());
        assert!(l.claim(Field::TenantId, "partners").is_some());
        let (p, t) = l.claim_pair("partners").expect("the both-ids pair");
        assert_eq!((p.id.as_str(), t.id.as_str()), ("p4", "t3"));
        assert_eq!(l.claim_pair("partners"), None, "used up");
        // Only a partner left in the share (another family's tenant is not its): no pair, and
        // the partner stays claimable.
        let l = Ledger::new(&target(&["p1", "p2", "p3"], &["t1", "t2"]), |_| true);
        assert_eq!(l.claim(Field::TenantId, "partners").unwrap().id, "t1");
        assert_eq!(l.claim_pair("partners"), None);
        assert_eq!(l.claim(Field::PartnerId, "partners").unwrap().id, "p1");
        assert_eq!(ids(&l, Field::TenantId, "sequence"), ["t2"]);
    }

    /// What `Ledger::deactivate` sends with each key, answered by `statuses` (key to status).
    fn deactivate(
        l: &Ledger,
        f: &Fixture,
        allowed: &[&PlanKey],
        statuses: &[(&str, u16)],
    ) -> (Tried<String>, Vec<String>) {
        let sent = Mutex::new(Vec::new());
        let tried = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(l.deactivate(Field::TenantId, f, allowed, |k| {
                sent.lock().unwrap().push(k.key.clone());
                let status = statuses.iter().find(|(key, _)| *key == k.key).map(|s| s.1);
                async move { (status, k.key.clone()) }
            }));
        (tried, sent.into_inner().unwrap())
    }

    #[test]
    fn a_deactivation_goes_to_the_first_key_not_answering_404_and_remembers_it() {
        let l = Ledger::new(&target(&[], &[]), |_| true);
        let (adv, ent) = (key("advanced", "A"), key("enterprise", "E"));
        let allowed = [&ent, &adv];
        let bare = Fixture::parse("t1", &[]);
        let (tried, sent) = deactivate(&l, &bare, &allowed, &[("E", 404), ("A", 200)]);
        assert!(matches!(tried, Tried::Sent(k, _) if k == adv));
        assert_eq!(sent, ["E", "A"]);
        // The next bare fixture goes to the key found first.
        let (_, sent) = deactivate(&l, &Fixture::parse("t2", &[]), &allowed, &[("A", 200)]);
        assert_eq!(sent, ["A"]);
        // Every key 404: not owned, and the message says how to bind it.
        let (tried, _) = deactivate(&l, &bare, &allowed, &[("E", 404), ("A", 404)]);
        let Tried::NotOwned(why) = tried else {
            panic!("not owned")
        };
        assert!(
            why.contains("the advanced key, the enterprise key answered 404"),
            "{why}"
        );
        assert!(why.contains("owns the fixture tenantId t1"), "{why}");
        assert!(why.contains("--tenant PLAN=t1"), "{why}");
        // Bound: its plan's key only, and a 404 is its answer to judge.
        let bound = Fixture::bound("t3", "enterprise");
        let (tried, sent) = deactivate(&l, &bound, &allowed, &[("E", 404)]);
        assert!(matches!(tried, Tried::Sent(k, _) if k == ent));
        assert_eq!(sent, ["E"]);
        // Bound to a plan no key given may deactivate with.
        let (tried, sent) = deactivate(&l, &Fixture::bound("t4", "free"), &allowed, &[]);
        assert!(matches!(tried, Tried::NoKey(why) if why.contains("--key free=")));
        assert!(sent.is_empty());
    }

    #[test]
    fn a_bare_fixture_is_tried_first_with_the_owner_found_and_a_bound_one_only_with_its_plan() {
        let l = Ledger::new(&target(&[], &[]), |_| true);
        let (adv, ent) = (key("advanced", "A"), key("enterprise", "E"));
        let allowed = [&ent, &adv];
        let bare = Fixture::parse("p1", &[]);
        assert_eq!(l.owners(&bare, &allowed), [ent.clone(), adv.clone()]);
        assert_eq!(l.owner(&bare, &allowed), Some((ent.clone(), Presumed::Yes)));
        l.owner_found(&bare, &adv);
        assert_eq!(l.owners(&bare, &allowed), [adv.clone(), ent.clone()]);
        let bound = Fixture::bound("p2", "enterprise");
        assert_eq!(l.owners(&bound, &allowed), std::slice::from_ref(&ent));
        assert_eq!(l.owner(&bound, &allowed), Some((ent, Presumed::No)));
    }

    #[test]
    fn what_is_lacking_is_said_as_the_flags_that_add_it() {
        assert_eq!(FEWEST, Count::new(4, 3));
        assert_eq!(
            TURNS.iter().fold(Count::default(), |c, (_, w)| c.plus(*w)),
            FEWEST,
            "the turns take the fewest"
        );
        assert_eq!(
            Count::new(1, 3).lacking(FEWEST).as_deref(),
            Some("3 more --partner ID")
        );
        assert_eq!(
            Count::new(0, 0).lacking(FEWEST).as_deref(),
            Some("4 more --partner ID and 3 more --tenant ID")
        );
        assert_eq!(FEWEST.lacking(FEWEST), None);
    }

    #[test]
    fn a_shortage_names_what_to_add_for_the_families_selected() {
        let l = Ledger::new(&target(&["p1", "p2"], &["t1"]), |_| true);
        let why = l.shortage("sequence", SEQUENCE_PLAY);
        assert!(
            why.contains("2 partnerIds and 1 tenantId were given"),
            "{why}"
        );
        assert!(
            why.contains("add 2 more --partner ID and 2 more --tenant ID ("),
            "{why}"
        );
        assert!(
            why.contains("(4 --partner and 3 --tenant run every family)"),
            "{why}"
        );
        let only = Ledger::new(&target(&[], &[]), |t| t == Turn::FirstSequence);
        let why = only.shortage("sequence", SEQUENCE_PLAY);
        assert!(
            why.contains("add 1 more --partner ID and 1 more --tenant ID ("),
            "{why}"
        );
    }
}
