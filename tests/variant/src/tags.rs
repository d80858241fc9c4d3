//! GET /tags. Choices where the document is silent: default sort createdAt descending, default
//! pageSize 25, names compared byte by byte (case-sensitive), search matches a prefix of the
//! name case-sensitively, sortBy and sortOrder values in any case (`ASC`), `ids` comma-separated only (a repeated parameter is 400), every
//! validation error 400. Lengths the document does not bound, refused past this variant's own
//! limits (the reference takes any): `ids` of more than 100 ids, a `search` term of more than
//! 256 characters.

use axum::response::Response;
use serde_json::json;

use super::{Workspace, error, query};

#[derive(Clone)]
pub struct Tag {
    pub id: String,
    pub name: String,
    /// Seconds since the workspace was created; unique, so createdAt has no ties.
    pub created: u64,
}

const WORDS: [&str; 12] = [
    "Spring", "summer", "Autumn", "winter", "Launch", "launch", "Éclair", "zebra", "Alpha", "beta",
    "Ωmega", "promo",
];

pub fn seed(plan: &str) -> Vec<Tag> {
    (0..180u64)
        .map(|i| {
            let word = WORDS[(i as usize * 7) % WORDS.len()];
            Tag {
                id: format!("tg-{plan}-{:04}", (i * 37) % 180),
                // Repeated names on purpose: the order of ties is this variant's own (by id).
                name: format!("{word} {}", i % 45),
                created: 1_000 + (i * 53) % 180 * 60,
            }
        })
        .collect()
}

/// Most ids one filter may name.
const MAX_IDS: usize = 100;
/// Longest search term, in characters.
const MAX_SEARCH: usize = 256;

fn whole(v: Option<&String>, name: &str, default: u64, max: u64) -> Result<u64, String> {
    let Some(v) = v else { return Ok(default) };
    match v.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("{name} must be a whole number from 1 to {max}")),
    }
}

pub fn list(ws: &Workspace, q: Option<&str>) -> Response {
    match listed(ws, q) {
        Ok(r) => r,
        Err(message) => error(400, message),
    }
}

fn listed(ws: &Workspace, q: Option<&str>) -> Result<Response, String> {
    let q = query(q)?;
    // Digits beyond 64 bits are still a page greater than 0: past the end, an empty page
    // (the reference refuses them; both are legal).
    let page = match q.get("page") {
        Some(v)
            if !v.is_empty()
                && v.bytes().all(|b| b.is_ascii_digit())
                && v.parse::<u64>().is_err() =>
        {
            u64::MAX
        }
        v => whole(v, "page", 1, u64::MAX)?,
    };
    let page_size = whole(q.get("pageSize"), "pageSize", 25, 100)?;
    // Sort values in any case (`ASC`, `Name`), and honoured as such: the spec shows them in
    // lower case without saying other spellings are invalid.
    let lower = |k: &str| q.get(k).map(|v| v.to_ascii_lowercase());
    let by_name = match lower("sortBy").as_deref() {
        None | Some("createdat") => false,
        Some("name") => true,
        Some(_) => return Err("sortBy must be name or createdAt".into()),
    };
    let desc = match lower("sortOrder").as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(_) => return Err("sortOrder must be asc or desc".into()),
    };
    let ids: Option<Vec<&str>> = q
        .get("ids")
        .map(|s| s.split(',').filter(|x| !x.is_empty()).collect());
    if ids.as_ref().is_some_and(|v| v.len() > MAX_IDS) {
        return Err(format!("ids names more than {MAX_IDS} tags"));
    }
    if q.get("search")
        .is_some_and(|s| s.chars().count() > MAX_SEARCH)
    {
        return Err(format!("search is longer than {MAX_SEARCH} characters"));
    }
    let mut tags: Vec<&Tag> = ws
        .tags
        .iter()
        .filter(|t| {
            q.get("search")
                .is_none_or(|s| t.name.starts_with(s.as_str()))
        })
        .filter(|t| ids.as_ref().is_none_or(|ids| ids.contains(&t.id.as_str())))
        .collect();
    tags.sort_by(|a, b| {
        let primary = if by_name {
            a.name.as_bytes().cmp(b.name.as_bytes())
        } else {
            a.created.cmp(&b.created)
        };
        primary.then_with(|| a.id.cmp(&b.id))
    });
    if desc {
        tags.reverse();
    }
    let start = (page - 1).saturating_mul(page_size);
    let out: Vec<_> = tags
        .iter()
        .skip(usize::try_from(start).unwrap_or(usize::MAX))
        .take(page_size as usize)
        .map(|t| json!({"id": t.id, "name": t.name, "color": "blue", "createdAt": t.created}))
        .collect();
    Ok(super::json(200, &json!(out)))
}
