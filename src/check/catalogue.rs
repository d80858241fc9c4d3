//! The catalogue of checks: each has an id (its family is the module that runs it:
//! `pagination.walk` lives in `check/pagination.rs`), the clause of the reference document it
//! enforces, and what a violation means (its level).

use crate::verdict::Verdict;

#[derive(Clone, Copy, Debug)]
pub struct CheckDef {
    pub id: &'static str,
    pub title: &'static str,
    pub clause: &'static str,
    /// The verdict of a violation: Fail where the spec says so, NonStrict where it only prefers,
    /// Informational for choices the spec leaves open.
    pub level: Verdict,
}

const fn def(
    id: &'static str,
    title: &'static str,
    clause: &'static str,
    level: Verdict,
) -> CheckDef {
    CheckDef {
        id,
        title,
        clause,
        level,
    }
}

use Verdict::{Fail, Informational, NonStrict};

pub const CATALOGUE: &[CheckDef] = &[
    def(
        "transport.https",
        "the target speaks HTTPS",
        "What the service does: only HTTPS is supported",
        NonStrict,
    ),
    def(
        "status.listed",
        "every answer has a status the spec lists",
        "Endpoints: every operation can answer with 400, 401, 403, 404, 409, 410, 422, 429, 500",
        Fail,
    ),
    def(
        "status.invalid-rejected",
        "requests the spec makes invalid are rejected cleanly (400 or 422)",
        "Errors: 400 bad_request, 422 unprocessable_entity",
        Fail,
    ),
    def(
        "status.valid-accepted",
        "requests the spec makes valid are accepted",
        "Endpoints: response 200",
        Fail,
    ),
    def(
        "schema.content-type",
        "successful answers have the declared content type",
        "Endpoints: response 200 content type",
        Fail,
    ),
    def(
        "schema.response",
        "successful JSON answers match the response schema",
        "Resources and their fields; Endpoints: response 200",
        Fail,
    ),
    def(
        "envelope.shape",
        "error answers are the error envelope",
        "Errors: a JSON object with error.code and error.message",
        Fail,
    ),
    def(
        "envelope.code",
        "error.code is the code the Errors table gives the status",
        "Errors: status and code table",
        Fail,
    ),
    def(
        "envelope.doc-url",
        "doc_url, when present, is a link whose fragment names the code",
        "Errors: doc_url",
        Fail,
    ),
    def(
        "envelope.doc-url-spelling",
        "doc_url's fragment spells the code as given",
        "Errors: doc_url",
        NonStrict,
    ),
    def(
        "envelope.content-type",
        "error answers are sent as JSON",
        "Errors: every error response is a JSON object",
        NonStrict,
    ),
    def(
        "auth.required",
        "missing or invalid credentials get 401 unauthorized",
        "Authentication 1 and 3",
        Fail,
    ),
    def(
        "auth.accepted",
        "a valid key is not refused as unauthenticated",
        "Authentication 1",
        Fail,
    ),
    def(
        "plan.partner-gating",
        "partner endpoints refuse plans below Advanced with 403 forbidden",
        "What the service does: partner endpoints require Advanced or higher; Authentication 3 and 4",
        Fail,
    ),
    def(
        "plan.partner-allowed",
        "Advanced or higher may call partner endpoints",
        "What the service does: partner endpoints require Advanced or higher",
        Fail,
    ),
    def(
        "plan.analytics-free",
        "Free keys get 403 forbidden on analytics endpoints",
        "Limits: analytics endpoints, Free: not available; Authentication 3",
        Fail,
    ),
    def(
        "plan.paid-params",
        "logo and hideLogo on the Free plan (refused or ignored)",
        "Endpoints / GET /qr: logo, hideLogo only with a paid plan",
        Informational,
    ),
    def(
        "pagination.bounds",
        "page and pageSize outside their bounds are rejected cleanly",
        "Pagination parameters; Limits: pageSize at most 100, page greater than 0",
        Fail,
    ),
    def(
        "pagination.page-size",
        "a page never holds more items than pageSize",
        "Pagination parameters: pageSize",
        Fail,
    ),
    def(
        "pagination.walk",
        "walking the pages gives every item once, as one big page does",
        "Endpoints / GET /tags: a paginated list",
        Fail,
    ),
    def(
        "pagination.sort",
        "the requested sort order holds; desc is asc reversed",
        "Endpoints / GET /tags: sort field and order",
        Fail,
    ),
    def(
        "pagination.ids",
        "the ids filter returns exactly the requested existing tags",
        "Endpoints / GET /tags: IDs of tags to filter by",
        Fail,
    ),
    def(
        "pagination.search",
        "a search for an existing name finds it, and only tags of the list",
        "Endpoints / GET /tags: search term",
        Fail,
    ),
    def(
        "pagination.choices",
        "defaults and collation the spec leaves open",
        "Pagination parameters: pageSize default varies by endpoint",
        Informational,
    ),
    def(
        "qr.png",
        "QR answers are valid PNG images",
        "Endpoints / GET /qr: response 200 image/png",
        Fail,
    ),
    def(
        "qr.size",
        "the image is size x size pixels",
        "Endpoints / GET /qr: size in pixels",
        Fail,
    ),
    def(
        "qr.colours",
        "nearly all pixels are exactly the foreground or background colour",
        "Endpoints / GET /qr: fgColor, bgColor",
        Fail,
    ),
    def(
        "qr.content",
        "the code decodes to exactly the requested URL",
        "Endpoints / GET /qr: url to encode",
        Fail,
    ),
    def(
        "qr.level",
        "the code's error correction is the requested level or higher",
        "Endpoints / GET /qr: level",
        Fail,
    ),
    def(
        "qr.margin",
        "the quiet zone grows with margin",
        "Endpoints / GET /qr: margin",
        Fail,
    ),
    def(
        "qr.rejects",
        "missing or over-long url, bad level and malformed colours are rejected cleanly",
        "Endpoints / GET /qr; Limits: url at most 32000 characters",
        Fail,
    ),
    def(
        "qr.choices",
        "bounds of size and margin, colour forms and QR capacity the target chose",
        "Limits: bounds of size and margin: not shown",
        Informational,
    ),
    def(
        "partners.deactivate",
        "deactivation answers 200 with the partner's id",
        "Endpoints / POST /partners/deactivate: response 200",
        Fail,
    ),
    def(
        "partners.unknown",
        "an unknown partner is 404 not_found",
        "Errors: 404 not_found",
        Fail,
    ),
    def(
        "partners.neither",
        "a request naming neither id is rejected cleanly",
        "Endpoints / POST /partners/deactivate (which field is required: not shown)",
        Fail,
    ),
    def(
        "partners.links-disabled",
        "after deactivation the partner's links are disabled",
        "States and transitions: deactivation disables all of the partner's active links",
        Fail,
    ),
    def(
        "partners.choices",
        "which id wins, repeat deactivation",
        "Endpoints / POST /partners/deactivate: not shown",
        Informational,
    ),
    def(
        "ratelimit.headers",
        "answers to authenticated requests carry integer X-RateLimit-* headers",
        "Limits / Rate-limit headers",
        Fail,
    ),
    def(
        "ratelimit.limit",
        "X-RateLimit-Limit is the key's plan limit",
        "Limits / Rate limits by plan; Rate-limit headers",
        Fail,
    ),
    def(
        "ratelimit.remaining",
        "X-RateLimit-Remaining falls by one per request within a window",
        "Limits / Rate-limit headers",
        Fail,
    ),
    def(
        "ratelimit.reset",
        "X-RateLimit-Reset is UTC epoch seconds within one window, never backwards",
        "Limits / Rate-limit headers: UTC epoch seconds",
        Fail,
    ),
    def(
        "ratelimit.throttles",
        "a burst past the limit gets 429 rate_limit_exceeded",
        "Limits: when the limit is exceeded, 429 rate_limit_exceeded",
        Fail,
    ),
    def(
        "ratelimit.retry-after",
        "a 429 carries Retry-After in seconds, within a window and not past Reset",
        "Limits / Rate-limit headers: Retry-After",
        Fail,
    ),
    def(
        "ratelimit.per-key",
        "one key's exhaustion does not throttle another key",
        "Limits: requests per minute, per key",
        Fail,
    ),
    def(
        "ratelimit.recovers",
        "after the reset the key is admitted again",
        "Limits / Rate-limit headers: reset",
        Fail,
    ),
    def(
        "ratelimit.analytics",
        "analytics endpoints throttle at their per-second limit",
        "Limits / Analytics endpoints",
        Fail,
    ),
];

