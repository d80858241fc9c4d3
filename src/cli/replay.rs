//! The one line that replays a `check` run, printed with its report.

use linkcert_run::target::Target;

use super::CheckArgs;

/// The command that replays a `check` run: its flags, the keys as their shell variables (the
/// in-process reference is started again, so it has no --target).
pub(super) fn command(args: &CheckArgs, target: &Target, in_process: bool) -> String {
    let mut c = vec!["linkcert check".to_string()];
    if let Some(p) = &args.target.profile {
        c.push(format!("--profile {}", p.display()));
    }
    if !in_process {
        c.push(format!("--target {}", target.base_url));
    }
    if in_process && args.target.keys.is_empty() {
        // The reference's own development keys: nothing to pass.
    } else {
        for (k, s) in target.keys.iter().zip(target.secrets()) {
            c.push(format!("--key {}=\"${}\"", k.plan, s.var));
        }
    }
    if let Some(w) = args.target.rate_window {
        c.push(format!("--rate-window {}", w.secs()));
    }
    if args.target.insecure {
        c.push("--insecure".into());
    }
    c.push(format!("--seed {}", args.seed));
    if args.cases != 64 {
        c.push(format!("--cases {}", args.cases));
    }
    for (flag, list) in [
        ("--only", &args.only),
        ("--skip", &args.skip),
        ("--partner", &args.partners),
        ("--tenant", &args.tenants),
    ] {
        for v in list {
            c.push(format!("{flag} '{v}'"));
        }
    }
    if args.allow_destructive {
        c.push("--allow-destructive".into());
    }
    c.join(" ")
}
