//! Fixtures as a new user gives them: a few bare partner and tenant ids, no plan. As many as
//! the book says every family needs, no family is skipped for want of one, in front of both
//! implementations; with fewer, the report names the flags to add. `check --help`, the book
//! and the README's example state the same number, the ledger's (`fixtures::FEWEST`).

use crate::common;

use std::process::Command;

use common::broken::{BOTH, Impl, Upstream};
use linkcert::check::fixtures::{Count, FEWEST};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");
const WINDOW_SECS: f64 = 6.0;

/// `check` of the families that deactivate, with `fixtures` of the implementation's given bare
/// (the first partnerIds and tenantIds of the workspace its target binds them to).
fn run_with_bare(imp: Impl, fixtures: Count) -> (std::process::Output, Value) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let upstream = rt.block_on(Upstream::start(imp, WINDOW_SECS));
    let target = upstream.target();
    assert!(target.partner_ids.len() >= fixtures.partners, "{imp:?}");
    assert!(target.tenant_ids.len() >= fixtures.tenants, "{imp:?}");
    let dir = std::env::temp_dir().join(format!(
        "linkcert-test-fixtures-{imp:?}-{}-{}-{}",
        fixtures.partners,
        fixtures.tenants,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut args: Vec<String> = vec![
        "check".into(),
        "--target".into(),
        upstream.base_url().into(),
        "--insecure".into(),
        "--rate-window".into(),
        WINDOW_SECS.to_string(),
        "--allow-destructive".into(),
        "--out".into(),
        dir.to_str().unwrap().into(),
    ];
    for family in ["http.media-type", "partners", "sequence"] {
        args.extend(["--only".into(), family.into()]);
    }
    for k in &target.keys {
        args.extend(["--key".into(), format!("{}={}", k.plan, k.key)]);
    }
    for f in target.partner_ids.iter().take(fixtures.partners) {
        args.extend(["--partner".into(), f.id.clone()]);
    }
    for f in target.tenant_ids.iter().take(fixtures.tenants) {
        args.extend(["--tenant".into(), f.id.clone()]);
    }
    let out = Command::new(BIN).args(&args).output().unwrap();
    drop(upstream);
    let report = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap())
        .unwrap_or_else(|e| panic!("{imp:?}: report.json: {e}: {out:?}"));
    (out, report)
}

/// The checks of a report with their verdicts and skip reasons.
fn checks(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
                c.to_string(),
            )
        })
        .collect()
}

#[test]
fn bare_fixtures_as_many_as_the_book_says_run_every_family_in_front_of_both() {
    std::thread::scope(|s| {
        for imp in BOTH {
            s.spawn(move || {
                let (out, report) = run_with_bare(imp, FEWEST);
                let stdout = String::from_utf8_lossy(&out.stdout);
                let ctx = format!("{imp:?}:\n{stdout}");
                assert_eq!(out.status.code(), Some(0), "{ctx}");
                let checks = checks(&report);
                // Skipped for want of fixtures: a reason that names them or their flags. (The
                // variant has no GET /links, so `partners.links-disabled` cannot see its effect.)
                let skipped: Vec<_> = checks
                    .iter()
                    .filter(|c| c.1 == "skipped")
                    .filter(|c| {
                        ["fixture", "--partner", "--tenant", "partnerId", "tenantId"]
                            .iter()
                            .any(|w| c.2.contains(w))
                    })
                    .collect();
                assert!(skipped.is_empty(), "skipped: {skipped:#?}\n{ctx}");
                let links = (imp == Impl::Reference).then_some("partners.links-disabled");
                for id in [
                    "http.media-type",
                    "partners.deactivate",
                    "sequence.first",
                    "sequence.repeat",
                ]
                .into_iter()
                .chain(links)
                {
                    assert!(
                        checks.iter().any(|c| c.0 == id && c.1 == "pass"),
                        "{id} passed: {ctx}"
                    );
                }
                // Which id wins when both are given was tried, with a pair of its own.
                assert!(
                    checks.iter().any(|c| c.0 == "partners.choices"
                        && c.2.contains("both ids of two active partners: the")),
                    "{ctx}"
                );
            });
        }
    });
}

#[test]
fn with_fewer_bare_fixtures_the_report_names_the_flags_to_add() {
    // One tenant short: the checks that can fail run, and the informational pair (which id
    // wins when both are given) goes without, saying what to add.
    let fewer = Count::new(FEWEST.partners, FEWEST.tenants - 1);
    let (out, report) = run_with_bare(Impl::Reference, fewer);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let checks = checks(&report);
    for id in ["http.media-type", "partners.deactivate", "sequence.first"] {
        assert!(
            checks.iter().any(|c| c.0 == id && c.1 == "pass"),
            "{id} passed: {stdout}"
        );
    }
    let choices = checks
        .iter()
        .find(|c| c.0 == "partners.choices")
        .expect("partners.choices");
    assert!(
        choices
            .2
            .contains("both ids of two active partners: not tried"),
        "{choices:?}"
    );
    assert!(
        choices.2.contains("add 1 more --tenant ID ("),
        "{choices:?}"
    );
    assert!(
        choices.2.contains(&format!(
            "({} --partner and {} --tenant run every family)",
            FEWEST.partners, FEWEST.tenants
        )),
        "{choices:?}"
    );
}

/// The number every family needs, said where a user looks: `check --help`, the book's page on
/// `check`, and the README's example gives that many.
#[test]
fn help_book_and_readme_give_the_fewest_fixtures_that_run_every_family() {
    let said = format!(
        "{} --partner and {} --tenant run every family",
        FEWEST.partners, FEWEST.tenants
    );
    let out = Command::new(BIN)
        .args(["check", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains(&said), "check --help lacks {said:?}");
    let root = env!("CARGO_MANIFEST_DIR");
    let book = std::fs::read_to_string(format!("{root}/docs/src/check.md")).unwrap();
    let book = book.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(book.contains(&said), "docs/src/check.md lacks {said:?}");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example = readme
        .split("```sh")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("--partner"))
        .expect("a README example with --partner");
    assert_eq!(
        example.matches("--partner ").count(),
        FEWEST.partners,
        "{example}"
    );
    assert_eq!(
        example.matches("--tenant ").count(),
        FEWEST.tenants,
        "{example}"
    );
}

/// Every check the registry says deactivates fixtures is skipped when none are given, and its
/// reason names the flags to add; what needs none is not skipped for them.
#[test]
fn without_fixtures_every_check_that_needs_them_is_skipped_naming_the_flags() {
    let (out, report) = run_with_bare(Impl::Reference, Count::new(0, 0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let checks = checks(&report);
    let needing: Vec<&str> = linkcert::registry::CHECKS
        .iter()
        .filter(|d| d.needs.fixtures)
        .map(|d| d.id)
        .collect();
    assert!(needing.len() >= 8, "{needing:?}");
    for (id, verdict, json) in &checks {
        if needing.contains(&id.as_str()) {
            // Skipped, or (a check with parts that deactivate nothing) partly skipped.
            assert!(
                verdict == "skipped" || json.contains("\"partly_skipped\""),
                "{json}\n{stdout}"
            );
            assert!(
                json.contains("add ") && json.contains("more --partner ID"),
                "{json}"
            );
        } else {
            assert_ne!(verdict, "skipped", "{json}\n{stdout}");
        }
    }
}
