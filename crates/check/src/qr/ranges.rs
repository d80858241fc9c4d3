//! The whole range a target accepts of the two numbers the spec leaves unbounded ("Bounds of
//! size and margin for GET /qr: not shown"): a target may refuse any value cleanly, but every
//! value it accepts must be honoured, not only the usual ones. For each, the runner finds where
//! the accepted range ends, both ways from the default: it tries the bounds implementations
//! usually pick (powers of two, round numbers) outwards until one is refused, then the value
//! just past the last accepted one, and bisects only if that is accepted too. So it asks for the
//! bounds and just past them; then for seeded values between (log-uniform: small values are as
//! telling as big ones, and cheaper). Every accepted probe is an ordinary render judged in full
//! (`qr.size`: an image of the size asked; `qr.content`, `qr.colours`, ...); the margins
//! accepted must also never shrink the quiet zone as they grow (`qr.margin`). The ranges found
//! are observed.

use super::*;
use futures::StreamExt;
use linkcert_registry::check_id;

/// Probes of a bisection, at most: enough to pin a bound in 0..=10000.
const STEPS: usize = 14;
/// Seeded values between the bounds.
const BETWEEN: usize = 3;
/// The size margins are drawn at: modules stay wide enough to read (3.7 px) at the largest
/// margin tried.
pub(super) const MARGIN_SIZE: u32 = 600;

/// A number of GET /qr whose range is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    Size,
    Margin,
}

impl Dim {
    fn name(self) -> &'static str {
        match self {
            Dim::Size => "size",
            Dim::Margin => "margin",
        }
    }
    /// Values tried outwards from the default, in order: bounds implementations pick. The last
    /// of each list is the farthest the runner asks (`choices` asks for size 1 and 10000 too):
    /// a target that accepts it is taken as unbounded that way.
    fn up(self) -> &'static [u32] {
        match self {
            Dim::Size => &[1024, 2048, 4096, 8192, 10_000],
            Dim::Margin => &[4, 10, 16, 20, 32, 40, 64],
        }
    }
    fn down(self) -> &'static [u32] {
        match self {
            Dim::Size => &[256, 100, 64, 50, 32, 16, 10, 1],
            Dim::Margin => &[1, 0],
        }
    }
    /// Mixed into the run's seed, so each dimension draws its own values.
    fn salt(self) -> u64 {
        match self {
            Dim::Size => 0x5349_5a45,
            Dim::Margin => 0x4d41_5247,
        }
    }
    fn fallback(self) -> u32 {
        match self {
            Dim::Size => 600,
            Dim::Margin => 2,
        }
    }
}

/// How a probe of one value ended.
#[derive(Clone, Debug, PartialEq)]
enum Probe {
    /// Accepted (and judged); the quiet zone measured, in px, when the code was read.
    Accepted(Option<f64>),
    Refused,
    /// Throttled, no answer or an error that is not a clean refusal (already judged by
    /// `status.*`): the search stops.
    Unknown,
}

/// A value the run's key had accepted, asked again with every other plan's key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pick {
    dim: Dim,
    value: u32,
    what: &'static str,
}

/// Of the values a search accepted (the default first), the bounds and one inside them: the
/// lowest, the highest, and the last seeded value strictly between.
fn picks(dim: Dim, seen: &[(u32, Option<f64>)]) -> Vec<Pick> {
    let (Some(lo), Some(hi)) = (
        seen.iter().map(|s| s.0).min(),
        seen.iter().map(|s| s.0).max(),
    ) else {
        return Vec::new();
    };
    let pick = |value, what| Pick { dim, value, what };
    let mut out = vec![pick(lo, "the lowest accepted")];
    if hi != lo {
        out.push(pick(hi, "the highest accepted"));
    }
    if let Some(&(v, _)) = seen.iter().rev().find(|(v, _)| *v > lo && *v < hi) {
        out.push(pick(v, "inside the accepted range"));
    }
    out
}

