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
use linkcert_http::{REJECTIONS, error_code, is_envelope, refused_cleanly};
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

/// Whether a case held, judged from the answer.
enum Held {
    Yes,
    /// 429: says nothing either way.
    Throttled,
    No(String),
}

/// What the spec wants for a case, in words; `past_end`: its page may lie past the last.
fn wanted(case: &Case, past_end: bool) -> String {
    let mut s = match case.expect {
        Expect::Accept => "a 2xx answer".to_string(),
        Expect::AcceptOrReject => {
            "a 2xx answer or a clean rejection (400/422 in the error envelope)".into()
        }
        Expect::AcceptOrRefuse => "a 2xx answer or a 4xx in the error envelope".into(),
        Expect::Reject => "400 or 422 in the error envelope".into(),
        Expect::Any => "any answer".into(),
    };
    if past_end {
        s.push_str(&format!(" (or {})", past_end::ALSO));
    }
    format!("{s} for {}", case.why)
}

/// What the one rule for a page past the last (`past_end`) needs to judge a case: whether its
/// page may lie past the last.
#[derive(Clone, Copy)]
struct PastEndRule {
    maybe: bool,
}

impl PastEndRule {
    fn of(op: &Operation, case: &Case) -> PastEndRule {
        PastEndRule {
            maybe: past_end::may_lie_past_the_last(op, &case.params),
        }
    }
}

/// The status verdict, computed here (not recorded by `judge`) so proptest can shrink on it.
fn held(case: &Case, x: &Exchange, outcome: Option<Outcome>, rule: PastEndRule) -> Held {
    let Some(r) = x.resp() else {
        return Held::No(format!("no answer: {}", x.failure_words()));
    };
    let outcome = outcome.unwrap_or(Outcome::Other(r.status));
    if outcome == Outcome::Throttled {
        return Held::Throttled;
    }
    if rule.maybe && PastEnd::of(r) == PastEnd::NotFound {
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
        match held(&case, &x, outcome, PastEndRule::of(op, &case)) {
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
            let rule = PastEndRule::of(op, &minimal);
            match held(&minimal, &x, outcome, rule) {
                Held::No(actual) => {
                    ctx.rec
                        .violation(id, &label, wanted(&minimal, rule.maybe), actual, Some(&x))
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
                            wanted(&minimal, rule.maybe),
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
            s if refused_cleanly(r, &REJECTIONS) => Outcome::CleanRejection(s),
            s => Outcome::Other(s),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Req;
    use linkcert_http::Resp;

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

    fn case(expect: Expect) -> Case {
        Case {
            params: vec![],
            body: None,
            expect,
            why: "t".into(),
            observe: false,
        }
    }

    #[test]
    fn verdicts_follow_what_the_spec_says() {
        let env = r#"{"error":{"code":"unprocessable_entity","message":"m"}}"#;
        let nf = r#"{"error":{"code":"not_found","message":"m"}}"#;
        let rule = |maybe| PastEndRule { maybe };
        let held_if = |c: &Case, x: &Exchange, past: bool| {
            matches!(held(c, x, Some(outcome_of(x)), rule(past)), Held::Yes)
        };
        let ok = |c: &Case, x: &Exchange| held_if(c, x, false);
        assert!(ok(&case(Expect::Accept), &x(200, "[]")));
        assert!(!ok(&case(Expect::Accept), &x(422, env)));
        assert!(ok(&case(Expect::AcceptOrReject), &x(422, env)));
        assert!(!ok(&case(Expect::AcceptOrReject), &x(422, "nope")));
        assert!(!ok(&case(Expect::AcceptOrReject), &x(500, env)));
        assert!(ok(&case(Expect::Reject), &x(400, env)));
        assert!(!ok(&case(Expect::Reject), &x(200, "[]")));
        // A page that may lie past the last: a 404 in the envelope (its code is
        // `envelope.code`'s to judge), and only for such a page.
        assert!(held_if(&case(Expect::Accept), &x(404, nf), true));
        assert!(held_if(&case(Expect::Accept), &x(404, env), true));
        assert!(!ok(&case(Expect::Accept), &x(404, nf)));
        assert!(!held_if(&case(Expect::Accept), &x(404, "gone"), true));
        assert!(matches!(
            held(
                &case(Expect::Reject),
                &x(429, env),
                Some(Outcome::Throttled),
                rule(false)
            ),
            Held::Throttled
        ));
    }
}
