//! Scenario files: the built-in ones valid, mistakes named.

use super::*;

#[test]
fn every_builtin_parses_and_validates() {
    let spec = Spec::embedded().unwrap();
    let all = Scenario::builtin().unwrap();
    assert_eq!(all.len(), BUILTIN.len());
    for (s, (name, _)) in all.iter().zip(BUILTIN) {
        assert_eq!(&s.name, name);
        s.validate(&spec).unwrap();
    }
}

/// Why the spec refuses a scenario file that parses.
fn refused(toml: &str) -> String {
    let spec = Spec::embedded().unwrap();
    let s = Scenario::from_toml(toml, "t").unwrap();
    s.validate(&spec).unwrap_err().to_string()
}

#[test]
fn mistakes_are_named() {
    let e = Scenario::from_toml(
        "name='x'\nplan='free'\nrate=1\nwindows=1\noperations=[]\ntypo=1",
        "t",
    );
    assert!(e.is_err());
    let op = "[[operations]]\noperation='getTags'";
    let why = refused(&format!("name='x'\nplan='gold'\nrate=1\nwindows=1\n{op}"));
    assert!(why.contains("unknown plan"), "{why}");
    let why = refused(&format!(
        "name='x'\nplan='pro'\nclass='analytics'\nrate=1\nwindows=1\n{op}"
    ));
    assert!(why.contains("counts against"), "{why}");
    // Every plan goes with the plans shape, and silence with a fleet.
    let why = refused(&format!("name='x'\nplan='every'\nrate=1\nwindows=1\n{op}"));
    assert!(why.contains("goes with shape"), "{why}");
    let why = refused(&format!(
        "name='x'\nplan='free'\nsilence=0.4\nrate=1\nwindows=1\n{op}"
    ));
    assert!(why.contains("silence is for fleet"), "{why}");
    assert!(Scenario::load("no-such-scenario").is_err());
}
