//! `http.method`: every standard method a path does not define, HEAD and OPTIONS among them,
//! gets 404, or 405 with `Allow` naming the path's methods, in the envelope.

use futures::StreamExt;
use http::Method;
use linkcert_registry::check_id;

use super::{Judged, answer_text, record};
use crate::Ctx;
use crate::auth::minimal_request;
use crate::probe::{Exchange, Req};
use linkcert_http::is_envelope;
use linkcert_run::target::PlanKey;
use linkcert_spec::Operation;

const METHOD_EXPECTED: &str =
    "404, or 405 with Allow naming the path's methods, in the error envelope";

/// Every path of the spec with its operations, in the spec's order.
fn paths(ctx: &Ctx) -> Vec<(String, Vec<&Operation>)> {
    let mut out: Vec<(String, Vec<&Operation>)> = Vec::new();
    for op in &ctx.spec.operations {
        match out.iter_mut().find(|(p, _)| *p == op.path) {
            Some((_, ops)) => ops.push(op),
            None => out.push((op.path.clone(), vec![op])),
        }
    }
    out
}

/// The methods a path does not define that are sent to it.
fn undefined_methods(defined: &[Method]) -> Vec<Method> {
    let mut all = vec![
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
    ];
    // HEAD stays even where GET is defined: HEAD is GET's without a body (RFC 9110 9.3.2),
    // and a target that serves it so is observed.
    all.retain(|m| !defined.contains(m));
    all
}

pub async fn run(ctx: &Ctx) {
    let mut sends = Vec::new();
    for (path, ops) in paths(ctx) {
        let Some((op, key)) = ops
            .iter()
            .find_map(|op| ctx.key_for(op).map(|k| (*op, k.clone())))
        else {
            ctx.rec.skip(
                check_id!("http.method"),
                &path,
                "no key of a plan that may call an operation of this path",
            );
            continue;
        };
        let defined: Vec<Method> = ops.iter().map(|o| o.method.clone()).collect();
        for m in undefined_methods(&defined) {
            sends.push((
                path.clone(),
                op,
                defined.clone(),
                method_request(op, m, &key),
            ));
        }
    }
    let mut pending = Vec::new();
    for (path, op, defined, req) in sends {
        let probe = &ctx.probe;
        pending.push(async move { (path, op, defined, probe.send(req).await) });
    }
    let mut answers = futures::stream::iter(pending).buffered(ctx.opts.concurrency.max(1));
    while let Some((path, op, defined, x)) = answers.next().await {
        let j = judge_method(&x.req.method, &defined, &x);
        record(ctx, check_id!("http.method"), &path, METHOD_EXPECTED, j, &x);
        // A HEAD answer has no body: only its status is judged elsewhere.
        if let Some(r) = x.resp().filter(|r| r.status >= 400 && r.status != 429) {
            ctx.status_listed(op, &x, r);
            if x.req.method != Method::HEAD {
                ctx.envelope(&op.label(), &x, r);
            }
        }
    }
}

/// The operation's own minimal request (its required parameters), with another method; a
/// method that carries content carries `{}`.
fn method_request(op: &Operation, m: Method, key: &PlanKey) -> Req {
    let mut req = minimal_request(op).key(key);
    req.method = m.clone();
    req.body = None;
    req.headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    if matches!(m, Method::POST | Method::PUT | Method::PATCH) {
        req = req.body("application/json", b"{}".to_vec());
    }
    req
}

/// Whether an Allow value lists a method (tokens, compared ignoring case).
fn allow_lists(allow: &str, m: &Method) -> bool {
    allow
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case(m.as_str()))
}

