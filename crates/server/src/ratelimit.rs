//! The reference server's limiter: an exact sliding log per key and rate class.
//!
//! Each (key, class) keeps the instants of the requests it admitted within the last window.
//! A request is admitted while fewer than `limit` remain in the window, so no rolling window
//! of the class's length ever holds more than `limit` admissions. The oldest entry's expiry is
//! when quota next frees: that is X-RateLimit-Reset, and, once exhausted, Retry-After (their
//! units and rounding: `linkcert_rate::headers`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

pub use linkcert_rate::headers::RateHeaders;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Admitted {
        limit: u64,
        remaining: u64,
        /// When the oldest admission in the window expires.
        frees_at: Instant,
    },
    Throttled {
        limit: u64,
        frees_at: Instant,
    },
}

impl Decision {
    /// The headers this decision sends, read off the wall clock `wall` at `now`.
    pub fn headers(&self, now: Instant, wall: SystemTime) -> RateHeaders {
        let (limit, remaining, frees_at, throttled) = match *self {
            Decision::Admitted {
                limit,
                remaining,
                frees_at,
            } => (limit, remaining, frees_at, false),
            Decision::Throttled { limit, frees_at } => (limit, 0, frees_at, true),
        };
        let wait = frees_at.saturating_duration_since(now);
        RateHeaders::new(limit, remaining, wait, wall, throttled)
    }
}

/// One sliding log per (key, rate class); the set is fixed at start, so no map lock is needed.
pub struct Limiter {
    classes: usize,
    logs: Vec<Mutex<VecDeque<Instant>>>,
    admitted: Vec<AtomicU64>,
}

impl Limiter {
    pub fn new(keys: usize, classes: usize) -> Limiter {
        Limiter {
            classes,
            logs: (0..keys * classes)
                .map(|_| Mutex::new(VecDeque::new()))
                .collect(),
            admitted: (0..keys).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Decide on one request of `key` in `class`; `limit` per `window`.
    pub fn check(
        &self,
        key: usize,
        class: usize,
        limit: u64,
        window: Duration,
        now: Instant,
    ) -> Decision {
        let Some(slot) = self.logs.get(key * self.classes + class) else {
            return Decision::Throttled {
                limit,
                frees_at: now + window,
            };
        };
        // A poisoned lock only means another request panicked mid-update; the log is still
        // a list of instants, so keep using it.
        let mut log = slot.lock().unwrap_or_else(|p| p.into_inner());
        while log
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= window)
        {
            log.pop_front();
        }
        let used = log.len() as u64;
        if used < limit {
            log.push_back(now);
            if let Some(counter) = self.admitted.get(key) {
                counter.fetch_add(1, Ordering::Relaxed);
            }
            let oldest = log.front().copied().unwrap_or(now);
            Decision::Admitted {
                limit,
                remaining: limit - used - 1,
                frees_at: oldest + window,
            }
        } else {
            let oldest = log.front().copied().unwrap_or(now);
            Decision::Throttled {
                limit,
                frees_at: oldest + window,
            }
        }
    }

    /// Requests admitted so far for a key, all classes together.
    pub fn admitted(&self, key: usize) -> u64 {
        self.admitted
            .get(key)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_more_than_the_limit_in_any_rolling_window() {
        let l = Limiter::new(1, 1);
        let w = Duration::from_secs(10);
        let t0 = Instant::now();
        let mut admitted = Vec::new();
        // One request every 250 ms for 40 s, limit 5 per 10 s.
        for i in 0..160u64 {
            let now = t0 + Duration::from_millis(250 * i);
            if matches!(l.check(0, 0, 5, w, now), Decision::Admitted { .. }) {
                admitted.push(now);
            }
        }
        for (i, t) in admitted.iter().enumerate() {
            let in_window = admitted[i..].iter().filter(|u| **u < *t + w).count();
            assert!(
                in_window <= 5,
                "{in_window} admissions within 10 s of {t:?}"
            );
        }
        assert_eq!(admitted.len(), 20, "5 per window over 4 windows");
        assert_eq!(l.admitted(0), 20);
    }

    #[test]
    fn remaining_falls_and_retry_after_covers_the_wait() {
        let l = Limiter::new(2, 1);
        let w = Duration::from_secs(60);
        let t0 = Instant::now();
        let wall = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000);
        for expect in [2, 1, 0] {
            match l.check(0, 0, 3, w, t0) {
                Decision::Admitted { remaining, .. } => assert_eq!(remaining, expect),
                d => panic!("{d:?}"),
            }
        }
        let later = t0 + Duration::from_millis(20_500);
        let d = l.check(0, 0, 3, w, later);
        let h = d.headers(later, wall);
        assert!(matches!(d, Decision::Throttled { .. }));
        // 39.5 s left: Retry-After rounds up to 40, Reset is the wall clock plus that.
        assert_eq!(h.retry_after, Some(40));
        assert_eq!(h.reset_epoch, 1_000_040);
        assert_eq!(h.remaining, 0);
        // Another key is untouched.
        assert!(matches!(
            l.check(1, 0, 3, w, later),
            Decision::Admitted { remaining: 2, .. }
        ));
        // Once the window has passed, the first key is admitted again.
        assert!(matches!(
            l.check(0, 0, 3, w, t0 + w),
            Decision::Admitted { .. }
        ));
    }

    #[test]
    fn concurrent_clients_never_get_more_than_the_limit() {
        let l = std::sync::Arc::new(Limiter::new(1, 1));
        let w = Duration::from_secs(3600);
        let admitted = std::sync::Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..64)
            .map(|_| {
                let (l, a) = (l.clone(), admitted.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        if matches!(
                            l.check(0, 0, 600, w, Instant::now()),
                            Decision::Admitted { .. }
                        ) {
                            a.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(admitted.load(Ordering::Relaxed), 600);
    }
}
