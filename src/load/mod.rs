//! `linkcert load`: throttling under load. Scenarios (`scenario`) become per-key arrival
//! schedules (`schedule`) that goose users follow (`engine`); each run is judged (`judge`)
//! and written as JSON, Markdown and HTML with SVG charts (`report`, `chart`).

pub mod chart;
pub mod engine;
pub mod judge;
pub mod report;
pub mod scenario;
pub mod schedule;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use judge::{ScenarioResult, ScenarioVerdict};
pub use report::LoadReport;
pub use scenario::Scenario;

use crate::spec::Spec;
use crate::target::Target;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("scenario {origin}: {problem}")]
    Scenario { origin: String, problem: String },
    #[error("goose: {0}")]
    Goose(String),
    #[error("{0}")]
    Target(#[from] crate::target::TargetError),
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("no scenario can run at this target: {0}")]
    NothingToRun(String),
}

pub struct LoadOptions {
    /// Where goose's reports go (and ours, written by the caller).
    pub out: PathBuf,
    /// A progress line on stderr.
    pub progress: bool,
}

/// Errors from the HTTP client may carry a URL; keys travel in headers, never in URLs, but
/// keep messages short.
pub(crate) fn redact_error(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Labels `plan#n` of the target's keys, by position.
fn key_labels(target: &Target) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    target
        .keys
        .iter()
        .map(|k| {
            let n = seen.entry(k.plan.as_str()).or_insert(0);
            *n += 1;
            format!("{}#{}", k.plan, n)
        })
        .collect()
}

/// Run the scenarios in order, one at a time. A key is not loaded again until a window of
/// its class has passed since its last answer, so each scenario starts from a clear window.
pub async fn run(
    spec: Arc<Spec>,
    target: Target,
    scenarios: Vec<Scenario>,
    opts: &LoadOptions,
) -> Result<LoadReport, LoadError> {
    target.validate(&spec)?;
    for s in &scenarios {
        s.validate(&spec)?;
    }
    std::fs::create_dir_all(&opts.out).map_err(|source| LoadError::Io {
        path: opts.out.display().to_string(),
        source,
    })?;
    let labels = key_labels(&target);
    let started = Instant::now();
    let mut report = LoadReport::new(&spec, &target);
    let mut last_use: HashMap<(String, String), (Instant, Duration)> = HashMap::new();
    let total = scenarios.len();
    for (i, s) in scenarios.iter().enumerate() {
        let resolved = match s.resolve(&spec, &target) {
            Ok(r) => r,
            Err(why) => {
                if opts.progress {
                    eprintln!("[{}/{total}] {}: skipped ({why})", i + 1, s.name);
                }
                report
                    .scenarios
                    .push(ScenarioResult::skipped(s, &s.class(&spec), why));
                continue;
            }
        };
        // Let the keys' windows clear.
        let mut wait = Duration::ZERO;
        for k in &resolved.keys {
            for ((key, _), (at, w)) in last_use.iter() {
                if *key == k.key {
                    let clear = *at + *w + Duration::from_millis(250);
                    wait = wait.max(clear.saturating_duration_since(Instant::now()));
                }
            }
        }
        if !wait.is_zero() {
            if opts.progress {
                eprintln!(
                    "[{}/{total}] {}: waiting {:.1} s for the key's window to clear",
                    i + 1,
                    s.name,
                    wait.as_secs_f64()
                );
            }
            tokio::time::sleep(wait).await;
        }
        if opts.progress {
            eprintln!(
                "[{}/{total}] {}: {} plan, {} x {} per {:.2} s, {} for {} windows",
                i + 1,
                s.name,
                s.plan,
                s.rate,
                resolved.limit,
                resolved.window.as_secs_f64(),
                s.shape.as_str(),
                s.windows
            );
        }
        let run = engine::run(&target, &resolved, &opts.out, opts.progress).await?;
        let ids: Vec<(String, usize)> = resolved
            .keys
            .iter()
            .map(|k| {
                let pos = target.keys.iter().position(|t| t == k).unwrap_or(0);
                (labels.get(pos).cloned().unwrap_or_default(), pos)
            })
            .collect();
        let result = judge::judge(&resolved, &run, &ids);
        for k in &resolved.keys {
            last_use.insert(
                (k.key.clone(), resolved.class.clone()),
                (Instant::now(), resolved.window),
            );
        }
        if opts.progress {
            eprintln!("  {}", report::one_line(&result));
        }
        report.scenarios.push(result);
    }
    report.duration_secs = started.elapsed().as_secs_f64();
    report.finish(&labels);
    if report
        .scenarios
        .iter()
        .all(|s| s.verdict == ScenarioVerdict::Skipped)
    {
        let why: Vec<String> = report
            .scenarios
            .iter()
            .map(|s| format!("{}: {}", s.name, s.skipped.clone().unwrap_or_default()))
            .collect();
        return Err(LoadError::NothingToRun(why.join("; ")));
    }
    Ok(report)
}
