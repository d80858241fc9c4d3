//! `ratelimit.*`: the headers' meaning, not only their presence. Limit is the plan's, Remaining
//! falls by one, Reset is epoch seconds within a window, a burst past the limit gets 429 with a
//! Retry-After that is enough, and limits are per key. `check` probes with short bursts;
//! `linkcert load` measures throttling over time. What the headers mean (units, slack,
//! consistency) is `linkcert_rate::headers`'s, shared with `load`. Whether each key's answers
//! follow from its own history (one counter per key for every operation) is
//! `linkcert_rate::quota`'s, judged here on mixed sequences of several keys (`counter.rs`) and by
//! `load` on every key of a run.

use linkcert_registry::{Check, check_id};
use std::time::Duration;

use super::Ctx;

use super::auth::minimal_request;

use super::conformance::Expect;

use super::probe::{Exchange, Req};

use linkcert_spec::clock::now_epoch;

use linkcert_http::error_code;

use linkcert_rate::headers::{
    self as rate_headers, Answer, LimitReading, RemainingTrend, SLACK_SECS, remaining_trend,
};

use linkcert_spec::{Limit, Operation};

use linkcert_run::target::PlanKey;

use linkcert_spec::verdict::Verdict;

pub(crate) mod counter;
pub(crate) mod every_answer;
pub(crate) mod fields;
pub(crate) mod headers;

use headers::*;

/// Bursts are sent only at keys whose limit is at most this (a Free or Pro key): bursting an
/// Advanced key means thousands of requests, which is `linkcert load`'s job.
pub(crate) const MAX_BURST_LIMIT: u64 = 1200;

/// The operations of a rate class any key allowed the class can call without a body.
pub(crate) fn callable<'a>(ctx: &'a Ctx, class: &str) -> impl Iterator<Item = &'a Operation> {
    let class = class.to_string();
    ctx.spec
        .operations
        .iter()
        .filter(move |o| o.rate_class == class && o.min_plan.is_none() && o.body.is_none())
}

/// A cheap operation of a rate class that any key allowed the class can call.
pub(crate) fn probe_op<'a>(ctx: &'a Ctx, class: &str) -> Option<&'a Operation> {
    // The service's own operations before our extensions; fewest required parameters.
    callable(ctx, class)
        .min_by_key(|o| (o.extension, o.params.iter().filter(|p| p.required).count()))
}

/// The cheapest request of an operation: one item when it paginates.
pub(crate) fn cheap_request(op: &Operation) -> Req {
    let mut req = minimal_request(op);
    if let Some(p) = op.param_with_role("page-size") {
        req = req.query(&p.name, "1");
    }
    req
}

/// The limit a key should announce in a class: None when the plan has none (or it is custom).
pub(crate) fn plan_limit(ctx: &Ctx, key: &PlanKey, class: &str) -> Limit {
    ctx.spec
        .plan(&key.plan)
        .map_or(Limit::Unavailable, |p| p.limit(class))
}

pub async fn run(ctx: &Ctx) {
    let classes: Vec<String> = ctx.spec.rate_classes.keys().cloned().collect();
    for class in &classes {
        let Some(op) = probe_op(ctx, class) else {
            if class != &ctx.spec.default_rate_class {
                ctx.rec.skip(
                    check_id!("ratelimit.analytics"),
                    "*",
                    format!("the target serves no operation of the {class} class"),
                );
            }
            continue;
        };
        let users: Vec<PlanKey> = ctx
            .target
            .keys
            .iter()
            .filter(|k| !matches!(plan_limit(ctx, k, class), Limit::Unavailable))
            .cloned()
            .collect();
        if users.is_empty() {
            ctx.rec.skip(
                class_check(ctx, class, check_id!("ratelimit.limit")),
                &op.label(),
                format!("no key of a plan with {class} access"),
            );
            continue;
        }
        limits(ctx, op, class, &users).await;
        let done = burst(ctx, op, class, &users).await;
        if class == &ctx.spec.default_rate_class {
            counter::run(ctx, &users, done).await;
        }
    }
}

/// The id a finding of this class goes to: the per-second classes have their own check.
fn class_check(ctx: &Ctx, class: &str, standard: Check) -> Check {
    if class == ctx.spec.default_rate_class {
        standard
    } else {
        check_id!("ratelimit.analytics")
    }
}

