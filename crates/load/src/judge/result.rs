//! What a judged scenario is: its verdict, findings, figures per key and per second, the
//! generator's account and the header trace. Data only; `super` judges.

use linkcert_registry::rule_id;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use linkcert_spec::verdict::Verdict;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenarioVerdict {
    Pass,
    Skipped,
    Informational,
    NonStrict,
    ClientSaturated,
    /// The target went away during the run, or the run was interrupted: not judged.
    Incomplete,
    Fail,
}

impl ScenarioVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioVerdict::Pass => "pass",
            ScenarioVerdict::Skipped => "skipped",
            ScenarioVerdict::Informational => "informational",
            ScenarioVerdict::NonStrict => "non-strict",
            ScenarioVerdict::ClientSaturated => "client-saturated",
            ScenarioVerdict::Incomplete => "incomplete",
            ScenarioVerdict::Fail => "fail",
        }
    }
}

/// A limiter as observed from outside (load.behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limiter {
    FixedWindow,
    TokenBucket,
    SlidingLog,
    SlidingCounter,
    /// Capacity did not come back within the run.
    NotBack,
}

impl Limiter {
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::FixedWindow => "fixed window",
            Limiter::TokenBucket => "token bucket",
            Limiter::SlidingLog => "sliding log",
            Limiter::SlidingCounter => "sliding counter",
            Limiter::NotBack => "capacity did not come back within the run",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    pub check: String,
    pub verdict: Verdict,
    /// The key's label (plan#n), when it is about one key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub message: String,
    pub expected: String,
    pub actual: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KeyStats {
    /// `plan#n`: the n-th key of the plan given (keys are never shown).
    pub label: String,
    /// Position of the key in the target's key list.
    pub target_key: usize,
    pub scheduled: u64,
    pub sent: u64,
    pub admitted: u64,
    pub throttled: u64,
    /// Requests the spec forbids (a share of every scenario's), refused cleanly: expected.
    #[serde(default)]
    pub refused: u64,
    /// Answers other than 2xx and 429 (and the expected refusals), by status.
    pub other: BTreeMap<u16, u64>,
    /// No answer from the target (transport errors, timeouts).
    pub errors: u64,
    /// Never reached the target: this machine refused the socket (its limit, counted by
    /// load.generator, never by load.answers).
    pub refused_locally: u64,
    pub late: u64,
    pub unsent: u64,
    /// From the send to the answer's headers, ms: the target's latency (sends are on time or
    /// counted late apart).
    pub latency_ms: Percentiles,
    /// Windows the key was loaded (first to last send).
    pub windows_loaded: f64,
    /// Most admissions provably within one rolling window.
    pub rolling_max: u64,
    /// [low, high] admitted must lie in (sustained overload), or [0, high].
    pub admitted_bounds: [f64; 2],
    /// Seconds from the start to the first 429 sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_throttled_at: Option<f64>,
    /// The rate the scenario offered this key, as a multiple of the limit.
    #[serde(default)]
    pub rate: f64,
    /// The key's limit per window (its plan's; a custom one as the key stated it). 0 in
    /// records written before it was kept: the scenario's.
    #[serde(default)]
    pub limit: u64,
}

#[cfg(test)]
impl KeyStats {
    /// A key of a test: `label`, `admitted` of `sent` over `windows` windows of a limit of 60,
    /// offered `rate` times it, nothing else.
    pub fn of_test(label: &str, sent: u64, admitted: u64, windows: f64, rate: f64) -> KeyStats {
        KeyStats {
            label: label.into(),
            target_key: 0,
            scheduled: sent,
            sent,
            admitted,
            throttled: sent - admitted,
            refused: 0,
            other: Default::default(),
            errors: 0,
            refused_locally: 0,
            late: 0,
            unsent: 0,
            latency_ms: Percentiles::default(),
            windows_loaded: windows,
            rolling_max: admitted.min(60),
            admitted_bounds: [0.0, 60.0],
            first_throttled_at: None,
            rate,
            limit: 60,
        }
    }
}

impl KeyStats {
    /// Answers and failures of this key, retries included (every status, no answer, refused
    /// locally).
    pub fn records(&self) -> u64 {
        self.admitted
            + self.throttled
            + self.refused
            + self.other.values().sum::<u64>()
            + self.errors
            + self.refused_locally
    }
}

/// What one second (of a key, or of a fleet's keys together) counted.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Tally {
    pub offered: u64,
    pub sent: u64,
    pub admitted: u64,
    pub throttled: u64,
    /// Forbidden requests refused cleanly (expected).
    #[serde(default)]
    pub refused: u64,
    pub other: u64,
    pub errors: u64,
    /// Offered in this second but sent late or never, or refused a socket by this machine.
    pub failed_to_send: u64,
}

