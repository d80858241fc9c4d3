//! Fleets and shards in the reports: a fleet summed up on the terminal and in load.md (its
//! groups, worst keys, bands over time and findings per rule), and the shards a merged run
//! came from.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::judge::{FleetSummary, ScenarioResult};
use linkcert_spec::verdict::Verdict;

/// The shards of a merged run: where each ran, when it started against the agreed time, and
/// its clock against the target's.
pub(super) fn shards_markdown(shards: &[crate::shard::ShardMeta]) -> String {
    let mut o = format!(
        "Merged from {} shards of run `{}`:\n\n| shard | host | start offset | clock offset (target - shard) |\n|---|---|---|---|\n",
        shards.len(),
        shards.first().map_or("", |s| s.run_id.as_str())
    );
    let secs = |v: Option<f64>, none: &str| v.map_or(none.to_string(), |v| format!("{v:+.3} s"));
    for s in shards {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            s.shard.label(),
            linkcert_registry::listing::md_escape(&s.host),
            secs(s.start_offset_secs, "did not start"),
            secs(s.clock_offset_secs, "no Date header")
        );
    }
    o.push('\n');
    o
}

/// Failures listed on the terminal for a fleet scenario; load.md has them all.
pub(super) const FLEET_FAILS_SHOWN: usize = 10;

/// A fleet on the terminal: each group's spread of admitted-to-limit, and the worst keys.
pub(super) fn fleet_lines(fl: &FleetSummary, limit: u64) -> String {
    let mut o = String::new();
    for g in &fl.groups {
        let a = &g.admitted_to_limit;
        let _ = writeln!(
            o,
            "    {} keys at {}x: admitted per window / {limit}: min {:.2} p10 {:.2} p50 {:.2} p90 {:.2} max {:.2}; {} throttled",
            g.keys, g.rate, a.min, a.p10, a.p50, a.p90, a.max, g.throttled_keys
        );
    }
    if !fl.worst.is_empty() {
        let worst: Vec<String> = fl
            .worst
            .iter()
            .map(|w| format!("{} ({})", w.label, w.why))
            .collect();
        let _ = writeln!(o, "    worst: {}", worst.join("; "));
    }
    o
}

/// A fleet in load.md: the groups, the worst keys, the bands over time, and the findings
/// counted per rule (every failure listed).
pub(super) fn fleet_markdown(fl: &FleetSummary, s: &ScenarioResult) -> String {
    let mut o = format!(
        "{} keys. Admitted per window loaded, over the limit ({}), across each group's keys:\n\n\
         | rate | keys | min | p10 | p50 | p90 | max | keys throttled |\n|---|---|---|---|---|---|---|---|\n",
        fl.keys, s.limit
    );
    for g in &fl.groups {
        let a = &g.admitted_to_limit;
        let _ = writeln!(
            o,
            "| {}x | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
            g.rate, g.keys, a.min, a.p10, a.p50, a.p90, a.max, g.throttled_keys
        );
    }
    if !fl.worst.is_empty() {
        o.push_str("\nWorst keys:\n\n");
        for w in &fl.worst {
            let _ = writeln!(o, "- {}: {}", w.label, w.why);
        }
    }
    o.push_str("\nAdmitted per key and second, across the keys (p10 / p50 / p90):\n\n| second | p10 | p50 | p90 |\n|---|---|---|---|\n");
    for b in &fl.bands {
        let _ = writeln!(o, "| {} | {} | {} | {} |", b.t, b.p10, b.p50, b.p90);
    }
    let mut per_rule: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for f in &s.findings {
        *per_rule
            .entry((f.check.as_str(), f.verdict.as_str()))
            .or_default() += 1;
    }
    o.push_str("\n| rule | verdict | findings |\n|---|---|---|\n");
    for ((rule, verdict), n) in per_rule {
        let _ = writeln!(o, "| `{rule}` | {verdict} | {n} |");
    }
    o.push('\n');
    for f in s.findings.iter().filter(|f| f.verdict != Verdict::Pass) {
        let _ = writeln!(
            o,
            "- `{}` **{}** ({}): {} (expected {}; got {})",
            f.check,
            f.verdict.as_str(),
            f.key.as_deref().unwrap_or("all"),
            f.message,
            f.expected,
            f.actual
        );
    }
    o
}