fn judge_method(m: &Method, defined: &[Method], x: &Exchange) -> Judged {
    let Some(r) = x.resp() else {
        return Judged::Fail(answer_text(x));
    };
    let s = r.status;
    if s == 429 {
        return Judged::Throttled;
    }
    let head = *m == Method::HEAD;
    if head && s < 500 {
        let what = if r.is_success() && defined.contains(&Method::GET) {
            format!("HEAD served like GET ({s})")
        } else {
            format!("HEAD answered {s}")
        };
        return Judged::Observe(what);
    }
    if *m == Method::OPTIONS && r.is_success() {
        return Judged::Observe(match r.header("allow") {
            Some(a) => format!("OPTIONS answered {s} with Allow: {a}"),
            None => format!("OPTIONS answered {s} without Allow"),
        });
    }
    if s < 400 {
        return Judged::Fail(format!("{s} (as if {m} were an operation of the path)"));
    }
    if s >= 500 || !is_envelope(r) {
        return Judged::Fail(answer_text(x));
    }
    match s {
        404 => Judged::Pass("a method the path does not define: 404 in the envelope".into()),
        405 => {
            let Some(allow) = r.header("allow") else {
                return Judged::Fail("405 without an Allow header".into());
            };
            if let Some(missing) = defined.iter().find(|d| !allow_lists(allow, d)) {
                return Judged::Fail(format!(
                    "405 with Allow: {allow}, which leaves out {missing}"
                ));
            }
            if allow_lists(allow, m) {
                return Judged::Fail(format!("405 with Allow: {allow}, which lists {m} itself"));
            }
            Judged::Pass("a method the path does not define: 405 with Allow in the envelope".into())
        }
        _ => Judged::NonStrict(format!(
            "{}: an error in the envelope, but 404 or 405 says what is wrong",
            answer_text(x)
        )),
    }
}
#[cfg(test)]
mod tests {
    use super::super::test_support::{BAD, NF, fails, x};
    use super::*;

    #[test]
    fn undefined_methods_get_404_or_405_with_allow_in_the_envelope() {
        let get = [Method::GET];
        let d = |status, h: &[(&str, &str)], body| {
            judge_method(&Method::DELETE, &get, &x(Method::DELETE, status, h, body))
        };
        assert!(matches!(d(404, &[], NF), Judged::Pass(_)));
        assert!(matches!(
            d(405, &[("allow", "GET, HEAD")], NF),
            Judged::Pass(_)
        ));
        assert!(fails(&d(405, &[("allow", "GET")], "")), "an empty 405");
        assert!(fails(&d(405, &[], NF)), "no Allow");
        assert!(
            fails(&d(405, &[("allow", "POST")], NF)),
            "Allow leaves out GET"
        );
        assert!(fails(&d(405, &[("allow", "GET, DELETE")], NF)));
        assert!(fails(&d(200, &[], "{}")), "pretends to have deleted");
        assert!(fails(&d(404, &[], "")), "an empty 404");
        assert!(fails(&d(500, &[], NF)));
        assert!(matches!(d(400, &[], BAD), Judged::NonStrict(_)));
        assert_eq!(d(429, &[], NF), Judged::Throttled);
        let none = Exchange {
            result: Err(linkcert_http::Failure::new(
                linkcert_http::FailureKind::Reset,
                "connection reset",
            )),
            ..x(Method::DELETE, 0, &[], "")
        };
        assert!(fails(&judge_method(&Method::DELETE, &get, &none)));
    }

    #[test]
    fn head_and_options_are_http_s_own_and_only_observed() {
        let get = [Method::GET];
        let j = |m: Method, s, h: &[(&str, &str)]| judge_method(&m, &get, &x(m.clone(), s, h, ""));
        assert!(matches!(j(Method::HEAD, 200, &[]), Judged::Observe(_)));
        assert!(matches!(j(Method::HEAD, 405, &[]), Judged::Observe(_)));
        assert!(fails(&j(Method::HEAD, 500, &[])));
        assert!(matches!(
            j(Method::OPTIONS, 204, &[("allow", "GET")]),
            Judged::Observe(_)
        ));
        assert!(fails(&j(Method::OPTIONS, 404, &[])), "an empty 404");
    }

    #[test]
    fn allow_tokens_ignore_case_and_spaces() {
        assert!(allow_lists("get, HEAD", &Method::GET));
        assert!(!allow_lists("GETS", &Method::GET));
        assert_eq!(
            undefined_methods(&[Method::GET]),
            [
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
                Method::HEAD,
                Method::OPTIONS
            ]
        );
    }
}