/// What a check needs of the target to run: keys of which plans, fixtures, destructive mode.
pub fn needs(id: &str) -> &'static str {
    match id {
        "plan.partner-gating" => "a key of a plan below Advanced (--key free=... or pro=...)",
        "plan.partner-allowed" => "a key of Advanced or higher",
        "plan.analytics-free" | "plan.paid-params" => "a key of an unpaid plan (--key free=...)",
        "partners.deactivate" | "partners.links-disabled" | "partners.choices" => {
            "a key of Advanced or higher, a --partner or --tenant fixture, --allow-destructive"
        }
        "partners.unknown" | "partners.neither" => "a key of Advanced or higher",
        "ratelimit.per-key" => "two keys (two Free keys are best)",
        "ratelimit.analytics" => "a key of a plan with analytics access (Pro or higher)",
        _ if id.starts_with("ratelimit.") => "a key with a small fixed limit (Free or Pro)",
        _ => "any key",
    }
}

/// `linkcert catalogue`: every check with its clauses, level and needs; then every clause of
/// the spec document with its checks, or why none enforces it.
pub fn listing() -> Result<String, crate::spec::SpecError> {
    use std::fmt::Write as _;
    let clauses = crate::spec::clauses::clauses()?;
    let mut o = format!("Checks ({}):\n", CATALOGUE.len());
    for d in CATALOGUE {
        let ids = crate::spec::clauses::of_check(&clauses, d.id);
        let _ = writeln!(
            o,
            "  {:<28} {:<13} {}\n  {:28} clauses: {}\n  {:28} needs: {}",
            d.id,
            d.level.as_str(),
            d.title,
            "",
            ids.join(", "),
            "",
            needs(d.id)
        );
    }
    let enforced = clauses.iter().filter(|c| !c.checks.is_empty()).count();
    let _ = writeln!(
        o,
        "\nClauses of the spec document ({}; {enforced} enforced by a check):",
        clauses.len()
    );
    for c in &clauses {
        let by = if c.checks.is_empty() {
            format!(
                "not enforced: {}",
                c.reason.as_deref().unwrap_or("no reason given")
            )
        } else {
            format!("checks: {}", c.checks.join(", "))
        };
        let _ = writeln!(
            o,
            "  {:<32} [{}] \"{}\"\n  {:32} {by}",
            c.id, c.section, c.text, ""
        );
    }
    Ok(o)
}

