//! `status.*`: two properties per operation, run with proptest over cases derived from the
//! spec (`cases`): valid requests are accepted (`status.valid-accepted`) and invalid ones are
//! rejected cleanly (`status.invalid-rejected`). A violation is shrunk to a minimal request,
//! which is re-sent so the finding carries it (and its curl line).
//!
//! Every exchange also passes the cross-cutting checks (`status.listed`, `envelope.*`,
//! `schema.*`): this family feeds them most.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::test_runner::{TestCaseError, TestError};

use super::Ctx;
use super::cases::{self, Case, Property};
use super::conformance::{Expect, Outcome};
use super::past_end::{self, PastEnd};
use super::probe::Exchange;
use crate::http::{error_code, is_envelope};
use crate::spec::Operation;
use crate::target::PlanKey;

/// Whether a case held, judged from the answer.
enum Held {
    Yes,
    /// 429: says nothing either way.
    Throttled,
    No(String),
}

/// What the spec wants for a case, in words.
fn wanted(case: &Case) -> String {
    let mut s = match case.expect {
        Expect::Accept => "a 2xx answer".to_string(),
        Expect::AcceptOrReject => {
            "a 2xx answer or a clean rejection (400/422 in the error envelope)".into()
        }
        Expect::Reject => "400 or 422 in the error envelope".into(),
        Expect::Any => "any answer".into(),
        Expect::PageMaybePastEnd => format!("a 2xx answer, or {}", past_end::ALSO),
    };
    if case.maybe_past_end {
        s.push_str(&format!(" (or {})", past_end::ALSO));
    }
    format!("{s} for {}", case.why)
}

/// The status verdict, computed here (not recorded by `judge`) so proptest can shrink on it.
/// `not_found` is the code the spec's error table gives 404.
fn held(case: &Case, x: &Exchange, outcome: Option<Outcome>, not_found: Option<&str>) -> Held {
    let Some(r) = x.resp() else {
        return Held::No(format!(
            "no answer: {}",
            x.result.clone().err().unwrap_or_default()
        ));
    };
    let outcome = outcome.unwrap_or(Outcome::Other(r.status));
    if outcome == Outcome::Throttled {
        return Held::Throttled;
    }
    if case.maybe_past_end && PastEnd::of(r, not_found) == PastEnd::NotFound {
        return Held::Yes;
    }
    let ok = matches!(
        (case.expect, outcome),
        (Expect::Any, _)
            | (Expect::Accept | Expect::AcceptOrReject, Outcome::Accepted)
            | (
                Expect::AcceptOrReject | Expect::Reject,
                Outcome::CleanRejection(_)
            )
    );
    if ok {
        return Held::Yes;
    }
    let code = error_code(r).map(|c| format!(" {c}")).unwrap_or_default();
    Held::No(match outcome {
        Outcome::Accepted => format!("{} (accepted)", r.status),
        Outcome::CleanRejection(s) => format!("{s}{code} (a rejection)"),
        Outcome::Other(s) if s >= 400 && !is_envelope(r) => r.without_envelope(),
        _ => format!("{}{code}", r.status),
    })
}

fn describe_answer(x: &Exchange) -> String {
    match x.resp() {
        Some(r) if r.is_success() => format!("accepted with {}", r.status),
        Some(r) => format!("refused with {}", r.answered()),
        None => "no answer".into(),
    }
}

pub async fn run(ctx: &Ctx) {
    let mut jobs: Vec<(&Operation, PlanKey, Property)> = Vec::new();
    for op in &ctx.spec.operations {
        let label = op.label();
        let Some(key) = ctx.key_for(op) else {
            for p in [Property::Valid, Property::Invalid] {
                ctx.rec.skip(
                    p.check(),
                    &label,
                    "no key of a plan that may call this operation",
                );
            }
            continue;
        };
        jobs.push((op, key.clone(), Property::Valid));
        if cases::invalid(op).is_some() {
            jobs.push((op, key.clone(), Property::Invalid));
        } else {
            ctx.rec.skip(
                Property::Invalid.check(),
                &label,
                "nothing in the spec makes a request to this operation invalid (no parameters, no body)",
            );
        }
    }
    // The runner's closure is synchronous: properties run on scoped threads that block on the
    // runtime's handle; this worker is handed over to the runtime meanwhile.
    let handle = tokio::runtime::Handle::current();
    let next = AtomicUsize::new(0);
    let workers = ctx.opts.concurrency.clamp(1, jobs.len().max(1));
    tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    while let Some((op, key, prop)) = jobs.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        property(ctx, &handle, op, key, *prop);
                    }
                });
            }
        });
    });
}

