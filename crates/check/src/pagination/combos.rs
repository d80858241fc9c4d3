//! Generated combinations of the list's parameters, as `proptest` strategies over indices into
//! the model's pools (so a case shrinks towards the first tag, the shortest term, no filter),
//! and the seeded runner that drives a property against the target, shrinking a failure to a
//! minimal combination by asking the target again (a bounded number of times).

use std::sync::Mutex;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use super::model::{META, Model};
use super::*;

/// A search term drawn from a name of the list: a piece of it, its case changed, perhaps a
/// meta string put inside.
#[derive(Clone, Debug)]
pub(super) struct TermSpec {
    pub(super) name: usize,
    pub(super) start: usize,
    pub(super) len: usize,
    /// 0 as written, 1 upper, 2 lower, 3 first letter swapped.
    pub(super) case: u8,
    /// (position, which META).
    pub(super) meta: Option<(usize, usize)>,
}

impl TermSpec {
    /// The term, never empty nor with surrounding blanks (whether a target trims is its own
    /// business, not a search rule); None when nothing is left.
    pub(super) fn render(&self, m: &Model) -> Option<String> {
        let (_, name) = m.named.get(self.name % m.named.len().max(1))?;
        let chars: Vec<char> = name.chars().collect();
        let start = self.start % chars.len().max(1);
        let rest = chars.len().saturating_sub(start).max(1);
        let len = 1 + self.len % rest;
        let mut piece: String = chars.iter().skip(start).take(len).collect();
        piece = match self.case {
            1 => piece.to_uppercase(),
            2 => piece.to_lowercase(),
            3 => swap_first(&piece),
            _ => piece,
        };
        if let Some((pos, which)) = self.meta {
            let at: Vec<char> = piece.chars().collect();
            let pos = pos % (at.len() + 1);
            let meta = META[which % META.len()];
            piece =
                at[..pos].iter().collect::<String>() + meta + &at[pos..].iter().collect::<String>();
        }
        let t = piece.trim().to_string();
        (!t.is_empty()).then_some(t)
    }
}

fn swap_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_uppercase() => f.to_lowercase().chain(c).collect(),
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Ids to filter by: picks into the model's pool (one past its end: an id no target has),
/// sent comma-separated or repeated (`ids=a&ids=b`, as the SDKs send it), among the forms the
/// target was seen to honour (`Model::ids_repeated`).
#[derive(Clone, Debug)]
pub(super) struct IdsSpec {
    pub(super) picks: Vec<usize>,
    pub(super) repeated: bool,
}

impl IdsSpec {
    /// The ids as asked, in order, duplicates kept.
    pub(super) fn ids(&self, m: &Model) -> Vec<String> {
        let n = m.named.len().max(1);
        self.picks
            .iter()
            .map(|p| match m.named.get(p % n) {
                Some((id, _)) if *p != usize::MAX => id.clone(),
                _ => MISSING_ID.to_string(),
            })
            .collect()
    }
}

/// The filters of a combination.
#[derive(Clone, Debug)]
pub(super) struct Filter {
    pub(super) term: Option<TermSpec>,
    pub(super) ids: Option<IdsSpec>,
}

/// A combination of every parameter of the list.
#[derive(Clone, Debug)]
pub(super) struct Combo {
    pub(super) filter: Filter,
    /// (field index, desc).
    pub(super) sort: Option<(usize, bool)>,
    pub(super) size: Option<u64>,
    pub(super) page: Option<u64>,
}

pub(super) fn term() -> impl Strategy<Value = TermSpec> {
    (
        0usize..10_000,
        // Mostly prefixes as written, half short: terms that find many tags.
        prop_oneof![2 => Just(0usize), 1 => 0usize..64],
        prop_oneof![0usize..3, 0usize..64],
        prop_oneof![2 => Just(0u8), 1 => 0u8..4],
        proptest::option::weighted(0.3, (0usize..64, 0usize..META.len())),
    )
        .prop_map(|(name, start, len, case, meta)| TermSpec {
            name,
            start,
            len,
            case,
            meta,
        })
}

/// A short prefix of a name as written: it finds that tag under any rule a target may
/// follow (contains, prefix, word prefix; any folding), and often others.
pub(super) fn plain_term() -> impl Strategy<Value = TermSpec> {
    (0usize..10_000, 0usize..4).prop_map(|(name, len)| TermSpec {
        name,
        start: 0,
        len,
        case: 0,
        meta: None,
    })
}

/// `max` distinct-or-not picks, at least `min`; one in twelve an unknown id.
pub(super) fn ids(min: usize, max: usize) -> impl Strategy<Value = IdsSpec> {
    (
        proptest::collection::vec(
            prop_oneof![11 => 0usize..10_000, 1 => Just(usize::MAX)],
            min..=max,
        ),
        proptest::bool::weighted(0.3),
    )
        .prop_map(|(picks, repeated)| IdsSpec { picks, repeated })
}

/// At least one filter.
pub(super) fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        plain_term().prop_map(|t| Filter {
            term: Some(t),
            ids: None
        }),
        ids(1, 5).prop_map(|i| Filter {
            term: None,
            ids: Some(i)
        }),
        // The ids hold the tag the term was drawn from, so the two meet.
        (plain_term(), ids(1, 5)).prop_map(|(t, mut i)| {
            i.picks.push(t.name);
            Filter {
                term: Some(t),
                ids: Some(i),
            }
        }),
    ]
}

