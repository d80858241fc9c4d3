//! What a run has counted so far, scenario by scenario, and the samples one export writes of
//! it: series named and labelled in Prometheus's conventions (`_total` for counters, units in
//! the name), each with the run id and shard, so that the shards of one run add up.

use prometheus_reqwest_remote_write::{LABEL_NAME, Label, Sample, TimeSeries};

use crate::judge::histogram::Latencies;
use crate::record::Record;

/// Keys of a scenario labelled by name at most: the few worst (by throttled and failed
/// requests), never the key itself but its label (`free#17`).
pub const WORST_KEYS: usize = 5;

/// Counts that only grow: the `_total` series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub sent: u64,
    pub admitted: u64,
    pub throttled: u64,
    /// Requests that got no answer.
    pub failed: u64,
}

impl Counts {
    fn observe(&mut self, rec: &Record) {
        self.sent += 1;
        self.admitted += u64::from(rec.admitted());
        self.throttled += u64::from(rec.throttled());
        self.failed += u64::from(rec.status.is_none());
    }
    fn badness(&self) -> u64 {
        self.throttled + self.failed
    }
    fn named(&self) -> [(&'static str, u64); 4] {
        [
            ("sent", self.sent),
            ("admitted", self.admitted),
            ("throttled", self.throttled),
            ("failed", self.failed),
        ]
    }
}

/// One scenario's run so far.
pub struct ScenarioSeries {
    pub name: String,
    pub plan: String,
    /// What its keys may be admitted per second in all: their limits over the window.
    pub limit_per_second: f64,
    pub totals: Counts,
    /// Each key's label and counts.
    pub keys: Vec<(String, Counts)>,
    /// The keys labelled by name (positions in `keys`), once chosen for good.
    worst: Vec<usize>,
    /// Latencies of the answers since the last export, and the latest lateness seen.
    latencies: Latencies,
    lateness: f64,
    /// The scenario's run is over: its series get one last sample, then none (a limit line
    /// of a scenario no longer running would say what is not so).
    pub done: bool,
    written_done: bool,
}

impl ScenarioSeries {
    pub fn new(name: &str, plan: &str, limit_per_second: f64, labels: Vec<String>) -> Self {
        ScenarioSeries {
            name: name.to_string(),
            plan: plan.to_string(),
            limit_per_second,
            totals: Counts::default(),
            keys: labels.into_iter().map(|l| (l, Counts::default())).collect(),
            worst: Vec::new(),
            latencies: Latencies::per_second(),
            lateness: 0.0,
            done: false,
            written_done: false,
        }
    }

    /// One answer (or none), as it comes: counted, its latency and its send's lateness kept.
    pub fn observe(&mut self, rec: &Record) {
        self.totals.observe(rec);
        if let Some((_, c)) = self.keys.get_mut(rec.key) {
            c.observe(rec);
        }
        if rec.status.is_some() {
            self.latencies.record((rec.recv - rec.sent) * 1000.0);
        }
        self.lateness = self.lateness.max(rec.sent - rec.due);
    }

    /// Running again (a scenario run again alone): its series go on.
    pub fn again(&mut self) {
        self.done = false;
        self.written_done = false;
    }

