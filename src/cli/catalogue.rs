//! `linkcert catalogue`: the registry as text, or as the generated pages of the book
//! (`--markdown-dir`): checks, load rules and clauses from the registry, the built-in
//! scenarios from `load::scenario::BUILTIN`. `tests/it/docs.rs` fails when the pages in
//! `docs/src/reference/` differ from what this writes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use linkcert_load::scenario::{BUILTIN, Scenario, Shape};
use linkcert_registry::listing::{generated_note, markdown_pages, md_escape};

#[derive(clap::Args)]
pub(super) struct CatalogueArgs {
    /// Write the book's generated pages (checks.md, rules.md, clauses.md, scenarios.md) into
    /// this directory instead of printing the catalogue: docs/src/reference in this repository.
    #[arg(long, value_name = "DIR")]
    markdown_dir: Option<PathBuf>,
}

pub(super) fn catalogue(args: &CatalogueArgs) -> anyhow::Result<ExitCode> {
    match &args.markdown_dir {
        None => print!("{}", linkcert_registry::listing()?),
        Some(dir) => write_pages(dir)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn write_pages(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pages = markdown_pages()?;
    pages.push(("scenarios.md", scenarios_md()?));
    for (name, text) in pages {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

/// The built-in scenarios, parsed: what `load` runs without `--scenario`, in its order.
fn builtin() -> anyhow::Result<Vec<Scenario>> {
    BUILTIN
        .iter()
        .map(|(name, text)| Scenario::from_toml(text, name))
        .collect::<Result<_, _>>()
        .context("reading the built-in scenarios")
}

/// A multiple of the plan's limit as people write it: 2x, 0.5x.
fn times(x: f64) -> String {
    format!("{x}x")
}

fn scenario_md(o: &mut String, s: &Scenario) {
    let class = s.class.as_deref().unwrap_or("the spec's default class");
    let _ = write!(
        o,
        "\n## {}\n\n{}\n\n- plan `{}`{}, rate class {class}, shape `{}`\n- {} windows, {}",
        s.name,
        md_escape(&s.description),
        s.plan,
        s.key.map_or(String::new(), |k| format!(" (key {k})")),
        s.shape.as_str(),
        s.windows,
        // A straddle may offer nothing between its bursts.
        if s.rate > 0.0 {
            format!("offered at {} the plan's limit", times(s.rate))
        } else {
            "no steady rate".to_string()
        }
    );
    if let Some(b) = s.burst {
        let span = s
            .burst_span
            .map_or(String::new(), |f| format!(" over {f} of a window"));
        let _ = write!(o, "; burst {}{span}", times(b));
    }
    match (s.shape, s.other_key_rate) {
        (Shape::Fleet, Some(r)) => {
            let noisy = s.noisy.unwrap_or(0.1);
            let _ = write!(
                o,
                "; every key of the plan given, a share {noisy} of them noisy, the others at {}",
                times(r)
            );
            if let Some(silence) = s.silence {
                let _ = write!(
                    o,
                    "; the noisy keys come and go: each burst followed by {silence} of a window without a request"
                );
            }
        }
        (Shape::Plans, Some(r)) => {
            let _ = write!(
                o,
                "; one key of every plan given, each at its own plan's limit; a custom limit's key (Enterprise) at {} of what it states, no faster than the fastest other",
                times(r)
            );
        }
        (_, Some(r)) => {
            let _ = write!(o, "; the second key at {}", times(r));
        }
        (_, None) => {}
    }
    if s.only_when_named {
        let _ = write!(o, "\n- runs only when named (`--scenario {}`)", s.name);
    }
    let ops: Vec<String> = s
        .operations
        .iter()
        .map(|op| {
            let query: Vec<String> = op.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let query = if query.is_empty() {
                String::new()
            } else {
                format!(" `{}`", query.join("&"))
            };
            format!("`{}`{query} (weight {})", op.operation, op.weight)
        })
        .collect();
    let _ = writeln!(o, "\n- operations: {}", ops.join(", "));
}

fn scenarios_md() -> anyhow::Result<String> {
    let all = builtin()?;
    let mut o = format!(
        "# Built-in scenarios\n\n{}\nThe {} scenarios of `linkcert load`. Without \
         `--scenario` it runs those whose plan has a key, but those that run only when named, in this order: a key's scenarios run in it, \
         scenarios on other keys alongside. Each is a file of `scenarios/`, compiled in; their \
         format is in `scenarios/README.md`. Rates are multiples of the plan's limit N per \
         window.\n",
        generated_note("`load::scenario::BUILTIN` (`scenarios/*.toml`)"),
        all.len()
    );
    for s in &all {
        scenario_md(&mut o, s);
    }
    Ok(o)
}

/// `load --scenario`'s long help: the built-in scenarios as the registry holds them, each
/// with its description, so the help never lists a scenario that is not there.
pub(super) fn scenario_help() -> String {
    let mut o = String::from(
        "A scenario: a built-in name, a name in ./scenarios/, or a path to a TOML file. Repeat \
         it; without it, every built-in scenario whose plan has a key (but those marked \
         'only when named').\n\nBuilt-in scenarios:",
    );
    for (name, text) in BUILTIN {
        // A built-in that does not parse is caught by the tests; the help still names it.
        let (description, named) = Scenario::from_toml(text, name)
            .map(|s| (s.description, s.only_when_named))
            .unwrap_or_default();
        let named = if named { " (only when named)" } else { "" };
        let _ = write!(o, "\n  {name}: {description}{named}");
    }
    o
}
