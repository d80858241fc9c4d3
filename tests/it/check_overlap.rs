//! A far target's round trips overlap: the requests of a family that do not depend on each
//! other (credential mutations, renders, list relations, the checks of `http`) are in flight
//! together, never more than twice `--concurrency` and two more (the checks a family runs
//! beside its largest group); in front of both implementations, each request held 20 ms, and still
//! nothing fails. What is counted is what the proxy saw, not how long the run took.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::broken::{Defect, broken_on, failed, side_by_side};
use linkcert::check::{self, CheckOptions};

const CONCURRENCY: usize = 3;

#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    peak: AtomicUsize,
    total: AtomicUsize,
}

fn counted(c: Arc<InFlight>) -> Defect {
    let after = c.clone();
    let mut d = Defect::before(move |_| {
        let n = c.now.fetch_add(1, Ordering::SeqCst) + 1;
        c.peak.fetch_max(n, Ordering::SeqCst);
        c.total.fetch_add(1, Ordering::SeqCst);
    });
    d.after = Some(Box::new(move |_, _| {
        after.now.fetch_sub(1, Ordering::SeqCst);
    }));
    d.hold = Some(Duration::from_millis(20));
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_requests_overlap_within_the_bound() {
    let runs = side_by_side(|imp| async move {
        let seen = Arc::new(InFlight::default());
        let b = broken_on(imp, 6.0, counted(seen.clone())).await;
        let mut peaks = Vec::new();
        for family in ["auth", "pagination", "http", "qr"] {
            seen.peak.store(0, Ordering::SeqCst);
            let opts = CheckOptions {
                seed: 7,
                cases: 24,
                concurrency: CONCURRENCY,
                only: vec![family.to_string()],
                ..CheckOptions::default()
            };
            let r = check::run(crate::common::spec(), b.target(), opts)
                .await
                .expect("the runner runs");
            assert!(
                failed(&r).is_empty(),
                "{imp:?} {family}: {:?}\n{}",
                failed(&r),
                r.summary()
            );
            peaks.push((family, seen.peak.load(Ordering::SeqCst)));
        }
        (imp, peaks, seen.total.load(Ordering::SeqCst))
    })
    .await;
    for (imp, peaks, total) in runs {
        eprintln!("{imp:?}: peak requests in flight {peaks:?} over {total} requests");
        for (family, peak) in peaks {
            assert!(
                peak >= CONCURRENCY,
                "{imp:?} {family}: at most {peak} in flight: its requests did not overlap"
            );
            assert!(
                peak <= 2 * CONCURRENCY + 2,
                "{imp:?} {family}: {peak} in flight, more than twice --concurrency {CONCURRENCY} and two"
            );
        }
    }
}