pub fn get(id: &str) -> Option<&'static CheckDef> {
    CATALOGUE.iter().find(|d| d.id == id)
}

/// Whether `--only`/`--skip` patterns select a check: a pattern is an id, a family
/// (`pagination`), or a prefix ending in `*` (`ratelimit.re*`).
pub fn selected(id: &str, only: &[String], skip: &[String]) -> bool {
    let matches = |p: &String| pattern_matches(p, id);
    (only.is_empty() || only.iter().any(matches)) && !skip.iter().any(matches)
}

/// One pattern of `--only`, `--skip` and waivers: an id, a family or a prefix ending in `*`.
pub fn pattern_matches(pattern: &str, id: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        id.starts_with(prefix)
    } else {
        id == pattern || id.split('.').next() == Some(pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_name_their_family() {
        let families = [
            "transport",
            "status",
            "schema",
            "envelope",
            "auth",
            "plan",
            "pagination",
            "qr",
            "partners",
            "ratelimit",
        ];
        for (i, d) in CATALOGUE.iter().enumerate() {
            assert!(
                CATALOGUE[..i].iter().all(|e| e.id != d.id),
                "duplicate {}",
                d.id
            );
            assert!(
                families.contains(&d.id.split('.').next().unwrap()),
                "{}",
                d.id
            );
            assert!(!d.clause.is_empty());
        }
    }

    #[test]
    fn only_and_skip_patterns() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(selected("pagination.walk", &s(&["pagination"]), &[]));
        assert!(!selected("qr.png", &s(&["pagination"]), &[]));
        assert!(selected("ratelimit.reset", &s(&["ratelimit.re*"]), &[]));
        assert!(!selected("ratelimit.reset", &[], &s(&["ratelimit.reset"])));
        assert!(selected("qr.png", &[], &[]));
    }
}