/// Run one property of one operation, and record its verdict.
fn property(
    ctx: &Ctx,
    handle: &tokio::runtime::Handle,
    op: &Operation,
    key: &PlanKey,
    prop: Property,
) {
    let Some(strategy) = prop.strategy(op) else {
        return;
    };
    let label = op.label();
    let id = prop.check();
    let not_found = ctx.spec.errors.code(past_end::NOT_FOUND);
    let mut runner = cases::runner(
        cases::cases_for(op, ctx.opts.cases),
        ctx.opts.seed,
        &op.id,
        prop,
    );
    // The last failing exchange: the minimal case's, should the re-send not reproduce it.
    let last_failure: Mutex<Option<(Exchange, String)>> = Mutex::new(None);
    let result = runner.run(&strategy, |case| {
        let x = handle.block_on(ctx.probe.send(case.request(op).key(key)));
        ctx.progress.tick(&ctx.probe, &ctx.rec);
        // Cross-cutting checks on every answer; the status verdict is ours, so shrinking
        // does not record a finding per step.
        let outcome = x.resp().is_some().then(|| ctx.judge(op, &x, Expect::Any));
        match held(&case, &x, outcome, not_found) {
            Held::Yes => {
                if case.observe {
                    ctx.rec.observe(
                        id,
                        &label,
                        format!("{}: {}", case.why, describe_answer(&x)),
                        Some(&x),
                    );
                } else {
                    ctx.rec.pass(id, &label);
                }
                Ok(())
            }
            Held::Throttled => Ok(()),
            Held::No(actual) => {
                *last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some((x, actual.clone()));
                Err(TestCaseError::fail(actual))
            }
        }
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, minimal)) => {
            let (x, _) =
                handle.block_on(ctx.exchange(op, minimal.request(op).key(key), Expect::Any));
            let outcome = x.resp().is_some().then(|| {
                // `exchange` ran the cross-cutting checks; recompute the outcome without them.
                outcome_of(&x)
            });
            match held(&minimal, &x, outcome, not_found) {
                Held::No(actual) => {
                    ctx.rec
                        .violation(id, &label, wanted(&minimal), actual, Some(&x))
                }
                _ => {
                    // Flaky: the minimal case held when re-sent; report the failing exchange.
                    let last = last_failure
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take();
                    if let Some((fx, actual)) = last {
                        ctx.rec.violation(
                            id,
                            &label,
                            wanted(&minimal),
                            format!("{actual} (not reproduced when re-sent)"),
                            Some(&fx),
                        );
                    }
                }
            }
        }
        Err(TestError::Abort(why)) => {
            ctx.rec
                .skip(id, &label, format!("case generation gave up: {why}"));
        }
    }
}

/// The outcome `judge` would give, without recording anything.
fn outcome_of(x: &Exchange) -> Outcome {
    match x.resp() {
        None => Outcome::Transport,
        Some(r) => match r.status {
            429 => Outcome::Throttled,
            s if (200..300).contains(&s) => Outcome::Accepted,
            s @ (400 | 422) if is_envelope(r) => Outcome::CleanRejection(s),
            s => Outcome::Other(s),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::probe::Req;
    use crate::http::Resp;

    fn x(status: u16, body: &str) -> Exchange {
        Exchange {
            req: Req::get("/tags"),
            url: "https://h/tags".into(),
            result: Ok(Resp {
                status,
                headers: vec![("content-type".into(), "application/json".into())],
                body: body.as_bytes().to_vec(),
                truncated: false,
                elapsed: Default::default(),
            }),
            insecure: false,
        }
    }

    fn case(expect: Expect, maybe_past_end: bool) -> Case {
        Case {
            params: vec![],
            body: None,
            expect,
            maybe_past_end,
            why: "t".into(),
            observe: false,
        }
    }

    #[test]
    fn verdicts_follow_what_the_spec_says() {
        let env = r#"{"error":{"code":"unprocessable_entity","message":"m"}}"#;
        let nf = r#"{"error":{"code":"not_found","message":"m"}}"#;
        let ok = |c: &Case, x: &Exchange| {
            matches!(
                held(c, x, Some(outcome_of(x)), Some("not_found")),
                Held::Yes
            )
        };
        assert!(ok(&case(Expect::Accept, false), &x(200, "[]")));
        assert!(!ok(&case(Expect::Accept, false), &x(422, env)));
        assert!(ok(&case(Expect::AcceptOrReject, false), &x(422, env)));
        assert!(!ok(&case(Expect::AcceptOrReject, false), &x(422, "nope")));
        assert!(!ok(&case(Expect::AcceptOrReject, false), &x(500, env)));
        assert!(ok(&case(Expect::Reject, false), &x(400, env)));
        assert!(!ok(&case(Expect::Reject, false), &x(200, "[]")));
        // A page that may lie past the last: `past_end`'s 404, and only that 404.
        assert!(ok(&case(Expect::Accept, true), &x(404, nf)));
        assert!(!ok(&case(Expect::Accept, false), &x(404, nf)));
        assert!(!ok(&case(Expect::Accept, true), &x(404, "gone")));
        assert!(!ok(&case(Expect::Accept, true), &x(404, env)));
        assert!(matches!(
            held(
                &case(Expect::Reject, false),
                &x(429, env),
                Some(Outcome::Throttled),
                Some("not_found")
            ),
            Held::Throttled
        ));
    }
}
