//! `mutants-page`: writes `docs/src/mutants.md` from the kept runs and the survivors' fates;
//! `mutants-page record NAME` keeps a run of `benches/mutants` first (issue 41).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use linkcert_mutants::Run;

const USAGE: &str = "\
mutants-page                 write docs/src/mutants.md from tests/mutants/record/ and fates.toml
mutants-page record NAME [DIR...]
                             keep the run benches/mutants left in target/mutants/shard-* (or
                             in the directories of target/mutants named) as
                             tests/mutants/record/NAME.tsv (records
                             are read in name order; the first is the run whose survivors the
                             page lists)
mutants-page unfated         the first run's survivors with no fate and not caught since, as
                             one regex: benches/mutants --re \"$(mutants-page unfated)\" tries
                             them again";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {
            let page = linkcert_mutants::page_from(&root())?;
            let path = root().join("docs/src/mutants.md");
            std::fs::write(&path, page).with_context(|| path.display().to_string())?;
            eprintln!("wrote {}", path.display());
        }
        ["unfated"] => match linkcert_mutants::unfated_regex(&root())? {
            Some(re) => println!("{re}"),
            None => eprintln!("every survivor of the first run has a fate, or was caught since"),
        },
        ["record", name, only @ ..] => {
            let dir = root().join("target/mutants");
            let mut shards: Vec<PathBuf> = std::fs::read_dir(&dir)
                .with_context(|| format!("{}: run benches/mutants first", dir.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        if only.is_empty() {
                            n.starts_with("shard-")
                        } else {
                            only.contains(&n)
                        }
                    })
                })
                .collect();
            shards.sort();
            if shards.is_empty() {
                bail!(
                    "no {} under {}: run benches/mutants first, or name the run's directory \
                     (RUN=x benches/mutants --re ... leaves target/mutants/x: record NAME x)",
                    if only.is_empty() {
                        "shard-*".to_string()
                    } else {
                        only.join(", ")
                    },
                    dir.display()
                );
            }
            let mut run = Run::default();
            for s in &shards {
                let label = s.file_name().and_then(|n| n.to_str()).unwrap_or("shard");
                let commit = std::fs::read_to_string(s.join("commit"))
                    .with_context(|| format!("{}: the commit it ran at", s.display()))?;
                run.add_shard(label, commit.trim(), &s.join("mutants.out"))?;
            }
            let path = root().join(format!("tests/mutants/record/{name}.tsv"));
            std::fs::write(&path, run.to_text()).with_context(|| path.display().to_string())?;
            eprintln!("wrote {} ({} mutants)", path.display(), run.mutants.len());
        }
        _ => bail!("{USAGE}"),
    }
    Ok(())
}
