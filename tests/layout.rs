//! The source tree as a newcomer reads it: dependencies between the top-level modules go one
//! way (no circles), and no source file grows past about 600 lines unless its opening comment
//! says why it must not be split.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
fn library_code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn src() -> PathBuf {
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
    let found = client_builders(&src());
    assert_eq!(
        found.len(),
        1,
        "every client is configured in one place (`http::ClientConfig`): {found:?}"
    );
}
