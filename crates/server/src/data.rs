//! The seeded data of a workspace: tags, and a partner program with links, commissions and
//! payouts. Seeded from the workspace name, so two runs with the same keys see the same data.

use linkcert_spec::clock::rfc3339;
use std::cmp::Ordering;
use std::sync::Arc;

use serde::Serialize;

/// splitmix64: tiny, fast, and good enough to scatter seeded data.
struct Rng(u64);

impl Rng {
    fn from_name(name: &str) -> Rng {
        // FNV-1a of the name: stable across runs and platforms (unlike std's hasher).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const ADJECTIVES: &[&str] = &[
    "spring", "summer", "autumn", "winter", "launch", "retarget", "organic", "paid", "email",
    "social", "partner", "promo", "beta", "legacy", "priority",
];
const NOUNS: &[&str] = &[
    "campaign",
    "newsletter",
    "webinar",
    "podcast",
    "banner",
    "referral",
    "coupon",
    "landing",
    "video",
    "blog",
    "ads",
    "influencer",
    "event",
    "sale",
];
/// Names that exercise collation, case folding and multi-byte characters.
const NON_ASCII: &[&str] = &[
    "café",
    "Zürich",
    "naïve",
    "Straße",
    "Ångström",
    "東京",
    "日本語",
    "Ελληνικά",
    "Привет",
    "emoji 🎉",
    "São Paulo",
    "Øresund",
    "İstanbul",
    "ﬁnance",
];
const COLORS: &[&str] = &[
    "red", "yellow", "green", "blue", "purple", "brown", "gray", "pink",
];

#[derive(Clone, Debug, Serialize)]
pub struct Tag {
    pub id: String,
    pub name: String,
    pub color: String,
    #[serde(rename = "createdAt")]
    pub created_at: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartnerStatus {
    Active,
    Deactivated,
}

#[derive(Clone, Debug, Serialize)]
pub struct Link {
    pub id: String,
    #[serde(rename = "partnerId")]
    pub partner_id: String,
    pub url: String,
    pub disabled: bool,
}

#[derive(Clone, Debug)]
pub struct Partner {
    pub partner_id: String,
    pub tenant_id: String,
    pub status: PartnerStatus,
    /// Commission and payout records: kept intact by deactivation.
    pub commissions_cents: Vec<u64>,
    pub payouts_cents: Vec<u64>,
}

/// A workspace's tags, never changed after seeding, with both sort orders computed once:
/// a listing is a filter over a ready order, not a sort per request.
#[derive(Debug)]
pub struct TagList {
    pub items: Vec<Tag>,
    /// Each tag as JSON, serialised once at seeding: a page is these joined, so serving 100
    /// tags costs a copy, not 100 serialisations (tags never change).
    json: Vec<Box<str>>,
    by_name: Vec<usize>,
    by_created: Vec<usize>,
}

impl TagList {
    fn new(items: Vec<Tag>) -> TagList {
        let order = |by_created: bool| {
            let mut idx: Vec<usize> = (0..items.len()).collect();
            idx.sort_by(|a, b| compare_tags(&items[*a], &items[*b], by_created));
            idx
        };
        TagList {
            by_name: order(false),
            by_created: order(true),
            json: items
                .iter()
                .map(|t| serde_json::to_string(t).unwrap_or_default().into())
                .collect(),
            items,
        }
    }

    /// A JSON array of the given tags (positions in `items`), from the JSON made at seeding,
    /// allocated once at its exact length (a body with spare capacity is copied again when it
    /// becomes the response's bytes).
    pub fn page_json(&self, positions: impl Iterator<Item = usize>) -> String {
        let parts: Vec<&str> = positions
            .map(|i| self.json.get(i).map_or("null", |j| j))
            .collect();
        let len = 2 + parts.iter().map(|p| p.len() + 1).sum::<usize>();
        let mut out = String::with_capacity(len);
        out.push('[');
        for (n, p) in parts.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(p);
        }
        out.push(']');
        out
    }

