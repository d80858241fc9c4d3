//! The GitHub Action (`action.yml`, `action/run.sh`) run outside GitHub, as the runner would
//! run it: the step's `env:` read from action.yml with each `${{ inputs.* }}` replaced by the
//! input given (or its default), `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` pointing at files,
//! and the `binary` input pointing at the binary cargo built (no install here). Against the
//! reference, the second implementation, one of them behind a defect, an unreachable target
//! and a `load` run: the outputs, the summary and the annotations are what action.yml promises,
//! and keys never show.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::broken::{Defect, Impl, broken_on};

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// What action.yml declares.
struct Action {
    /// Input name -> (description, default).
    inputs: BTreeMap<String, (String, String)>,
    /// Output name -> the step output it is (`steps.run.outputs.NAME`).
    outputs: BTreeMap<String, String>,
    /// The step that runs the script: its env (variable -> expression) and command.
    env: BTreeMap<String, String>,
    run: String,
    steps: Vec<serde_yaml_ng::Value>,
}

fn action() -> Action {
    let text = std::fs::read_to_string(Path::new(ROOT).join("action.yml")).unwrap();
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let str_of = |v: &serde_yaml_ng::Value| match v {
        serde_yaml_ng::Value::String(s) => s.clone(),
        serde_yaml_ng::Value::Bool(b) => b.to_string(),
        serde_yaml_ng::Value::Null => String::new(),
        other => panic!("not a string: {other:?}"),
    };
    let inputs = doc["inputs"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                str_of(k),
                (str_of(&v["description"]), str_of(&v["default"])),
            )
        })
        .collect();
    let outputs = doc["outputs"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let value = str_of(&v["value"]);
            let step = value
                .strip_prefix("${{ steps.run.outputs.")
                .and_then(|s| s.strip_suffix(" }}"))
                .unwrap_or_else(|| panic!("output {k:?} is {value}"));
            (str_of(k), step.to_string())
        })
        .collect();
    assert_eq!(doc["runs"]["using"], "composite");
    let steps = doc["runs"]["steps"].as_sequence().unwrap().clone();
    let script = steps
        .iter()
        .find(|s| s["id"] == "run")
        .expect("a step with id run");
    let env = script["env"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| (str_of(k), str_of(v)))
        .collect();
    Action {
        inputs,
        outputs,
        env,
        run: str_of(&script["run"]),
        steps,
    }
}

/// The input an env expression of the run step reads (`${{ inputs.NAME }}`).
fn input_of(expr: &str) -> Option<&str> {
    expr.strip_prefix("${{ inputs.")?.strip_suffix(" }}")
}

/// One run of the step, and what the runner would keep of it.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The action's outputs (action.yml's names).
    outputs: BTreeMap<String, String>,
    summary: String,
    dir: PathBuf,
}

impl Run {
    fn out(&self, name: &str) -> &str {
        self.outputs
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no output {name}: {:?}\n{}", self.outputs, self.stderr))
    }
    fn report(&self, file: &str) -> serde_json::Value {
        let dir = Path::new(self.out("report-dir"));
        serde_json::from_slice(&std::fs::read(self.dir.join(dir).join(file)).unwrap()).unwrap()
    }
    fn annotations(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("::error") || l.starts_with("::warning"))
            .collect()
    }
    /// Nothing the runner shows or keeps holds `secret`.
    fn assert_never_shows(&self, secret: &str) {
        let outputs = format!("{:?}", self.outputs);
        for (what, text) in [
            ("stdout", &self.stdout),
            ("stderr", &self.stderr),
            ("outputs", &outputs),
            ("summary", &self.summary),
        ] {
            assert!(!text.contains(secret), "a key in {what}:\n{text}");
        }
    }
}

