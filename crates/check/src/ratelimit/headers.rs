//! The header rules of one burst: the answers as `linkcert_rate::headers` reads them, the verdicts
//! it gives (the same `load` gets), and how Remaining counts requests sent back to back.

use super::*;
use linkcert_registry::{Check, check_id};

/// One answer of a burst: when it was sent and received (UTC epoch seconds), and the exchange.
pub(crate) struct Seen {
    pub sent: f64,
    pub at: f64,
    pub exchange: Exchange,
}

impl Seen {
    pub(crate) fn status(&self) -> u16 {
        self.exchange.status().unwrap_or(0)
    }

    /// The cheapest request of `op` with `key`, unpaced (throttling is what is measured),
    /// judged by the checks on every exchange; the exchange kept light.
    pub(crate) async fn send(ctx: &Ctx, op: &Operation, key: &PlanKey) -> Seen {
        let sent = now_epoch();
        let x = ctx.probe.send_raw(cheap_request(op).key(key)).await;
        ctx.judge(op, &x, Expect::Any);
        Seen {
            sent,
            at: now_epoch(),
            exchange: x.lighten(),
        }
    }
}

/// A burst's answers as the shared header judges read them.
pub(super) fn answers(seen: &[Seen]) -> Vec<Answer<'_>> {
    seen.iter()
        .map(|s| {
            let h = |name| s.exchange.resp().and_then(|r| r.header(name));
            Answer {
                sent: s.sent,
                recv: s.at,
                status: s.status(),
                remaining: h(rate_headers::REMAINING),
                reset: h(rate_headers::RESET),
                retry_after: h(rate_headers::RETRY_AFTER),
            }
        })
        .collect()
}

/// The header rules `check` and `load` share (`rate_headers::judge_shared`), judged on one
/// burst, by check id.
pub(crate) fn header_verdicts(
    seen: &[Seen],
    window: Duration,
) -> Vec<(Check, rate_headers::Judged)> {
    let dates = seen.iter().filter_map(|s| {
        let date = s.exchange.resp()?.header("date")?;
        Some((s.sent, s.at, date))
    });
    let offset = rate_headers::clock_offset(dates);
    rate_headers::judge_shared_skewed(&answers(seen), window, offset)
        .into_iter()
        .map(|(rule, j)| {
            let id = match rule {
                "reset" => check_id!("ratelimit.reset"),
                "retry-after" => check_id!("ratelimit.retry-after"),
                _ => check_id!("ratelimit.remaining"),
            };
            (id, j)
        })
        .collect()
}

/// Records a shared rule's verdict under `id`.
pub(super) fn record(ctx: &Ctx, label: &str, id: Check, j: &rate_headers::Judged, seen: &[Seen]) {
    let exchange = j.at.and_then(|i| seen.get(i)).map(|s| &s.exchange);
    match j.verdict {
        Verdict::Pass => {
            for _ in 0..j.judged.max(1) {
                ctx.rec.pass(id, label);
            }
        }
        Verdict::NonStrict => {
            ctx.rec
                .non_strict(id, label, j.expected.clone(), j.actual.clone(), exchange)
        }
        _ => ctx
            .rec
            .violation(id, label, j.expected.clone(), j.actual.clone(), exchange),
    }
}

/// Remaining falls by one per admission sent back to back (a burst is sequential, so this is
/// `check`'s alone; `load`'s answers overtake each other). Returns whether it did, so the shared
/// rule (Remaining 0 before the first 429) is judged only then.
pub(super) fn judge_remaining_trend(ctx: &Ctx, label: &str, id: Check, seen: &[Seen]) -> bool {
    let admitted: Vec<&Seen> = seen
        .iter()
        .filter(|s| (200..300).contains(&s.status()))
        .collect();
    let values: Vec<Option<u64>> = admitted
        .iter()
        .map(|s| {
            rate_headers::parse_count(
                s.exchange
                    .resp()
                    .and_then(|r| r.header(rate_headers::REMAINING)),
            )
        })
        .collect();
    match remaining_trend(&values) {
        RemainingTrend::Counting { pairs: 0 } => true,
        RemainingTrend::Counting { .. } => {
            ctx.rec.pass(id, label);
            true
        }
        RemainingTrend::Jumped { at, from, to } => {
            ctx.rec.violation(
                id,
                label,
                format!("X-RateLimit-Remaining {} after {from}", from - 1),
                to.to_string(),
                Some(&admitted[at].exchange),
            );
            false
        }
        RemainingTrend::Stuck { fell_by_one, pairs } => {
            if let Some(last) = admitted.last() {
                ctx.rec.violation(
                    id,
                    label,
                    "X-RateLimit-Remaining falling by one per request sent back to back",
                    format!("it fell by one in {fell_by_one} of {pairs} consecutive admissions"),
                    Some(&last.exchange),
                );
            }
            false
        }
    }
}