impl Tally {
    /// Both seconds' counts (shards of one run, or a retry past the run's last second).
    pub fn add(&mut self, o: &Tally) {
        self.offered += o.offered;
        self.sent += o.sent;
        self.admitted += o.admitted;
        self.throttled += o.throttled;
        self.refused += o.refused;
        self.other += o.other;
        self.errors += o.errors;
        self.failed_to_send += o.failed_to_send;
    }
}

/// One second of one key (scenarios of a few keys: the report draws each).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Second {
    pub t: u64,
    pub key: usize,
    #[serde(flatten)]
    pub n: Tally,
    /// The target's latency (send to answer) of the answers sent in this second, ms.
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// One second of a fleet, its keys together: what the report draws, in a size that does not
/// grow with the keys, and that shards add up exactly.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FleetSecond {
    pub t: u64,
    #[serde(flatten)]
    pub n: Tally,
    /// `admitting[c - 1]`: how many keys were admitted exactly c times in this second (the
    /// rest of the fleet, none).
    pub admitting: Vec<u64>,
}

impl FleetSecond {
    /// Both seconds' counts and keys.
    pub fn add(&mut self, o: &FleetSecond) {
        self.n.add(&o.n);
        if self.admitting.len() < o.admitting.len() {
            self.admitting.resize(o.admitting.len(), 0);
        }
        for (a, b) in self.admitting.iter_mut().zip(&o.admitting) {
            *a += b;
        }
    }

    /// One more key admitted `count` times in this second.
    pub fn admitting(&mut self, count: usize) {
        if count == 0 {
            return;
        }
        if self.admitting.len() < count {
            self.admitting.resize(count, 0);
        }
        self.admitting[count - 1] += 1;
    }
}

/// One answer's rate-limit headers, for the trace chart.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TracePoint {
    pub t: f64,
    pub key: usize,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining: Option<u64>,
    /// Seconds from the answer to X-RateLimit-Reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_in: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Generator {
    pub scheduled: u64,
    pub sent: u64,
    pub late: u64,
    pub unsent: u64,
    /// Requests per second the schedule asked for, and what was sent (first to last send).
    pub scheduled_rate: f64,
    pub achieved_rate: f64,
    pub peak_rate: f64,
    /// Worst lateness of a send, ms; from how late a send counted as late, and from how late
    /// the send loop's own lag withheld the verdict (`super::lateness`).
    pub max_late_ms: f64,
    pub late_ms: f64,
    pub lag_ms: f64,
    /// goose users: the ceiling on requests in flight; the most that were in flight at once.
    pub users: usize,
    pub peak_in_flight: usize,
    /// Late sends that waited for a free user (the in-flight ceiling held them back); the
    /// other late sends are the send loop's own lag, and of those `lagged` were later than
    /// `lag_ms`.
    pub late_at_ceiling: u64,
    pub lagged: u64,
    /// Requests this machine could not open a socket for (files, ports, buffers).
    pub local_refusals: u64,
    pub goose_requests: u64,
    pub saturated: bool,
    /// When saturated: which of the client's limits it met, with the figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_met: Option<String>,
}

/// Which of the client's limits a saturated run met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientLimit {
    /// This machine refused sockets (open files, ports, buffers).
    LocalSockets,
    /// Every user was busy: the in-flight ceiling.
    InFlightCeiling,
    /// Sends late while users were free: the send loop's own lag (a busy machine).
    SendLoopLag,
}