async fn limits(ctx: &Ctx, op: &Operation, class: &str, keys: &[PlanKey]) {
    let id = class_check(ctx, class, check_id!("ratelimit.limit"));
    if !ctx.enabled(id) {
        return;
    }
    let window = ctx.target.window(&ctx.spec, class);
    for k in keys {
        let (x, _) = ctx
            .exchange(op, cheap_request(op).key(k), Expect::Any)
            .await;
        let Some(r) = x.resp() else { continue };
        if !(r.is_success() || r.status == 429) {
            continue;
        }
        let Some(announced) = r.header_u64(rate_headers::LIMIT) else {
            // Absence is ratelimit.headers' finding.
            continue;
        };
        let standard = class == ctx.spec.default_rate_class;
        match plan_limit(ctx, k, class) {
            Limit::Fixed(n) => match rate_headers::read_limit(announced, n, standard) {
                LimitReading::Plan => ctx.rec.pass(id, &op.label()),
                LimitReading::PerHour => ctx.rec.observe(
                    id,
                    &op.label(),
                    format!("X-RateLimit-Limit {announced} for the {} plan: the per-hour reading of {n} per minute", k.plan),
                    Some(&x),
                ),
                LimitReading::Wrong => ctx.rec.violation(
                    id,
                    &op.label(),
                    format!("X-RateLimit-Limit {n} for the {} plan ({n} per {window:?})", k.plan),
                    announced.to_string(),
                    Some(&x),
                ),
            },
            Limit::Custom if announced > 0 => ctx.rec.observe(
                id,
                &op.label(),
                format!("the {} plan's custom limit is {announced}", k.plan),
                None,
            ),
            Limit::Custom | Limit::Unavailable => ctx.rec.violation(
                id,
                &op.label(),
                "a positive limit",
                announced.to_string(),
                Some(&x),
            ),
        }
    }
}

/// The checks a burst of this class judges.
fn burst_checks(standard: bool) -> &'static [Check] {
    if standard {
        &[
            check_id!("ratelimit.remaining"),
            check_id!("ratelimit.reset"),
            check_id!("ratelimit.throttles"),
            check_id!("ratelimit.retry-after"),
            check_id!("ratelimit.per-key"),
            check_id!("ratelimit.recovers"),
        ]
    } else {
        &[check_id!("ratelimit.analytics")]
    }
}

/// A burst at the key cheapest to exhaust, past its limit; then, once throttled, another key
/// (`per_key`) and the same key after the wait it was told. Meanwhile ratelimit.counter
/// samples another key's phases (`counter::phases`), so the window they span is mostly one
/// this family waits anyway. Returns the exchanges the counter rule judges too.
async fn burst(ctx: &Ctx, op: &Operation, class: &str, keys: &[PlanKey]) -> counter::Done {
    let standard = class == ctx.spec.default_rate_class;
    let ids = burst_checks(standard);
    if !ids.iter().any(|c| ctx.enabled(*c)) {
        return counter::Done::default();
    }
    let label = op.label();
    let Some((key, limit)) = burst_key(ctx, class, keys, ids, &label) else {
        return counter::Done::default();
    };
    // Never the burst key: the samples would spend what `recovers` waits for.
    let sampled = counter::keys(ctx, keys, Some(&key)).filter(|k| standard && !k.is(&key));
    let (burst, phases) = tokio::join!(
        burst_and_recover(ctx, op, class, keys, label, key, limit),
        async {
            match &sampled {
                Some(k) => Some(counter::phases(ctx, k).await),
                None => None,
            }
        }
    );
    counter::Done {
        burst: Some(burst),
        phases,
    }
}

/// The burst, and what follows it once throttled; the burst key's exchanges.
async fn burst_and_recover(
    ctx: &Ctx,
    op: &Operation,
    class: &str,
    keys: &[PlanKey],
    label: String,
    key: PlanKey,
    limit: u64,
) -> counter::Trail {
    let b = Burst::send(ctx, op, class, label, key, limit).await;
    b.judge_headers();
    let Some(first_429) = b.seen.iter().find(|s| s.status() == 429) else {
        b.judge_unthrottled();
        return counter::Trail::of(&b.key, b.limit, b.seen);
    };
    let wait = b.judge_throttled(first_429);
    if class == ctx.spec.default_rate_class && ctx.enabled(check_id!("ratelimit.per-key")) {
        per_key(ctx, op, &b.key, keys).await;
    }
    let recovered = b.recovers(wait, first_429.at).await;
    let mut seen = b.seen;
    seen.extend(recovered);
    counter::Trail::of(&b.key, b.limit, seen)
}

