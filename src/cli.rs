//! The command line, in one place. Subcommands hand their work to the library modules.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::server::{self, KeySet, ServeConfig, TlsMode};
use crate::spec::Spec;

/// Exit code when linkcert could not run at all (bad arguments, unreachable target, bad spec).
pub const EXIT_CANNOT_RUN: u8 = 2;

#[derive(Parser)]
#[command(
    name = "linkcert",
    version,
    about = "Certify implementations of the Link Attribution Service API",
    long_about = "Certify implementations of the Link Attribution Service API.\n\n\
        serve  runs the reference implementation (HTTPS)\n\
        check  certifies a target against the spec (no --target: the built-in reference)\n\n\
        Everything is driven by specs/link-attribution.openapi.yaml (compiled in)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the reference implementation of the service.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:8443")]
    addr: SocketAddr,
    /// Workspaces, plans and keys as TOML (see README). Default: the development set.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Length of the standard rate-limit window in seconds (default: the spec's 60); the
    /// analytics window shrinks in proportion. For tests that must not wait a minute.
    #[arg(long, value_name = "SECONDS")]
    window: Option<f64>,
    /// PEM certificate chain (with --tls-key). Default: a self-signed certificate.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        conflicts_with = "plain_http"
    )]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_cert",
        conflicts_with = "plain_http"
    )]
    tls_key: Option<PathBuf>,
    /// Serve unencrypted HTTP. The spec allows only HTTPS: for local benchmarking only.
    #[arg(long)]
    plain_http: bool,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("linkcert: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_CANNOT_RUN);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("linkcert: {e:#}");
            ExitCode::from(EXIT_CANNOT_RUN)
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let spec = Arc::new(Spec::embedded().context("loading the built-in spec")?);
    let keys = match &args.keys {
        Some(path) => Some(KeySet::from_file(&spec, path)?),
        None => None,
    };
    let tls = match (args.tls_cert, args.tls_key, args.plain_http) {
        (_, _, true) => TlsMode::Plain,
        (Some(cert), Some(key), _) => TlsMode::Files { cert, key },
        _ => TlsMode::SelfSigned,
    };
    let config = ServeConfig {
        addr: args.addr,
        keys,
        window_secs: args.window,
        tls,
    };
    let running = server::start(spec.clone(), config).await?;
    println!("listening {}", running.base_url);
    print_keys(&running, args.keys.is_none());
    if let Some(pem) = &running.self_signed_pem {
        let path = std::env::temp_dir().join(format!("linkcert-{}.pem", running.addr.port()));
        std::fs::write(&path, pem).with_context(|| format!("writing {}", path.display()))?;
        println!(
            "certificate: self-signed, written to {p}\n  trust it: curl --cacert {p} ..., or linkcert check --insecure",
            p = path.display()
        );
    }
    for (class, w) in running.windows() {
        println!("window {class}: {w:?}");
    }
    println!("ready; Ctrl-C stops");
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    running.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

fn print_keys(running: &server::RunningServer, development: bool) {
    let keys = running.keys();
    println!(
        "keys ({}):",
        if development {
            "development set"
        } else {
            "from --keys"
        }
    );
    for (i, w) in keys.workspaces.iter().enumerate() {
        let limits: Vec<String> = w.limits.iter().map(|(c, l)| format!("{c} {l:?}")).collect();
        println!(
            "  {:<10} workspace {:<14} keys {}  limits: {}",
            w.plan,
            w.name,
            w.keys.join(", "),
            limits.join(", ")
        );
        if let Some(data) = running.workspace_data(i) {
            let pairs: Vec<String> = data
                .partners
                .iter()
                .take(3)
                .map(|p| format!("{}/{}", p.partner_id, p.tenant_id))
                .collect();
            println!(
                "             partners (partnerId/tenantId): {}",
                pairs.join(" ")
            );
        }
    }
}