impl Family<'_> {
    /// The accepted ranges of size and margin, their bounds, just past them and values between;
    /// what to ask again with every other plan's key (`picks`).
    pub(super) async fn ranges(&self) -> Vec<Pick> {
        // The two searches are independent: side by side, as their probes wait on renders.
        let size = async {
            if self.ctx.enabled(check_id!("qr.size")) {
                return picks(Dim::Size, &self.range(Dim::Size).await);
            }
            Vec::new()
        };
        let margin = async {
            if self.ctx.enabled(check_id!("qr.margin")) && self.op.param("margin").is_some() {
                let seen = self.range(Dim::Margin).await;
                let out = picks(Dim::Margin, &seen);
                self.margin_series(seen);
                return out;
            }
            Vec::new()
        };
        let (mut size, margin) = tokio::join!(size, margin);
        size.extend(margin);
        size
    }

    /// The renders of `picks` for another plan's key (`plan`): each may be refused cleanly (a
    /// plan may render less), and one accepted is judged in full.
    pub(super) fn pick_cases(&self, picks: &[Pick], plan: &str) -> Vec<Case> {
        picks
            .iter()
            .map(|p| {
                let what = format!("{}, with the {plan} key", p.what);
                let mut c = self.dim_case(p.dim, p.value, &what);
                c.expect = Expect::AcceptOrRefuse;
                c
            })
            .collect()
    }

    /// The accepted range of `dim`: every accepted probe as (value, quiet zone px if read).
    async fn range(&self, dim: Dim) -> Vec<(u32, Option<f64>)> {
        let mut seen = Vec::new();
        let start = match self.op.param(dim.name()).and_then(|p| p.default()) {
            Some(d) => d
                .as_f64()
                .map_or(dim.fallback(), |n| n.round().clamp(0.0, 1e4) as u32),
            None => dim.fallback(),
        };
        match self.probe(dim, start, "the default").await {
            Probe::Accepted(q) => seen.push((start, q)),
            _ => return seen,
        }
        let up: Vec<u32> = dim.up().iter().copied().filter(|&n| n > start).collect();
        let down: Vec<u32> = dim.down().iter().copied().filter(|&n| n < start).collect();
        let Some((hi, hi_past)) = self.bound(dim, start, &up, &mut seen).await else {
            return seen;
        };
        let Some((lo, lo_past)) = self.bound(dim, start, &down, &mut seen).await else {
            return seen;
        };
        let past =
            |p: Option<u32>| p.map_or("none refused".to_string(), |p| format!("{p} refused"));
        self.ctx.rec.observe(
            check_id!("qr.choices"),
            &self.label,
            format!(
                "{}: accepted from {lo} to {hi} ({}; {})",
                dim.name(),
                past(lo_past),
                past(hi_past)
            ),
            None,
        );
        let mut rng = Rng(self.ctx.opts.seed ^ dim.salt());
        // Log-uniform over [lo, hi], shifted by one so that 0 can be drawn.
        let (l, h) = (f64::from(lo + 1).ln(), f64::from(hi + 1).ln());
        let between: Vec<u32> = (0..BETWEEN)
            .map(|_| {
                let t = rng.below(1 << 20) as f64 / f64::from(1u32 << 20);
                ((l + t * (h - l)).exp() - 1.0)
                    .round()
                    .clamp(f64::from(lo), f64::from(hi)) as u32
            })
            .collect();
        // Independent of each other: sent side by side, `--concurrency` at a time.
        let probes: Vec<_> = between
            .iter()
            .enumerate()
            .map(|(i, &v)| async move {
                let p = self
                    .probe(dim, v, &format!("seeded #{i} between the bounds"))
                    .await;
                (v, p)
            })
            .collect();
        let answers: Vec<(u32, Probe)> = futures::stream::iter(probes)
            .buffered(self.ctx.opts.concurrency.max(1))
            .collect()
            .await;
        for (v, p) in answers {
            if let Probe::Accepted(q) = p {
                seen.push((v, q));
            }
        }
        seen
    }

    /// From `from` (accepted) outwards through `candidates`: the last accepted value and the
    /// first refused one past it (None when every candidate is accepted). None when a probe
    /// could not be judged. Accepted probes are added to `seen`.
    async fn bound(
        &self,
        dim: Dim,
        from: u32,
        candidates: &[u32],
        seen: &mut Vec<(u32, Option<f64>)>,
    ) -> Option<(u32, Option<u32>)> {
        let mut ok = from;
        let mut bad = None;
        for &n in candidates {
            match self.probe(dim, n, "a usual bound").await {
                Probe::Accepted(q) => {
                    seen.push((n, q));
                    ok = n;
                }
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
        // Just past the last accepted value first: a usual bound is usually the bound. Then
        // bisection, if that was accepted too.
        let toward = |ok: u32, bad: u32| if bad > ok { ok + 1 } else { ok - 1 };
        let mut next = toward(ok, bad);
        for _ in 0..STEPS {
            if next == bad {
                break;
            }
            let what = if next == toward(ok, bad) {
                "just past the last accepted value"
            } else {
                "bisecting towards the bound"
            };
            match self.probe(dim, next, what).await {
                Probe::Accepted(q) => {
                    seen.push((next, q));
                    ok = next;
                }
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

    /// One render with `dim` at `v`: accepted (and judged by every `qr.*` check), or refused.
    async fn probe(&self, dim: Dim, v: u32, why: &str) -> Probe {
        let case = self.dim_case(dim, v, why);
        // Sent and judged as `render` does, but a refusal is not observed one by one: the
        // range found is.
        let (x, o) = self
            .ctx
            .exchange(self.op, case.request(&self.key, self.op), case.expect)
            .await;
        match o {
            Outcome::Accepted => {
                let quiet = self
                    .judge(&case, &x)
                    .and_then(|i| i.decoded.ok())
                    .map(|d| d.quiet_zone_modules * d.module_px);
                Probe::Accepted(quiet)
            }
            Outcome::CleanRejection(_) => Probe::Refused,
            _ => Probe::Unknown,
        }
    }

    /// The render of `dim` at `v` (`why` says which value it is).
    fn dim_case(&self, dim: Dim, v: u32, why: &str) -> Case {
        let case = self.case(format!("{} {v} ({why})", dim.name()), TYPICAL_URL);
        let mut case = match dim {
            Dim::Size => case.size(f64::from(v)),
            Dim::Margin => case.size(f64::from(MARGIN_SIZE)).margin(f64::from(v)),
        }
        .level(EcLevel::M);
        // Below about 3 px a module (the smallest code holding the url, default margin), no
        // reader is sure to read it: the image's size, PNG and colours are still judged.
        let modules = min_modules(TYPICAL_URL.as_bytes(), EcLevel::M).unwrap_or(177) + 2 * 2;
        if dim == Dim::Size && f64::from(v) / f64::from(modules) < 3.0 {
            case.content = ContentWant::Unread;
        }
        case
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds of what was accepted and the last value seeded between them, whatever order
    /// the search met them in; one value accepted gives one pick.
    #[test]
    fn picks_are_the_bounds_and_one_inside() {
        let seen = [600, 1024, 2048, 4096, 256, 32, 33, 731, 58]
            .map(|v| (v, None))
            .to_vec();
        let got: Vec<(u32, &str)> = picks(Dim::Size, &seen)
            .iter()
            .map(|p| (p.value, p.what))
            .collect();
        assert_eq!(
            got,
            [
                (32, "the lowest accepted"),
                (4096, "the highest accepted"),
                (58, "inside the accepted range")
            ]
        );
        assert_eq!(picks(Dim::Margin, &[(2, None)]).len(), 1);
        assert!(picks(Dim::Margin, &[]).is_empty());
    }
}