/// The key with the smallest fixed limit, the cheapest to exhaust, and that limit; None (every
/// check of the burst skipped, saying why) when there is none or it is too large to burst.
fn burst_key(
    ctx: &Ctx,
    class: &str,
    keys: &[PlanKey],
    ids: &[Check],
    label: &str,
) -> Option<(PlanKey, u64)> {
    let Some((key, limit)) = keys
        .iter()
        .filter_map(|k| match plan_limit(ctx, k, class) {
            Limit::Fixed(n) if n > 0 => Some((k.clone(), n)),
            _ => None,
        })
        .min_by_key(|(_, n)| *n)
    else {
        for &id in ids {
            ctx.rec
                .skip(id, label, format!("no key with a fixed {class} limit"));
        }
        return None;
    };
    if limit > MAX_BURST_LIMIT {
        for &id in ids {
            ctx.rec.skip(id, label, format!("the lowest {class} limit among the keys is {limit}; pass a Free or Pro key (--key free=...) to burst it"));
        }
        return None;
    }
    Some((key, limit))
}

/// One burst sent and what came back.
struct Burst<'a> {
    ctx: &'a Ctx,
    op: &'a Operation,
    class: &'a str,
    label: String,
    key: PlanKey,
    limit: u64,
    window: Duration,
    /// The most requests sent: twice the limit and some.
    cap: u64,
    started: f64,
    seen: Vec<Seen>,
    /// The header rules `check` shares with `load`, judged on `seen`.
    shared: Vec<(Check, rate_headers::Judged)>,
}

