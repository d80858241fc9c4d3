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

#[test]
fn mistakes_are_named() {
    let spec = Spec::embedded().unwrap();
    let e = Scenario::from_toml(
        "name='x'\nplan='free'\nrate=1\nwindows=1\noperations=[]\ntypo=1",
        "t",
    );
    assert!(e.is_err());
    let s = Scenario::from_toml(
        "name='x'\nplan='gold'\nrate=1\nwindows=1\n[[operations]]\noperation='getTags'",
        "t",
    )
    .unwrap();
    assert!(
        s.validate(&spec)
            .unwrap_err()
            .to_string()
            .contains("unknown plan")
    );
    let s = Scenario::from_toml(
        "name='x'\nplan='pro'\nclass='analytics'\nrate=1\nwindows=1\n[[operations]]\noperation='getTags'",
        "t",
    )
    .unwrap();
    assert!(
        s.validate(&spec)
            .unwrap_err()
            .to_string()
            .contains("counts against")
    );
    assert!(Scenario::load("no-such-scenario").is_err());
}
