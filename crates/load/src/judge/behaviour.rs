//! load.behaviour: the limiter named from how capacity comes back after the first 429
//! (informational: the spec names no algorithm).

use linkcert_registry::rule_id;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use super::order::OrdF64;
use super::result::Limiter;
use super::rule::{Judge, KeyNotes, KeyRule, KeyView, Rule, Setup};
use crate::record::Record;
use linkcert_rate::headers as rate_headers;
use linkcert_rate::windows::{Learner, Model};
use linkcert_spec::verdict::Verdict;

/// What naming the limiter keeps of a key's answers, fed in send order.
pub(super) struct State {
    w: f64,
    /// How near an admission one window earlier must be to echo a readmission.
    tol: f64,
    /// Send time of the first 429.
    first_429: Option<f64>,
    /// Admissions after the first 429; those that echo one a window earlier.
    readmitted: u64,
    echoed: u64,
    /// Admission send times back to one window and `tol` ago; readmissions whose echo may
    /// still come (when `tol` exceeds the window).
    recent: VecDeque<f64>,
    waiting: VecDeque<f64>,
    /// Lengths of runs of consecutive admissions after the first 429 (length -> how many),
    /// and the run under way.
    runs: BTreeMap<usize, usize>,
    run: usize,
    /// Resets by receipt: (recv, order fed, Reset) of answers received after the latest send
    /// (a later answer may still come before them), released in that order to the reading of
    /// how Reset moves that `check`'s limiter.model makes too (`linkcert_rate::windows`).
    pending: BinaryHeap<Reverse<(OrdF64, u64, u64)>>,
    fed: u64,
    resets: Learner,
}

impl State {
    /// `rate`: requests per second the scenario sends (2 of its gaps widen the echo).
    pub fn new(w: f64, rate: f64) -> State {
        State {
            w,
            tol: 0.03 * w + 2.0 / rate.max(1e-9),
            first_429: None,
            readmitted: 0,
            echoed: 0,
            recent: VecDeque::new(),
            waiting: VecDeque::new(),
            runs: BTreeMap::new(),
            run: 0,
            pending: BinaryHeap::new(),
            fed: 0,
            resets: Learner::new(w),
        }
    }

    pub fn observe(&mut self, x: &Record) {
        self.resets(x);
        if x.throttled() && self.first_429.is_none() {
            self.first_429 = Some(x.sent);
        }
        let after = self.first_429.is_some();
        if !x.admitted() {
            if after && self.run > 0 {
                *self.runs.entry(self.run).or_default() += 1;
                self.run = 0;
            }
            return;
        }
        let (w, tol) = (self.w, self.tol);
        // An admission echoes a readmission one window later, within `tol`.
        let echoes = |a: f64, r: f64| {
            let t = r - w;
            a >= t - tol && a <= t + tol
        };
        self.recent.push_back(x.sent);
        let mut echoed = 0;
        self.waiting.retain(|&r| {
            if echoes(x.sent, r) {
                echoed += 1;
            }
            !echoes(x.sent, r) && x.sent <= r - w + tol
        });
        self.echoed += echoed;
        if after {
            self.run += 1;
            self.readmitted += 1;
            if self.recent.iter().any(|&a| echoes(a, x.sent)) {
                self.echoed += 1;
            } else if x.sent - w + tol >= x.sent {
                self.waiting.push_back(x.sent);
            }
        }
        while self.recent.front().is_some_and(|&a| a < x.sent - w - tol) {
            self.recent.pop_front();
        }
    }

    /// Steps of X-RateLimit-Reset in the order answers came: an answer received before this
    /// one was sent comes before any answer still to be fed.
    fn resets(&mut self, x: &Record) {
        if let Some(v) = rate_headers::parse_count(x.reset.as_deref()) {
            self.pending.push(Reverse((OrdF64(x.recv), self.fed, v)));
            self.fed += 1;
        }
        while let Some(Reverse((recv, _, _))) = self.pending.peek()
            && recv.0 <= x.sent
        {
            self.release();
        }
    }

