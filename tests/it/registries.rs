//! Adding a thing is one file and one registry line: what each registry holds is what the
//! files are. A load rule is a file of `crates/load/src/judge/` implementing `Rule`, listed in
//! `rules![...]`; a built-in scenario is `scenarios/NAME.toml`, listed in `BUILTIN`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The `module::Type` entries of the `rules![...]` registry in `judge/mod.rs`.
fn registered_rules(judge_mod: &str) -> BTreeSet<String> {
    let Some(start) = judge_mod.find("\nrules![") else {
        return BTreeSet::new();
    };
    let body = &judge_mod[start + 8..];
    let body = &body[..body.find("];").unwrap_or(body.len())];
    body.split(',')
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

/// `module::Type` for every file of `judge/` that implements `Rule` (`impl Rule for Type`).
fn rule_files(judge: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(judge).unwrap().flatten() {
        let p = e.path();
        let module = p.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (i, _) in text.match_indices("impl Rule for ") {
            let ty: String = text[i + 14..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(format!("{module}::{ty}"));
        }
    }
    out
}

#[test]
fn every_load_rule_file_is_registered_once_and_every_entry_is_a_rule_file() {
    let judge = root().join("crates/load/src/judge");
    let registry = std::fs::read_to_string(judge.join("mod.rs")).unwrap();
    let listed = registered_rules(&registry);
    let files = rule_files(&judge);
    assert!(files.len() >= 7, "the scan found the rules: {files:?}");
    assert_eq!(
        listed, files,
        "a load rule is a file of crates/load/src/judge/ implementing Rule and one line in rules![...]"
    );
}

#[test]
fn every_builtin_scenario_is_a_toml_file_of_scenarios_and_every_such_file_is_built_in() {
    let files: BTreeSet<String> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let builtin: BTreeSet<String> = linkcert::load::scenario::BUILTIN
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    assert!(builtin.len() >= 8, "{builtin:?}");
    assert_eq!(
        builtin, files,
        "a built-in scenario is scenarios/NAME.toml and one line in BUILTIN"
    );
    for (name, text) in linkcert::load::scenario::BUILTIN {
        let on_disk = std::fs::read_to_string(root().join(format!("scenarios/{name}.toml")));
        assert_eq!(on_disk.ok().as_deref(), Some(*text), "{name} is its file");
    }
}

/// The families of `crates/check/src/families.rs`: (name, the module its entry point is in, if any).
fn family_lines(text: &str) -> Vec<(String, Option<String>)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("Family::")?;
            let name = rest.split('"').nth(1)?.to_string();
            let module = rest
                .split("entry!(")
                .nth(1)
                .and_then(|r| r.split("::").next())
                .map(str::to_string);
            Some((name, module))
        })
        .collect()
}

#[test]
fn every_check_family_is_one_line_of_the_table_and_its_module_is_a_family_module() {
    let check = root().join("crates/check/src");
    let table = std::fs::read_to_string(check.join("families.rs")).unwrap();
    let families = family_lines(&table);
    let names: BTreeSet<String> = families.iter().map(|(n, _)| n.clone()).collect();
    let declared: BTreeSet<String> = linkcert::registry::FAMILIES
        .iter()
        .map(|f| f.to_string())
        .collect();
    assert!(names.len() >= 10, "the scan found the table: {families:?}");
    assert_eq!(names.len(), families.len(), "each family on one line, once");
    assert_eq!(
        names, declared,
        "the table and the registry's ids name the same families"
    );
    // The modules the table runs are the modules of crates/check/src/ that have an entry point.
    let run: BTreeSet<String> = families.iter().filter_map(|(_, m)| m.clone()).collect();
    let with_entry: BTreeSet<String> = std::fs::read_dir(&check)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let file = if p.is_dir() {
                p.join("mod.rs")
            } else {
                p.clone()
            };
            let text = std::fs::read_to_string(&file).ok()?;
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (stem != "mod" && stem != "lib" && text.contains("async fn run(")).then_some(stem)
        })
        .collect();
    assert_eq!(
        run, with_entry,
        "a check family is its module under crates/check/src/ (with `run`) and one line in FAMILIES"
    );
}
