//! `docs/src/mutants.md` is what `mutants-page` writes now from the kept runs and the fates,
//! and what it reads is sound: every survivor of the first run has a fate, every class takes
//! one, every check a run names exists.

use std::path::Path;

use linkcert_mutants::{Fates, Measure, Outcome, PAGE_COMMAND, Run, page_from};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn the_page_is_what_mutants_page_writes_now() {
    let now = page_from(root()).unwrap_or_else(|e| panic!("{e}"));
    let kept = std::fs::read_to_string(root().join("docs/src/mutants.md")).unwrap_or_default();
    if now != kept {
        let line = now
            .lines()
            .zip(kept.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(now.lines().count().min(kept.lines().count()))
            + 1;
        panic!(
            "docs/src/mutants.md differs from what it would be now (first at line {line}); write it: {PAGE_COMMAND}"
        );
    }
}

#[test]
fn every_check_a_kept_run_names_is_a_registered_check() {
    for entry in std::fs::read_dir(root().join("tests/mutants/record")).unwrap() {
        let path = entry.unwrap().path();
        let run = Run::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(!run.shards.is_empty(), "{}: no shard", path.display());
        for m in &run.mutants {
            assert_eq!(
                m.outcome == Outcome::Caught,
                !m.checks.is_empty(),
                "{}: {}",
                path.display(),
                m.name
            );
            for id in m.checks.iter().filter(|c| !c.starts_with('!')) {
                assert!(
                    linkcert_registry::Check::find(id).is_some(),
                    "{}: {} names {id}, no check of the registry",
                    path.display(),
                    m.name
                );
            }
        }
    }
}

const RUN: &str = "shard\tshard-0-1\tabc\t3\t60\n\
caught\tqr.content\tcrates/a.rs:1:1: replace a\n\
missed\t\tcrates/a.rs:2:1: replace b\n\
missed\t\tcrates/b.rs:3:1: replace c\n";

fn page(fates: &str, later: &[(&str, Run)]) -> Result<String, String> {
    let first = Run::parse(RUN).unwrap();
    let fates = Fates::parse(fates).unwrap();
    Measure {
        first: &first,
        later,
        fates: &fates,
    }
    .page()
    .map_err(|e| e.to_string())
}

#[test]
fn a_survivor_without_a_class_or_with_two_and_a_class_without_one_are_errors() {
    let one = "[[class]]\nname = \"a\"\nfate = \"legal\"\nwhy = \"w\"\nmatches = ['a\\.rs']\n";
    let err = page(one, &[]).unwrap_err();
    assert!(
        err.contains("no class in fates.toml takes crates/b.rs:3:1"),
        "{err}"
    );
    let two = format!(
        "{one}[[class]]\nname = \"all\"\nfate = \"open\"\nwhy = \"w\"\nmatches = ['crates']\n[[class]]\nname = \"none\"\nfate = \"open\"\nwhy = \"w\"\nmatches = ['nowhere']\n"
    );
    let err = page(&two, &[]).unwrap_err();
    assert!(
        err.contains("crates/a.rs:2:1: replace b is taken by 2 classes: a, all"),
        "{err}"
    );
    assert!(err.contains("class \"none\" takes no survivor"), "{err}");
}

#[test]
fn the_score_counts_what_a_later_run_caught_and_leaves_out_the_equivalent() {
    let fates = "[[class]]\nname = \"hint\"\nfate = \"equivalent\"\nwhy = \"a capacity hint\"\nmatches = ['b\\.rs']\n\
                 [[class]]\nname = \"gap\"\nfate = \"open\"\nwhy = \"w\"\nmatches = ['a\\.rs']\n";
    let before = page(fates, &[]).unwrap();
    // 1 caught of 3 viable, 1 equivalent: 1 of 2.
    assert!(before.contains("**50.0%** (1 of 2)"), "{before}");
    let later =
        Run::parse("shard\tshard-0-1\tdef\t1\t20\ncaught\tqr.size\tcrates/a.rs:2:1: replace b\n")
            .unwrap();
    let after = page(fates, &[("2-later", later)]).unwrap();
    assert!(after.contains("**100.0%** (2 of 2)"), "{after}");
    assert!(
        after.contains("- `crates/a.rs:2:1: replace b`: caught by `qr.size` (run `2-later`)"),
        "{after}"
    );
}

#[test]
fn the_page_says_how_far_the_score_can_go_with_the_legal_survivors_left_alive() {
    let fates = "[[class]]\nname = \"mask\"\nfate = \"legal\"\nwhy = \"another mask\"\nmatches = ['b\\.rs']\n\
                 [[class]]\nname = \"gap\"\nfate = \"open\"\nwhy = \"w\"\nmatches = ['a\\.rs']\n";
    let page = page(fates, &[]).unwrap();
    // 1 caught of 3 viable; the open one caught too would make 2 of 3, the legal one never.
    assert!(page.contains("**33.3%** (1 of 3)"), "{page}");
    assert!(
        page.contains("would be **66.7%** (2 of 3): the legal survivors (1)"),
        "{page}"
    );
}
