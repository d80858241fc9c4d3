//! ratelimit.counter: one counter per key, shared by every standard operation, judged from
//! each key's own history (`linkcert_rate::quota`, the rule `load` applies to every key of a run).
//!
//! The sequences: while the burst key is burst and waits out its 429, a key of the smallest
//! limit (A) spends a third of its quota and is read at every twelfth of a window (`phases`:
//! Remaining and Reset early, middle and late, whatever the window's alignment). Then A is
//! driven to the edge of its quota with the GET operations alternating (`mixed`), interleaved
//! with another key of its plan (B) and a key of another plan (P), which spend some of their
//! own quotas just before A's is out; a burst at once at the edge (not in the last seconds of
//! a window by A's Reset: a boundary there would explain any admission); A on to its 429 and every
//! standard operation once more (a 429 on each: the quota is the key's, not the route's);
//! then B and P again. Each key's exchanges (the burst key's burst included) are judged
//! apart, on the times they really had, never on whether a schedule was held.
//!
//! Not judged: whether POST /partners/deactivate is counted. Keys allowed to call it (Advanced
//! and up) have limits too large to spend here, and a refill of N per window hides a few
//! uncounted requests; a Free key gets 403 or 429 once its quota is spent, and which one (plan
//! or quota first) and whether a 403 uses quota are the target's choices.

use super::*;
use linkcert_rate::quota::{Fault, History, Judgement, Said};

/// Remaining at which A gets the burst at once.
const EDGE: u64 = 3;
/// Requests of the burst at once: enough that a limiter admitting them all has admitted
/// more than the refill of a slow burst explains.
const AT_ONCE: usize = 20;
/// A's Reset less than this ahead: the burst waits for the next window.
const LATE_SECS: f64 = 2.0;
/// Requests A sends before its phases are sampled.
const SPENT_FIRST: u64 = 20;
/// Requests P sends when A's quota is nearly spent: more than A has left.
const OTHER_PLAN_BURST: usize = 12;

/// One key's exchanges this family sent, in send order.
pub(super) struct Trail {
    pub key: PlanKey,
    pub n: u64,
    pub seen: Vec<Seen>,
}

impl Trail {
    pub fn of(key: &PlanKey, n: u64, seen: Vec<Seen>) -> Trail {
        Trail {
            key: key.clone(),
            n,
            seen,
        }
    }
    fn new(key: &PlanKey, n: u64) -> Trail {
        Trail {
            key: key.clone(),
            n,
            seen: Vec::new(),
        }
    }
    fn left(&self) -> Option<u64> {
        let r = self.seen.last()?.exchange.resp()?;
        if r.status == 429 {
            return Some(0);
        }
        rate_headers::parse_count(r.header(rate_headers::REMAINING))
    }
    fn throttled(&self) -> bool {
        self.seen.last().is_some_and(|s| s.status() == 429)
    }
    /// How long until just past the last answer's Reset, when that is less than `LATE_SECS`
    /// away by the client's clock (only where to put the burst: nothing is judged by it).
    fn late_in_window(&self) -> Option<Duration> {
        let r = self.seen.last()?.exchange.resp()?;
        let rate_headers::ResetUnit::EpochSeconds(reset) =
            rate_headers::reset_unit(r.header(rate_headers::RESET)?)
        else {
            return None;
        };
        let ahead = reset as f64 - now_epoch();
        (ahead < LATE_SECS).then(|| Duration::from_secs_f64((ahead + 0.5).clamp(0.0, LATE_SECS)))
    }
}

/// What the burst left for the counter rule: the burst key's exchanges, and A's phases
/// sampled while it waited.
#[derive(Default)]
pub(super) struct Done {
    pub burst: Option<Trail>,
    pub phases: Option<Trail>,
}