    /// Positions in `items`, in `GET /tags` order: by name or createdAt, ties by id; desc is
    /// the exact reverse.
    pub fn ordered_positions(
        &self,
        by_created: bool,
        desc: bool,
    ) -> Box<dyn Iterator<Item = usize> + '_> {
        let idx = if by_created {
            &self.by_created
        } else {
            &self.by_name
        };
        if desc {
            Box::new(idx.iter().rev().copied())
        } else {
            Box::new(idx.iter().copied())
        }
    }
}

#[derive(Clone, Debug)]
pub struct WorkspaceData {
    pub tags: Arc<TagList>,
    pub partners: Vec<Partner>,
    pub links: Vec<Link>,
    pub totals: (u64, u64, u64),
}

pub const TAG_COUNT_MIN: usize = 250;
const PARTNERS: usize = 24;

impl WorkspaceData {
    pub fn seeded(workspace: &str) -> WorkspaceData {
        let mut rng = Rng::from_name(workspace);
        let count = TAG_COUNT_MIN + rng.below(40) as usize;
        // 2024-01-01T00:00:00Z, then one tag every few hours; every seventh shares its
        // predecessor's timestamp so sorting by createdAt has ties to break.
        let mut created = 1_704_067_200u64;
        let mut tags = Vec::with_capacity(count);
        for i in 0..count {
            if i % 7 != 6 {
                created += 3600 * (1 + rng.below(48));
            }
            let name = if i % 11 == 5 {
                format!("{} {}", rng.pick(NON_ASCII), i)
            } else if i % 13 == 0 {
                // Same letters, other case: a collation may fold or not.
                rng.pick(ADJECTIVES).to_uppercase()
            } else {
                format!(
                    "{}-{}-{}",
                    rng.pick(ADJECTIVES),
                    rng.pick(NOUNS),
                    rng.below(100)
                )
            };
            tags.push(Tag {
                id: format!("tag_{:04}{:08x}", i, rng.next() as u32),
                name,
                color: rng.pick(COLORS).to_string(),
                created_at: rfc3339(created),
            });
        }
        let mut partners = Vec::with_capacity(PARTNERS);
        let mut links = Vec::new();
        for i in 0..PARTNERS {
            let partner_id = format!("pn_{:02}{:010x}", i, rng.next() & 0xff_ffff_ffff);
            let tenant_id = format!("tn_{}_{:06}", workspace, rng.below(1_000_000));
            for n in 0..1 + rng.below(4) {
                links.push(Link {
                    id: format!("lnk_{:02}{}_{:08x}", i, n, rng.next() as u32),
                    partner_id: partner_id.clone(),
                    url: format!("https://example.com/{workspace}/p{i}/{n}"),
                    disabled: false,
                });
            }
            partners.push(Partner {
                partner_id,
                tenant_id,
                status: PartnerStatus::Active,
                commissions_cents: (0..rng.below(5)).map(|_| 100 + rng.below(50_000)).collect(),
                payouts_cents: (0..rng.below(3))
                    .map(|_| 1_000 + rng.below(90_000))
                    .collect(),
            });
        }
        let totals = (rng.below(100_000), rng.below(5_000), rng.below(1_000));
        WorkspaceData {
            tags: Arc::new(TagList::new(tags)),
            partners,
            links,
            totals,
        }
    }

    /// Deactivate by partnerId, or by tenantId when no partnerId is given (partnerId wins when
    /// both are, as in the real service). Returns the partnerId, or None when unknown.
    /// Idempotent: deactivating a deactivated partner answers the same.
    pub fn deactivate(
        &mut self,
        partner_id: Option<&str>,
        tenant_id: Option<&str>,
    ) -> Option<String> {
        let p = match (partner_id, tenant_id) {
            (Some(id), _) => self.partners.iter_mut().find(|p| p.partner_id == id)?,
            (None, Some(t)) => self.partners.iter_mut().find(|p| p.tenant_id == t)?,
            (None, None) => return None,
        };
        p.status = PartnerStatus::Deactivated;
        for l in self
            .links
            .iter_mut()
            .filter(|l| l.partner_id == p.partner_id)
        {
            l.disabled = true;
        }
        Some(p.partner_id.clone())
    }
}

