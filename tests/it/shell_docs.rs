//! What a user installs beside the binary: shell completions for bash, zsh and fish and the man
//! page name every subcommand and flag the parser knows; a bash completion really completes
//! (`complete -p`, then the completion function as bash calls it); `--version` names the spec
//! version of the document in `specs/`; the README's set-up keeps its two commands first, and
//! the book's install page the install routes, one line each.

use std::collections::BTreeSet;
use std::process::Command;

use clap::CommandFactory;

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(out.status.success(), "linkcert {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every subcommand's name and every long flag of it, from the parser's own definition.
fn subcommands_and_flags() -> Vec<(String, BTreeSet<String>)> {
    let cmd = linkcert::cli::Cli::command();
    let all: Vec<(String, BTreeSet<String>)> = cmd
        .get_subcommands()
        .map(|s| {
            let flags = s
                .get_arguments()
                .filter_map(|a| a.get_long())
                .map(|l| format!("--{l}"))
                .collect();
            (s.get_name().to_string(), flags)
        })
        .collect();
    // The definition walked is the real one, not an empty shell.
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    for n in ["serve", "check", "load", "catalogue", "completions", "man"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let check = &all.iter().find(|(n, _)| n == "check").unwrap().1;
    for f in ["--fail-on", "--baseline", "--accept", "--key", "--target"] {
        assert!(check.contains(f), "{f} in {check:?}");
    }
    all
}

#[test]
fn bash_zsh_and_fish_completions_name_every_subcommand_and_flag() {
    let all = subcommands_and_flags();
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&["completions", shell]);
        for (name, flags) in &all {
            assert!(script.contains(name.as_str()), "{shell}: {name}");
            for f in flags {
                // fish writes `-l fail-on`, the others `--fail-on`.
                let bare = f.trim_start_matches('-');
                let found = script.contains(f.as_str())
                    || (shell == "fish" && script.contains(&format!("-l {bare}")));
                assert!(found, "{shell} completion lacks {name} {f}");
            }
        }
    }
}

/// The words bash would offer for `linkcert <words>` (the last word being completed).
fn bash_complete(words: &[&str]) -> Vec<String> {
    let script = run(&["completions", "bash"]);
    let dir = std::env::temp_dir().join(format!("linkcert-bash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("linkcert.bash");
    std::fs::write(&file, script).unwrap();
    let line = std::iter::once("linkcert")
        .chain(words.iter().copied())
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    // What bash does on Tab: the function `complete -p` names, called with COMP_WORDS set.
    let program = format!(
        r#"source '{f}'
spec=$(complete -p linkcert) || exit 7
func=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
[ -n "$func" ] || exit 8
COMP_WORDS=({line})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
"$func" linkcert "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        f = file.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_bash_completion_completes_subcommands_flags_and_values() {
    assert_eq!(bash_complete(&["ch"]), ["check"]);
    assert_eq!(bash_complete(&["completions", "fi"]), ["fish"]);
    let flags = bash_complete(&["check", "--fa"]);
    assert_eq!(flags, ["--fail-on"]);
    let values = bash_complete(&["check", "--fail-on", ""]);
    assert_eq!(values, ["any", "new"]);
    let load = bash_complete(&["load", "--max-"]);
    assert_eq!(load, ["--max-rate", "--max-in-flight"]);
}

#[test]
fn the_man_page_names_every_subcommand_and_flag() {
    let page = run(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains("\n.TH linkcert 1"),
        "{page}"
    );
    for (name, flags) in subcommands_and_flags() {
        let heading = format!(".SH \"LINKCERT {}\"", name.to_uppercase());
        let at = page
            .find(&heading)
            .unwrap_or_else(|| panic!("{heading} missing"));
        let section = &page[at..];
        let end = section[1..].find("\n.SH ").map_or(section.len(), |e| e + 1);
        let section = &section[..end];
        for f in flags {
            // An entry of its options (roff escapes every '-'), not only the synopsis.
            let entry = format!(".TP\n\\fB{}\\fR", f.replace('-', "\\-"));
            assert!(
                section.contains(&entry),
                "{name}: no entry {entry}:\n{section}"
            );
        }
    }
    // No reference to pages that are not installed: subcommands are sections of this one.
    assert!(!page.contains("linkcert\\-check(1)"), "{page}");
    // The page renders as man shows it, when man is there.
    if std::path::Path::new("/usr/bin/man").exists() {
        let dir = std::env::temp_dir().join(format!("linkcert-man-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("linkcert.1");
        std::fs::write(&file, &page).unwrap();
        let shown = Command::new("man")
            .arg("-l")
            .arg(&file)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(text.contains("LINKCERT CHECK"), "{text}");
        assert!(text.contains("--fail-on"), "{text}");
    }
}

#[test]
fn version_names_the_spec_version_of_the_document() {
    // Read from the file in specs/, as a reader would, not from the loader the binary uses.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/specs/link-attribution.openapi.yaml"
    );
    let doc: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let version = doc["info"]["version"].as_str().unwrap();
    let title = doc["info"]["title"].as_str().unwrap();
    let shown = run(&["--version"]);
    assert_eq!(
        shown.trim(),
        format!(
            "linkcert {} (spec: {title} {version})",
            env!("CARGO_PKG_VERSION")
        )
    );
    // The man page's title line carries it too.
    assert!(run(&["man"]).contains(&format!("{title} {version}")));
}

/// The README's first section is its set-up, whose first block is the two commands (`.ci/run`
/// runs the second); the book's install page keeps the install routes, one line each: cargo
/// install from a clone and from a git URL, the Action, the image.
#[test]
fn the_readme_set_up_keeps_its_two_commands_first_and_the_book_the_install_routes() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let at = readme.find("\n## Set-up\n").expect("a Set-up section");
    assert_eq!(
        readme.find("\n## "),
        Some(at),
        "Set-up is the README's first section"
    );
    let setup = &readme[at + 1..];
    let setup = &setup[..setup[1..].find("\n## ").map_or(setup.len(), |e| e + 1)];
    let block = &setup[setup.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let commands: Vec<&str> = block
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(commands, ["cargo run --release -- check", "cargo test"]);
    assert!(
        setup.contains("(docs/src/install.md)"),
        "Set-up links to the install routes"
    );
    let install =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/install.md"))
            .unwrap();
    let routes_at = install
        .find("## Install routes\n")
        .expect("the install routes, in docs/src/install.md");
    let routes = &install[routes_at..];
    let routes = &routes[..routes[3..].find("\n## ").map_or(routes.len(), |e| e + 3)];
    let items: Vec<&str> = routes.lines().filter(|l| l.starts_with("- ")).collect();
    for (want, what) in [
        (
            "`cargo install --locked --path .`",
            "cargo install from a clone",
        ),
        (
            "`cargo install --locked --git https://",
            "cargo install from a git URL",
        ),
        ("/linkcert@", "the Action"),
        (
            "`.ci/image build && podman run ",
            "building and running the image",
        ),
    ] {
        let item = items
            .iter()
            .find(|i| i.contains(want))
            .unwrap_or_else(|| panic!("no install route for {what}: {items:#?}"));
        // One line: the next line of the list is another item or the list's end.
        let after = &routes[routes.find(*item).unwrap() + item.len() + 1..];
        let next = after.lines().next().unwrap_or("");
        assert!(
            next.is_empty() || next.starts_with("- "),
            "{what} runs on: {next}"
        );
    }
    // What the image route names exists.
    let image = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/image")).unwrap();
    assert!(image.contains("image=localhost/linkcert:latest"));
    assert!(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Containerfile")).is_file());
}
