use super::*;
use crate::judge::Finding;

/// A target's words reach load.html through findings (what it answered, its headers): as
/// text, never as markup.
#[test]
fn a_script_in_a_targets_answer_is_escaped_in_load_html() {
    let evil = "<script>alert(\"x\")</script> & 'q'";
    let spec = linkcert_spec::Spec::embedded().expect("the embedded spec loads");
    let mut report = LoadReport::new(&spec, &Target::default(), 0);
    let scenario = crate::Scenario::load("free-overload").expect("built-in");
    let mut s = ScenarioResult::of(&scenario, "standard");
    s.verdict = ScenarioVerdict::Fail;
    s.findings.push(Finding {
        check: "load.envelope".into(),
        verdict: Verdict::Fail,
        key: Some("free#1".into()),
        message: format!("a 429 answered {evil}"),
        expected: "the error envelope".into(),
        actual: evil.into(),
    });
    report.scenarios.push(s);
    report.finish(&["free#1".into()]);
    let html = report.html();
    assert!(!html.contains("<script"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"));
    let doc = scraper::Html::parse_document(&html);
    let sel = |s| scraper::Selector::parse(s).expect("a selector");
    assert!(doc.select(&sel("script")).next().is_none());
    let finding: String = doc.select(&sel("li.fail")).flat_map(|e| e.text()).collect();
    assert_eq!(
        finding,
        format!(
            "load.envelope fail free#1: a 429 answered {evil} (expected the error envelope; got {evil})"
        )
    );
    assert_eq!(doc.select(&sel("svg")).count(), 0, "no key, no chart");
    assert_eq!(doc.select(&sel("h2#coverage")).count(), 1);
}

/// How a run ended, for CI: a shard whose scenarios all run elsewhere did its part; nothing
/// run at all (no scenario, or none that ran anywhere) could not run; a failure fails.
#[test]
fn a_shard_that_did_its_part_passes_and_a_run_with_nothing_run_cannot_run() {
    use crate::scenario::Skip;
    use linkcert_run::Outcome;
    let spec = linkcert_spec::Spec::embedded().expect("the embedded spec loads");
    let scenario = crate::Scenario::load("free-overload").expect("built-in");
    let ended = |scenarios: Vec<ScenarioResult>| {
        let mut report = LoadReport::new(&spec, &Target::default(), 0);
        report.scenarios = scenarios;
        report.finish(&[]);
        report.outcome()
    };
    let elsewhere = ScenarioResult::skipped(&scenario, "standard", &Skip::Elsewhere("2/3".into()));
    let cannot = ScenarioResult::skipped(&scenario, "standard", &Skip::Cannot("no key".into()));
    assert_eq!(ended(vec![elsewhere.clone()]), Outcome::Passed);
    assert_eq!(ended(vec![cannot.clone()]), Outcome::CannotRun);
    assert_eq!(ended(vec![elsewhere, cannot]), Outcome::CannotRun);
    assert_eq!(ended(Vec::new()), Outcome::CannotRun);
    let mut failed = ScenarioResult::of(&scenario, "standard");
    failed.verdict = ScenarioVerdict::Fail;
    assert_eq!(ended(vec![failed]), Outcome::Failed);
}
