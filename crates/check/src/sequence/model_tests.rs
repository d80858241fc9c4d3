use super::*;

fn ok(pid: &str) -> Answer {
    Answer {
        status: 200,
        partner_id: Some(pid.into()),
        got: format!("200 {{\"partnerId\":\"{pid}\"}}"),
        ..Answer::default()
    }
}
fn err(status: u16, code: &str) -> Answer {
    Answer {
        status,
        spec_error: true,
        envelope: true,
        code: Some(code.into()),
        got: format!("{status} {code}"),
        ..Answer::default()
    }
}
fn failed(v: &[Judged]) -> Option<&'static str> {
    v.iter().find_map(|j| match j {
        Judged::Fail(f) => Some(f.check.id()),
        _ => None,
    })
}

fn halted(v: &[Judged]) -> bool {
    v.iter().any(|j| matches!(j, Judged::Halt(_)))
}

/// Each form keeps its repeat choice (200 again, or any 4xx in the envelope); forms may
/// differ. A 200 after a refusal in the same form, a 500, a 200 naming another partner or
/// an error outside the envelope fail.
#[test]
fn repeats_hold_their_answer_per_form() {
    for repeat in [ok("pn_1"), err(422, "unprocessable_entity")] {
        let mut m = Model::new(Some("pn_1"));
        assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
        assert_eq!(failed(&m.allowed(Form::Partner, &repeat)), None);
        assert_eq!(failed(&m.allowed(Form::Both, &repeat)), None);
        if repeat.status == 200 {
            // 200 again, then refused: observed, not failed; a 200 after that is.
            assert_eq!(
                failed(&m.allowed(Form::Partner, &err(409, "conflict"))),
                None
            );
        }
        assert_eq!(
            failed(&m.allowed(Form::Partner, &ok("pn_1"))),
            Some("sequence.repeat")
        );
    }
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert_eq!(
        failed(&m.allowed(Form::Partner, &err(500, "internal_server_error"))),
        Some("sequence.repeat")
    );
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert_eq!(
        failed(&m.allowed(Form::Partner, &ok("pn_2"))),
        Some("sequence.repeat")
    );
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    let bare = Answer {
        status: 400,
        got: "400 text/plain".into(),
        ..Answer::default()
    };
    assert_eq!(
        failed(&m.allowed(Form::Partner, &bare)),
        Some("sequence.repeat")
    );
    // By partnerId 409, by tenantId 422, by the answered partnerId 404 (the enrollment is
    // gone): each form its own refusal, all legal.
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert_eq!(
        failed(&m.allowed(Form::Partner, &err(409, "conflict"))),
        None
    );
    assert_eq!(failed(&m.allowed(Form::Tenant, &ok("tn_9"))), None);
    assert_eq!(m.learned(), Some("tn_9"));
    assert_eq!(
        failed(&m.allowed(Form::Tenant, &err(422, "unprocessable_entity"))),
        None
    );
    assert_eq!(
        failed(&m.allowed(Form::Learned, &err(404, "not_found"))),
        None
    );
    assert_eq!(
        failed(&m.allowed(Form::Partner, &err(400, "bad_request"))),
        None
    );
    // Refused by tenantId before: a 200 by tenantId answers as if it were active again.
    assert_eq!(
        failed(&m.allowed(Form::Tenant, &ok("tn_9"))),
        Some("sequence.repeat")
    );
}

/// The deactivation by tenantId answering the tenantId as the partnerId, which no partner
/// has (404 by it), fails; a 404 by the answered partnerId otherwise is a refusal.
#[test]
fn the_tenant_id_answered_as_partner_id_fails() {
    let mut m = Model::new(Some("pn_1"));
    m.tenant_id = Some("tn_9".into());
    assert_eq!(failed(&m.allowed(Form::Tenant, &ok("tn_9"))), None);
    assert_eq!(
        failed(&m.allowed(Form::Learned, &err(404, "not_found"))),
        Some("sequence.repeat")
    );
}

