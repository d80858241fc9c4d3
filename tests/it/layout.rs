//! The source tree as a newcomer reads it: dependencies between the top-level modules go one
//! way (no circles), no source file grows past about 600 lines unless its opening comment
//! says why it must not be split, code outside `check` uses only its entry point and options,
//! and every check or rule id used in `src/` is declared in the registry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

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

/// The top-level module a file of `src/` belongs to (`check`, `load`, ...).
fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// Code without comments and without its test module: what the library itself depends on.
pub(crate) fn library_code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn top_level_modules_depend_one_way() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        // Test-only files may reach anywhere.
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let from = top_module(&src, f);
        let code = library_code(&std::fs::read_to_string(f).unwrap());
        for (i, _) in code.match_indices("crate::") {
            let to: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !to.is_empty() && to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    assert!(
        edges.values().map(BTreeSet::len).sum::<usize>() > 5,
        "the scan found the modules' dependencies: {edges:?}"
    );
    // Depth-first search for a path back to where it started.
    fn cycle_from(
        start: &str,
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        for next in edges.get(at).into_iter().flatten() {
            if next == start {
                let mut c = path.clone();
                c.push(next.clone());
                return Some(c);
            }
            if !path.contains(next) {
                path.push(next.clone());
                if let Some(c) = cycle_from(start, next, edges, path) {
                    return Some(c);
                }
                path.pop();
            }
        }
        None
    }
    for m in edges.keys() {
        let mut path = vec![m.clone()];
        if let Some(c) = cycle_from(m, m, &edges, &mut path) {
            panic!("import cycle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn no_source_file_is_longer_than_a_sitting_unless_it_says_why() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "found the sources: {}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
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

/// What code outside `check` may take from it: the entry point and its options. What a check
/// is (id, level, clauses) is the registry's, the run's record is `report`'s.
const CHECK_PUBLIC: [&str; 4] = ["self", "run", "CheckOptions", "CheckError"];

/// Every name a file takes from `check`: `check::NAME` paths and the names of
/// `check::{...}` groups (a nested group counts as the path it starts with).
fn names_taken_from_check(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("check::") {
        // `check` itself, not a longer name ending in it (`precheck::`).
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
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
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        if top_module(&src, f) == "check" {
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
        names_taken_from_check("use crate::check::{self, CheckOptions, probe::{Req}};")
            == ["self", "CheckOptions", "probe"],
        "the scan reads import groups"
    );
    assert!(
        wrong.is_empty(),
        "outside src/check/, use only check::run, CheckOptions and CheckError \
         (what a check is: crate::registry; the run's record: crate::report::model): {wrong:#?}"
    );
}

/// String literals of `src/` that are file names, not check or rule ids.
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
fn every_check_and_rule_id_used_in_src_is_in_the_registry() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen = 0;
    let mut missing = Vec::new();
    for f in &files {
        // The registry declares the ids; everything else uses them.
        if top_module(&src, f) == "registry" {
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
        "ids used but not declared in src/registry/: {missing:#?}"
    );
}

/// Places in `src/` that make an HTTP client builder (test modules and comments aside).
fn client_builders(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for f in &files {
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
fn one_place_in_src_builds_an_http_client() {
    // reqwest's client and the generator's bare one, both from `http::ClientConfig`.
    let found = client_builders(&src());
    let one_place = Path::new("http").join("client.rs");
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
