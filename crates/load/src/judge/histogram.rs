//! Latencies as an HdrHistogram (`hdrhistogram`): counts per bucket, not one value per answer,
//! so an hour-long run costs what a minute does, and histograms of different runs or machines
//! add up (`add`). `serialize` gives HdrHistogram's standard form (V2, deflated, base64), which
//! every port of HdrHistogram reads back.
//!
//! Precision: values are kept in whole microseconds. Per key and over the run, 3 significant
//! figures (exact below 2048 µs, buckets under 0.1% wide above); per second, 2 (exact below
//! 256 µs, under 1% wide above), since a run keeps one of those per key and second. The
//! hand-written histogram before this had buckets 1.6% wide.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{
    DeserializeError, Deserializer, Serializer as _, V2DeflateSerializeError, V2DeflateSerializer,
};

use super::result::Percentiles;

/// Significant figures per key and over the run: buckets under 0.1% wide.
const FINE: u8 = 3;
/// Significant figures per second of a key: buckets under 1% wide, at a sixth of the memory
/// (11 KiB against 64 KiB for latencies up to 100 ms).
const COARSE: u8 = 2;
/// Significant figures per key of a fleet: buckets under 7% wide, a few KiB a key.
const SMALL: u8 = 1;
/// Latencies above a day are counted as a day: it keeps every value recordable (auto-resize
/// grows to the largest value recorded), and no run lasts that long.
const MAX_US: u64 = 86_400 * 1_000_000;

/// Why a serialised histogram could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("latency histogram: not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("latency histogram: not a V2 HdrHistogram: {0}")]
    Decode(#[from] DeserializeError),
    #[error("latency histogram: cannot serialise: {0}")]
    Encode(#[from] V2DeflateSerializeError),
}

/// The target's latencies (send to answer's headers), ms in, ms out.
#[derive(Clone, Debug)]
pub struct Latencies {
    h: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::with_sigfig(FINE)
    }
}

impl Latencies {
    /// One key's or the whole run's: 3 significant figures.
    pub fn new() -> Latencies {
        Latencies::default()
    }

    /// One second of a key: 2 significant figures.
    pub fn per_second() -> Latencies {
        Latencies::with_sigfig(COARSE)
    }

    /// One key of a fleet: 1 significant figure.
    pub fn small() -> Latencies {
        Latencies::with_sigfig(SMALL)
    }

    fn with_sigfig(sigfig: u8) -> Latencies {
        // Auto-resizing, lowest value 1 µs: fails only for more than 5 significant figures.
        let h = Histogram::new(sigfig).expect("1 to 3 significant figures are valid");
        Latencies { h }
    }

    /// Count one latency, ms (negative or not finite: 0).
    pub fn record(&mut self, ms: f64) {
        let ms = if ms.is_finite() { ms.max(0.0) } else { 0.0 };
        let us = ((ms * 1000.0) as u64).min(MAX_US);
        if self.h.record(us).is_err() {
            // Only when growing overflows usize: counted at the top of the range instead.
            self.h.saturating_record(us);
        }
    }

    /// Add every latency of `other` (any precision) to these.
    pub fn add(&mut self, other: &Latencies) {
        if self.h.add(&other.h).is_err() {
            // Only when growing overflows usize: counted at the top of the range instead.
            for v in other.h.iter_recorded() {
                let (value, n) = (v.value_iterated_to(), v.count_at_value());
                if self.h.record_n(value, n).is_err() {
                    self.h.saturating_record_n(value, n);
                }
            }
        }
    }

    /// How many latencies were counted.
    pub fn len(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// The value at quantile `q` (the answer ranked round((n-1)q), as a sorted list gives it),
    /// ms: the middle of its bucket, never above the maximum.
    fn at(&self, q: f64) -> f64 {
        let rank = (self.h.len().saturating_sub(1) as f64 * q).round() as u64;
        let mut seen = 0;
        for v in self.h.iter_recorded() {
            seen += v.count_at_value();
            if seen > rank {
                let us = self.h.median_equivalent(v.value_iterated_to());
                return ms(us).min(self.max_ms());
            }
        }
        self.max_ms()
    }

    /// The largest latency, ms: the top of its bucket.
    fn max_ms(&self) -> f64 {
        ms(self.h.max())
    }

    pub fn percentiles(&self) -> Percentiles {
        if self.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            p50: self.at(0.5),
            p90: self.at(0.9),
            p99: self.at(0.99),
            max: self.max_ms(),
        }
    }

