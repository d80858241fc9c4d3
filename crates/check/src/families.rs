//! The families of checks, declared once: `FAMILIES` says how and in which order a run goes
//! through each. A family's name is the part of its checks' ids before the dot; the registry
//! reads its list of families off those ids (`registry::FAMILIES`). Adding a family is its
//! module under `crates/check/src/`, its checks in `crates/registry/src/checks.rs` and one line here; a
//! family declared on one side only does not compile (the `const` check below).

use std::future::Future;
use std::pin::Pin;

use super::{
    Ctx, auth, http, limiter, pagination, partners, qr, ratelimit, sequence, status, transport,
};
use linkcert_registry::{self as registry, Check};
use linkcert_report as report;
use std::time::Instant;

/// A family's entry point.
pub(super) type Entry = for<'a> fn(&'a Ctx) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// How a run goes through a family.
#[derive(Clone, Copy)]
pub(super) enum Runs {
    /// Its entry point, in the table's order. `every_exchange`: `conformance` also judges its
    /// checks on every exchange, whichever family sent it.
    Entry { run: Entry, every_exchange: bool },
    /// No entry point of its own: `conformance` judges it on every exchange, and the family
    /// named (`status`) runs when this one is selected, for the exchanges it sends.
    EveryExchange { fed_by: &'static str },
    /// Its entry point, started with the first family and run beside the others to the end
    /// (`limiter`: its windows take as long as the others together), on keys no other family
    /// uses.
    Beside { run: Entry },
}

#[derive(Clone, Copy)]
pub(super) struct Family {
    pub name: &'static str,
    pub runs: Runs,
}

impl Family {
    /// A family run by its entry point.
    const fn entry(name: &'static str, run: Entry) -> Family {
        Family {
            name,
            runs: Runs::Entry {
                run,
                every_exchange: false,
            },
        }
    }
    /// A family run by its entry point whose checks `conformance` also judges on every
    /// exchange.
    const fn every_exchange(name: &'static str, run: Entry) -> Family {
        Family {
            name,
            runs: Runs::Entry {
                run,
                every_exchange: true,
            },
        }
    }
    /// A family run beside the others from the start.
    const fn beside(name: &'static str, run: Entry) -> Family {
        Family {
            name,
            runs: Runs::Beside { run },
        }
    }
    /// A family judged on every exchange, run through `fed_by`'s entry point.
    const fn fed_by(name: &'static str, fed_by: &'static str) -> Family {
        Family {
            name,
            runs: Runs::EveryExchange { fed_by },
        }
    }
}

/// An async entry point `run(&Ctx)` as an `Entry`.
macro_rules! entry {
    ($f:path) => {
        |c| Box::pin($f(c))
    };
}

/// Every family, in the order a run goes through them: one line each.
pub(super) const FAMILIES: &[Family] = &[
    Family::entry("transport", entry!(transport::run)),
    Family::entry("auth", entry!(auth::run)),
    Family::entry("plan", entry!(auth::run_plans)),
    Family::every_exchange("status", entry!(status::run)),
    Family::fed_by("schema", "status"),
    Family::fed_by("envelope", "status"),
    // Fixtures go from the ledger in this order: `http` one, `partners` its own, `sequence`
    // what is left.
    Family::entry("http", entry!(http::run)),
    Family::entry("pagination", entry!(pagination::run)),
    Family::entry("qr", entry!(qr::run)),
    Family::entry("partners", entry!(partners::run)),
    // After `partners`, before `ratelimit` (its gated keys need quota): it plays with the
    // fixtures `http` and `partners` left.
    Family::entry("sequence", entry!(sequence::run)),
    // Last: it exhausts keys' quotas on purpose.
    Family::every_exchange("ratelimit", entry!(ratelimit::run)),
    // Beside all of them, on keys of its own: three windows of one key's life.
    Family::beside("limiter", entry!(limiter::run)),
];

// The table and the registry's families (read off the check ids) name the same families,
// each once, and every family without an entry point is fed by one that has one: checked
// while compiling, so no family's checks go unrun and no entry judges undeclared checks.
const _: () = match mismatch(FAMILIES, &registry::FAMILIES) {
    None => {}
    // The family named is on one side only, twice, or fed by nothing.
    Some(name) => panic!("{}", name),
};

/// The first family the table and the registry disagree on (declared on one side only, twice,
/// or fed by a family that runs nothing), or None.
pub(super) const fn mismatch(table: &[Family], declared: &[&'static str]) -> Option<&'static str> {
    let mut i = 0;
    while i < table.len() {
        let name = table[i].name;
        if count(table, name) != 1 || !contains(declared, name) {
            return Some(name);
        }
        if let Runs::EveryExchange { fed_by } = table[i].runs
            && !has_entry(table, fed_by)
        {
            return Some(name);
        }
        i += 1;
    }
    let mut j = 0;
    while j < declared.len() {
        if count(table, declared[j]) == 0 {
            return Some(declared[j]);
        }
        j += 1;
    }
    None
}

const fn count(table: &[Family], name: &str) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < table.len() {
        if registry::same(table[i].name, name) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn contains(names: &[&str], name: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        if registry::same(names[i], name) {
            return true;
        }
        i += 1;
    }
    false
}

const fn has_entry(table: &[Family], name: &str) -> bool {
    let mut i = 0;
    while i < table.len() {
        if registry::same(table[i].name, name)
            && matches!(table[i].runs, Runs::Entry { .. } | Runs::Beside { .. })
        {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether `conformance` feeds the family's checks on every exchange: a run cut short leaves
/// them unjudged, whichever families had finished.
pub(super) fn judged_on_every_exchange(family: &str) -> bool {
    FAMILIES.iter().any(|f| {
        f.name == family
            && matches!(
                f.runs,
                Runs::Entry {
                    every_exchange: true,
                    ..
                } | Runs::EveryExchange { .. }
            )
    })
}

/// The families an entry point runs for besides its own: those it feeds.
pub(super) fn fed_by(name: &str) -> impl Iterator<Item = &'static str> + '_ {
    FAMILIES.iter().filter_map(move |f| match f.runs {
        Runs::EveryExchange { fed_by } if fed_by == name => Some(f.name),
        _ => None,
    })
}

/// How far the families went.
pub(super) struct Ran {
    /// Families that ran to their end; once the run is asked to stop, no other is judged.
    pub finished: Vec<&'static str>,
    pub cut_short: bool,
    /// Each family run (finished or not): its wall time and requests.
    pub times: Vec<report::model::FamilyTime>,
}

/// Every family with an entry point, in `FAMILIES`' order, and those that run beside them
/// from the start: run when selected, or when a family it feeds is; skipped, saying so, when
/// not.
pub(super) async fn run_families(
    ctx: &std::sync::Arc<Ctx>,
    stop: &'static linkcert_run::interrupt::Interrupt,
) -> Ran {
    // Each family beside is a task of its own: the families in turn block their task at times
    // (pagination's proptest runs in `block_in_place`), and a future of that task waits
    // meanwhile; a burst's requests waiting so would time out far away.
    let beside: Vec<_> = FAMILIES
        .iter()
        .filter_map(|f| match f.runs {
            Runs::Beside { run } => {
                let (ctx, name) = (ctx.clone(), f.name);
                Some(tokio::spawn(super::probe::beside(async move {
                    run_one(&ctx, stop, name, run, true).await
                })))
            }
            _ => None,
        })
        .collect();
    let beside = async {
        let mut out = Vec::new();
        for handle in beside {
            // A task that panicked is a bug here: its family is not judged, and says so.
            if let Ok(one) = handle.await {
                out.push(one);
            }
        }
        out
    };
    let in_turn = async {
        let mut ran = Vec::new();
        for family in FAMILIES {
            if let Runs::Entry { run, .. } = family.runs {
                ran.push(run_one(ctx, stop, family.name, run, false).await);
            }
        }
        ran
    };
    let (in_turn, beside) = futures::future::join(in_turn, beside).await;
    let mut ran = Ran {
        finished: Vec::new(),
        cut_short: false,
        times: Vec::new(),
    };
    for one in in_turn.into_iter().chain(beside) {
        match one {
            One::Finished(name, time) => {
                ran.finished.push(name);
                ran.times.push(time);
            }
            One::Stopped(time, cut) => {
                ran.cut_short |= cut;
                ran.times.extend(time);
            }
        }
    }
    ran
}

/// How one family's run ended: its time, and whether the run was asked to stop.
enum One {
    Finished(&'static str, report::model::FamilyTime),
    Stopped(Option<report::model::FamilyTime>, bool),
}

/// One family, unless the target went away or the run was asked to stop. `beside`: it runs
/// beside the others, so it neither names itself on the progress line nor counts their
/// requests (each family's count is its own: the requests of a family beside are not the one
/// in turn's).
async fn run_one(
    ctx: &Ctx,
    stop: &linkcert_run::interrupt::Interrupt,
    name: &'static str,
    run: Entry,
    beside: bool,
) -> One {
    let watch = ctx.probe.watch();
    if watch.gone() {
        // The target went away: nothing more is sent; what these would have judged is
        // listed as not judged by the recorder.
        return One::Stopped(None, false);
    }
    if stop.requested() {
        return One::Stopped(None, true);
    }
    if !(ctx.family_enabled(name) || fed_by(name).any(|f| ctx.family_enabled(f))) {
        ctx.skip_family(name, "not selected (--only/--skip)");
        return One::Stopped(None, false);
    }
    if !beside {
        ctx.progress.family(name);
    }
    // The whole count read first: a request sent beside between the two reads is then
    // missed by both, never counted twice.
    let count = || {
        let all = ctx.probe.requests_sent();
        let aside = ctx.probe.requests_sent_beside();
        if beside {
            aside
        } else {
            all.saturating_sub(aside)
        }
    };
    let (began, sent) = (Instant::now(), count());
    // A family stops where it is when the target goes away or the run is interrupted.
    let (finished, cut) = tokio::select! {
        () = run(ctx) => (true, false),
        () = watch.until_gone() => (false, false),
        () = stop.until_requested() => (false, true),
    };
    let time = report::model::FamilyTime {
        family: name.to_string(),
        seconds: began.elapsed().as_secs_f64(),
        requests: count().saturating_sub(sent),
    };
    if finished {
        One::Finished(name, time)
    } else {
        One::Stopped(Some(time), cut)
    }
}

/// An interrupted run: every check of a family that did not finish is not judged, also on
/// what it had (a check cut short is never judged on part of its cases: none count, nor
/// exercise a clause), and one that recorded nothing is listed as not judged. Skips stand:
/// they did not depend on the run's end.
pub(super) fn not_judged_after(
    i: &linkcert_run::interrupt::Interrupted,
    results: &mut Vec<report::model::CheckResult>,
    finished: &[&str],
    enabled: impl Fn(Check) -> bool,
) {
    use linkcert_spec::verdict::Verdict;
    let complete = |id: &str| {
        let family = registry::family_of(id);
        finished.contains(&family) && !judged_on_every_exchange(family)
    };
    let why = format!("not judged: {}", i.sentence());
    for r in results.iter_mut() {
        if complete(&r.id) || r.verdict == Verdict::Skipped {
            continue;
        }
        r.verdict = Verdict::NotJudged;
        r.cases = 0;
        r.violations = 0;
        r.findings.clear();
        r.not_judged.get_or_insert_with(|| why.clone());
    }
    for c in Check::all() {
        let d = c.def();
        if enabled(c) && !complete(d.id) && !results.iter().any(|r| r.id == d.id) {
            results.push(report::model::CheckResult {
                id: d.id.to_string(),
                title: d.title.to_string(),
                clause: d.clause.to_string(),
                operation: "*".into(),
                verdict: Verdict::NotJudged,
                cases: 0,
                violations: 0,
                findings: Vec::new(),
                skipped: None,
                partly_skipped: None,
                accepted: None,
                not_judged: Some(why.clone()),
            });
        }
    }
    let order = |id: &str| registry::Check::find(id).map(registry::Check::rank);
    results.sort_by(|a, b| {
        order(&a.id)
            .cmp(&order(&b.id))
            .then_with(|| a.operation.cmp(&b.operation))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the `const` check runs: the table as it is agrees with the registry, and a table
    /// missing a family, naming one the registry lacks, or feeding from nothing does not.
    #[test]
    fn the_table_and_the_registry_name_the_same_families() {
        assert_eq!(mismatch(FAMILIES, &registry::FAMILIES), None);
        assert_eq!(
            mismatch(&FAMILIES[1..], &registry::FAMILIES),
            Some("transport")
        );
        let mut extra = FAMILIES.to_vec();
        extra.push(Family {
            name: "cookies",
            ..FAMILIES[0]
        });
        assert_eq!(mismatch(&extra, &registry::FAMILIES), Some("cookies"));
        let mut twice = FAMILIES.to_vec();
        twice.push(FAMILIES[1]);
        assert_eq!(mismatch(&twice, &registry::FAMILIES), Some("auth"));
        let mut unfed = FAMILIES.to_vec();
        unfed[4].runs = Runs::EveryExchange { fed_by: "envelope" };
        assert_eq!(mismatch(&unfed, &registry::FAMILIES), Some("schema"));
        assert!(judged_on_every_exchange("envelope") && judged_on_every_exchange("ratelimit"));
        assert!(!judged_on_every_exchange("qr"));
        assert_eq!(fed_by("status").collect::<Vec<_>>(), ["schema", "envelope"]);
    }
}