impl Generator {
    /// The limit a saturated run met; None when it held.
    pub fn client_limit(&self) -> Option<ClientLimit> {
        if !self.saturated {
            return None;
        }
        let lagging = self.lagged;
        let ceiling = self.late_at_ceiling + self.unsent;
        Some(if self.local_refusals >= ceiling.max(lagging) {
            ClientLimit::LocalSockets
        } else if ceiling >= lagging {
            ClientLimit::InFlightCeiling
        } else {
            ClientLimit::SendLoopLag
        })
    }

    /// Which limit of the client's a saturated run met, with its figure; None when it held.
    pub(super) fn limit_met(&self) -> Option<String> {
        Some(match self.client_limit()? {
            ClientLimit::LocalSockets => format!(
                "this machine refused {} sockets (open files, ports or buffers ran out): raise `ulimit -n`, or lower the rate",
                self.local_refusals
            ),
            ClientLimit::InFlightCeiling => format!(
                "the in-flight ceiling of {} requests was reached ({} sends waited for a free slot, {} never sent): answers were slower than {} / {:.1} per s; raise --max-in-flight or --request-timeout",
                self.users, self.late_at_ceiling, self.unsent, self.users, self.peak_rate
            ),
            ClientLimit::SendLoopLag => format!(
                "the send loop lagged: {} sends more than {:.0} ms late (a tenth of the window, at least 20 ms), by up to {:.0} ms, while at most {} of {} requests were in flight (this machine is too busy); lower --max-rate, or run --sequential",
                self.lagged, self.lag_ms, self.max_late_ms, self.peak_in_flight, self.users
            ),
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioResult {
    pub name: String,
    pub description: String,
    pub plan: String,
    pub class: String,
    pub shape: String,
    pub limit: u64,
    pub window_secs: f64,
    pub rate_multiple: f64,
    pub windows: f64,
    pub verdict: ScenarioVerdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Skipped because it runs in another shard of the same run (`load merge` puts it back).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub elsewhere: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<String>,
    /// The limiter `behaviour` names; the scheduler reads a fixed window's Reset as the
    /// moment the whole quota is back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limiter: Option<Limiter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<Generator>,
    /// The target's latency over the run's answers (send to answer), ms.
    pub latency_ms: Percentiles,
    pub keys: Vec<KeyStats>,
    /// Per key and second, for a scenario of a few keys (none for a fleet).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seconds: Vec<Second>,
    /// A fleet's seconds, its keys together (none for a scenario of a few keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fleet_seconds: Vec<FleetSecond>,
    pub trace: Vec<TracePoint>,
    pub findings: Vec<Finding>,
    pub goose_reports: Vec<String>,
    /// Over more than a few keys: the fleet summed up (`fleet.rs`), which the reports show
    /// instead of every key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetSummary>,
    /// The run's latencies, ms, as a histogram in its standard serialised form (V2, deflate,
    /// base64): shards of one run merge it without loss (`load::merge`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latency_histogram: String,
}

impl ScenarioResult {
    /// A fleet: its keys summed up (`FleetSecond`, `FleetSummary`), never drawn one by one.
    pub fn is_fleet(&self) -> bool {
        self.shape == crate::scenario::Shape::Fleet.as_str()
    }

    /// A scenario before it is judged: what it is, no figures, no findings, verdict pass.
    pub fn of(r: &crate::scenario::Scenario, class: &str) -> ScenarioResult {
        ScenarioResult {
            name: r.name.clone(),
            description: r.description.clone(),
            plan: r.plan.clone(),
            class: class.to_string(),
            shape: r.shape.as_str().into(),
            limit: 0,
            window_secs: 0.0,
            rate_multiple: r.rate,
            windows: r.windows,
            verdict: ScenarioVerdict::Pass,
            skipped: None,
            elsewhere: false,
            behaviour: None,
            limiter: None,
            generator: None,
            latency_ms: Percentiles::default(),
            keys: Vec::new(),
            seconds: Vec::new(),
            fleet_seconds: Vec::new(),
            trace: Vec::new(),
            findings: Vec::new(),
            goose_reports: Vec::new(),
            fleet: None,
            latency_histogram: String::new(),
        }
    }

    /// A scenario that did not run here: it cannot at this target, or another shard runs it.
    pub fn skipped(
        r: &crate::scenario::Scenario,
        class: &str,
        why: &crate::scenario::Skip,
    ) -> ScenarioResult {
        ScenarioResult {
            verdict: ScenarioVerdict::Skipped,
            skipped: Some(why.to_string()),
            elsewhere: why.ran_elsewhere(),
            ..ScenarioResult::of(r, class)
        }
    }
}

impl ScenarioResult {
    /// The target went away while this scenario ran: what was sent and answered stays in the
    /// figures, no rule is judged (a dead target is not a limiter that never gave capacity
    /// back), and the verdict says so.
    pub fn not_judged(&mut self, outage: &linkcert_run::outage::Outage) {
        self.incomplete(format!(
            "not judged: {}; check that the target is up and reachable, then run again",
            outage.sentence()
        ));
    }

    /// The target turned out broken while this scenario ran (it trickles, breaks off after a
    /// Content-Length, sends no HTTP: `outage::Diagnosis`): the sending stopped there. That is
    /// the target's failure, named; the rules that would need the rest of the run are not
    /// judged on the part it had.
    pub fn broken(&mut self, words: &str) {
        self.verdict = ScenarioVerdict::Fail;
        self.skipped = None;
        self.findings = vec![Finding {
            check: rule_id!("load.answers").id().into(),
            verdict: Verdict::Fail,
            key: None,
            message: format!(
                "the target is broken: {words}; sending stopped there, and no other rule is judged on what was sent before"
            ),
            expected: "2xx or 429".into(),
            actual: words.to_string(),
        }];
    }

    /// The run was asked to stop while this scenario ran: its figures stay, nothing is judged
    /// on the part it had.
    pub fn interrupted(&mut self, i: &linkcert_run::interrupt::Interrupted) {
        self.incomplete(format!("not judged: {}", i.sentence()));
    }

    fn incomplete(&mut self, why: String) {
        self.verdict = ScenarioVerdict::Incomplete;
        self.findings.clear();
        self.skipped = Some(why);
    }

    /// The scenario's verdict from its findings: any rule failed (the generator's saturation
    /// aside) fails it; then client saturated, non-strict, informational (naming the limiter
    /// is not), pass.
    pub fn roll_up(&mut self, findings: Vec<Finding>) {
        let saturated = self.generator.as_ref().is_some_and(|g| g.saturated);
        self.verdict = if findings
            .iter()
            .any(|f| f.verdict == Verdict::Fail && f.check != rule_id!("load.generator").id())
        {
            ScenarioVerdict::Fail
        } else if saturated {
            ScenarioVerdict::ClientSaturated
        } else if findings.iter().any(|f| f.verdict == Verdict::NonStrict) {
            ScenarioVerdict::NonStrict
        } else if findings.iter().any(|f| {
            f.verdict == Verdict::Informational && f.check != rule_id!("load.behaviour").id()
        }) {
            ScenarioVerdict::Informational
        } else {
            ScenarioVerdict::Pass
        };
        self.findings = findings;
    }
}

/// A fleet's figures summed up (`fleet.rs` computes them): per group of keys at one rate,
/// the worst keys, and per-second bands across keys.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FleetSummary {
    pub keys: usize,
    pub groups: Vec<Group>,
    /// The keys that fared worst (failed rules, or throttled under their limit), worst first.
    pub worst: Vec<Worst>,
    /// Per second: the spread across keys of what each key was admitted in it.
    pub bands: Vec<Band>,
}

/// Keys loaded at one rate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Group {
    /// The rate as a multiple of the limit.
    pub rate: f64,
    pub keys: usize,
    /// Keys with at least one 429.
    pub throttled_keys: usize,
    /// Admitted per window loaded over the limit, across the group's keys.
    pub admitted_to_limit: Spread,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Worst {
    pub label: String,
    pub why: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Band {
    pub t: u64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
}
