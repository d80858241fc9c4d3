//! The source tree as a newcomer reads it: the crates of the workspace depend one way, bottom
//! up (no circle, nothing climbing back up), `check` and `load` build without the reference,
//! no source file grows past about 600 lines unless its opening comment says why it must not
//! be split, code outside `check` uses only its entry point and options, and every check or
//! rule id used in the sources is declared in the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

/// The crates bottom up, by their folder under `crates/` (`linkcert` is this package, the
/// binary): each may depend only on crates before it.
const LAYERS: [&str; 13] = [
    "spec",
    "registry",
    "http",
    "qr",
    "qr-read",
    "qr-encode",
    "rate",
    "run",
    "report",
    "server",
    "check",
    "load",
    "linkcert",
];

/// Crates whose code the conformance runners must not be built from: the reference and its
/// encoder. A change there rebuilds the server and relinks, and nothing of `check` or `load`.
const REFERENCE_ONLY: [&str; 2] = ["server", "qr-encode"];

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Code without comments and without its test module: what the library itself depends on.
pub(crate) fn library_code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A crate's sources: its name as `LAYERS` has it and its `src/`.
pub(crate) struct Source {
    pub name: String,
    pub dir: PathBuf,
}

/// Every crate's sources, `LAYERS`' order: the library crates, then this package's.
pub(crate) fn sources() -> Vec<Source> {
    LAYERS
        .iter()
        .map(|&name| Source {
            name: name.to_string(),
            dir: if name == "linkcert" {
                root().join("src")
            } else {
                root().join("crates").join(name).join("src")
            },
        })
        .collect()
}

/// Every Rust file of every crate, with its crate's name.
pub(crate) fn all_files() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for s in sources() {
        let mut files = Vec::new();
        rust_files(&s.dir, &mut files);
        out.extend(files.into_iter().map(|f| (s.name.clone(), f)));
    }
    out
}

/// The workspace crates a crate's manifest names under `[dependencies]` (not dev-dependencies),
/// by folder name.
fn internal_dependencies(name: &str) -> BTreeSet<String> {
    let manifest = if name == "linkcert" {
        root().join("Cargo.toml")
    } else {
        root().join("crates").join(name).join("Cargo.toml")
    };
    let text = std::fs::read_to_string(&manifest).unwrap();
    let toml: toml::Table = text.parse().unwrap();
    toml.get("dependencies")
        .and_then(|d| d.as_table())
        .into_iter()
        .flat_map(|d| d.keys())
        .filter_map(|k| k.strip_prefix("linkcert-"))
        .map(String::from)
        .collect()
}

