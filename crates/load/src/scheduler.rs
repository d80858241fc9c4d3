//! When each scenario runs. Scenarios whose keys do not overlap run at the same time, as long
//! as their combined peak rate stays within the client's budget (`Mode::max_rate`); those
//! sharing a key run in the order given, each once the key's quota is back (`QuotaSeen`,
//! read from the target's own answers). Sequential mode runs them one at a time, in order.
//! A scenario the client could not hold beside others runs again alone (`Job::alone`), so
//! running together never changes a verdict. The same rule (`startable`) lays out the
//! estimated plan and drives the real run.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::judge::Limiter;
use super::record::Record;
use linkcert_rate::headers as rate_headers;

/// Added to every cool-down: the answer's headers are read a little after the server decided.
const MARGIN_SECS: f64 = 0.25;

/// One scenario of the plan.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub name: String,
    /// Labels (plan#n) of its keys; empty when it cannot run.
    pub keys: Vec<String>,
    /// Estimated start and end, seconds from the start of the run.
    pub start: f64,
    pub end: f64,
    /// What really happened (seconds from the start of the run), once it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ran: Option<(f64, f64)>,
    /// Why it does not run, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Why it ran a second time, alone (its verdict is the second run's), and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reran: Option<(f64, f64)>,
}

/// The schedule of a load run, estimated before it starts.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub sequential: bool,
    /// The combined peak rate (requests per second) of scenarios run together.
    pub max_rate: f64,
    pub steps: Vec<Step>,
    /// Estimated wall time of the whole run.
    pub estimated_secs: f64,
    /// The longest chain of scenarios on one key, with the cool-downs between them.
    pub longest_key_chain_secs: f64,
}

/// What the scheduler needs of a runnable scenario.
#[derive(Clone, Debug)]
pub struct Job {
    /// Position in the plan.
    pub step: usize,
    /// Positions of its keys in the target's key list.
    pub keys: Vec<usize>,
    /// Estimated duration of its run.
    pub estimate: Duration,
    /// Its rate class's window: the estimated cool-down after it.
    pub window: Duration,
    /// Its schedule's peak rate, requests per second.
    pub rate: f64,
    /// Runs with nothing beside it (a second run after the client saturated beside others).
    pub alone: bool,
}

/// How scenarios may share the run.
#[derive(Clone, Copy, Debug)]
pub struct Mode {
    /// One at a time, in order (`--sequential`).
    pub sequential: bool,
    /// Scenarios together peak at most at this many requests per second (`--max-rate`); one
    /// scenario alone may exceed it.
    pub max_rate: f64,
}

/// What runs now.
#[derive(Clone, Debug, Default)]
pub struct Running {
    pub keys: BTreeSet<usize>,
    pub count: usize,
    /// Combined peak rate of the running scenarios.
    pub rate: f64,
    /// One of them runs alone.
    pub alone: bool,
}

impl Running {
    pub fn start(&mut self, job: &Job) {
        self.keys.extend(job.keys.iter().copied());
        self.count += 1;
        self.rate += job.rate;
        self.alone |= job.alone;
    }
    pub fn end(&mut self, job: &Job) {
        for k in &job.keys {
            self.keys.remove(k);
        }
        self.count = self.count.saturating_sub(1);
        self.rate = if self.count == 0 {
            0.0
        } else {
            (self.rate - job.rate).max(0.0)
        };
        self.alone &= !job.alone && self.count > 0;
    }
}

/// The pending jobs (positions in `jobs`, in order) that may start now: none of their keys is
/// busy or wanted by an earlier pending job, so a key's scenarios keep their order, and the
/// combined peak rate stays within `mode.max_rate` (the first of a group may exceed it alone).
/// A job that runs alone waits until nothing runs, and nothing starts beside it or after it
/// until it has started. In sequential mode only the first pending job, when nothing runs.
pub fn startable(pending: &[usize], jobs: &[Job], now: &Running, mode: Mode) -> Vec<usize> {
    if mode.sequential || now.alone {
        return match pending.first() {
            Some(&j) if now.count == 0 => vec![j],
            _ => Vec::new(),
        };
    }
    let mut claimed = now.keys.clone();
    let mut rate = now.rate;
    let mut out: Vec<usize> = Vec::new();
    for &j in pending {
        let job = &jobs[j];
        if job.alone {
            if now.count == 0 && out.is_empty() {
                out.push(j);
            }
            break;
        }
        let first = now.count == 0 && out.is_empty();
        if job.keys.iter().all(|k| !claimed.contains(k))
            && (first || rate + job.rate <= mode.max_rate)
        {
            out.push(j);
            rate += job.rate;
        }
        claimed.extend(job.keys.iter().copied());
    }
    out
}

