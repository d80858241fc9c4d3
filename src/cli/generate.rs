//! `linkcert completions <shell>` and `linkcert man`: generated from the very definition the
//! parser uses, so they name every subcommand and flag there is, and `--version`, which names
//! the spec version read from the compiled-in document.

use std::io::{self, Write};

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;
use linkcert_spec::Spec;

#[derive(clap::Args)]
#[command(after_long_help = "\
Install (bash): linkcert completions bash > ~/.local/share/bash-completion/completions/linkcert
zsh: linkcert completions zsh > \"${fpath[1]}/_linkcert\"; fish: linkcert completions fish >
~/.config/fish/completions/linkcert.fish")]
pub(super) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

/// `linkcert 0.1.0 (spec: Link Attribution Service API 0.0.1)`, less the name.
fn version() -> String {
    let ours = env!("CARGO_PKG_VERSION");
    match Spec::embedded_info() {
        Ok((title, version)) => format!("{ours} (spec: {title} {version})"),
        // Cannot happen with the document compiled in (tested); say so rather than panic.
        Err(e) => format!("{ours} (spec unreadable: {e})"),
    }
}

/// The command line definition, with the version that names the spec.
pub(super) fn command() -> clap::Command {
    Cli::command().version(version())
}

pub(super) fn completions(args: &CompletionsArgs, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = command();
    clap_complete::generate(args.shell, &mut cmd, "linkcert", out);
    out.flush()
}

/// One page: linkcert's own, then a section per subcommand with its synopsis, description,
/// options and notes (their headings one level down), so `man linkcert` holds every flag.
pub(super) fn man(out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    let mut top = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut top)?;
    let mut top = String::from_utf8_lossy(&top).into_owned();
    // clap_mangen names pages of their own (`linkcert-check(1)`); here they are sections below.
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        top = top.replace(
            &format!("linkcert\\-{}(1)", name.replace('-', "\\-")),
            &format!("\\fBlinkcert {name}\\fR (below)"),
        );
    }
    out.write_all(top.as_bytes())?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone());
        let mut text = Vec::new();
        page.render_synopsis_section(&mut text)?;
        page.render_description_section(&mut text)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.render_options_section(&mut text)?;
        }
        if sub.get_after_long_help().is_some() {
            page.render_extra_section(&mut text)?;
        }
        let text = String::from_utf8_lossy(&text);
        writeln!(out, ".SH \"LINKCERT {}\"", sub.get_name().to_uppercase())?;
        for line in text.lines() {
            match line.strip_prefix(".SH ") {
                Some(heading) => writeln!(out, ".SS {heading}")?,
                None => writeln!(out, "{line}")?,
            }
        }
    }
    out.flush()
}
