//! `qr.size` across the whole range a target accepts. The spec sets no bounds on `size`
//! ("Bounds of size and margin for GET /qr: not shown"), so a target may refuse any size
//! cleanly; but every size it accepts must give an image of that size, not only the usual
//! ones. The runner finds where the accepted range ends, both ways from the default: it tries
//! the bounds implementations usually pick (powers of two, round numbers) outwards until one is
//! refused, then the size just past the last accepted one, and bisects only if that is accepted
//! too. So it asks for the bounds and just past them, each probe an ordinary render judged in
//! full; then for seeded sizes between (log-uniform: small sizes are as telling as big ones,
//! and cheaper). The range found is observed.

use super::*;

/// Sizes tried outwards from the default, in order: bounds implementations pick. The last of
/// each list is the farthest the runner asks (`choices` asks for 1 and 10000 too): a target
/// that accepts it is taken as unbounded that way.
const UP: [u32; 8] = [1000, 1024, 2000, 2048, 4000, 4096, 8192, 10_000];
const DOWN: [u32; 8] = [256, 100, 64, 50, 32, 16, 10, 1];
/// Probes of a bisection, at most: enough to pin a bound in 1..=10000.
const STEPS: usize = 14;
/// Seeded sizes between the bounds.
const BETWEEN: usize = 4;

/// How a probe of one size ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    Accepted,
    Refused,
    /// Throttled, no answer or an error that is not a clean refusal (already judged by
    /// `status.*`): the search stops.
    Unknown,
}

impl Family<'_> {
    /// The accepted range of `size`, its bounds, just past them and sizes between.
    pub(super) async fn size_range(&self) {
        let start = match self.op.param("size").and_then(|p| p.default()) {
            Some(d) => d.as_f64().map_or(600, |n| n.round().clamp(1.0, 1e4) as u32),
            None => 600,
        };
        if self.probe_size(start, "the default").await != Probe::Accepted {
            return;
        }
        let up: Vec<u32> = UP.iter().copied().filter(|&n| n > start).collect();
        let down: Vec<u32> = DOWN.iter().copied().filter(|&n| n < start).collect();
        let Some((hi, hi_past)) = self.bound(start, &up).await else {
            return;
        };
        let Some((lo, lo_past)) = self.bound(start, &down).await else {
            return;
        };
        let past = |p: Option<u32>| p.map_or("none refused".to_string(), |p| format!("{p} refused"));
        self.ctx.rec.observe(
            "qr.choices",
            &self.label,
            format!(
                "size: accepted from {lo} to {hi} px ({}; {})",
                past(lo_past),
                past(hi_past)
            ),
            None,
        );
        let mut rng = Rng(self.ctx.opts.seed ^ 0x5349_5a45);
        let (l, h) = (f64::from(lo).ln(), f64::from(hi).ln());
        for i in 0..BETWEEN {
            let t = rng.below(1 << 20) as f64 / f64::from(1u32 << 20);
            let size = (l + t * (h - l)).exp().round().clamp(f64::from(lo), f64::from(hi)) as u32;
            self.probe_size(size, &format!("seeded #{i} between the bounds"))
                .await;
        }
    }

    /// From `from` (accepted) outwards through `candidates`: the last accepted size and the
    /// first refused one past it (None when every candidate is accepted). None when a probe
    /// could not be judged.
    async fn bound(&self, from: u32, candidates: &[u32]) -> Option<(u32, Option<u32>)> {
        let mut ok = from;
        let mut bad = None;
        for &n in candidates {
            match self.probe_size(n, "a usual bound").await {
                Probe::Accepted => ok = n,
                Probe::Refused => {
                    bad = Some(n);
                    break;
                }
                Probe::Unknown => return None,
            }
        }
        let Some(mut bad) = bad else {
            return Some((ok, None));
        };
        // Just past the last accepted size first: a usual bound is usually the bound. Then
        // bisection, if that was accepted too.
        let toward = |ok: u32, bad: u32| if bad > ok { ok + 1 } else { ok - 1 };
        let mut next = toward(ok, bad);
        for _ in 0..STEPS {
            if next == bad {
                break;
            }
            let what = if next == toward(ok, bad) {
                "just past the last accepted size"
            } else {
                "bisecting towards the bound"
            };
            match self.probe_size(next, what).await {
                Probe::Accepted => ok = next,
                Probe::Refused => bad = next,
                Probe::Unknown => return None,
            }
            next = ok.min(bad) + ok.abs_diff(bad) / 2;
            if next == ok {
                next = toward(ok, bad);
            }
        }
        Some((ok, Some(bad)))
    }

    /// One render at `size`: accepted (and judged by every `qr.*` check), or refused.
    async fn probe_size(&self, size: u32, why: &str) -> Probe {
        let case = self
            .case(format!("size {size} ({why})"), TYPICAL_URL)
            .size(f64::from(size))
            .level(EcLevel::M);
        // Sent and judged as `render` does, but a refusal is not observed one by one: the
        // range found is.
        let (x, o) = self
            .ctx
            .exchange(self.op, case.request(&self.key, self.op), case.expect)
            .await;
        match o {
            Outcome::Accepted => {
                self.judge(&case, &x);
                Probe::Accepted
            }
            Outcome::CleanRejection(_) => Probe::Refused,
            _ => Probe::Unknown,
        }
    }
}
