//! One key's three windows (the module note in `mod.rs`): what is sent, when, and what came
//! back, in send order. Nothing here judges: `judge.rs` reads what really happened.

use std::future::Future;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use linkcert_rate::headers as rate_headers;
use linkcert_spec::Operation;
use linkcert_spec::clock::now_epoch;
use tokio::time::Instant;

use super::Driven;
use crate::Ctx;
use crate::auth::look_alike;
use crate::conformance::Expect;
use crate::ratelimit::cheap_request;
use crate::ratelimit::headers::Seen;

/// Requests of one key in flight at once in its burst and its mixed window: enough to outpace
/// a limit of thousands a window at 100 ms a round trip.
const IN_FLIGHT: usize = 16;
/// Requests of a burst past the limit beyond N: a twentieth of it, at least this.
const PAST_LIMIT: u64 = 5;
/// A plan's first window when its burst is not sent: a sample.
const SAMPLE: u64 = 20;
/// The most requests of the mixed window.
const MIX_MOST: u64 = 90;
/// Seconds past two idle windows before the key is read again: the client's and the target's
/// clocks and the answer's travel.
const IDLE_SLACK: f64 = 1.0;

/// One key's life as the client saw it.
pub(super) struct Life {
    pub driven: Driven,
    /// The key's limit (0: not known, nothing judged).
    pub n: u64,
    /// The class's window, seconds.
    pub w: f64,
    pub seen: Vec<Seen>,
    /// Where the request after the idle windows is in `seen`, and how long the key had been
    /// idle (from its latest answer to that send).
    pub fresh: Option<(usize, f64)>,
    /// Every request sent with the key is in `seen`: no requests in flight were let go when
    /// one went unanswered (the target may have counted those).
    pub whole: bool,
}

impl Life {
    /// What a finding on this life names: the key's plan and, past the standard one, its class.
    pub fn label(&self, standard: &str) -> String {
        let d = &self.driven;
        if d.class == standard {
            format!("the {} key's windows", d.key.plan)
        } else {
            format!("the {} key's {} windows", d.key.plan, d.class)
        }
    }

    /// The status of the life's first answer when it neither admitted nor throttled: the
    /// target refused the class's cheapest request (an operation it does not serve), and the
    /// life stopped there.
    pub fn refused_first(&self) -> Option<u16> {
        let st = self.seen.first()?.status();
        (st != 0 && st != 429 && !(200..300).contains(&st)).then_some(st)
    }

    fn answered(&self) -> bool {
        self.seen
            .last()
            .is_some_and(|s| s.exchange.resp().is_some())
    }
}

/// Requests past the limit in a burst of a limit of `n`.
fn past_limit(n: u64) -> u64 {
    (n / 20).max(PAST_LIMIT)
}

/// The key's three windows: its burst and lone requests to `cheap`, its mixed window over
/// `routes`; stops where the target stops answering.
pub(super) async fn life(
    ctx: &Ctx,
    d: &Driven,
    cheap: &Operation,
    routes: &[&Operation],
    w: f64,
) -> Life {
    let mut life = Life {
        driven: d.clone(),
        n: d.n.unwrap_or(0),
        w,
        seen: Vec::new(),
        fresh: None,
        whole: true,
    };
    let first = cheap;
    life.seen.push(send(ctx, first, d).await);
    if life.n == 0 {
        // A custom limit: the key's own X-RateLimit-Limit says it.
        life.n = life.seen[0]
            .exchange
            .resp()
            .and_then(|r| r.header_u64(rate_headers::LIMIT))
            .unwrap_or(0);
    }
    if !life.answered() || life.n == 0 || life.refused_first().is_some() {
        return life;
    }
    let n = life.n;
    if !burst(ctx, d, first, &mut life, w).await {
        life.whole = false;
        return life;
    }
    // Two windows idle from the latest answer.
    let last = life.seen.iter().map(|s| s.at).fold(f64::MIN, f64::max);
    let wake = last + 2.0 * w + IDLE_SLACK;
    tokio::time::sleep(Duration::from_secs_f64((wake - now_epoch()).max(0.0))).await;
    let s = send(ctx, first, d).await;
    life.fresh = Some((life.seen.len(), s.sent - last));
    life.seen.push(s);
    if !life.answered() {
        return life;
    }
    // A later window, the routes mixed, spread over it.
    // Saturating: a custom limit is the target's own X-RateLimit-Limit, any u64.
    let m = n.saturating_add(past_limit(n)).min(MIX_MOST);
    let mixed = (0..m as usize).map(|i| routes[i % routes.len()]);
    let got = spread(ctx, d, mixed, w).await;
    life.whole = got.len() as u64 == m;
    life.seen.extend(got);
    life
}