/// ratelimit.counter for the standard class, after the burst (`done`).
pub(super) async fn run(ctx: &Ctx, users: &[PlanKey], done: Done) {
    let id = check_id!("ratelimit.counter");
    if !ctx.enabled(id) {
        return;
    }
    let burst_key = done.burst.as_ref().map(|t| t.key.clone());
    let Some(k) = keys(ctx, users, burst_key.as_ref()) else {
        ctx.rec.skip(
            id,
            &label(ctx),
            format!("no key with a fixed standard limit of at most {MAX_BURST_LIMIT}; pass a Free key (--key free=...)"),
        );
        return;
    };
    let mut a = match done.phases {
        Some(t) if t.key == k.a => t,
        _ => phases(ctx, &k).await,
    };
    let mut trails = mixed(ctx, &k, &mut a).await;
    trails.push(a);
    // The burst key's exchanges came first: its trail, if it has one here, starts with them.
    if let Some(mut burst) = done.burst {
        match trails.iter_mut().find(|t| t.key == burst.key) {
            Some(t) => {
                burst.seen.append(&mut t.seen);
                t.seen = burst.seen;
            }
            None => trails.push(burst),
        }
    }
    judge(ctx, &trails);
}

/// The keys and operations of the sequences.
pub(super) struct Keys {
    a: PlanKey,
    n: u64,
    b: Option<(PlanKey, u64)>,
    p: Option<(PlanKey, u64)>,
}

impl Keys {
    /// Whether A is `key`.
    pub fn is(&self, key: &PlanKey) -> bool {
        self.a.key == key.key
    }
}

/// The standard operations of the spec's own (not linkcert's stand-ins).
fn standard_ops(ctx: &Ctx) -> Vec<&Operation> {
    ctx.spec
        .operations
        .iter()
        .filter(|o| o.rate_class == ctx.spec.default_rate_class && !o.extension && o.requires_auth)
        .collect()
}

/// Those any key may call cheaply: the ones A alternates.
pub(crate) fn cycled(ctx: &Ctx) -> Vec<&Operation> {
    standard_ops(ctx)
        .into_iter()
        .filter(|o| o.min_plan.is_none() && o.body.is_none())
        .collect()
}

fn label(ctx: &Ctx) -> String {
    let ops: Vec<String> = standard_ops(ctx).iter().map(|o| o.label()).collect();
    format!("one counter per key: {}", ops.join(", "))
}

/// A: the key of the smallest fixed limit other than the burst key when there is one; B:
/// another key of A's plan; P: a key of another plan with a fixed limit.
pub(super) fn keys(ctx: &Ctx, keys: &[PlanKey], burst_key: Option<&PlanKey>) -> Option<Keys> {
    let class = &ctx.spec.default_rate_class;
    let fixed = |k: &PlanKey| match plan_limit(ctx, k, class) {
        Limit::Fixed(n) if n > 0 && n <= MAX_BURST_LIMIT => Some(n),
        _ => None,
    };
    let (a, n) = keys
        .iter()
        .filter_map(|k| Some((k, fixed(k)?)))
        .min_by_key(|(k, n)| (*n, Some(*k) == burst_key))?;
    let b = keys
        .iter()
        .find(|k| k.key != a.key && k.plan == a.plan)
        .and_then(|k| Some((k.clone(), fixed(k)?)));
    let p = keys
        .iter()
        .filter(|k| k.plan != a.plan)
        .filter_map(|k| Some((k.clone(), fixed(k)?)))
        .min_by_key(|(_, n)| *n);
    Some(Keys {
        a: a.clone(),
        n,
        b,
        p,
    })
}

/// Sends one request of `op` with `key` and keeps it in `trail`.
async fn send(ctx: &Ctx, op: &Operation, trail: &mut Trail) -> bool {
    let s = Seen::send(ctx, op, &trail.key).await;
    let answered = s.exchange.resp().is_some();
    trail.seen.push(s);
    answered
}