    /// Keys that did worst so far take the free places among those labelled by name; a key
    /// once labelled stays, so its series does not break off.
    fn choose_worst(&mut self) {
        if self.worst.len() >= WORST_KEYS {
            return;
        }
        let mut ranked: Vec<usize> = (0..self.keys.len())
            .filter(|i| self.keys[*i].1.badness() > 0 && !self.worst.contains(i))
            .collect();
        ranked.sort_by_key(|i| std::cmp::Reverse(self.keys[*i].1.badness()));
        let room = WORST_KEYS.saturating_sub(self.worst.len());
        self.worst.extend(ranked.into_iter().take(room));
    }
}

/// The labels every series of a run carries.
#[derive(Clone, Debug)]
pub struct RunLabels {
    pub run_id: String,
    /// `1/1` for a run in one process, `2/3` for the second of three shards.
    pub shard: String,
}

fn label(name: &str, value: &str) -> Label {
    Label {
        name: name.to_string(),
        value: value.to_string(),
    }
}

fn series(name: &str, labels: &[(&str, &str)], value: f64, at_ms: i64) -> TimeSeries {
    let mut l = vec![label(LABEL_NAME, name)];
    l.extend(labels.iter().map(|(k, v)| label(k, v)));
    TimeSeries {
        labels: l,
        samples: vec![Sample {
            value,
            timestamp: at_ms,
        }],
    }
}

/// One export at `at_ms` (milliseconds since the epoch) of every scenario's figures: totals,
/// the worst keys' totals, the latency percentiles of the answers since the last export, the
/// generator's lateness and the limit. Takes the latencies and lateness it exported.
pub fn export(run: &RunLabels, scenarios: &mut [ScenarioSeries], at_ms: i64) -> Vec<TimeSeries> {
    let mut out = Vec::new();
    for s in scenarios.iter_mut() {
        if s.written_done {
            continue;
        }
        s.written_done = s.done;
        s.choose_worst();
        let base = [
            ("run_id", run.run_id.as_str()),
            ("shard", run.shard.as_str()),
            ("scenario", s.name.as_str()),
            ("plan", s.plan.as_str()),
        ];
        for (what, n) in s.totals.named() {
            out.push(series(
                &format!("linkcert_load_{what}_total"),
                &base,
                n as f64,
                at_ms,
            ));
        }
        for &i in &s.worst {
            let (key, c) = &s.keys[i];
            let mut labels = base.to_vec();
            labels.push(("key", key.as_str()));
            for (what, n) in c.named() {
                let name = format!("linkcert_load_key_{what}_total");
                out.push(series(&name, &labels, n as f64, at_ms));
            }
        }
        out.push(series(
            "linkcert_load_limit_requests_per_second",
            &base,
            s.limit_per_second,
            at_ms,
        ));
        let lat = std::mem::replace(&mut s.latencies, Latencies::per_second());
        if !lat.is_empty() {
            let p = lat.percentiles();
            for (q, ms) in [("0.5", p.p50), ("0.9", p.p90), ("0.99", p.p99)] {
                let mut labels = base.to_vec();
                labels.push(("quantile", q));
                out.push(series(
                    "linkcert_load_latency_seconds",
                    &labels,
                    ms / 1000.0,
                    at_ms,
                ));
            }
        }
        let late = std::mem::take(&mut s.lateness);
        out.push(series("linkcert_load_lateness_seconds", &base, late, at_ms));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: usize, status: Option<u16>, due: f64, sent: f64) -> Record {
        Record {
            sent,
            recv: sent + 0.25,
            status,
            ..Record::slot(key, 0, due)
        }
    }

    fn value(out: &[TimeSeries], name: &str, key: Option<&str>) -> Option<f64> {
        out.iter()
            .find(|t| {
                t.labels
                    .iter()
                    .any(|l| l.name == LABEL_NAME && l.value == name)
                    && key.is_none_or(|k| t.labels.iter().any(|l| l.name == "key" && l.value == k))
            })
            .map(|t| t.samples[0].value)
    }

    #[test]
    fn counters_add_up_and_only_the_worst_keys_are_named() {
        let labels: Vec<String> = (1..=8).map(|i| format!("free#{i}")).collect();
        let mut s = vec![ScenarioSeries::new("free-fleet", "free", 8.0, labels)];
        for key in 0..8 {
            for i in 0..10 {
                // Key k is throttled k times out of ten; key 0 never.
                let status = if i < key { Some(429) } else { Some(200) };
                s[0].observe(&rec(key, status, 1.0, 1.5));
            }
        }
        s[0].observe(&rec(7, None, 2.0, 2.0));
        let run = RunLabels {
            run_id: "run-1".into(),
            shard: "1/1".into(),
        };
        let out = export(&run, &mut s, 1_000);
        assert_eq!(value(&out, "linkcert_load_sent_total", None), Some(81.0));
        assert_eq!(
            value(&out, "linkcert_load_throttled_total", None),
            Some(28.0)
        );
        assert_eq!(
            value(&out, "linkcert_load_admitted_total", None),
            Some(52.0)
        );
        assert_eq!(value(&out, "linkcert_load_failed_total", None), Some(1.0));
        let named: std::collections::BTreeSet<String> = out
            .iter()
            .flat_map(|t| &t.labels)
            .filter(|l| l.name == "key")
            .map(|l| l.value.clone())
            .collect();
        let worst: std::collections::BTreeSet<String> =
            (3..=7).map(|i| format!("free#{}", i + 1)).collect();
        assert_eq!(named, worst);
        assert_eq!(
            value(&out, "linkcert_load_key_throttled_total", Some("free#8")),
            Some(7.0)
        );
        assert_eq!(
            value(&out, "linkcert_load_lateness_seconds", None),
            Some(0.5)
        );
        // The per-second histogram's bucket: within its 2 significant figures.
        let p = value(&out, "linkcert_load_latency_seconds", None).expect("latencies");
        assert!((p - 0.25).abs() < 0.005, "{p}");
        // Every series carries the run and shard.
        assert!(out.iter().all(|t| {
            t.labels
                .iter()
                .any(|l| l.name == "run_id" && l.value == "run-1")
                && t.labels
                    .iter()
                    .any(|l| l.name == "shard" && l.value == "1/1")
        }));
        // The next export: no answers since, so no latencies; lateness starts again.
        let out = export(&run, &mut s, 2_000);
        assert_eq!(value(&out, "linkcert_load_latency_seconds", None), None);
        assert_eq!(
            value(&out, "linkcert_load_lateness_seconds", None),
            Some(0.0)
        );
        assert_eq!(value(&out, "linkcert_load_sent_total", None), Some(81.0));
        // Over: one last sample, then none.
        s[0].done = true;
        assert!(!export(&run, &mut s, 3_000).is_empty());
        assert!(export(&run, &mut s, 4_000).is_empty());
    }
}
