//! `partners.unknown` across lengths: `partnerId` and `tenantId` strings from empty to 32000
//! characters (the bounds of common column types, 255 to 257, and seeded lengths between),
//! none naming a partner. The spec bounds neither field, so a target may refuse a length
//! cleanly (400/422 in the envelope); otherwise the id is unknown: 404 not_found. A 2xx (what
//! was deactivated?), a 5xx or an error outside the envelope fails. Nothing is deactivated,
//! so this runs without --allow-destructive.

use linkcert_registry::check_id;
use serde_json::json;

use super::{Deactivator, status_text};
use crate::conformance::{Expect, Outcome};

/// The longest id sent: the longest string the spec lets a request carry (GET /qr's url).
const LONGEST: usize = 32_000;

/// Lengths sent for each field: empty, one, seeded up to 64, 255 to 257, seeded up to 4096,
/// and the longest.
fn sample_lengths(seed: u64) -> Vec<usize> {
    let mut r = seed ^ 0x4c45_4e53;
    let mut below = |n: u64| {
        r = r.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = r;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n) as usize
    };
    let mut v = vec![
        0,
        1,
        2 + below(63),
        255,
        256,
        257,
        258 + below(4096 - 258 + 1),
        LONGEST,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// An id of exactly `len` ASCII characters that no target has.
fn unknown_of_len(len: usize) -> String {
    let mut s = String::from("lcunknown");
    let filler = b"zqxjkvw0123456789";
    let mut i = 0;
    while s.len() < len {
        s.push(filler[i % filler.len()] as char);
        i += 1;
    }
    s.truncate(len);
    s
}

/// `partners.unknown` for ids of sampled lengths, in each field.
pub(super) async fn lengths(d: &Deactivator<'_>) {
    let id = check_id!("partners.unknown");
    for field in ["partnerId", "tenantId"] {
        let mut refused = Vec::new();
        for len in sample_lengths(d.ctx.opts.seed) {
            let (x, o) = d
                .send(json!({ field: unknown_of_len(len) }), Expect::Any)
                .await;
            let Some(r) = x.resp() else { continue };
            match o {
                Outcome::Throttled | Outcome::Transport => {}
                Outcome::CleanRejection(s) => {
                    refused.push(format!("{len} ({s})"));
                    d.ctx.rec.pass(id, &d.label);
                }
                _ if d.ctx.is_error(r, 404) => d.ctx.rec.pass(id, &d.label),
                _ => d.ctx.rec.violation(
                    id,
                    &d.label,
                    format!(
                        "404 not_found, or 400/422 in the envelope, for an unknown {field} of {len} characters"
                    ),
                    status_text(&x),
                    Some(&x),
                ),
            }
        }
        if !refused.is_empty() {
            d.ctx.rec.observe(
                check_id!("partners.choices"),
                &d.label,
                format!(
                    "{field}: refused at lengths (characters) {}",
                    refused.join(", ")
                ),
                None,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_length_asked_and_lengths_span_empty_to_longest() {
        for len in [0, 1, 9, 10, 257, LONGEST] {
            assert_eq!(unknown_of_len(len).len(), len);
        }
        let v = sample_lengths(1);
        assert_eq!((v.first(), v.last()), (Some(&0), Some(&LONGEST)));
        assert!(v.contains(&256) && v.len() >= 7);
    }
}
