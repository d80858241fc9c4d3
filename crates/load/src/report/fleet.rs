//! Fleets and shards in the reports: a fleet summed up on the terminal and in load.md (its
//! groups, worst keys, bands over time and findings per rule), and the shards a merged run
//! came from.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::judge::{Band, Finding, FleetSummary, ScenarioResult};
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
    o.push_str(&bands_markdown(&fl.bands));
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
    for a in alike(&s.findings) {
        let f = a.first;
        let _ = write!(
            o,
            "- `{}` **{}** {}: {}",
            f.check,
            f.verdict.as_str(),
            a.keys_text(),
            f.message
        );
        if !f.expected.is_empty() || !f.actual.is_empty() {
            let _ = write!(o, " (expected {}; got {})", f.expected, f.actual);
        }
        o.push('\n');
    }
    o
}

/// Rows of the bands table, at most this many: a long run's seconds are taken in spans.
const BAND_ROWS: usize = 20;

/// The bands over time in at most `BAND_ROWS` rows: each row a span of seconds and the highest
/// band any second of it had (a span's peak is what a reader looks for).
fn bands_markdown(bands: &[Band]) -> String {
    let span = bands.len().div_ceil(BAND_ROWS).max(1);
    let mut o = format!(
        "\nAdmitted per key and second, across the keys (p10 / p50 / p90; {}):\n\n| seconds | p10 | p50 | p90 |\n|---|---|---|---|\n",
        if span == 1 {
            "each second".to_string()
        } else {
            format!("the highest of each {span} seconds")
        }
    );
    for rows in bands.chunks(span) {
        let top = |f: fn(&Band) -> f64| rows.iter().map(f).fold(0.0, f64::max);
        let (from, to) = (rows[0].t, rows[rows.len() - 1].t);
        let when = if from == to {
            from.to_string()
        } else {
            format!("{from}-{to}")
        };
        let _ = writeln!(
            o,
            "| {when} | {} | {} | {} |",
            top(|b| b.p10),
            top(|b| b.p50),
            top(|b| b.p90)
        );
    }
    o
}

/// Findings alike (one rule, one verdict, one message but for its figures), over a fleet's
/// keys: read once, with how many and which keys.
pub(crate) struct Alike<'a> {
    pub first: &'a Finding,
    pub keys: Vec<&'a str>,
    pub count: usize,
}

/// Keys named with a group of findings, at most.
const ALIKE_KEYS: usize = 3;

impl Alike<'_> {
    /// "(free#3)", or "×312 (free#3, free#8, free#12, …)".
    pub fn keys_text(&self) -> String {
        let more = if self.count > self.keys.len() {
            ", …"
        } else {
            ""
        };
        let keys = if self.keys.is_empty() {
            "all".to_string()
        } else {
            self.keys.join(", ")
        };
        if self.count == 1 {
            format!("({keys})")
        } else {
            format!("×{} ({keys}{more})", self.count)
        }
    }
}

/// A message's shape: its figures taken out (each run of digits, with its decimals, as `#`).
fn shape(message: &str) -> String {
    let mut o = String::with_capacity(message.len());
    let mut in_number = false;
    for c in message.chars() {
        let digit = c.is_ascii_digit() || (in_number && c == '.');
        if digit && !in_number {
            o.push('#');
        } else if !digit {
            o.push(c);
        }
        in_number = digit;
    }
    o
}

/// The findings other than passes, grouped alike, in the order each group first appears.
pub(crate) fn alike(findings: &[Finding]) -> Vec<Alike<'_>> {
    let mut index: BTreeMap<(&str, &str, String), usize> = BTreeMap::new();
    let mut out: Vec<Alike> = Vec::new();
    for f in findings.iter().filter(|f| f.verdict != Verdict::Pass) {
        let k = (f.check.as_str(), f.verdict.as_str(), shape(&f.message));
        let i = *index.entry(k).or_insert_with(|| {
            out.push(Alike {
                first: f,
                keys: Vec::new(),
                count: 0,
            });
            out.len() - 1
        });
        let a = &mut out[i];
        a.count += 1;
        if let Some(key) = f.key.as_deref()
            && a.keys.len() < ALIKE_KEYS
        {
            a.keys.push(key);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(check: &str, verdict: Verdict, key: &str, message: &str) -> Finding {
        Finding {
            check: check.into(),
            verdict,
            key: Some(key.into()),
            message: message.into(),
            expected: String::new(),
            actual: String::new(),
        }
    }

    /// 110 keys with the same informational finding but for their figures read as one line;
    /// another rule, verdict or wording stays apart; passes are counted, not listed.
    #[test]
    fn findings_alike_read_once_with_their_count() {
        let mut fs: Vec<Finding> = (1..=110)
            .map(|i| {
                let msg = format!("fixed-window semantics: {} admitted in 60.0 s", 60 + i);
                finding(
                    "load.rolling-window",
                    Verdict::Informational,
                    &format!("free#{i}"),
                    &msg,
                )
            })
            .collect();
        fs.push(finding(
            "load.rolling-window",
            Verdict::Fail,
            "free#7",
            "fixed-window semantics: 200 admitted in 60.0 s",
        ));
        fs.push(finding(
            "load.isolation",
            Verdict::Fail,
            "free#9",
            "a quiet key was throttled",
        ));
        fs.push(finding("load.limit", Verdict::Pass, "free#1", "60"));
        let a = alike(&fs);
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].count, 110);
        assert_eq!(a[0].keys_text(), "×110 (free#1, free#2, free#3, …)");
        assert_eq!((a[1].count, a[1].keys_text()), (1, "(free#7)".to_string()));
        assert_eq!(a[2].first.check, "load.isolation");
    }

    /// A run of any length reads in at most 20 rows, each span's peak kept.
    #[test]
    fn bands_read_in_twenty_rows_at_most() {
        let bands: Vec<Band> = (0..93)
            .map(|t| Band {
                t,
                p10: 0.0,
                p50: 0.0,
                p90: if t == 50 { 3.0 } else { 1.0 },
            })
            .collect();
        let md = bands_markdown(&bands);
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| seconds"))
            .collect();
        assert!(rows.len() <= BAND_ROWS, "{}", rows.len());
        assert!(
            rows.iter().any(|r| r.contains("-") && r.ends_with("| 3 |")),
            "{md}"
        );
        assert!(md.contains("the highest of each 5 seconds"), "{md}");
        assert_eq!(
            bands_markdown(&bands[..3])
                .lines()
                .filter(|l| l.starts_with("| 1 |"))
                .count(),
            1
        );
    }
}