/// A spends a third of its quota, then its Remaining and Reset are read at every twelfth of a
/// window: two requests each.
pub(super) async fn phases(ctx: &Ctx, k: &Keys) -> Trail {
    let mut trail = Trail::new(&k.a, k.n);
    let ops = cycled(ctx);
    if ops.is_empty() || !ctx.enabled(check_id!("ratelimit.counter")) {
        return trail;
    }
    // A third of the quota (at most `SPENT_FIRST`) first, so that Remaining is well below the
    // limit at every phase: a Remaining that stops counting at some phase then shows.
    for i in 0..(k.n / 3).min(SPENT_FIRST) as usize {
        if !send(ctx, ops[i % ops.len()], &mut trail).await {
            return trail;
        }
    }
    let w = ctx.target.window(&ctx.spec, &ctx.spec.default_rate_class);
    let step = w / 12;
    let start = tokio::time::Instant::now();
    // Twelve samples a twelfth apart: every phase of a window, whatever its alignment.
    for i in 0..12u32 {
        tokio::time::sleep_until(start + step * i).await;
        for j in 0..2 {
            let op = ops[(i as usize * 2 + j) % ops.len()];
            if !send(ctx, op, &mut trail).await {
                return trail;
            }
        }
    }
    trail
}

/// The mixed sequence (module doc); `a`: A's trail so far.
pub(super) async fn mixed(ctx: &Ctx, k: &Keys, a: &mut Trail) -> Vec<Trail> {
    let ops = cycled(ctx);
    let mut b = k.b.as_ref().map(|(key, n)| Trail::new(key, *n));
    let mut p = k.p.as_ref().map(|(key, n)| Trail::new(key, *n));
    if ops.is_empty() {
        return Vec::new();
    }
    // Twice the quota and some, and once more for a wait into the next window.
    let cap = k.n * 3 + 10;
    let (mut i, mut others_spent, mut burst_sent, mut waited) = (0usize, false, false, false);
    while (i as u64) < cap && !a.throttled() {
        let left = a.left();
        if !others_spent && left.is_some_and(|l| l <= 10) {
            // Just before A's quota is out, the other keys spend some of theirs: a counter
            // shared with them would now throttle A (or them) early.
            others_spent = true;
            spend_others(ctx, &ops, b.as_mut(), p.as_mut()).await;
        }
        if !burst_sent && left.is_some_and(|l| l <= EDGE) {
            match a.late_in_window() {
                // Once: into the next window, then on to the edge again.
                Some(wait) if !waited => {
                    waited = true;
                    tokio::time::sleep(wait).await;
                }
                _ => {
                    burst_sent = true;
                    at_once(ctx, &ops, a).await;
                    continue;
                }
            }
        }
        if i % 6 == 5
            && let Some(b) = b.as_mut()
        {
            send(ctx, ops[i % ops.len()], b).await;
        }
        if !send(ctx, ops[i % ops.len()], a).await {
            break;
        }
        i += 1;
    }
    // The quota is the key's: every standard operation is throttled now. Sent at once, so
    // that a slot the limiter gives back meanwhile (a sliding log's oldest admission ageing
    // out, sooner on a slow machine) meets at most one of them.
    let ops = standard_ops(ctx);
    let key = a.key.clone();
    let sends = ops.iter().map(|op| Seen::send(ctx, op, &key));
    let mut seen = futures::future::join_all(sends).await;
    for (op, s) in ops.iter().zip(&seen) {
        judge_spent(ctx, op, &a.key, s);
    }
    // Send order, as the rule reads a history.
    seen.sort_by(|x, y| x.sent.total_cmp(&y.sent));
    a.seen.extend(seen);
    for t in [b.as_mut(), p.as_mut()].into_iter().flatten() {
        send(ctx, ops[0], t).await;
    }
    [b, p].into_iter().flatten().collect()
}

/// B once, then P more times than A has left.
async fn spend_others(ctx: &Ctx, ops: &[&Operation], b: Option<&mut Trail>, p: Option<&mut Trail>) {
    if let Some(b) = b {
        send(ctx, ops[0], b).await;
    }
    if let Some(p) = p {
        for i in 0..OTHER_PLAN_BURST {
            send(ctx, ops[i % ops.len()], p).await;
        }
    }
}

/// `AT_ONCE` requests of A sent together, the operations alternating.
async fn at_once(ctx: &Ctx, ops: &[&Operation], a: &mut Trail) {
    let key = a.key.clone();
    let sends = (0..AT_ONCE).map(|i| Seen::send(ctx, ops[i % ops.len()], &key));
    let mut seen = futures::future::join_all(sends).await;
    // Send order, as the rule reads a history.
    seen.sort_by(|x, y| x.sent.total_cmp(&y.sent));
    a.seen.extend(seen);
}