    fn release(&mut self) {
        if let Some(Reverse((_, _, v))) = self.pending.pop() {
            self.resets.observe(Some(v));
        }
    }
}

/// The middle of sorted values held as value -> how many (`sorted[len / 2]`).
fn median<K: Copy>(counts: &BTreeMap<K, usize>) -> Option<K> {
    let len: usize = counts.values().sum();
    let mut seen = 0;
    for (k, c) in counts {
        seen += c;
        if seen > len / 2 {
            return Some(*k);
        }
    }
    None
}

/// Name the limiter from how capacity comes back after the first 429.
pub(super) fn name(mut st: State, n: u64, rolling: u64) -> Option<(Limiter, String)> {
    let first = st.first_429?;
    while !st.pending.is_empty() {
        st.release();
    }
    if st.readmitted == 0 {
        return Some((
            Limiter::NotBack,
            format!("{} (first 429 at {first:.2} s)", Limiter::NotBack.as_str()),
        ));
    }
    // Runs of consecutive admissions after a 429.
    if st.run > 0 {
        *st.runs.entry(st.run).or_default() += 1;
    }
    let runs: usize = st.runs.values().sum();
    let median_run = median(&st.runs).unwrap_or(0);
    let echo = st.echoed as f64 / st.readmitted as f64;
    let ratio = rolling as f64 / n as f64;
    let long_runs = median_run as f64 >= (n as f64 / 4.0).max(3.0);
    // How X-RateLimit-Reset moves: a fixed window holds it and jumps by W; a sliding log
    // moves it with its oldest admission (`Learner`: whole seconds tell them apart from 3 s).
    let reset_model = st.resets.finish();
    let limiter = if ratio > 1.05 && long_runs {
        Limiter::FixedWindow
    } else if ratio > 1.05 {
        Limiter::TokenBucket
    } else if let Model::NamedWindows { .. } = reset_model {
        Limiter::FixedWindow
    } else if reset_model == Model::Moving || echo >= 0.8 {
        Limiter::SlidingLog
    } else if long_runs {
        Limiter::FixedWindow
    } else {
        Limiter::SlidingCounter
    };
    let name = limiter.as_str();
    let text = format!(
        "{name}: after the first 429 ({first:.2} s) capacity came back in {runs} run(s) of \
         admissions (median {median_run}); {:.0}% of them echo an admission one window \
         earlier; at most {rolling} admitted in a rolling window (limit {n}){}",
        echo * 100.0,
        match reset_model {
            Model::NamedWindows { .. } => "; X-RateLimit-Reset stays put and moves by a window",
            Model::Moving => "; X-RateLimit-Reset moves by less than a window",
            Model::Unknown => "",
        }
    );
    Some((limiter, text))
}

/// load.behaviour: the limiter named from the first key's answers.
pub(super) struct Behaviour;

impl Rule for Behaviour {
    fn for_key(&self, s: &Setup) -> Option<Box<dyn KeyRule>> {
        let w = s.r.window.as_secs_f64();
        let rate = s.r.key_rate(s.key) * s.r.key_limit(s.key) as f64 / w;
        (s.key == 0).then(|| Box::new(State::new(w, rate)) as Box<dyn KeyRule>)
    }
}

impl KeyRule for State {
    fn observe(&mut self, x: &Record) {
        State::observe(self, x);
    }
    fn judge(self: Box<Self>, j: &mut Judge, view: &KeyView, notes: &mut KeyNotes) {
        let Some((limiter, text)) = name(*self, view.n, notes.rolling) else {
            return;
        };
        j.add(
            rule_id!("load.behaviour"),
            Verdict::Informational,
            view.label,
            text.clone(),
            String::new(),
            String::new(),
        );
        notes.limiter = Some((limiter, text));
    }
}
