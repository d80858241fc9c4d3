//! The rules `linkcert load` judges a scenario by, in the order reports list them. What each
//! rule measures, and its slack, is said where it is judged (`load::judge`).

use super::{Enforces, RuleDef};
use linkcert_spec::verdict::Verdict::{Fail, Informational};

pub const RULES: &[RuleDef] = &[
    RuleDef {
        id: "load.generator",
        title: "the generator held its schedule (else the scenario is client saturated, not judged)",
        level: Fail,
        shape: None,
        enforces: Enforces::Nothing(
            "judges linkcert's own client: whether the other rules can be judged at all",
        ),
    },
    RuleDef {
        id: "load.admitted",
        title: "no window of the plan's length admits more than its limit; under overload every one admits its due",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&[
            "limits.standard",
            "limits.standard.paid",
            "limits.exceeded",
        ]),
    },
    RuleDef {
        id: "load.rolling-window",
        title: "at most the limit admitted within one rolling window (up to twice: fixed window)",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["limits.standard", "limits.standard.paid"]),
    },
    RuleDef {
        id: "load.envelope",
        title: "every 429 is the error envelope with code rate_limit_exceeded",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["limits.exceeded", "errors.envelope", "errors.codes"]),
    },
    RuleDef {
        id: "load.retry-after",
        title: "every 429 has Retry-After in seconds, within a window and not past Reset",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["limits.headers.retry-after"]),
    },
    RuleDef {
        id: "load.headers",
        title: "every 2xx and 429 has X-RateLimit-Limit, -Remaining and -Reset",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&[
            "limits.headers.limit",
            "limits.headers.remaining",
            "limits.headers.reset",
        ]),
    },
    RuleDef {
        id: "load.limit",
        title: "X-RateLimit-Limit is the key's plan limit (the per-hour figure: observed)",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&[
            "limits.standard",
            "limits.standard.paid",
            "limits.headers.limit",
        ]),
    },
    RuleDef {
        id: "load.remaining",
        title: "an admitted answer says Remaining 0 before the first 429",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["limits.headers.remaining"]),
    },
    RuleDef {
        id: "load.reset",
        title: "Reset is epoch seconds within one window, never moving back",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["limits.headers.reset"]),
    },
    RuleDef {
        id: "load.isolation",
        title: "the key under its limit gets no 429 while another key is throttled",
        level: Fail,
        shape: Some("two-keys"),
        enforces: Enforces::Clauses(&["limits.standard"]),
    },
    RuleDef {
        id: "load.counter",
        title: "each key's admissions and headers follow from its own history: one counter per key for every operation",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&[
            "limits.standard",
            "limits.analytics",
            "limits.headers.remaining",
        ]),
    },
    RuleDef {
        id: "load.fields",
        title: "where a target sends the IETF RateLimit fields (any draft's form), they are well formed and true on every answer: the plan's limit and window, what X-RateLimit-Remaining, -Reset and Retry-After say, and the key's own history",
        level: Fail,
        shape: None,
        enforces: Enforces::Beyond(super::RATELIMIT_FIELDS_DRAFT),
    },
    RuleDef {
        id: "load.refusals",
        title: "requests the spec forbids (a share of every scenario's) are refused cleanly or honoured, and refusals are counted against the key the same way all run",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["endpoints.errors", "limits.headers.remaining"]),
    },
    RuleDef {
        id: "load.retry-honesty",
        title: "the first throttled request, retried Retry-After later, is admitted",
        level: Fail,
        shape: Some("retry-after"),
        enforces: Enforces::Clauses(&["limits.headers.retry-after"]),
    },
    RuleDef {
        id: "load.answers",
        title: "under load every request is answered, 2xx or 429",
        level: Fail,
        shape: None,
        enforces: Enforces::Clauses(&["limits.exceeded"]),
    },
    RuleDef {
        id: "load.behaviour",
        title: "the limiter named as observed (fixed window, token bucket, ...), with the evidence",
        level: Informational,
        shape: None,
        enforces: Enforces::Nothing(
            "only informs: the spec names no limiter algorithm, so what is observed is reported, not judged",
        ),
    },
];
