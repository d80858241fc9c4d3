//! The `sequence` family against both implementations, which answer a repeated deactivation
//! differently (the reference 200 again, the variant 422) and let different ids win when both
//! are given, and against a table of stateful defects (`DEFECTS`), each one only a sequence
//! shows, in front of both.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::http::HeaderValue;
use common::broken::{
    Answer, Defect, Impl, Incoming, Row,
    Then::{Fails, NothingFails, Passes, Says},
    run_table,
};
use serde_json::Value;

const DEACTIVATE: &str = "/partners/deactivate";

fn envelope(code: &str) -> Vec<u8> {
    format!(r#"{{"error":{{"code":"{code}","message":"injected"}}}}"#).into_bytes()
}

fn set_json(ans: &mut Answer, status: u16, body: Vec<u8>) {
    ans.status = status;
    ans.body = body;
    ans.set_header("content-type", "application/json");
}

/// The deactivation body's (partnerId, tenantId).
fn ids(inc: &Incoming) -> (Option<String>, Option<String>) {
    let v: Value = serde_json::from_slice(&inc.body).unwrap_or(Value::Null);
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    (s("partnerId"), s("tenantId"))
}

fn is_deactivation(inc: &Incoming) -> bool {
    inc.path == DEACTIVATE && inc.method == "POST"
}

fn answered_id(ans: &Answer) -> Option<String> {
    let v: Value = serde_json::from_slice(&ans.body).ok()?;
    v.get("partnerId")?.as_str().map(str::to_string)
}

/// What the stateful proxies learn from the traffic: the key that deactivated (the owner's),
/// ids already deactivated, tenantIds with their partnerId.
#[derive(Default)]
struct Seen {
    owner: Option<HeaderValue>,
    done: HashSet<String>,
    tenants: HashMap<String, String>,
}

type Shared = Arc<Mutex<Seen>>;

/// Learn from an answer to a deactivation.
fn learn(seen: &Shared, inc: &Incoming, ans: &Answer) {
    if !is_deactivation(inc) {
        return;
    }
    let mut s = seen.lock().unwrap();
    let auth = inc.headers.get("authorization").cloned();
    if ans.status == 200 {
        s.owner = s.owner.clone().or(auth);
        let (p, t) = ids(inc);
        let answered = answered_id(ans);
        // The tenantId's partner was deactivated: named alone, or winning over a partnerId.
        if let (Some(t), Some(a)) = (&t, &answered)
            && p.as_ref() != Some(a)
        {
            s.tenants.insert(t.clone(), a.clone());
        }
        s.done.extend([p, t, answered].into_iter().flatten());
    }
}

/// Both implementations name their keys by plan (`lk_free_1`): those below Advanced.
fn gated_key(auth: &HeaderValue) -> bool {
    let a = auth.to_str().unwrap_or("");
    ["free", "pro", "business"]
        .iter()
        .any(|p| a.starts_with(&format!("Bearer lk_{p}_")))
}

/// A gated key's request sent on with the owner's key (once a 200 showed it): marked, so the
/// answer can be faked.
fn as_owner(seen: &Shared, inc: &mut Incoming, when: impl Fn(&Incoming) -> bool) -> bool {
    let s = seen.lock().unwrap();
    let gated = inc.headers.get("authorization").is_some_and(gated_key);
    match (&s.owner, gated && is_deactivation(inc) && when(inc)) {
        (Some(owner), true) => {
            inc.headers.insert("authorization", owner.clone());
            inc.headers
                .insert("x-linkcert-defect", HeaderValue::from_static("gated"));
            true
        }
        _ => false,
    }
}

/// Deactivation by tenantId skips the plan gate: a gated key's tenantId is served.
fn tenant_skips_gate() -> Defect {
    let seen = Shared::default();
    let s2 = seen.clone();
    Defect {
        before: Some(Box::new(move |inc| {
            as_owner(&seen, inc, |inc| ids(inc).1.is_some());
        })),
        after: Some(Box::new(move |inc, ans| learn(&s2, inc, ans))),
        hold: None,
    }
}

/// A gated key is answered 403, and the partner is deactivated all the same.
fn refused_still_deactivates() -> Defect {
    let seen = Shared::default();
    let s2 = seen.clone();
    Defect {
        before: Some(Box::new(move |inc| {
            as_owner(&seen, inc, |_| true);
        })),
        after: Some(Box::new(move |inc, ans| {
            if inc.headers.contains_key("x-linkcert-defect") {
                set_json(ans, 403, envelope("forbidden"));
            } else {
                learn(&s2, inc, ans);
            }
        })),
        hold: None,
    }
}

/// The answer to a deactivation by tenantId alone names the tenantId as the partnerId.
fn tenant_as_partner_id() -> Defect {
    Defect::after(|inc, ans| {
        if let (true, 200, (None, Some(t))) = (is_deactivation(inc), ans.status, ids(inc)) {
            ans.body = serde_json::json!({ "partnerId": t })
                .to_string()
                .into_bytes();
        }
    })
}

/// Deactivating a partner already deactivated answers 500 (every id the body names was).
fn second_is_500() -> Defect {
    let seen = Shared::default();
    Defect::after(move |inc, ans| {
        let (p, t) = ids(inc);
        let named: Vec<String> = [p, t].into_iter().flatten().collect();
        let repeat = {
            let s = seen.lock().unwrap();
            !named.is_empty() && named.iter().all(|id| s.done.contains(id))
        };
        if is_deactivation(inc) && repeat && ans.status != 403 {
            set_json(ans, 500, envelope("internal_server_error"));
        } else {
            learn(&seen, inc, ans);
        }
    })
}

/// A repeat by one id alone flips back: the first repeat naming an id is refused (422), later
/// ones answer 200 as if the partner were active again (the same request, in the same state,
/// refused and then served). Which answer a repeat gets is the target's choice, and may differ
/// by form; a 200 after a refusal of the same request is not.
fn repeat_flips_back() -> Defect {
    let seen = Shared::default();
    let refused: Arc<Mutex<HashSet<String>>> = Arc::default();
    Defect::after(move |inc, ans| {
        let (p, t) = ids(inc);
        let alone = match (p, t) {
            (Some(id), None) | (None, Some(id)) => Some(id),
            _ => None,
        };
        let repeat = alone.filter(|id| {
            let s = seen.lock().unwrap();
            is_deactivation(inc) && s.done.contains(id) && ans.status != 403
        });
        let Some(id) = repeat else {
            return learn(&seen, inc, ans);
        };
        let partner = seen
            .lock()
            .unwrap()
            .tenants
            .get(&id)
            .cloned()
            .unwrap_or(id.clone());
        if refused.lock().unwrap().insert(id) {
            set_json(ans, 422, envelope("unprocessable_entity"));
        } else {
            let body = serde_json::json!({ "partnerId": partner });
            set_json(ans, 200, body.to_string().into_bytes());
        }
    })
}

/// A first deactivation by partnerId alone answers 200 naming another partner (repeats
/// answer as the implementation does).
fn first_names_another() -> Defect {
    let seen = Shared::default();
    Defect::after(move |inc, ans| {
        let first = match (is_deactivation(inc), ans.status, ids(inc)) {
            (true, 200, (Some(p), None)) => !seen.lock().unwrap().done.contains(&p),
            _ => false,
        };
        learn(&seen, inc, ans);
        if first {
            ans.body = br#"{"partnerId":"pn_someone_else"}"#.to_vec();
        }
    })
}

/// An unknown tenantId (one no 200 ever named) answers 200 as if it deactivated someone.
fn unknown_tenant_accepted() -> Defect {
    Defect::after(|inc, ans| {
        if let (true, 404, (None, Some(_))) = (is_deactivation(inc), ans.status, ids(inc)) {
            set_json(ans, 200, br#"{"partnerId":"pn_ghost"}"#.to_vec());
        }
    })
}

/// After the first deactivation, GET /tags leaves out its first tag.
fn tags_lose_one_after_a_deactivation() -> Defect {
    let seen = Shared::default();
    Defect::after(move |inc, ans| {
        learn(&seen, inc, ans);
        let deactivated = !seen.lock().unwrap().done.is_empty();
        if inc.path == "/tags" && ans.status == 200 && deactivated {
            let mut v: Vec<Value> = serde_json::from_slice(&ans.body).unwrap_or_default();
            if !v.is_empty() {
                v.remove(0);
            }
            ans.body = serde_json::to_vec(&v).unwrap();
        }
    })
}

/// Legal choices: a repeat refused with a status of its own per form (by partnerId 409, by
/// tenantId 404: the enrollment is gone), and a key below the plan answered 422 or 404 (its
/// body or lookup checked before the plan) where the implementation answers 403.
fn refusals_of_their_own() -> Defect {
    let seen = Shared::default();
    Defect::after(move |inc, ans| {
        let (p, t) = ids(inc);
        let gated = inc.headers.get("authorization").is_some_and(gated_key);
        if is_deactivation(inc) && gated && ans.status == 403 {
            let (status, code) = match (p, t) {
                (Some(_), _) => (422, "unprocessable_entity"),
                _ => (404, "not_found"),
            };
            return set_json(ans, status, envelope(code));
        }
        let repeat = {
            let s = seen.lock().unwrap();
            match (&p, &t) {
                (Some(p), None) => s.done.contains(p).then_some((409, "conflict")),
                (None, Some(t)) => s.done.contains(t).then_some((404, "not_found")),
                _ => None,
            }
        };
        match repeat {
            Some((status, code)) if is_deactivation(inc) => set_json(ans, status, envelope(code)),
            _ => learn(&seen, inc, ans),
        }
    })
}

/// Check-then-act without a lock: deactivations by partnerId that arrive together while the
/// partner is active each find it active and are each answered 200 as its first; a repeat
/// alone is refused 409 conflict.
fn racy_check_then_act() -> Defect {
    #[derive(Default)]
    struct State {
        /// partnerIds a 200 named: the partners deactivated.
        done: HashSet<String>,
        /// Per body by partnerId: requests in flight, and whether the partner was active
        /// when the first of them came.
        open: HashMap<Vec<u8>, (usize, bool)>,
    }
    let state = Arc::new(Mutex::new(State::default()));
    let state2 = state.clone();
    let by_partner = |inc: &Incoming| match ids(inc) {
        (Some(p), None) if is_deactivation(inc) => Some(p),
        _ => None,
    };
    Defect {
        before: Some(Box::new(move |inc: &mut Incoming| {
            let Some(p) = by_partner(inc) else { return };
            let mut s = state.lock().unwrap();
            let active = !s.done.contains(&p);
            s.open.entry(inc.body.clone()).or_insert((0, active)).0 += 1;
        })),
        after: Some(Box::new(move |inc: &Incoming, ans: &mut Answer| {
            let mut s = state2.lock().unwrap();
            if let Some(p) = by_partner(inc) {
                let group = s.open.get_mut(&inc.body).map(|e| {
                    e.0 -= 1;
                    (e.0, e.1)
                });
                if group.is_some_and(|(n, _)| n == 0) {
                    s.open.remove(&inc.body);
                }
                if group.is_some_and(|(_, active)| active) {
                    set_json(ans, 200, format!(r#"{{"partnerId":"{p}"}}"#).into_bytes());
                } else if s.done.contains(&p) {
                    set_json(ans, 409, envelope("conflict"));
                }
            }
            if is_deactivation(inc)
                && ans.status == 200
                && let Some(a) = answered_id(ans)
            {
                s.done.insert(a);
            }
        })),
        // Held together, so requests sent at once overlap here as they would in the target.
        hold: Some(std::time::Duration::from_millis(20)),
    }
}

/// A legal paging choice: GET /tags without a page size answers one tag a page, a different
/// one each time (no order given). Reads that name the order and the largest page are alike.
fn tags_default_page_of_one() -> Defect {
    let n = Arc::new(Mutex::new(0usize));
    Defect::after(move |inc, ans| {
        if inc.path == "/tags" && ans.status == 200 && !inc.query.contains("pageSize") {
            let mut v: Vec<Value> = serde_json::from_slice(&ans.body).unwrap_or_default();
            let mut i = n.lock().unwrap();
            *i += 1;
            if !v.is_empty() {
                let one = v.remove(*i % v.len());
                ans.body = serde_json::to_vec(&vec![one]).unwrap();
            }
        }
    })
}

const ONLY: &[&str] = &["sequence"];

/// Every defect, and the check of the family that must fail, in front of both
/// implementations; and the fault-free implementations, which pass with their choices.
const DEFECTS: &[Row] = &[
    Row::new(
        "no defect",
        Defect::none,
        ONLY,
        &[
            NothingFails,
            Passes("sequence.gated"),
            Passes("sequence.first"),
            Passes("sequence.repeat"),
            Passes("sequence.unknown"),
            Passes("sequence.unaffected"),
        ],
    ),
    Row::new(
        "repeats refused 409 by partnerId and 404 by tenantId, gated keys 422/404 (legal)",
        refusals_of_their_own,
        ONLY,
        &[
            NothingFails,
            Passes("sequence.gated"),
            Passes("sequence.repeat"),
        ],
    ),
    Row::new(
        "GET /tags pages of one by default, in no fixed order (legal)",
        tags_default_page_of_one,
        ONLY,
        &[NothingFails, Passes("sequence.unaffected")],
    ),
    Row::new(
        "a first deactivation by partnerId names another partner",
        first_names_another,
        ONLY,
        &[Fails("sequence.first")],
    ),
    Row::new(
        "an unknown tenantId answers 200",
        unknown_tenant_accepted,
        ONLY,
        &[Fails("sequence.unknown")],
    ),
    Row::new(
        "GET /tags loses a tag once a partner is deactivated",
        tags_lose_one_after_a_deactivation,
        ONLY,
        &[Fails("sequence.unaffected")],
    ),
    Row::new(
        "deactivation by tenantId skips the plan gate",
        tenant_skips_gate,
        ONLY,
        &[Fails("sequence.gated")],
    ),
    Row::new(
        "a gated key gets 403 and the partner is deactivated anyway",
        refused_still_deactivates,
        ONLY,
        &[Fails("sequence.gated")],
    ),
    Row::new(
        "the answer by tenantId names the tenantId as the partnerId",
        tenant_as_partner_id,
        ONLY,
        &[Fails("sequence.repeat")],
    ),
    Row::new(
        "a second deactivation answers 500",
        second_is_500,
        ONLY,
        &[
            Fails("sequence.repeat"),
            // Shrunk, step by step with curl lines hiding the keys, and how to replay it.
            Says("sequence.repeat", "shrunk from"),
            Says("sequence.repeat", "Bearer $LINKCERT_KEY_"),
            Says(
                "sequence.repeat",
                "replay: linkcert check --only sequence --seed 7",
            ),
        ],
    ),
    Row::new(
        "deactivations at once each served as the first (check-then-act), repeats alone 409",
        racy_check_then_act,
        ONLY,
        &[
            Fails("sequence.first"),
            Says("sequence.first", "deactivated more than once"),
        ],
    ),
    Row::new(
        "a repeat refused once answers 200 as if first the next time",
        repeat_flips_back,
        ONLY,
        &[Fails("sequence.repeat")],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_its_sequence_check_in_front_of_both_implementations() {
    run_table(DEFECTS).await;
}

/// A failure shows the shrunk sequence: numbered steps, each with a curl line whose key is a
/// variable (never the key), and the command that replays it; shrinking says where it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shrunk_failure_lists_its_steps_with_curl_lines_hiding_the_keys() {
    let b = common::broken::broken(6.0, second_is_500()).await;
    let r = common::broken::run_check(b.target(), ONLY).await;
    let finding = r
        .checks
        .iter()
        .filter(|c| c.id == "sequence.repeat")
        .flat_map(|c| &c.findings)
        .map(|f| f.message.clone())
        .next()
        .expect("a finding");
    eprintln!("{finding}");
    assert!(finding.contains("  1. "), "{finding}");
    assert!(finding.contains("curl -sS -i"), "{finding}");
    assert!(finding.contains("$LINKCERT_KEY_"), "{finding}");
    assert!(!finding.contains("Bearer lk_"), "{finding}");
    assert!(finding.contains("-> 500"), "{finding}");
    assert!(finding.contains("shrunk from"), "{finding}");
}

/// The two implementations answer a repeat differently (200 again, 422), and let different
/// ids win when both are given: each choice observed, neither failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_implementation_s_repeat_choice_is_observed_not_failed() {
    for (imp, repeat, both) in [
        (
            Impl::Reference,
            "a repeat deactivation by partnerId: 200 naming the partner again",
            "the partnerId wins",
        ),
        (
            Impl::Variant,
            "a repeat deactivation by partnerId: 422 in the error envelope",
            "the tenantId wins",
        ),
    ] {
        let b = common::broken::broken_on(imp, 6.0, Defect::none()).await;
        let r = common::broken::run_check(b.target(), ONLY).await;
        assert_eq!(
            common::broken::failed(&r),
            Vec::<String>::new(),
            "{imp:?}: {}",
            r.summary()
        );
        let seen: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| c.id == "sequence.choices")
            .flat_map(|c| c.findings.iter().map(|f| f.message.as_str()))
            .collect();
        assert!(seen.iter().any(|m| m.contains(repeat)), "{imp:?}: {seen:?}");
        assert!(seen.iter().any(|m| m.contains(both)), "{imp:?}: {seen:?}");
        eprintln!("{imp:?}: {} requests; {seen:?}", r.requests);
    }
}