pub(super) fn combo(size_max: u64) -> impl Strategy<Value = Combo> {
    let size = prop_oneof![3 => 1u64..=10, 1 => 1..=size_max.max(1), 1 => Just(size_max.max(1))];
    (
        proptest::option::of(term()),
        proptest::option::of(ids(1, 6)),
        proptest::option::weighted(0.7, (0usize..4, any::<bool>())),
        proptest::option::weighted(0.8, size),
        proptest::option::weighted(0.6, prop_oneof![Just(1u64), 2u64..=4]),
    )
        .prop_map(|(term, ids, sort, size, page)| Combo {
            filter: Filter { term, ids },
            sort,
            size,
            page,
        })
}

/// What a case came to.
pub(super) enum Judged {
    Held,
    /// Refused cleanly, throttled, lost, or outside what the model can predict.
    Unjudged,
    Broke(Box<Failure>),
}

/// A broken relation: what was expected, what came, and the exchange that shows it.
pub(super) struct Failure {
    pub(super) expected: String,
    pub(super) actual: String,
    pub(super) exchange: Option<Exchange>,
}

impl Judged {
    pub(super) fn broke(expected: String, actual: String, x: Option<&Exchange>) -> Judged {
        Judged::Broke(Box::new(Failure {
            expected,
            actual,
            exchange: x.cloned(),
        }))
    }
}

/// Cases per property, shrink steps (each one more request or few).
const SHRINK_STEPS: u32 = 24;

/// A runner seeded from the run's seed and the property (`salt`): `--seed N` replays it.
fn runner(seed: u64, salt: u64, cases: u32) -> TestRunner {
    let config = Config {
        cases,
        max_shrink_iters: SHRINK_STEPS,
        failure_persistence: None,
        ..Config::default()
    };
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let v = pick(
            seed,
            salt.wrapping_mul(8).wrapping_add(i as u64),
            usize::MAX,
        ) as u64;
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Runs `jobs` (each blocking on the runtime, as `drive` does) on at most `workers` scoped
/// threads; this worker is handed over to the runtime meanwhile.
pub(super) fn side_by_side(workers: usize, jobs: &[Box<dyn Fn() + Send + Sync + '_>]) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take = || jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            for _ in 0..workers.clamp(1, jobs.len().max(1)) {
                s.spawn(|| {
                    while let Some(job) = take() {
                        job();
                    }
                });
            }
        });
    });
}

/// Runs `judge` on `cases` cases of `strategy`; a failure is shrunk (the target asked again at
/// each step) and the minimal one recorded against `id`. `judge` blocks on the runtime.
pub(super) fn drive<T: Clone + std::fmt::Debug>(
    l: &Lister<'_>,
    id: Check,
    salt: u64,
    cases: u32,
    strategy: impl Strategy<Value = T>,
    judge: &dyn Fn(&T) -> Judged,
) {
    let mut runner = runner(l.ctx.opts.seed, salt, cases.min(l.ctx.opts.cases).max(1));
    // The last failure seen: the minimal case's, once shrinking ends.
    let last: Mutex<Option<Failure>> = Mutex::new(None);
    let result = tokio::task::block_in_place(|| {
        runner.run(&strategy, |case| match judge(&case) {
            Judged::Held => {
                l.ctx.rec.pass(id, &l.label);
                Ok(())
            }
            Judged::Unjudged => Ok(()),
            Judged::Broke(f) => {
                let why = f.actual.clone();
                *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(*f);
                Err(TestCaseError::fail(why))
            }
        })
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(..)) => {
            if let Some(f) = last.lock().unwrap_or_else(|p| p.into_inner()).take() {
                l.ctx
                    .rec
                    .violation(id, &l.label, f.expected, f.actual, f.exchange.as_ref());
            }
        }
        Err(TestError::Abort(why)) => {
            l.ctx
                .rec
                .skip(id, &l.label, format!("case generation gave up: {why}"));
        }
    }
}

impl Filter {
    /// The query of a filter: (name, value) pairs, ids comma-separated or repeated.
    pub(super) fn params(&self, m: &Model) -> Params {
        let mut p = Vec::new();
        if let (Some(name), Some(t)) = (
            &m.names.search,
            self.term.as_ref().and_then(|t| t.render(m)),
        ) {
            p.push((name.clone(), t));
        }
        if let (Some(name), Some(spec)) = (&m.names.ids, &self.ids) {
            let ids = spec.ids(m);
            // The form the target was seen to honour (`spec.repeated` when it honours both).
            if m.ids_repeated(spec.repeated).unwrap_or(false) {
                p.extend(ids.into_iter().map(|i| (name.clone(), i)));
            } else {
                p.push((name.clone(), ids.join(",")));
            }
        }
        p
    }

    /// The term and ids a filter renders to (ids as asked, unknown ones included).
    pub(super) fn parts(&self, m: &Model) -> (Option<String>, Option<Vec<String>>) {
        let term = self
            .term
            .as_ref()
            .and_then(|t| t.render(m))
            .filter(|_| m.names.search.is_some());
        let ids = self
            .ids
            .as_ref()
            .filter(|_| m.names.ids.is_some())
            .map(|i| i.ids(m));
        (term, ids)
    }
}

impl Combo {
    /// The whole query, page and page size under the names given (when the spec has them).
    pub(super) fn params(&self, m: &Model, size: Option<&str>, page: Option<&str>) -> Params {
        let mut p = self.filter.params(m);
        if let (Some(s), Some((field, desc))) = (&m.names.sorting, m.sort_of(self.sort)) {
            p.extend(s.params(&field, desc));
        }
        if let (Some(n), Some(v)) = (size, self.size) {
            p.push((n.to_string(), v.to_string()));
        }
        if let (Some(n), Some(v)) = (page, self.page) {
            p.push((n.to_string(), v.to_string()));
        }
        p
    }
}