/// A's quota spent by the other operations: this one's answer. A 403 for an operation of a
/// higher plan is the target's choice of order (plan before quota).
fn judge_spent(ctx: &Ctx, op: &Operation, a: &PlanKey, last: &Seen) {
    let id = check_id!("ratelimit.counter");
    match last.status() {
        429 => ctx.rec.pass(id, &label(ctx)),
        403 if op.min_plan.is_some() => ctx.rec.observe(
            id,
            &label(ctx),
            format!(
                "{} with a {} key whose quota is spent: 403, the plan checked before the quota (the target's choice)",
                op.label(),
                a.plan
            ),
            Some(&last.exchange),
        ),
        // An admission is the shared rule's to judge (a refill may explain it).
        _ => {}
    }
}

/// A key's exchanges, in send order, judged by the counter rule (`linkcert_rate::quota`) for
/// a limit of `n` per `w` seconds: `ratelimit.counter`'s and `limiter.over-time`'s; `all`:
/// they are every request sent with the key (the limiter's own keys).
pub(crate) fn history(n: u64, w: f64, seen: &[Seen], all: bool) -> Judgement {
    let said: Vec<Said> = seen
        .iter()
        .map(|s| {
            let h = |name| s.exchange.resp().and_then(|r| r.header(name));
            Said::read(
                s.sent,
                s.at,
                s.status(),
                h(rate_headers::REMAINING),
                h(rate_headers::RESET),
            )
        })
        .collect();
    let h = History::new(n, w);
    if all { h.of_every_request() } else { h }.judge_each(&said)
}

/// What a fault of the counter rule is, as a finding says it.
pub(crate) fn fault_words(fault: Fault) -> &'static str {
    match fault {
        Fault::OverAdmitted => "admitted past what the key's own history leaves",
        Fault::Remaining => "X-RateLimit-Remaining higher than the key's own history leaves",
        Fault::Throttled => "throttled although the key's own traffic had not spent its quota",
        Fault::Lowered => {
            "X-RateLimit-Remaining lower than the key's own requests explain: others were charged to it"
        }
    }
}

/// How a key's history judgement is said: what the answers were read as (`what`, before the
/// fault's words), where the fault is (`at`, after its figures) and what more the count says.
pub(crate) struct Words<'a> {
    pub what: &'a str,
    pub at: String,
    pub more: String,
}

/// Records a key's history judgement `j` under `id`: a pass, or its first fault in words.
pub(crate) fn record_history(
    ctx: &Ctx,
    id: Check,
    label: &str,
    key: &PlanKey,
    j: &linkcert_rate::quota::Judgement,
    said: Words,
    exchange: Option<&Exchange>,
) {
    match &j.first {
        None if j.judged > 0 => ctx.rec.pass(id, label),
        None => {}
        Some(f) => ctx.rec.violation(
            id,
            label,
            format!("the {} key: {}", key.plan, f.expected),
            format!(
                "{}{}: {}{} ({} of {} answers{})",
                fault_words(f.fault),
                said.what,
                f.actual,
                said.at,
                j.faults,
                j.judged,
                said.more
            ),
            exchange,
        ),
    }
}

/// Each key's history judged apart.
pub(super) fn judge(ctx: &Ctx, trails: &[Trail]) {
    let id = check_id!("ratelimit.counter");
    let w = ctx
        .target
        .window(&ctx.spec, &ctx.spec.default_rate_class)
        .as_secs_f64();
    let label = label(ctx);
    for t in trails {
        // Reset and Retry-After at every phase sampled, by the rules a burst is judged by.
        for (rule, j) in header_verdicts(&t.seen, Duration::from_secs_f64(w)) {
            if rule != check_id!("ratelimit.remaining") && ctx.enabled(rule) {
                record(ctx, &label, rule, &j, &t.seen);
            }
        }
        let j = history(t.n, w, &t.seen, false);
        let at = j.first.as_ref().and_then(|f| t.seen.get(f.at));
        let said = Words {
            what: "",
            at: String::new(),
            more: String::new(),
        };
        record_history(ctx, id, &label, &t.key, &j, said, at.map(|s| &s.exchange));
    }
}
