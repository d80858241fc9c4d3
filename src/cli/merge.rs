//! `linkcert load --shard`'s record, and `linkcert load merge`: the CLI's side of shards
//! (reading and writing their directories, exit codes); the merging is `load::merge`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::print_outcome;
use linkcert_load::merge::{self, SHARD_FILE};
use linkcert_load::shard::{Shard, ShardMeta, ShardRecord, derive_run_id, host_name};
use linkcert_load::{LoadReport, ScenarioVerdict};
use linkcert_run::Outcome;
use linkcert_run::target::Target;
use linkcert_spec::Spec;

#[derive(clap::Args)]
pub(super) struct MergeArgs {
    /// The shards' directories (DIR/shard-I-of-N), each once; or the run's directory DIR,
    /// whose shard-I-of-N directories are taken.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where the merged reports go.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// What names this shard, with its clock read against the target's before it starts.
pub(super) async fn shard_meta(
    target: &Target,
    shard: Shard,
    run_id: &Option<String>,
    start_at: Option<f64>,
    scenarios: Vec<String>,
) -> ShardMeta {
    let start_at = start_at.unwrap_or_else(linkcert_spec::clock::now_epoch);
    let url = target.base_url.to_string();
    ShardMeta {
        run_id: run_id
            .clone()
            .unwrap_or_else(|| derive_run_id(start_at, &url, &scenarios, shard.count)),
        shard,
        host: host_name(),
        target: url,
        scenarios,
        keys: target.keys.len(),
        start_at,
        start_offset_secs: None,
        clock_offset_secs: target.clock_offset().await,
    }
}

/// A shard that ran: its record beside its reports, its start against the agreed time.
pub(super) fn write_shard(
    mut meta: ShardMeta,
    report: &LoadReport,
    labels: Vec<String>,
    out: &Path,
) -> anyhow::Result<()> {
    meta.start_offset_secs = report.start_late_secs;
    let incomplete = report
        .interrupted
        .as_ref()
        .map(|i| i.sentence())
        .or_else(|| report.outage.as_ref().map(|o| o.sentence()));
    let record = ShardRecord {
        meta,
        verdict: report.verdict,
        incomplete,
        labels,
        duration_secs: report.run.duration_secs,
        scenarios: report.scenarios.clone(),
    };
    write_record(&record, out)
}

/// A shard that refused to start (too late): its record says so, and it exits 3.
pub(super) fn refused_shard(
    meta: Option<ShardMeta>,
    labels: Vec<String>,
    out: &Path,
    why: &str,
) -> anyhow::Result<ExitCode> {
    if let Some(meta) = meta {
        let record = ShardRecord {
            meta,
            verdict: ScenarioVerdict::Incomplete,
            incomplete: Some(why.to_string()),
            labels,
            duration_secs: 0.0,
            scenarios: Vec::new(),
        };
        write_record(&record, out)?;
    }
    eprintln!("linkcert load: {why}");
    Ok(Outcome::Incomplete.into())
}

fn write_record(record: &ShardRecord, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let path = out.join(SHARD_FILE);
    let text = serde_json::to_string(record).context("serialising the shard record")?;
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// `linkcert load merge DIR... --out DIR`.
pub(super) fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let spec = Spec::embedded().context("loading the built-in spec")?;
    let mut shards: Vec<(PathBuf, Option<ShardRecord>)> = Vec::new();
    for dir in &expand(&args.dirs) {
        match merge::read(dir) {
            Ok(r) => shards.push((dir.clone(), r)),
            Err(e) => return cannot(e),
        }
    }
    let report = match merge::merge(&spec, shards) {
        Ok(r) => r,
        Err(e) => return cannot(e),
    };
    let written = report
        .write(&args.out)
        .with_context(|| format!("writing the reports to {}", args.out.display()))?;
    print_outcome(&report.summary(), &written);
    Ok(report.outcome().into())
}

/// The shard directories: each given, or, for a run's directory (no shard record of its own),
/// the `shard-I-of-N` directories in it (a manifest without a shell cannot list them).
fn expand(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in dirs {
        let inner: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) if !dir.join(SHARD_FILE).exists() => {
                let mut v: Vec<PathBuf> = entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.is_dir()
                            && p.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| n.starts_with("shard-") && n.contains("-of-"))
                    })
                    .collect();
                v.sort();
                v
            }
            _ => Vec::new(),
        };
        if inner.is_empty() {
            out.push(dir.clone());
        } else {
            out.extend(inner);
        }
    }
    out
}

fn cannot(e: merge::MergeError) -> anyhow::Result<ExitCode> {
    eprintln!("linkcert load merge: {e}");
    Ok(Outcome::CannotRun.into())
}