/// How `GET /tags` orders: by the chosen field, ties broken by id, so the order is total and
/// pages never overlap. Names compare by Unicode code point (no locale collation).
pub fn compare_tags(a: &Tag, b: &Tag, by_created: bool) -> Ordering {
    let primary = if by_created {
        a.created_at.cmp(&b.created_at)
    } else {
        a.name.cmp(&b.name)
    };
    primary.then_with(|| a.id.cmp(&b.id))
}

/// `search` matches a tag whose name contains the term, ignoring case (Unicode lowercase).
pub fn name_matches(name: &str, term: &str) -> bool {
    name.to_lowercase().contains(&term.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_is_deterministic_per_workspace_and_rich_enough() {
        let a = WorkspaceData::seeded("acme");
        let b = WorkspaceData::seeded("acme");
        let c = WorkspaceData::seeded("other");
        assert_eq!(a.tags.items.len(), b.tags.items.len());
        assert!(
            a.tags
                .items
                .iter()
                .zip(&b.tags.items)
                .all(|(x, y)| x.id == y.id && x.name == y.name)
        );
        assert_ne!(a.tags.items[0].id, c.tags.items[0].id);
        assert!(a.tags.items.len() >= TAG_COUNT_MIN);
        assert!(a.tags.items.iter().any(|t| !t.name.is_ascii()));
        let mut ids: Vec<_> = a.tags.items.iter().map(|t| &t.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), a.tags.items.len(), "tag ids are unique");
        // The ready orders are the comparator's, and desc is asc reversed.
        for by_created in [false, true] {
            let in_order = |desc| {
                a.tags
                    .ordered_positions(by_created, desc)
                    .map(|i| &a.tags.items[i])
                    .collect::<Vec<&Tag>>()
            };
            let asc = in_order(false);
            assert!(
                asc.windows(2)
                    .all(|w| compare_tags(w[0], w[1], by_created).is_lt())
            );
            let mut desc = in_order(true);
            desc.reverse();
            assert_eq!(
                asc.iter().map(|t| &t.id).collect::<Vec<_>>(),
                desc.iter().map(|t| &t.id).collect::<Vec<_>>()
            );
            // A page joined from the JSON made at seeding is what serialising the tags gives.
            let page: Vec<usize> = a.tags.ordered_positions(by_created, true).take(7).collect();
            let tags: Vec<&Tag> = page.iter().map(|i| &a.tags.items[*i]).collect();
            assert_eq!(
                a.tags.page_json(page.into_iter()),
                serde_json::to_string(&tags).unwrap()
            );
            assert_eq!(a.tags.page_json(std::iter::empty()), "[]");
        }
        assert!(
            a.partners
                .iter()
                .all(|p| a.links.iter().any(|l| l.partner_id == p.partner_id))
        );
    }

    #[test]
    fn deactivation_disables_links_and_keeps_commissions() {
        let mut d = WorkspaceData::seeded("acme");
        let p = d.partners[3].clone();
        assert_eq!(
            d.deactivate(None, Some(&p.tenant_id)),
            Some(p.partner_id.clone())
        );
        let after = &d.partners[3];
        assert_eq!(after.status, PartnerStatus::Deactivated);
        assert_eq!(after.commissions_cents, p.commissions_cents);
        assert_eq!(after.payouts_cents, p.payouts_cents);
        assert!(
            d.links
                .iter()
                .filter(|l| l.partner_id == p.partner_id)
                .all(|l| l.disabled)
        );
        assert!(
            d.links
                .iter()
                .filter(|l| l.partner_id != p.partner_id)
                .all(|l| !l.disabled)
        );
        // partnerId wins over a tenantId of another partner.
        let q = d.partners[4].clone();
        assert_eq!(
            d.deactivate(Some(&q.partner_id), Some(&p.tenant_id)),
            Some(q.partner_id)
        );
        assert_eq!(d.deactivate(Some("pn_nope"), None), None);
    }
}