impl<'a> Burst<'a> {
    /// Requests to `key` as fast as one connection allows, unpaced (this is the point), until
    /// the first 429, the cap, or no answer.
    async fn send(
        ctx: &'a Ctx,
        op: &'a Operation,
        class: &'a str,
        label: String,
        key: PlanKey,
        limit: u64,
    ) -> Burst<'a> {
        let window = ctx.target.window(&ctx.spec, class);
        let cap = limit * 2 + 10;
        let mut seen: Vec<Seen> = Vec::new();
        let started = now_epoch();
        for _ in 0..cap {
            let sent = now_epoch();
            let x = ctx.probe.send_raw(cheap_request(op).key(&key)).await;
            ctx.judge(op, &x, Expect::Any);
            if x.resp().is_none() {
                break;
            }
            let s = Seen {
                sent,
                at: now_epoch(),
                exchange: x.lighten(),
            };
            let stop = s.status() == 429;
            seen.push(s);
            if stop {
                break;
            }
        }
        let shared = header_verdicts(&seen, window);
        Burst {
            ctx,
            op,
            class,
            label,
            key,
            limit,
            window,
            cap,
            started,
            seen,
            shared,
        }
    }

    /// The check a finding of this burst goes to (`class_check`).
    fn id(&self, standard: Check) -> Check {
        class_check(self.ctx, self.class, standard)
    }

    /// Records a shared header rule's verdict, when the burst gave one.
    fn record_shared(&self, rule: Check) {
        if let Some((_, j)) = self.shared.iter().find(|(r, _)| *r == rule) {
            record(self.ctx, &self.label, self.id(rule), j, &self.seen);
        }
    }

    /// Remaining (its trend, then the shared rule, only when the trend held) and Reset.
    fn judge_headers(&self) {
        let remaining = check_id!("ratelimit.remaining");
        if judge_remaining_trend(self.ctx, &self.label, self.id(remaining), &self.seen) {
            self.record_shared(remaining);
        }
        self.record_shared(check_id!("ratelimit.reset"));
    }

    /// No 429 in the whole burst: a failure to throttle, unless the client could not outpace
    /// the limit.
    fn judge_unthrottled(&self) {
        let (seen, limit, window) = (&self.seen, self.limit, self.window);
        let admitted = seen
            .iter()
            .filter(|s| (200..300).contains(&s.status()))
            .count();
        // A client that cannot outpace the limit (a slow round trip, a large limit) expects no
        // 429: that burst judges nothing.
        let sent_rate = seen.len() as f64 / (now_epoch() - self.started).max(1e-3);
        let limit_rate = limit as f64 / window.as_secs_f64();
        if sent_rate < 1.5 * limit_rate {
            self.ctx.rec.observe(
                self.id(check_id!("ratelimit.throttles")),
                &self.label,
                format!(
                    "burst not judged: sent {sent_rate:.1} req/s, not enough above the limit's {limit_rate:.1} req/s to expect a 429"
                ),
                None,
            );
            return;
        }
        if let Some(last) = seen.last() {
            self.ctx.rec.violation(
                self.id(check_id!("ratelimit.throttles")),
                &self.label,
                format!(
                    "a 429 within {} requests for a limit of {limit} per {window:?}",
                    self.cap
                ),
                format!("{admitted} of {} admitted", seen.len()),
                Some(&last.exchange),
            );
        }
    }

    /// The first 429: its code and Retry-After. Returns the wait Retry-After asked for, when
    /// it is usable.
    fn judge_throttled(&self, first_429: &Seen) -> Option<f64> {
        let r429 = first_429.exchange.resp();
        let expected = self.ctx.spec.errors.code(429).unwrap_or_default();
        let throttles = self.id(check_id!("ratelimit.throttles"));
        match r429.and_then(error_code) {
            Some(c) if c == expected => self.ctx.rec.pass(throttles, &self.label),
            other => self.ctx.rec.violation(
                throttles,
                &self.label,
                format!("429 with code {expected}"),
                format!(
                    "429 with code {}",
                    other.unwrap_or_else(|| "none (no envelope)".into())
                ),
                Some(&first_429.exchange),
            ),
        }
        self.record_shared(check_id!("ratelimit.retry-after"));
        r429.and_then(|r| r.header(rate_headers::RETRY_AFTER))
            .and_then(rate_headers::parse_retry_after)
            .map(|ra| ra.wait_secs(first_429.at))
            .filter(|w| *w <= self.window.as_secs_f64() + SLACK_SECS)
    }

    /// Wait what the target said (bounded by a window and slack) from the first 429 at
    /// `throttled_at`, then the key is admitted. Returns that exchange.
    async fn recovers(&self, wait: Option<f64>, throttled_at: f64) -> Option<Seen> {
        let (ctx, op, window) = (self.ctx, self.op, self.window);
        let wait = wait
            .unwrap_or(window.as_secs_f64() + 1.0)
            .min(window.as_secs_f64() + SLACK_SECS);
        let elapsed = now_epoch() - throttled_at;
        if wait > elapsed {
            tokio::time::sleep(Duration::from_secs_f64(wait - elapsed)).await;
        }
        let sent = now_epoch();
        let x = ctx.probe.send_raw(cheap_request(op).key(&self.key)).await;
        ctx.judge(op, &x, Expect::Any);
        let at = now_epoch();
        let rid = self.id(check_id!("ratelimit.recovers"));
        match x.status() {
            Some(s) if (200..300).contains(&s) => ctx.rec.pass(rid, &self.label),
            Some(s) => ctx.rec.violation(
                rid,
                &self.label,
                format!("admitted after waiting the {wait:.1} s Retry-After said"),
                s.to_string(),
                Some(&x),
            ),
            None => {}
        }
        Some(Seen {
            sent,
            at,
            exchange: x.lighten(),
        })
    }
}

/// Right after `exhausted` was throttled, another key must still be admitted.
async fn per_key(ctx: &Ctx, op: &Operation, exhausted: &PlanKey, keys: &[PlanKey]) {
    let label = op.label();
    // Prefer a key of the same plan: the interesting case (same workspace, other key).
    let other = keys
        .iter()
        .filter(|k| k.key != exhausted.key)
        .min_by_key(|k| k.plan != exhausted.plan);
    let Some(other) = other else {
        ctx.rec.skip(
            check_id!("ratelimit.per-key"),
            &label,
            "needs a second key (two Free keys are best)",
        );
        return;
    };
    let x = ctx.probe.send_raw(cheap_request(op).key(other)).await;
    ctx.judge(op, &x, Expect::Any);
    match x.status() {
        Some(429) => ctx.rec.violation(
            check_id!("ratelimit.per-key"),
            &label,
            format!(
                "the {} key admitted while another {} key is exhausted",
                other.plan, exhausted.plan
            ),
            "429",
            Some(&x),
        ),
        Some(_) => ctx.rec.pass(check_id!("ratelimit.per-key"), &label),
        None => {}
    }
}

#[cfg(test)]
mod tests;
