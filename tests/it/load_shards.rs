//! `load --shard` and `load merge` as separate processes, as users run them: bad shards are
//! reported (a shard killed mid-run, one started past the tolerance, a directory of another
//! run), and, in an ignored test that `.ci/run` runs, three shards in network namespaces of
//! their own against one reference serving 3,000 keys per plan at the real 60 s window give
//! the verdicts and per-key figures of one process running the same keys.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_linkcert");

/// A fresh directory for one test's runs.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("linkcert-shards-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `linkcert ARGS`, output to `log`, started (prefixed by `prefix`, e.g. `ip netns exec NS`).
fn spawn(prefix: &[&str], args: &[String], log: &Path) -> Child {
    let (program, rest) = match prefix.split_first() {
        Some((p, rest)) => (p.to_string(), rest.iter().map(|s| s.to_string()).collect()),
        None => (BIN.to_string(), Vec::new()),
    };
    let mut cmd = Command::new(program);
    cmd.args(rest);
    if !prefix.is_empty() {
        cmd.arg(BIN);
    }
    let file = std::fs::File::create(log).unwrap();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap()
}

/// Wait for a child at most `limit`; killed past it.
fn wait(mut child: Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The arguments of shard `i` of `n` of a run of `scenario` against `url` with `keys`.
pub(crate) fn shard_args(
    url: &str,
    keys: &Path,
    scenario: &str,
    i: usize,
    n: usize,
    at: f64,
    out: &Path,
) -> Vec<String> {
    [
        "load",
        "--target",
        url,
        "--insecure",
        "--key-file",
        &keys.display().to_string(),
        "--scenario",
        scenario,
        "--shard",
        &format!("{i}/{n}"),
        "--start-at",
        &format!("{at:.3}"),
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn merge(dirs: &[PathBuf], out: &Path, log: &Path) -> Option<i32> {
    let mut args = vec!["load".to_string(), "merge".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--out".to_string(), out.display().to_string()]);
    wait(spawn(&[], &args, log), Duration::from_secs(60))
}

/// A key file of `n` Free keys of the development fleet.
fn key_file(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("keys");
    let lines: Vec<String> = (1..=n).map(|i| format!("free=lk_free_{i}")).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

/// A shard killed mid-run, and one started 5 s past the tolerance, each make the merged run
/// incomplete (exit 3) and the report says which; a shard of another run is refused (exit
/// 2), and so is a shard given twice. On loopback, with a fleet of 8 keys at a 2 s window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_late_and_foreign_shards_are_reported() {
    let reference = crate::common::reference_fleet(2.0, 8).await;
    let dir = scratch("bad");
    let keys = key_file(&dir, 8);
    let url = reference.base_url.clone();
    let run = |name: &str, late: [f64; 3], kill: Option<usize>| {
        let out = dir.join(name);
        let at = now() + 3.0;
        // Shards start in order; one whose `late` is above 0 is started that long after the
        // agreed time, with the same --start-at as the others.
        let children: Vec<Child> = (1..=3)
            .map(|i| {
                let mut args = shard_args(&url, &keys, "free-fleet", i, 3, at, &out);
                args.extend(["--rate-window".to_string(), "2".to_string()]);
                if late[i - 1] > 0.0 {
                    std::thread::sleep(Duration::from_secs_f64(
                        (at + late[i - 1] - now()).max(0.0),
                    ));
                }
                spawn(&[], &args, &dir.join(format!("{name}-{i}.log")))
            })
            .collect();
        let mut children: Vec<Option<Child>> = children.into_iter().map(Some).collect();
        // The one to kill dies a second into the run, before anything else is waited for.
        if let Some(mut c) = kill.and_then(|k| children[k - 1].take()) {
            std::thread::sleep(Duration::from_secs_f64((at - now()).max(0.0) + 1.0));
            let _ = c.kill();
            let _ = c.wait();
        }
        let codes: Vec<Option<i32>> = children
            .into_iter()
            .map(|c| c.and_then(|c| wait(c, Duration::from_secs(60))))
            .collect();
        (out, codes)
    };
    let (killed, codes) = tokio::task::block_in_place(|| run("killed", [0.0; 3], Some(2)));
    assert_eq!((codes[0], codes[2]), (Some(0), Some(0)), "{codes:?}");
    let log = dir.join("merge-killed.log");
    let code = merge(
        std::slice::from_ref(&killed),
        &dir.join("merged-killed"),
        &log,
    );
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(code, Some(3), "{said}");
    assert!(
        said.contains("INCOMPLETE") && said.contains("shard-2-of-3"),
        "{said}"
    );
    assert!(said.contains("killed or failed"), "{said}");

    // Started 7 s after the agreed time: 5 s past the tolerance.
    let (late, codes) = tokio::task::block_in_place(|| run("late", [0.0, 0.0, 7.0], None));
    assert_eq!(codes, [Some(0), Some(0), Some(3)], "the late shard refuses");
    let log3 = std::fs::read_to_string(dir.join("late-3.log")).unwrap();
    assert!(
        log3.contains("could not start within 2 s of --start-at"),
        "{log3}"
    );
    let log = dir.join("merge-late.log");
    let code = merge(std::slice::from_ref(&late), &dir.join("merged-late"), &log);
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(code, Some(3), "{said}");
    assert!(
        said.contains("shard 3/3") && said.contains("s late"),
        "{said}"
    );

    // Shards of two runs, and one shard twice: refused before anything is written.
    let mixed = [killed.join("shard-1-of-3"), late.join("shard-2-of-3")];
    let log = dir.join("merge-mixed.log");
    assert_eq!(merge(&mixed, &dir.join("merged-mixed"), &log), Some(2));
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("is of another run") && said.contains("its run id is"),
        "{said}"
    );
    assert!(!dir.join("merged-mixed").join("load.json").exists());
    let twice = [late.join("shard-1-of-3"), late.join("shard-1-of-3")];
    let log = dir.join("merge-twice.log");
    assert_eq!(merge(&twice, &dir.join("merged-twice"), &log), Some(2));
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("given twice")
    );
    drop(reference);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Network namespaces this test made, removed when it ends, also after a panic: removing a
/// namespace removes its veth ends and the addresses in it.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A reference namespace with a bridge at 10.199.0.1/24, and one namespace per shard joined
/// to it by a veth pair (10.199.0.11, .12, ...): separate hosts on one machine. Private
/// addresses only inside these namespaces.
fn hosts(shards: usize) -> Namespaces {
    let tag = std::process::id() % 100_000;
    let refns = format!("lcref{tag}");
    let mut made = Namespaces(vec![]);
    ip(&["netns", "add", &refns]);
    made.0.push(refns.clone());
    let at = |ns: &str, args: &[&str]| {
        let mut full = vec!["-n", ns];
        full.extend(args);
        ip(&full);
    };
    at(&refns, &["link", "set", "lo", "up"]);
    at(&refns, &["link", "add", "br0", "type", "bridge"]);
    at(&refns, &["addr", "add", "10.199.0.1/24", "dev", "br0"]);
    at(&refns, &["link", "set", "br0", "up"]);
    for i in 1..=shards {
        let ns = format!("lcs{i}x{tag}");
        ip(&["netns", "add", &ns]);
        made.0.push(ns.clone());
        let (a, b) = (format!("va{i}"), format!("vb{i}"));
        at(
            &refns,
            &[
                "link", "add", &a, "type", "veth", "peer", "name", &b, "netns", &ns,
            ],
        );
        at(&refns, &["link", "set", &a, "master", "br0"]);
        at(&refns, &["link", "set", &a, "up"]);
        at(&ns, &["link", "set", "lo", "up"]);
        at(
            &ns,
            &["addr", "add", &format!("10.199.0.{}/24", 10 + i), "dev", &b],
        );
        at(&ns, &["link", "set", &b, "up"]);
    }
    made
}

/// Why this machine cannot run the namespace test, if it cannot.
fn cannot_make_namespaces() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok();
    if uid.is_none_or(|o| String::from_utf8_lossy(&o.stdout).trim() != "0") {
        return Some("not root: network namespaces need CAP_SYS_ADMIN".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("no `ip` (iproute2) on this machine".into());
    }
    None
}

/// The reference in its namespace, serving `keys` keys per plan at the real window.
fn serve(ns: &str, keys: usize, log: &Path) -> Child {
    let args: Vec<String> = [
        "serve",
        "--addr",
        "10.199.0.1:8443",
        "--dev-keys",
        &keys.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let child = spawn(&["ip", "netns", "exec", ns], &args, log);
    // Ready once it says so.
    let start = Instant::now();
    while !std::fs::read_to_string(log)
        .unwrap_or_default()
        .contains("ready")
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the reference did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

/// Per key (label): sent and admitted, from a load.json.
fn per_key(report: &Value) -> Vec<(String, u64, u64)> {
    report["scenarios"][0]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["label"].as_str().unwrap().to_string(),
                k["sent"].as_u64().unwrap(),
                k["admitted"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Three shards, each in a network namespace of its own, against one reference serving 3,000
/// keys per plan at the real 60 s window, merged: the same verdict and per-key figures as one
/// process running the same keys against a fresh reference (admissions within 2 of each
/// other: window edges). About three minutes; `.ci/run` runs it.
#[test]
#[ignore = "three shards in network namespaces at the real 60 s window: about 3 minutes, root; .ci/run runs it"]
fn three_shards_in_their_own_namespaces_give_one_process_verdicts() {
    if let Some(why) = cannot_make_namespaces() {
        eprintln!("skipped: {why}");
        return;
    }
    const KEYS: usize = 3000;
    let ns = hosts(3);
    let dir = scratch("netns");
    let keys = key_file(&dir, KEYS);
    // A fleet the 2 cores hold at the real window: 30 keys at 2x, 2,970 at 0.1x (about 360
    // requests per second in all) for 1.25 windows.
    let scenario = dir.join("fleet-3000.toml");
    std::fs::write(
        &scenario,
        "name = \"fleet-3000\"\nplan = \"free\"\nshape = \"fleet\"\nrate = 2.0\nother_key_rate = 0.1\nnoisy = 0.01\nwindows = 1.25\n[[operations]]\noperation = \"getTags\"\nquery = { pageSize = \"1\" }\n",
    )
    .unwrap();
    let scenario = scenario.display().to_string();
    let url = "https://10.199.0.1:8443";
    let mut reference = serve(&ns.0[0], KEYS, &dir.join("serve-1.log"));
    let out = dir.join("sharded");
    let at = now() + 10.0;
    let shards: Vec<Child> = (1..=3)
        .map(|i| {
            let args = shard_args(url, &keys, &scenario, i, 3, at, &out);
            spawn(
                &["ip", "netns", "exec", &ns.0[i]],
                &args,
                &dir.join(format!("shard-{i}.log")),
            )
        })
        .collect();
    let codes: Vec<Option<i32>> = shards
        .into_iter()
        .map(|c| wait(c, Duration::from_secs(300)))
        .collect();
    let _ = reference.kill();
    let _ = reference.wait();
    assert_eq!(codes, [Some(0); 3], "shard logs in {}", dir.display());
    let merged_dir = dir.join("merged");
    assert_eq!(
        merge(
            std::slice::from_ref(&out),
            &merged_dir,
            &dir.join("merge.log")
        ),
        Some(0)
    );

    // One process, the same keys, a fresh reference.
    let mut reference = serve(&ns.0[0], KEYS, &dir.join("serve-2.log"));
    let single = dir.join("single");
    let mut args = shard_args(url, &keys, &scenario, 1, 1, now() + 2.0, &single);
    args.truncate(8);
    args.extend(["--out".into(), single.display().to_string()]);
    let code = wait(
        spawn(
            &["ip", "netns", "exec", &ns.0[1]],
            &args,
            &dir.join("single.log"),
        ),
        Duration::from_secs(300),
    );
    let _ = reference.kill();
    let _ = reference.wait();
    assert_eq!(
        code,
        Some(0),
        "single run: {}",
        dir.join("single.log").display()
    );

    let read =
        |p: PathBuf| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let (m, s) = (
        read(merged_dir.join("load.json")),
        read(single.join("load.json")),
    );
    assert_eq!(m["verdict"], s["verdict"]);
    assert_eq!(m["scenarios"][0]["verdict"], s["scenarios"][0]["verdict"]);
    assert_eq!(
        m["shards"].as_array().map(Vec::len),
        Some(3),
        "the shards named"
    );
    let (mk, sk) = (per_key(&m), per_key(&s));
    assert_eq!(mk.len(), KEYS);
    assert_eq!(mk.len(), sk.len());
    let mut off = Vec::new();
    for (a, b) in mk.iter().zip(&sk) {
        assert_eq!(a.0, b.0, "keys in the same order");
        if a.1 != b.1 || a.2.abs_diff(b.2) > 2 {
            off.push(format!(
                "{}: sent {}/{}, admitted {}/{}",
                a.0, a.1, b.1, a.2, b.2
            ));
        }
    }
    assert!(
        off.is_empty(),
        "merged vs one process, per key: {}",
        off.join("; ")
    );
    drop(ns);
    let _ = std::fs::remove_dir_all(&dir);
}