impl Plan {
    /// Lay the jobs out with their estimated durations; `steps` holds every scenario (those
    /// that cannot run carry their reason and are left as they are).
    pub fn estimate(mut steps: Vec<Step>, jobs: &[Job], mode: Mode) -> Plan {
        let mut pending: Vec<usize> = (0..jobs.len()).collect();
        let mut now_running = Running::default();
        let mut free_at: HashMap<usize, f64> = HashMap::new();
        let mut running: Vec<(f64, usize)> = Vec::new();
        let mut now = 0.0f64;
        let mut chain: HashMap<usize, f64> = HashMap::new();
        loop {
            for j in startable(&pending, jobs, &now_running, mode) {
                let job = &jobs[j];
                pending.retain(|p| *p != j);
                let start = job
                    .keys
                    .iter()
                    .filter_map(|k| free_at.get(k))
                    .fold(now, |a, b| a.max(*b));
                let end = start + job.estimate.as_secs_f64();
                now_running.start(job);
                running.push((end, j));
                if let Some(s) = steps.get_mut(job.step) {
                    s.start = start;
                    s.end = end;
                }
            }
            let Some(pos) =
                (0..running.len()).min_by(|a, b| running[*a].0.total_cmp(&running[*b].0))
            else {
                break;
            };
            let (end, j) = running.swap_remove(pos);
            now = end;
            let job = &jobs[j];
            let cool = job.window.as_secs_f64() + MARGIN_SECS;
            now_running.end(job);
            for k in &job.keys {
                free_at.insert(*k, end + cool);
                // The key's own chain: its runs and the cool-downs between them.
                let c = chain.entry(*k).or_insert(0.0);
                if *c > 0.0 {
                    *c += cool;
                }
                *c += job.estimate.as_secs_f64();
            }
        }
        let estimated_secs = steps.iter().map(|s| s.end).fold(0.0, f64::max);
        let longest_key_chain_secs = chain.values().copied().fold(0.0, f64::max);
        Plan {
            sequential: mode.sequential,
            max_rate: mode.max_rate,
            steps,
            estimated_secs,
            longest_key_chain_secs,
        }
    }

    /// The scenarios estimated to run at the same time as step `i`.
    pub fn together(&self, i: usize) -> Vec<&str> {
        let Some(me) = self.steps.get(i).filter(|s| s.skipped.is_none()) else {
            return Vec::new();
        };
        self.steps
            .iter()
            .enumerate()
            .filter(|(j, s)| *j != i && s.skipped.is_none() && s.start < me.end && me.start < s.end)
            .map(|(_, s)| s.name.as_str())
            .collect()
    }
}

impl Plan {
    /// The schedule section of load.md: estimated and real start and end per scenario.
    pub fn markdown(&self) -> String {
        let mut o = format!(
            "\n## Schedule\n\n{}; estimated {}, longest key chain {}.\n\n\
             | scenario | keys | estimated | ran |\n|---|---|---|---|\n",
            if self.sequential {
                "One scenario at a time (`--sequential`)".to_string()
            } else {
                format!(
                    "Scenarios on different keys together, at most {} requests/s at their combined peak (`--max-rate`); a key's scenarios in order, each once its quota was back",
                    self.max_rate
                )
            },
            mmss(self.estimated_secs),
            mmss(self.longest_key_chain_secs)
        );
        for s in &self.steps {
            if let Some(why) = &s.skipped {
                o.push_str(&format!("| {} | - | skipped: {why} | - |\n", s.name));
                continue;
            }
            let mut ran = s
                .ran
                .map_or("-".to_string(), |(a, b)| format!("{}-{}", mmss(a), mmss(b)));
            if let Some(why) = &s.rerun {
                let when = s
                    .reran
                    .map_or(String::new(), |(a, b)| format!(" {}-{}", mmss(a), mmss(b)));
                ran.push_str(&format!("; again, alone{when}: {why}"));
            }
            o.push_str(&format!(
                "| {} | {} | {}-{} | {ran} |\n",
                s.name,
                crate::judge::fleet::labels(&s.keys),
                mmss(s.start),
                mmss(s.end)
            ));
        }
        o
    }
}

fn mmss(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "plan ({}): estimated wall time {} (longest key chain {})",
            if self.sequential {
                "sequential, one scenario at a time".to_string()
            } else {
                format!(
                    "scenarios on different keys run together, at most {} requests/s combined",
                    self.max_rate
                )
            },
            mmss(self.estimated_secs),
            mmss(self.longest_key_chain_secs)
        )?;
        for (i, s) in self.steps.iter().enumerate() {
            if let Some(why) = &s.skipped {
                writeln!(f, "  {:<28} skipped: {why}", s.name)?;
                continue;
            }
            let with = self.together(i);
            writeln!(
                f,
                "  {}-{}  {:<28} on {}{}",
                mmss(s.start),
                mmss(s.end),
                s.name,
                crate::judge::fleet::labels(&s.keys),
                if with.is_empty() {
                    String::new()
                } else {
                    format!("  (with {})", with.join(", "))
                }
            )?;
        }
        Ok(())
    }
}