fn run_action(name: &str, with: &[(&str, &str)]) -> Run {
    let a = action();
    let dir = std::env::temp_dir().join(format!("linkcert-action-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let given: BTreeMap<&str, &str> = with.iter().copied().collect();
    for k in given.keys() {
        assert!(a.inputs.contains_key(*k), "action.yml has no input {k}");
    }
    let (output_file, summary_file) = (dir.join("github_output"), dir.join("step_summary"));
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(&a.run).current_dir(&dir);
    // Only what the runner would set: nothing of this test process's own CI.
    for (k, _) in std::env::vars() {
        if k.starts_with("GITHUB_") || k.starts_with("LINKCERT_") || k.starts_with("RUNNER_") {
            cmd.env_remove(k);
        }
    }
    for (var, expr) in &a.env {
        let input = input_of(expr).unwrap_or_else(|| panic!("{var}: {expr}"));
        let value = match input {
            "binary" => given.get("binary").copied().unwrap_or(BIN),
            _ => given
                .get(input)
                .copied()
                .unwrap_or(a.inputs[input].1.as_str()),
        };
        cmd.env(var, value);
    }
    cmd.env("GITHUB_ACTION_PATH", ROOT)
        .env("GITHUB_OUTPUT", &output_file)
        .env("GITHUB_STEP_SUMMARY", &summary_file);
    let out = cmd.output().unwrap();
    let step: BTreeMap<String, String> = std::fs::read_to_string(&output_file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let outputs = a
        .outputs
        .iter()
        .filter_map(|(name, key)| step.get(key).map(|v| (name.clone(), v.clone())))
        .collect();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        outputs,
        summary: std::fs::read_to_string(&summary_file).unwrap_or_default(),
        dir,
    }
}

/// A passed run: exit 0, its outputs agree with report.json, report.md in the summary.
fn assert_passed(r: &Run) {
    let all = format!("{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.code, Some(0), "{all}");
    assert_eq!(r.out("verdict"), "passed", "{all}");
    assert_eq!(r.out("exit-code"), "0");
    let report = r.report("report.json");
    let totals = &report["totals"];
    let counts: serde_json::Value = serde_json::from_str(r.out("counts")).unwrap();
    assert_eq!(&counts, totals);
    assert_eq!(r.out("pass"), totals["pass"].to_string());
    assert!(totals["pass"].as_u64().unwrap() > 0, "{totals}");
    assert_eq!(r.out("fail"), "0");
    assert!(
        r.summary.starts_with("# linkcert report: PASSED"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("are in the artifact `linkcert-reports`"),
        "{}",
        r.summary
    );
    assert!(r.annotations().is_empty(), "{all}");
}

#[test]
fn the_action_passes_the_reference_and_the_second_implementation() {
    // The reference, in-process (no target).
    let r = run_action("reference", &[("args", "--only auth --cases 8")]);
    assert_passed(&r);
    assert!(r.dir.join("linkcert-reports/report.html").is_file());

    // The second implementation, with its keys given as the keys input.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let v = rt.block_on(common::variant::start(6.0));
    let t = v.target();
    let keys: Vec<String> = t
        .keys
        .iter()
        .map(|k| format!("{}={}", k.plan, k.key))
        .collect();
    let keys = keys.join("\n");
    let r = run_action(
        "variant",
        &[
            ("target", &v.url),
            ("keys", &keys),
            ("rate-window", "6"),
            ("args", "--only auth --only envelope --cases 8"),
            ("out", "reports/variant"),
        ],
    );
    assert_passed(&r);
    assert_eq!(r.out("report-dir"), "reports/variant");
    let report = r.report("report.json");
    assert_eq!(report["target"], v.url.as_str(), "{report}");
    // The command line it shows says which plans have keys, never the keys.
    assert!(
        r.stderr.contains("--key-file <keys: free free"),
        "{}",
        r.stderr
    );
    for k in &t.keys {
        r.assert_never_shows(&k.key);
    }
    keys_never_reach_argv(&v.url, &keys, &t.keys);
}

/// The Action hands linkcert its keys in a file: a binary that records its own arguments
/// (then runs linkcert) shows none of them, and the file is gone after the step.
fn keys_never_reach_argv(url: &str, keys: &str, given: &[linkcert::target::PlanKey]) {
    let dir = std::env::temp_dir().join(format!("linkcert-action-wrapper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (argv, wrapper) = (dir.join("argv"), dir.join("linkcert"));
    std::fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env bash\nprintf '%s\\n' \"$0\" \"$@\" > '{}'\nexec '{BIN}' \"$@\"\n",
            argv.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = run_action(
        "argv",
        &[
            ("target", url),
            ("keys", keys),
            ("rate-window", "6"),
            ("args", "--only auth --cases 4"),
            ("binary", wrapper.to_str().unwrap()),
        ],
    );
    assert_passed(&r);
    let args = std::fs::read_to_string(&argv).unwrap();
    assert!(args.contains("--key-file"), "{args}");
    for k in given {
        assert!(
            !args.contains(&k.key),
            "a key in linkcert's arguments: {args}"
        );
    }
    let file = args
        .lines()
        .skip_while(|a| *a != "--key-file")
        .nth(1)
        .unwrap();
    assert!(
        !Path::new(file).exists(),
        "the key file {file} outlived the step"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Error answers whose code is wrong: `envelope.code` fails, on any implementation.
fn wrong_code() -> Defect {
    Defect::after(|_, ans| {
        if ans.status == 401 {
            ans.body = br#"{"error":{"code":"forbidden","message":"no","doc_url":"https://d/errors#forbidden"}}"#.to_vec();
        }
    })
}

#[test]
fn a_failing_target_fails_the_step_annotates_each_failure_and_a_baseline_gates_on_new_ones() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let b = rt.block_on(broken_on(Impl::Variant, 6.0, wrong_code()));
    let t = b.target();
    let keys: Vec<String> = t
        .keys
        .iter()
        .map(|k| format!("{}={}", k.plan, k.key))
        .collect();
    let keys = keys.join("\n");
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut w: Vec<(&str, &str)> = vec![
            ("target", b.url.as_str()),
            ("keys", keys.as_str()),
            ("rate-window", "6"),
            ("args", "--only auth --only envelope --cases 8"),
        ];
        w.extend_from_slice(extra);
        w
    };
    let r = run_action("failing", &with(&[]));
    let all = format!("{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.code, Some(1), "{all}");
    assert_eq!(r.out("verdict"), "failed");
    assert_eq!(r.out("exit-code"), "1");
    let report = r.report("report.json");
    let fails = report["totals"]["fail"].as_u64().unwrap();
    assert!(fails > 0);
    assert_eq!(r.out("fail"), fails.to_string());
    // One ::error per failing check and operation, titled with both.
    let failing: Vec<String> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| {
            format!(
                "::error title=linkcert {} on {}::",
                c["id"].as_str().unwrap(),
                c["operation"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        failing
            .iter()
            .any(|f| f.starts_with("::error title=linkcert envelope.code")),
        "{failing:?}"
    );
    let annotations = r.annotations();
    assert_eq!(annotations.len(), failing.len(), "{annotations:#?}");
    for f in &failing {
        assert!(
            annotations.iter().any(|a| a.starts_with(f.as_str())),
            "{f} in {annotations:#?}"
        );
    }
    assert!(
        r.summary.starts_with("# linkcert report: FAILED"),
        "{}",
        r.summary
    );
    for k in &t.keys {
        r.assert_never_shows(&k.key);
    }

    // That run as the baseline, gating on new failures only: the same failures pass the step.
    let baseline = r.dir.join("linkcert-reports/report.json");
    let baseline = baseline.to_str().unwrap();
    let mut w = with(&[("fail-on", "new")]);
    w.push(("baseline", baseline));
    let again = run_action("failing-baseline", &w);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert_eq!(again.out("verdict"), "passed");
    assert_eq!(
        again.out("fail"),
        fails.to_string(),
        "still failing, not new"
    );
    assert!(
        again.summary.contains("still failing"),
        "the comparison is in the summary: {}",
        again.summary
    );

    // A first run: no baseline file yet. Every failure fails the step, and the summary says why.
    let mut w = with(&[("fail-on", "new")]);
    w.push(("baseline", "no/such/report.json"));
    let first = run_action("failing-first", &w);
    assert_eq!(first.code, Some(1), "{}", first.stderr);
    assert_eq!(first.out("verdict"), "failed");
    assert!(
        first
            .summary
            .starts_with("No baseline at `no/such/report.json`"),
        "{}",
        first.summary
    );
}

#[test]
fn a_run_that_cannot_start_is_could_not_run_with_its_reason() {
    // Port 9 on loopback: nothing listens there on a test machine.
    let r = run_action(
        "unreachable",
        &[
            ("target", "https://127.0.0.1:9"),
            ("keys", "pro=sk_secret_pro_key"),
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!(r.out("verdict"), "could not run");
    assert_eq!(r.out("exit-code"), "2");
    assert_eq!(r.out("counts"), "{}");
    let annotations = r.annotations();
    assert_eq!(annotations.len(), 1, "{}", r.stdout);
    assert!(
        annotations[0].starts_with("::error title=linkcert could not run::exit 2: linkcert:"),
        "{annotations:?}"
    );
    assert!(
        r.summary
            .starts_with("## linkcert: could not run (exit 2)\n\nlinkcert:"),
        "{}",
        r.summary
    );
    r.assert_never_shows("sk_secret_pro_key");

    // Inputs the script refuses before linkcert starts: a key line without its plan (whose
    // text may be the key itself) and an unknown mode.
    let r = run_action("bad-key", &[("keys", "free=lk_free_1\nsk_no_plan_given")]);
    assert_eq!(r.code, Some(2));
    assert_eq!(r.out("verdict"), "could not run");
    assert!(
        r.summary.contains("keys: line 2 is not PLAN=KEY"),
        "{}",
        r.summary
    );
    r.assert_never_shows("sk_no_plan_given");
    r.assert_never_shows("lk_free_1");
    let r = run_action("bad-mode", &[("mode", "soak")]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.summary.contains("mode must be check or load"),
        "{}",
        r.summary
    );
}

#[test]
fn a_load_run_puts_load_md_in_the_summary_and_its_verdict_in_the_outputs() {
    let r = run_action(
        "load",
        &[
            ("mode", "load"),
            ("scenarios", "free-overload"),
            ("rate-window", "1"),
        ],
    );
    let report = r.report("load.json");
    // A debug build on a busy machine may fall behind the schedule: that is the generator's
    // verdict (could not run), never the target's.
    let (verdict, code) = match report["verdict"].as_str() {
        Some("pass") => ("passed", 0),
        Some("client-saturated") => ("could not run", 2),
        v => panic!("{v:?}: {}", r.stderr),
    };
    assert_eq!(r.code, Some(code), "{}", r.stderr);
    assert_eq!(r.out("verdict"), verdict);
    let counts: serde_json::Value = serde_json::from_str(r.out("counts")).unwrap();
    assert_eq!(counts, report["totals"]);
    let md = std::fs::read_to_string(r.dir.join("linkcert-reports/load.md")).unwrap();
    assert!(md.starts_with("# linkcert load:"), "{md}");
    assert!(r.summary.contains(&md), "{}", r.summary);
}

/// A failing load run: a target that never throttles. Its scenario gets an ::error naming the
/// rules it failed.
#[test]
fn a_failing_load_run_annotates_the_scenario_and_fails_the_step() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let b = rt.block_on(broken_on(
        Impl::Reference,
        1.0,
        Defect::after(|_, ans| {
            // Capacity that never runs out: every 429 becomes the answer the plan promised.
            if ans.status == 429 {
                ans.status = 200;
                ans.body = b"[]".to_vec();
                ans.set_header("content-type", "application/json");
            }
        }),
    ));
    let t = b.target();
    let keys: Vec<String> = t
        .keys
        .iter()
        .map(|k| format!("{}={}", k.plan, k.key))
        .collect();
    let r = run_action(
        "load-failing",
        &[
            ("mode", "load"),
            ("target", &b.url),
            ("keys", &keys.join("\n")),
            ("scenarios", "free-overload"),
            ("rate-window", "1"),
        ],
    );
    let report = r.report("load.json");
    if report["verdict"] == "client-saturated" {
        eprintln!("the generator fell behind on this machine: not judged");
        return;
    }
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.out("verdict"), "failed");
    assert_eq!(r.out("fail"), "1");
    let annotations = r.annotations();
    assert_eq!(annotations.len(), 1, "{}", r.stdout);
    assert!(
        annotations[0].starts_with("::error title=linkcert load free-overload::fail: "),
        "{annotations:?}"
    );
    assert!(annotations[0].contains("load.admitted"), "{annotations:?}");
    assert!(
        r.summary.starts_with("# linkcert load: fail"),
        "{}",
        r.summary
    );
}

#[test]
fn every_input_reaches_the_script_and_is_documented() {
    let a = action();
    // The script's code, its comments left out: a variable named only there is not read.
    let script: String = std::fs::read_to_string(Path::new(ROOT).join("action/run.sh"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let readme = std::fs::read_to_string(Path::new(ROOT).join("docs/src/ci.md")).unwrap();
    let section = &readme[readme
        .find("## The GitHub Action")
        .expect("README has the Action's section")..];
    let section = &section[..section[4..].find("\n## ").map_or(section.len(), |e| e + 4)];
    assert!(a.inputs.len() >= 15, "{:?}", a.inputs.keys());
    for (name, (description, _)) in &a.inputs {
        let var = a
            .env
            .iter()
            .find(|(_, expr)| input_of(expr) == Some(name.as_str()))
            .map(|(var, _)| var)
            .unwrap_or_else(|| panic!("input {name} is not in the run step's env"));
        assert!(
            script.contains(&format!("${{{var}")) || script.contains(&format!("${var}")),
            "run.sh does not read {var} (input {name})"
        );
        assert!(description.len() > 10, "input {name} has no description");
        assert!(
            section.contains(&format!("`{name}`")),
            "the README's Action section does not mention `{name}`"
        );
    }
    // Every env entry is an input, and the script reads no LINKCERT_ACTION_* it is not given.
    for (var, expr) in &a.env {
        assert!(input_of(expr).is_some(), "{var}: {expr}");
    }
    let mut i = 0;
    while let Some(at) = script[i..].find("LINKCERT_ACTION_") {
        let start = i + at;
        let name: String = script[start..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .collect();
        assert!(
            a.env.contains_key(&name),
            "run.sh reads {name}, not set by action.yml"
        );
        i = start + name.len();
    }
    // Every output is written by the script and documented.
    for (name, step_output) in &a.outputs {
        assert!(
            script.contains(&format!("output {step_output} ")),
            "run.sh never writes {step_output}"
        );
        assert!(
            section.contains(&format!("`{name}`")),
            "README: output `{name}`"
        );
    }
    // No input is pasted into a shell command (script injection): they go through env only.
    for s in &a.steps {
        if let Some(run) = s["run"].as_str() {
            assert!(!run.contains("${{"), "an expression inside run: {run}");
        }
    }
    // The install: from the action's own ref, cached, skipped when a binary is given.
    let install = a
        .steps
        .iter()
        .find(|s| {
            s["run"].as_str().is_some_and(|r| {
                r.contains("cargo install --locked --path \"$GITHUB_ACTION_PATH\"")
            })
        })
        .expect("an install step");
    let cond = install["if"].as_str().unwrap();
    assert!(cond.contains("inputs.binary == ''"), "{cond}");
    assert!(
        cond.contains("steps.cache.outputs.cache-hit != 'true'"),
        "{cond}"
    );
    let cache = a.steps.iter().find(|s| s["id"] == "cache").unwrap();
    assert!(
        cache["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/cache@"),
        "{cache:?}"
    );
}

/// The example workflow is a few lines that use the Action, with inputs it has.
#[test]
fn the_example_workflow_uses_the_action_with_inputs_it_declares() {
    let a = action();
    let path = Path::new(ROOT).join("examples/github-workflow.yml");
    let text = std::fs::read_to_string(path).unwrap();
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let steps = doc["jobs"]["certify"]["steps"].as_sequence().unwrap();
    let step = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.contains("/linkcert@")))
        .expect("a step uses the Action");
    let with = step["with"].as_mapping().unwrap();
    for (k, _) in with {
        let k = k.as_str().unwrap();
        assert!(
            a.inputs.contains_key(k),
            "the example gives {k}, not an input"
        );
    }
    assert_eq!(step["with"]["fail-on"], "new");
    assert_eq!(step["with"]["baseline"], "baseline/report.json");
    let code = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .count();
    assert!(code <= 35, "{code} lines: the Action should keep it short");
}

/// Fixtures through the `partners`, `tenants` and `allow-destructive` inputs: one no key owns
/// makes the run incomplete (exit 3), and the step fails with the verdict `incomplete`, one
/// ::error saying why and a ::warning for the check not judged.
#[test]
fn a_fixture_no_key_owns_makes_the_step_incomplete() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let v = rt.block_on(common::variant::start(6.0));
    let t = v.target();
    let keys: Vec<String> = t
        .keys
        .iter()
        .map(|k| format!("{}={}", k.plan, k.key))
        .collect();
    let partner = format!("advanced={}", t.partner_ids[0].id);
    let r = run_action(
        "incomplete",
        &[
            ("target", &v.url),
            ("keys", &keys.join("\n")),
            ("rate-window", "6"),
            ("partners", &partner),
            ("tenants", "tn_nobody_owns_this"),
            ("allow-destructive", "true"),
            ("args", "--only partners"),
        ],
    );
    assert_eq!(r.code, Some(3), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.out("verdict"), "incomplete");
    assert_eq!(r.out("exit-code"), "3");
    let counts: serde_json::Value = serde_json::from_str(r.out("counts")).unwrap();
    assert!(counts["not_judged"].as_u64().unwrap() > 0, "{counts}");
    let annotations = r.annotations();
    assert!(
        annotations[0].starts_with("::error title=linkcert run incomplete::"),
        "{annotations:#?}"
    );
    assert!(
        annotations.iter().any(|a| a.starts_with(
            "::warning title=linkcert partners.deactivate on POST /partners/deactivate not judged::"
        )),
        "{annotations:#?}"
    );
    assert!(
        r.summary.starts_with("# linkcert report: INCOMPLETE"),
        "{}",
        r.summary
    );
    // The bound partner was deactivated: the fixtures reached linkcert.
    let report = r.report("report.json");
    let deactivate = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "partners.deactivate")
        .unwrap();
    assert_eq!(deactivate["cases"], 1, "{deactivate}");
}