#[test]
fn crates_depend_one_way_and_check_and_load_build_without_the_reference() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let layered: BTreeSet<String> = LAYERS[..LAYERS.len() - 1]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(on_disk, layered, "every crate has its place in LAYERS");
    let mut climbs = Vec::new();
    let mut deps: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (i, name) in LAYERS.iter().enumerate() {
        let d = internal_dependencies(name);
        for dep in &d {
            match LAYERS.iter().position(|l| l == dep) {
                Some(j) if j < i => {}
                _ => climbs.push(format!("{name} -> {dep}")),
            }
        }
        deps.insert(name, d);
    }
    assert!(
        deps.values().map(BTreeSet::len).sum::<usize>() > 20,
        "the scan found the crates' dependencies: {deps:?}"
    );
    assert!(
        climbs.is_empty(),
        "a crate depends only on crates below it in LAYERS: {climbs:?}"
    );
    // What check and load are built from, all the way down.
    for runner in ["check", "load"] {
        let mut seen = BTreeSet::new();
        let mut todo = vec![runner.to_string()];
        while let Some(c) = todo.pop() {
            for d in &deps[c.as_str()] {
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        let reference: Vec<&&str> = REFERENCE_ONLY
            .iter()
            .filter(|r| seen.contains(**r))
            .collect();
        assert!(
            reference.is_empty(),
            "{runner} is built from {reference:?}: a change in the reference would rebuild it"
        );
    }
}

#[test]
fn no_source_file_is_longer_than_a_sitting_unless_it_says_why() {
    let files = all_files();
    assert!(files.len() > 20, "found the sources: {}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|(_, f)| {
            let text = std::fs::read_to_string(f).ok()?;
            let n = text.lines().count();
            let opening: String = text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .collect::<Vec<_>>()
                .join(" ");
            (n > MAX_LINES && !opening.contains("must not be split"))
                .then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these along their seams: {long:?}");
}

/// What code outside `check` may take from it: the entry point, its options and the window it
/// runs the in-process reference with. What a check is (id, level, clauses) is the registry's,
/// the run's record is `report`'s.
const CHECK_PUBLIC: [&str; 6] = [
    "self",
    "run",
    "CheckOptions",
    "CheckError",
    // How `check` runs the in-process reference: its window and its keys per plan.
    "IN_PROCESS_WINDOW_SECS",
    "IN_PROCESS_KEYS_PER_PLAN",
];

/// Every name a file takes from `check`: `check::NAME` and `linkcert_check::NAME` paths and the
/// names of their `{...}` groups (a nested group counts as the path it starts with).
fn names_taken_from_check(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("check::") {
        // `check` itself (or the crate), not a longer name ending in it (`precheck::`).
        let before = code[..i].strip_suffix("linkcert_").unwrap_or(&code[..i]);
        if before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = code[i + 7..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => items.push(std::mem::take(&mut item)),
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if c != ',' || depth > 1 {
                    item.push(c);
                }
            }
            items.push(item);
            names.extend(
                items
                    .iter()
                    .map(|s| ident(s.trim()))
                    .filter(|s| !s.is_empty()),
            );
        } else {
            names.push(ident(rest));
        }
    }
    names
}

#[test]
fn outside_check_only_its_entry_point_and_options_are_used() {
    let mut wrong = Vec::new();
    for (krate, f) in &all_files() {
        if krate == "check" {
            continue;
        }
        let code = library_code(&std::fs::read_to_string(f).unwrap());
        for name in names_taken_from_check(&code) {
            if !CHECK_PUBLIC.contains(&name.as_str()) {
                wrong.push(format!("{} uses check::{name}", f.display()));
            }
        }
    }
    assert!(
        names_taken_from_check(
            "use linkcert_check::{self, CheckOptions, probe::{Req}}; check::run(x)"
        ) == ["self", "CheckOptions", "probe", "run"],
        "the scan reads import groups"
    );
    assert!(
        wrong.is_empty(),
        "outside crates/check/, use only check::run, CheckOptions and CheckError \
         (what a check is: linkcert_registry; the run's record: linkcert_report::model): {wrong:#?}"
    );
}

/// String literals of the sources that are file names, not check or rule ids.
const NOT_IDS: [&str; 3] = ["load.json", "load.md", "load.html"];

/// String literals shaped like a check or rule id: `family.name-in-kebab-case`.
fn id_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for lit in code.split('"').skip(1).step_by(2) {
        let Some((family, name)) = lit.split_once('.') else {
            continue;
        };
        if (linkcert::registry::FAMILIES.contains(&family) || family == "load")
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !NOT_IDS.contains(&lit)
        {
            out.push(lit.to_string());
        }
    }
    out
}

#[test]
fn every_check_and_rule_id_used_in_the_sources_is_in_the_registry() {
    let mut seen = 0;
    let mut missing = Vec::new();
    for (krate, f) in &all_files() {
        // The registry declares the ids; everything else uses them.
        if krate == "registry" {
            continue;
        }
        let code = library_code(&std::fs::read_to_string(f).unwrap());
        for id in id_literals(&code) {
            seen += 1;
            if !linkcert::registry::declared(&id) {
                missing.push(format!("{}: \"{id}\"", f.display()));
            }
        }
    }
    assert!(seen > 50, "the scan found the ids in use: {seen}");
    assert_eq!(
        id_literals(r#"rec.pass("qr.size", op); f("load.json"); x("a.b")"#),
        ["qr.size"]
    );
    assert!(
        missing.is_empty(),
        "ids used but not declared in crates/registry/: {missing:#?}"
    );
}

/// Places in the sources that make an HTTP client builder (test modules and comments aside).
fn client_builders() -> Vec<String> {
    let mut found = Vec::new();
    for (_, f) in &all_files() {
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let code = library_code(&std::fs::read_to_string(f).unwrap());
        for needle in ["Client::builder(", "ClientBuilder::new("] {
            for _ in code.matches(needle) {
                found.push(format!("{} ({needle})", f.display()));
            }
        }
    }
    found
}

#[test]
fn one_place_builds_an_http_client() {
    // reqwest's client and the generator's bare one, both from `http::ClientConfig`.
    let found = client_builders();
    let one_place = Path::new("http").join("src").join("client.rs");
    assert_eq!(
        found.len(),
        2,
        "the two clients, each built once: {found:?}"
    );
    assert!(
        found
            .iter()
            .all(|f| f.contains(one_place.to_str().unwrap())),
        "every client is configured in one place (`http::ClientConfig`): {found:?}"
    );
}

/// `cargo run -- check`, the README's main job, must know which binary to run: another
/// workspace member with a binary (tests/mutants' `mutants-page`) makes a bare `cargo run`
/// refuse ("could not determine which binary to run") unless the root names its own.
#[test]
fn a_bare_cargo_run_runs_linkcert() {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let toml: toml::Table = text.parse().unwrap();
    let package = toml["package"].as_table().expect("[package]");
    assert_eq!(
        package.get("default-run").and_then(|v| v.as_str()),
        Some("linkcert"),
        "the root package's default-run"
    );
}