/// The first window's burst: N and a twentieth at once, then a twentieth at a time until a
/// 429 (a window boundary in the middle of a burst gives a fixed window's quota back: the
/// burst goes on until one named window is past its limit, while the client outpaces the
/// limit), at most twice the limit and two twentieths; a sample of `SAMPLE` for a key not
/// burst. Returns whether every request was answered.
async fn burst(ctx: &Ctx, d: &Driven, op: &Operation, life: &mut Life, w: f64) -> bool {
    let (n, past) = (life.n, past_limit(life.n));
    let (cap, mut chunk) = if d.long {
        let burst = n.saturating_add(past);
        (burst.saturating_mul(2), burst)
    } else {
        (SAMPLE.min(n), SAMPLE.min(n))
    };
    let (began, mut sent) = (now_epoch(), 0u64);
    while sent < cap {
        let k = chunk.min(cap - sent);
        let got = at_once(ctx, d, (0..k).map(|_| op)).await;
        let (answered, throttled) = (got.len() as u64 == k, got.iter().any(|s| s.status() == 429));
        sent += got.len() as u64;
        life.seen.extend(got);
        if !answered || throttled {
            return answered;
        }
        // Only a client that outpaces the limit can meet a 429 by sending more.
        if (sent as f64) / (now_epoch() - began).max(1e-3) < n as f64 / w {
            return true;
        }
        chunk = past;
    }
    true
}

/// One request of `op` with the key, judged by the checks on every exchange.
async fn send(ctx: &Ctx, op: &Operation, d: &Driven) -> Seen {
    Seen::send(ctx, op, &d.key).await
}

/// Requests sent as fast as `IN_FLIGHT` at once allow, in send order, until one goes
/// unanswered.
async fn at_once<'a>(ctx: &Ctx, d: &Driven, ops: impl Iterator<Item = &'a Operation>) -> Vec<Seen> {
    // The futures made first: a closure inside the stream would not be `Send` for every
    // lifetime the family's entry point needs.
    let sends: Vec<_> = ops.map(|op| send(ctx, op, d)).collect();
    answered(sends).await
}

/// The request of `op` refused for its credential: without a key, and with a key that looks
/// like the key's and was never issued. They are not the key's: its counter must not move
/// for them (`limiter.over-time` reads that off the key's own Remaining); judged by the
/// checks on every exchange, kept nowhere.
async fn refused(ctx: &Ctx, op: &Operation, d: &Driven) {
    let alike = format!("Bearer {}", look_alike(&d.key.key));
    for req in [
        cheap_request(op),
        cheap_request(op).header("authorization", alike),
    ] {
        let x = ctx.probe.send_raw(req).await;
        ctx.judge(op, &x, Expect::Any);
    }
}

/// Requests spread evenly over one window from now, each beside its refused twins
/// (`refused`), up to `IN_FLIGHT` at once, in send order, until one goes unanswered.
async fn spread<'a>(
    ctx: &Ctx,
    d: &Driven,
    ops: impl ExactSizeIterator<Item = &'a Operation>,
    w: f64,
) -> Vec<Seen> {
    let step = Duration::from_secs_f64(w / ops.len().max(1) as f64);
    let start = Instant::now();
    let sends: Vec<_> = ops
        .enumerate()
        .map(|(i, op)| async move {
            tokio::time::sleep_until(start + step * i as u32).await;
            tokio::join!(send(ctx, op, d), refused(ctx, op, d)).0
        })
        .collect();
    answered(sends).await
}

/// The sends, `IN_FLIGHT` at a time, until one goes unanswered, in send order.
async fn answered(sends: Vec<impl Future<Output = Seen>>) -> Vec<Seen> {
    let mut seen: Vec<Seen> = stream::iter(sends)
        .buffered(IN_FLIGHT)
        .take_while(|s| std::future::ready(s.exchange.resp().is_some()))
        .collect()
        .await;
    seen.sort_by(|a, b| a.sent.total_cmp(&b.sent));
    seen
}
