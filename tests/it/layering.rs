//! Each crate's modules, as the next engineer reads them: no function of 100 lines or more, no
//! circle between the modules of one folder or of one crate (`judge/admitted` ↔
//! `judge/windows` was one), and in `load` no module takes an item from a module above it (the
//! run record, the errors and the rules' shared types live in modules of their own, so the
//! judge, the scheduler and the engine import those, never `load`'s `lib.rs` or
//! `judge/mod.rs`). A module's path starts with its crate's name (`load::judge::rule`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::layout::{Source, all_files, library_code, rust_files, sources};

/// A function this long does several things: split it.
const MAX_FN_LINES: usize = 100;

fn is_test_file(f: &Path) -> bool {
    let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// Every function of a text whose body is `MAX_FN_LINES` lines or more: (line, name, lines).
/// A function ends at the first line that is its own indentation and `}`.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let body = l.trim_start();
        let indent = &l[..l.len() - body.len()];
        let mut words = body.split_whitespace().peekable();
        while words.peek().is_some_and(|w| {
            w.starts_with("pub") || ["async", "const", "unsafe", "extern"].contains(w)
        }) {
            words.next();
        }
        if words.next() != Some("fn") {
            continue;
        }
        let name: String = words
            .next()
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|x| *x == close) {
            let n = end + 2;
            if n >= MAX_FN_LINES {
                out.push((i + 1, name, n));
            }
        }
    }
    out
}

#[test]
fn every_function_is_under_100_lines() {
    let mut long = Vec::new();
    for (_, f) in &all_files() {
        let text = std::fs::read_to_string(f).unwrap();
        for (line, name, n) in long_functions(&text) {
            long.push(format!("{}:{line} {name} ({n} lines)", f.display()));
        }
    }
    let sample = format!(
        "fn a() {{\n{}}}\n    pub async fn b() {{\n    }}\n",
        "x;\n".repeat(98)
    );
    assert_eq!(
        long_functions(&sample),
        [(1, "a".to_string(), 100)],
        "the scan measures functions"
    );
    assert!(long.is_empty(), "split these functions: {long:#?}");
}

