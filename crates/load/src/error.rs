//! What stops a load run from being made or carried out.

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("scenario {origin}: {problem}")]
    Scenario { origin: String, problem: String },
    #[error("goose: {0}")]
    Goose(String),
    #[error("{0}")]
    Target(#[from] linkcert_run::target::TargetError),
    #[error(transparent)]
    Unreachable(#[from] linkcert_run::reach::Unreachable),
    #[error("cannot write {path}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("no scenario can run at this target: {0}")]
    NothingToRun(String),
    #[error(
        "could not start within 2 s of --start-at: {late_secs:.1} s late; this shard's part of the run is incomplete (start the shards earlier, or give a later --start-at)"
    )]
    LateStart { late_secs: f64 },
}