    /// HdrHistogram's standard serialised form: V2, deflated, base64 (standard alphabet).
    pub fn serialize(&self) -> Result<String, HistogramError> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(&self.h, &mut bytes)?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// Read `serialize`'s form back (V2, deflated or not, base64), ready to `add` to.
    pub fn deserialize(text: &str) -> Result<Latencies, HistogramError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        let mut h: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice())?;
        // Read back with the bounds it was written with: let it grow as a new one would.
        h.auto(true);
        Ok(Latencies { h })
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same quantiles as a sorted list gives, within the precision stated above.
    fn assert_close_to_sorted(h: &Latencies, values: &[f64], within: f64) {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        let got = h.percentiles();
        let max = sorted[sorted.len() - 1];
        for (a, b) in [
            (got.p50, at(0.5)),
            (got.p90, at(0.9)),
            (got.p99, at(0.99)),
            (got.max, max),
        ] {
            // Plus 1 µs: values are kept in whole microseconds.
            assert!((a - b).abs() <= b * within + 0.001, "{a} vs {b}");
        }
    }

    fn spread() -> Vec<f64> {
        (0..10_000)
            .map(|i| 0.05 + f64::from(i) * f64::from(i) / 40_000.0)
            .collect()
    }

    #[test]
    fn percentiles_are_within_the_stated_precision_of_the_sorted_list() {
        let values = spread();
        let (mut fine, mut coarse) = (Latencies::new(), Latencies::per_second());
        for v in &values {
            fine.record(*v);
            coarse.record(*v);
        }
        assert_close_to_sorted(&fine, &values, 0.001);
        assert_close_to_sorted(&coarse, &values, 0.01);
    }

    /// Of two, the median is the upper one, as round((n-1)/2) ranks it in a sorted list.
    #[test]
    fn the_median_of_two_is_the_upper_one() {
        let mut h = Latencies::new();
        h.record(1.0);
        h.record(50.0);
        let p = h.percentiles();
        assert!((p.p50 - 50.0).abs() < 0.05, "{p:?}");
        assert_eq!(Latencies::new().percentiles().max, 0.0);
    }

    #[test]
    fn memory_is_buckets_not_answers() {
        let mut h = Latencies::new();
        for i in 0..1_000_000u64 {
            h.record(250.0 + (i % 1000) as f64 / 20.0);
        }
        assert_eq!(h.len(), 1_000_000);
        // Counters cover the range recorded (to 300 ms): 10 doublings of 1024.
        assert!(
            h.h.distinct_values() <= 16 * 1024,
            "{}",
            h.h.distinct_values()
        );
    }

    /// What the shards of a run on several machines will do: each sends its serialised
    /// histogram; read back and added, they are the histogram of every latency.
    #[test]
    fn two_deserialised_histograms_added_are_the_histogram_of_all_samples() {
        let values = spread();
        let (first, second) = values.split_at(3_000);
        let (mut a, mut b, mut all) = (Latencies::new(), Latencies::new(), Latencies::new());
        first.iter().for_each(|v| a.record(*v));
        // The second shard saw far higher latencies: its histogram has grown further.
        second.iter().for_each(|v| b.record(v * 40.0));
        values[..3_000].iter().for_each(|v| all.record(*v));
        values[3_000..].iter().for_each(|v| all.record(v * 40.0));
        let text = a.serialize().expect("serialises");
        assert!(text.starts_with("HISTF"), "V2 deflate, base64: {text}");
        let mut merged = Latencies::deserialize(&text).expect("reads back");
        merged.add(&Latencies::deserialize(&b.serialize().expect("serialises")).expect("reads"));
        let buckets = |h: &Latencies| -> Vec<(u64, u64)> {
            h.h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(merged.len(), all.len());
        assert_eq!(buckets(&merged), buckets(&all));
        assert_eq!(merged.h.max(), all.h.max());
        let (m, w) = (merged.percentiles(), all.percentiles());
        assert_eq!((m.p50, m.p90, m.p99, m.max), (w.p50, w.p90, w.p99, w.max));
    }

    #[test]
    fn what_is_not_a_serialised_histogram_is_an_error() {
        assert!(matches!(
            Latencies::deserialize("not base64!"),
            Err(HistogramError::Base64(_))
        ));
        assert!(matches!(
            Latencies::deserialize("AAAAAAAAAAA="),
            Err(HistogramError::Decode(_))
        ));
    }
}