/// What one key's answers said about its quota, folded as they come (`observe`), so that
/// `back` tells when the key has its whole quota back after the run.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuotaSeen {
    last_admitted: Option<f64>,
    last_answer: f64,
    promised: Option<f64>,
}

impl QuotaSeen {
    /// One of the key's records; `wall0`: UTC epoch seconds of the run's t = 0.
    pub fn observe(&mut self, r: &Record, wall0: f64) {
        if r.status.is_none() {
            return;
        }
        self.last_answer = self.last_answer.max(r.recv);
        if r.admitted() {
            self.last_admitted = Some(self.last_admitted.map_or(r.recv, |t| t.max(r.recv)));
        }
        // What the answer says, in the run's seconds.
        if let Some(t) = r.quota_back(wall0).latest() {
            let t = t - wall0;
            self.promised = Some(self.promised.map_or(t, |p: f64| p.max(t)));
        }
    }

    /// When the key has its whole quota back, read from the target's own answers; `t0`: the
    /// run's t = 0. An admission holds quota for at most one window, so the quota is back one
    /// window after the last 2xx; a limiter observed to be a fixed window gives it all back at
    /// its Reset instead. A later Reset or Retry-After the target named is waited for too, but
    /// never more than two windows past its last answer (a Reset in milliseconds would
    /// otherwise be years away).
    pub fn back(&self, t0: Instant, window: Duration, limiter: Option<Limiter>) -> Instant {
        let w = window.as_secs_f64();
        let held = self.last_admitted.map(|t| t + w);
        let back = match (limiter, self.promised) {
            // Reset is in whole seconds: one more for its rounding.
            (Some(Limiter::FixedWindow), Some(p)) => Some(p + 1.0),
            (_, p) => match (held, p) {
                (Some(h), Some(p)) => Some(h.max(p)),
                (h, p) => h.or(p),
            },
        };
        let cap = self.last_answer + 2.0 * w + rate_headers::SLACK_SECS;
        let secs = back.map_or(0.0, |b| b.min(cap) + MARGIN_SECS);
        t0 + Duration::from_secs_f64(secs.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;

    fn job(step: usize, keys: &[usize], secs: u64) -> Job {
        Job {
            step,
            keys: keys.to_vec(),
            estimate: Duration::from_secs(secs),
            window: Duration::from_secs(60),
            rate: 10.0,
            alone: false,
        }
    }

    const TOGETHER: Mode = Mode {
        sequential: false,
        max_rate: 1000.0,
    };
    const SEQUENTIAL: Mode = Mode {
        sequential: true,
        max_rate: 1000.0,
    };

    fn running(jobs: &[Job], which: &[usize]) -> Running {
        let mut r = Running::default();
        for &j in which {
            r.start(&jobs[j]);
        }
        r
    }

    fn steps(n: usize) -> Vec<Step> {
        (0..n)
            .map(|i| Step {
                name: format!("s{i}"),
                keys: Vec::new(),
                start: 0.0,
                end: 0.0,
                ran: None,
                skipped: None,
                rerun: None,
                reran: None,
            })
            .collect()
    }

    #[test]
    fn disjoint_keys_run_together_and_a_shared_key_waits_its_quota() {
        // s0 on key 0, s1 on key 1, s2 on key 0 again, s3 on keys 0 and 1.
        let jobs = [
            job(0, &[0], 100),
            job(1, &[1], 150),
            job(2, &[0], 30),
            job(3, &[0, 1], 20),
        ];
        let p = Plan::estimate(steps(4), &jobs, TOGETHER);
        let at = |i: usize| (p.steps[i].start, p.steps[i].end);
        assert_eq!(at(0), (0.0, 100.0));
        assert_eq!(at(1), (0.0, 150.0));
        // Key 0 free at 100 + 60.25.
        assert_eq!(at(2), (160.25, 190.25));
        // Both keys: key 0 again one window after s2.
        assert_eq!(at(3), (250.5, 270.5));
        assert_eq!(p.together(0), vec!["s1"]);
        assert!(p.together(3).is_empty());
        assert_eq!(p.estimated_secs, 270.5);
        assert_eq!(p.longest_key_chain_secs, 270.5);

        let seq = Plan::estimate(steps(4), &jobs, SEQUENTIAL);
        assert_eq!(seq.steps[1].start, 100.0, "one at a time, in order");
        assert_eq!(seq.steps[2].start, 250.0);
        // s3 waits for key 0's quota: one window after s2.
        assert_eq!(seq.steps[3].start, 340.25);
        assert_eq!(seq.estimated_secs, 360.25);
    }

    #[test]
    fn a_later_scenario_never_overtakes_an_earlier_one_on_its_key() {
        let jobs = [job(0, &[0], 10), job(1, &[0, 1], 10), job(2, &[1], 10)];
        // s1 waits for key 0; s2 must not take key 1 ahead of it.
        let busy = running(&jobs, &[0]);
        assert_eq!(
            startable(&[1, 2], &jobs, &busy, TOGETHER),
            Vec::<usize>::new()
        );
        let idle = Running::default();
        assert_eq!(startable(&[1, 2], &jobs, &idle, TOGETHER), vec![1]);
        let mut other = idle.clone();
        other.count = 1;
        assert_eq!(
            startable(&[1, 2], &jobs, &other, SEQUENTIAL),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn together_the_combined_rate_stays_within_the_budget_and_a_rerun_runs_alone() {
        let mut jobs = vec![job(0, &[0], 10), job(1, &[1], 10), job(2, &[2], 10)];
        jobs[0].rate = 600.0;
        jobs[1].rate = 300.0;
        jobs[2].rate = 200.0;
        let mode = Mode {
            sequential: false,
            max_rate: 1000.0,
        };
        let idle = Running::default();
        // 600 + 300 fit, 200 more would not: s2 waits.
        assert_eq!(startable(&[0, 1, 2], &jobs, &idle, mode), vec![0, 1]);
        // Alone, one scenario may exceed the budget.
        jobs[2].rate = 5000.0;
        assert_eq!(startable(&[2, 0], &jobs, &idle, mode), vec![2]);
        // When s1 ends, s2 (200) fits beside s0.
        jobs[2].rate = 200.0;
        let mut now = running(&jobs, &[0, 1]);
        now.end(&jobs[1]);
        assert_eq!(startable(&[2], &jobs, &now, mode), vec![2]);
        // A job to run alone waits for everything to end, and holds back those after it.
        jobs[1].alone = true;
        assert_eq!(startable(&[1, 2], &jobs, &now, mode), Vec::<usize>::new());
        assert_eq!(startable(&[1, 2], &jobs, &idle, mode), vec![1]);
        let alone = running(&jobs, &[1]);
        assert_eq!(startable(&[2], &jobs, &alone, mode), Vec::<usize>::new());
    }

    fn answer(recv: f64, status: u16, reset: Option<String>, retry_after: Option<&str>) -> Record {
        Record {
            sent: recv,
            recv,
            status: Some(status),
            limit: Some("60".into()),
            remaining: Some("0".into()),
            reset,
            retry_after: retry_after.map(str::to_string),
            claimed: recv,
            ..Record::slot(0, 0, recv)
        }
    }

    fn back_secs(records: Vec<Record>, limiter: Option<Limiter>) -> f64 {
        let wall0 = 1_800_000_000.0;
        let mut seen = QuotaSeen::default();
        for r in &records {
            seen.observe(r, wall0);
        }
        let t0 = Instant::now();
        seen.back(t0, Duration::from_secs(60), limiter)
            .saturating_duration_since(t0)
            .as_secs_f64()
    }

    #[test]
    fn the_quota_is_back_when_the_targets_answers_say_so() {
        let at = |secs: f64| Some(format!("{}", (1_800_000_000.0 + secs) as u64));
        let answers = || {
            vec![
                answer(10.0, 200, at(15.0), None),
                answer(11.0, 200, at(15.0), None),
                answer(12.0, 429, at(40.0), Some("28")),
            ]
        };
        let near = |a: f64, b: f64| (a - b).abs() < 1e-6;
        // Any limiter: one window after the last admission.
        let got = back_secs(answers(), Some(Limiter::SlidingLog));
        assert!(near(got, 71.25), "{got}");
        // A fixed window gives everything back at its Reset (plus a second of rounding).
        let got = back_secs(answers(), Some(Limiter::FixedWindow));
        assert!(near(got, 41.25), "{got}");
        // A target that asks for longer is waited for, but not beyond two windows.
        let mut late = answers();
        late.push(answer(13.0, 429, at(100.0), Some("87")));
        let got = back_secs(late, None);
        assert!(near(got, 100.25), "{got}");
        let mut millis = answers();
        millis.push(answer(13.0, 429, Some("1800000100000000".into()), None));
        let got = back_secs(millis, None);
        assert!(near(got, 13.0 + 120.0 + 2.0 + 0.25), "{got}");
        // A key that was never answered has nothing to wait for.
        assert!(back_secs(Vec::new(), None) < 0.01);
    }
}