/// Fixtures that are one partner, or a request by both ids that deactivates both, are not
/// failed as a first deactivation refused: the play halts, or the refusal shows it.
#[test]
fn one_partner_twice_halts_and_both_deactivated_shows_in_the_next_answer() {
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert!(halted(&m.allowed(Form::Tenant, &ok("pn_1"))));
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert!(halted(
        &m.allowed(Form::Tenant, &err(422, "unprocessable_entity"))
    ));
    // Both ids: the partnerId wins, and the tenant's partner is deactivated too.
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Both, &ok("pn_1"))), None);
    let j = m.allowed(Form::Tenant, &err(422, "unprocessable_entity"));
    assert_eq!(failed(&j), None);
    assert!(!halted(&j));
    assert_eq!(
        failed(&m.allowed(Form::Tenant, &err(422, "unprocessable_entity"))),
        None
    );
    // Or it was not: its first deactivation is a 200.
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.allowed(Form::Both, &ok("tn_9"))), None);
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    // With no request by both ids, a first deactivation refused still fails.
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(
        failed(&m.allowed(Form::Partner, &err(422, "unprocessable_entity"))),
        Some("sequence.first")
    );
}

/// A key below the plan: 403, or 400/404/422 in the envelope (the order of checks is not
/// shown); a 200, a 500 or an error outside the envelope fail, and so does a later answer
/// showing the refused request changed the partner.
#[test]
fn a_gated_key_gets_403_or_a_clean_rejection() {
    for clean in [
        err(403, "forbidden"),
        err(400, "bad_request"),
        err(404, "not_found"),
        err(422, "unprocessable_entity"),
    ] {
        let mut m = Model::new(Some("pn_1"));
        assert_eq!(failed(&m.gated(Form::Neither, &clean)), None);
        assert_eq!(failed(&m.gated(Form::Partner, &clean)), None);
        assert_eq!(
            failed(&m.allowed(Form::Partner, &err(422, "unprocessable_entity"))),
            Some("sequence.gated")
        );
    }
    for bad in [
        ok("pn_1"),
        err(500, "internal_server_error"),
        err(409, "conflict"),
    ] {
        let mut m = Model::new(Some("pn_1"));
        assert_eq!(
            failed(&m.gated(Form::Partner, &bad)),
            Some("sequence.gated")
        );
    }
}

/// A refusal to a gated key changes nothing: the first allowed deactivation after it is
/// judged a first one, and its failure is the gate's.
#[test]
fn a_gated_refusal_leaves_the_partner_active() {
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(
        failed(&m.gated(Form::Tenant, &ok("pn_2"))),
        Some("sequence.gated")
    );
    assert_eq!(
        failed(&m.gated(Form::Partner, &err(403, "forbidden"))),
        None
    );
    assert_eq!(
        failed(&m.allowed(Form::Partner, &err(422, "unprocessable_entity"))),
        Some("sequence.gated")
    );
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(failed(&m.links(["a".to_string()].into())), None);
    m.gated(Form::Partner, &err(403, "forbidden"));
    assert_eq!(failed(&m.links(BTreeSet::new())), Some("sequence.gated"));
    assert_eq!(
        failed(&m.allowed(Form::UnknownTenant, &err(400, "bad_request"))),
        None
    );
    assert_eq!(
        failed(&m.allowed(Form::Neither, &ok("x"))),
        Some("sequence.unknown")
    );
}

/// Both ids: the first 200 shows which wins, and later ones are judged as that form; a
/// refusal while both are active changes nothing.
#[test]
fn both_ids_follow_the_winner_the_first_answer_showed() {
    let mut m = Model::new(Some("pn_1"));
    assert_eq!(
        failed(&m.allowed(Form::Both, &err(422, "unprocessable_entity"))),
        None
    );
    assert_eq!(failed(&m.allowed(Form::Both, &ok("pn_7"))), None);
    assert_eq!(m.learned(), Some("pn_7"));
    assert!(!m.partner_deactivated());
    assert_eq!(failed(&m.allowed(Form::Partner, &ok("pn_1"))), None);
    assert_eq!(failed(&m.allowed(Form::Both, &ok("pn_7"))), None);
    // The tenantId won before: a 200 naming the partnerId now is not that repeat.
    assert_eq!(
        failed(&m.allowed(Form::Both, &ok("pn_1"))),
        Some("sequence.repeat")
    );
}
