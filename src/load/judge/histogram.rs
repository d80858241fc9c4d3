//! Latencies kept as counts per bucket, not one value per answer, so an hour-long run costs
//! what a minute does. Buckets are exact below 128 µs and 1/64 of a doubling wide above
//! (under 1.6% relative error); the maximum is kept exactly.

use std::collections::BTreeMap;

use super::Percentiles;

/// Sub-buckets per doubling: 2^SUB_BITS.
const SUB_BITS: u32 = 6;
const EXACT: u64 = 2 << SUB_BITS;

#[derive(Clone, Debug, Default)]
pub(super) struct Histogram {
    /// Bucket index to count; sparse (a run's latencies fill few buckets).
    counts: BTreeMap<u32, u64>,
    n: u64,
    max_ms: f64,
}

fn index(us: u64) -> u32 {
    if us < EXACT {
        return us as u32;
    }
    let e = 63 - us.leading_zeros(); // >= SUB_BITS + 1
    let sub = ((us >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1)) as u32;
    EXACT as u32 + (e - SUB_BITS - 1) * (1 << SUB_BITS) + sub
}

/// The middle of bucket `i`, µs.
fn middle(i: u32) -> f64 {
    if u64::from(i) < EXACT {
        return f64::from(i);
    }
    let j = i - EXACT as u32;
    let e = j / (1 << SUB_BITS) + SUB_BITS + 1;
    let sub = u64::from(j % (1 << SUB_BITS));
    let width = 1u64 << (e - SUB_BITS);
    (((1u64 << SUB_BITS) + sub) * width) as f64 + width as f64 / 2.0
}

impl Histogram {
    pub fn add(&mut self, ms: f64) {
        let ms = if ms.is_finite() { ms.max(0.0) } else { 0.0 };
        *self.counts.entry(index((ms * 1000.0) as u64)).or_insert(0) += 1;
        self.n += 1;
        self.max_ms = self.max_ms.max(ms);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (i, c) in &other.counts {
            *self.counts.entry(*i).or_insert(0) += c;
        }
        self.n += other.n;
        self.max_ms = self.max_ms.max(other.max_ms);
    }

    /// The value at quantile `q` (the answer ranked round((n-1)q), as a sorted list gives it),
    /// ms; never above the maximum.
    fn at(&self, q: f64) -> f64 {
        let rank = ((self.n.saturating_sub(1)) as f64 * q).round() as u64;
        let mut seen = 0;
        for (i, c) in &self.counts {
            seen += c;
            if seen > rank {
                return (middle(*i) / 1000.0).min(self.max_ms);
            }
        }
        self.max_ms
    }

    pub fn percentiles(&self) -> Percentiles {
        if self.n == 0 {
            return Percentiles::default();
        }
        Percentiles {
            p50: self.at(0.5),
            p90: self.at(0.9),
            p99: self.at(0.99),
            max: self.max_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_two_percent_of_the_sorted_list() {
        let values: Vec<f64> = (0..10_000)
            .map(|i| 0.05 + f64::from(i) * f64::from(i) / 40_000.0)
            .collect();
        let mut h = Histogram::default();
        for v in &values {
            h.add(*v);
        }
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        let exact = Percentiles {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: sorted[sorted.len() - 1],
        };
        let got = h.percentiles();
        for (a, b) in [
            (got.p50, exact.p50),
            (got.p90, exact.p90),
            (got.p99, exact.p99),
        ] {
            assert!((a - b).abs() <= b * 0.02 + 0.001, "{a} vs {b}");
        }
        assert_eq!(got.max, exact.max);
    }

    #[test]
    fn memory_is_buckets_not_answers() {
        let mut h = Histogram::default();
        for i in 0..1_000_000u64 {
            h.add(250.0 + (i % 1000) as f64 / 20.0);
        }
        assert!(h.counts.len() < 100, "{} buckets", h.counts.len());
        assert_eq!(h.n, 1_000_000);
    }
}