/// A module's path, its crate's name first (`crates/load/src/judge/rule.rs` →
/// `load::judge::rule`).
fn module_path(src: &Source, f: &Path) -> Vec<String> {
    let rel = f.strip_prefix(&src.dir).unwrap_or(f).with_extension("");
    let mut parts: Vec<String> = std::iter::once(src.name.clone())
        .chain(
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned()),
        )
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The modules a module declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`); the module's
/// path starts with its crate's name.
fn submodules(src: &Source, module: &[String]) -> BTreeSet<String> {
    let module = &module[1.min(module.len())..];
    let base = module.iter().fold(src.dir.clone(), |p, m| p.join(m));
    let file = if module.is_empty() {
        src.dir.join("lib.rs")
    } else if base.join("mod.rs").is_file() {
        base.join("mod.rs")
    } else {
        base.with_extension("rs")
    };
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let mut first = w.next()?;
            if first.starts_with("pub") {
                first = w.next()?;
            }
            let name = w.next()?.strip_suffix(';')?;
            (first == "mod").then(|| name.to_string())
        })
        .collect()
}

/// Every path a file's code names through `super::` or `crate::`, made absolute from the
/// file's module (a `{a, b::c}` group gives `a` and `b::c`; a glob gives its module and `*`).
fn absolute_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for start in ["super::", "crate::"] {
        for (i, _) in code.match_indices(start) {
            if code[..i]
                .chars()
                .next_back()
                .is_some_and(|c| is_ident(c) || c == ':')
            {
                continue;
            }
            let mut rest = &code[i..];
            let base = if start == "super::" {
                let mut base = module.to_vec();
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
                base
            } else {
                // `crate::` starts at the crate, the first part of every module path.
                rest = &rest[start.len()..];
                module[..1].to_vec()
            };
            let head: String = rest
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':' || *c == '*')
                .collect();
            let mut prefix = base.clone();
            prefix.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
            let after = &rest[head.len()..];
            match after.strip_prefix('{') {
                Some(group) if head.ends_with("::") || head.is_empty() => {
                    let inner = group.split('}').next().unwrap_or("");
                    for item in inner.split(',') {
                        let mut p = prefix.clone();
                        let first: String =
                            item.trim().chars().take_while(|c| is_ident(*c)).collect();
                        if !first.is_empty() && first != "self" {
                            p.push(first);
                        }
                        out.push(p);
                    }
                }
                _ => out.push(prefix),
            }
        }
    }
    out
}

/// The module a path lands in (its longest prefix of modules) and whether it goes on to an
/// item of that module.
fn landing(src: &Source, path: &[String]) -> Landing {
    let mut module = path[..1].to_vec();
    for (i, seg) in path.iter().enumerate().skip(1) {
        if submodules(src, &module).contains(seg) {
            module.push(seg.clone());
        } else {
            return (module, i < path.len());
        }
    }
    (module, false)
}

/// Where a path lands: the module, and whether it goes on to an item of it.
type Landing = (Vec<String>, bool);

/// What each library file of each crate names: (file, its module, where each path lands).
fn references() -> Vec<(PathBuf, Vec<String>, Vec<Landing>)> {
    let mut out = Vec::new();
    for src in sources() {
        let mut files = Vec::new();
        rust_files(&src.dir, &mut files);
        for f in files {
            if is_test_file(&f) || f.ends_with("main.rs") {
                continue;
            }
            let module = module_path(&src, &f);
            let code = library_code(&std::fs::read_to_string(&f).unwrap());
            let lands = absolute_paths(&code, &module)
                .iter()
                .map(|p| landing(&src, p))
                .collect();
            out.push((f, module, lands));
        }
    }
    out
}

#[test]
fn in_load_no_module_takes_an_item_from_a_module_above_it() {
    let mut climbs = Vec::new();
    let mut seen = 0;
    for (f, module, lands) in references() {
        if module.first().is_none_or(|m| m != "load") {
            continue;
        }
        for (to, item) in lands {
            seen += 1;
            if item && to.len() < module.len() && module.starts_with(&to) {
                climbs.push(format!(
                    "{} takes an item of {}",
                    f.display(),
                    to.join("::")
                ));
            }
        }
    }
    assert!(seen > 50, "the scan found load's imports: {seen}");
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        absolute_paths(
            "use super::{rule::Judge, Record}; x(super::super::LoadError)",
            &m("load::judge::a")
        ),
        [
            m("load::judge::rule"),
            m("load::judge::Record"),
            m("load::LoadError")
        ],
        "the scan resolves relative paths"
    );
    climbs.sort();
    climbs.dedup();
    assert!(
        climbs.is_empty(),
        "move what these need into a module of its own beside them: {climbs:#?}"
    );
}

#[test]
fn the_modules_of_one_folder_depend_one_way() {
    // For each module, the edges between its children: a file under child A naming child B.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for (_, module, lands) in references() {
        for (to, _) in lands {
            let common = module.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < module.len() && common < to.len() && common > 0 {
                let parent = module[..common].to_vec();
                edges
                    .entry(parent)
                    .or_default()
                    .insert((module[common].clone(), to[common].clone()));
            }
        }
    }
    assert!(
        edges
            .get(&vec!["load".to_string()])
            .is_some_and(|e| e.len() > 5),
        "the scan found load's edges: {edges:?}"
    );
    let mut circles = Vec::new();
    for (parent, e) in &edges {
        let next = |a: &str| -> Vec<String> {
            e.iter()
                .filter(|(x, _)| x == a)
                .map(|(_, y)| y.clone())
                .collect()
        };
        for (start, _) in e {
            // Depth-first from `start`, looking for the way back.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut visited = BTreeSet::new();
            while let Some((at, path)) = stack.pop() {
                for n in next(&at) {
                    if &n == start {
                        circles.push(format!(
                            "{}: {} -> {n}",
                            parent.join("::"),
                            path.join(" -> ")
                        ));
                    } else if visited.insert(n.clone()) {
                        let mut p = path.clone();
                        p.push(n.clone());
                        stack.push((n, p));
                    }
                }
            }
        }
    }
    circles.sort();
    circles.dedup();
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}
