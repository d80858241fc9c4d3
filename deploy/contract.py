"""What no schema says about the deployment examples: the contract docs/src/sharding.md states.

    python contract.py RENDERED.yaml SHARDS START_AT RUN_ID ACTION_YML WORKFLOW.yml...

RENDERED.yaml is deploy/kubernetes rendered with the sample values (deploy/validate makes it).
Prints one line per broken rule and exits 1 if there is any; run by deploy/validate after the
schemas have passed. Needs PyYAML (kubernetes-validate's dependency, in the same venv).
"""

import sys

import yaml

problems = []


def need(ok, what):
    if not ok:
        problems.append(what)


def pod_specs(objects):
    """(name, pod spec) of every Job's template and every Pod."""
    for o in objects:
        if o["kind"] == "Job":
            yield o["metadata"]["name"], o["spec"]["template"]["spec"]
        elif o["kind"] == "Pod":
            yield o["metadata"]["name"], o["spec"]


def check_kubernetes(objects, shards, start_at, run_id):
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    pvc = by_name.get(("PersistentVolumeClaim", "linkcert-runs"))
    need(pvc is not None, "no PersistentVolumeClaim linkcert-runs")
    if pvc:
        need(pvc["spec"]["accessModes"] == ["ReadWriteMany"],
             "linkcert-runs: accessModes must be [ReadWriteMany] (shards on several nodes)")

    job = by_name.get(("Job", "linkcert-shards"))
    need(job is not None, "no Job linkcert-shards")
    if job:
        s = job["spec"]
        need(s.get("completionMode") == "Indexed", "linkcert-shards: completionMode must be Indexed")
        need(s.get("completions") == shards and s.get("parallelism") == shards,
             f"linkcert-shards: completions and parallelism must both be the shard count ({shards})")
        need(s.get("backoffLimitPerIndex") == 0,
             "linkcert-shards: backoffLimitPerIndex must be 0 (a shard is never rerun)")
        m = s.get("maxFailedIndexes")
        need(isinstance(m, int) and 0 <= m <= shards,
             "linkcert-shards: maxFailedIndexes must be set, 0..completions")
        need("backoffLimit" not in s, "linkcert-shards: backoffLimit beside backoffLimitPerIndex")
        need("podFailurePolicy" not in s,
             "linkcert-shards: a podFailurePolicy could rerun a shard outside its window")
        [c] = s["template"]["spec"]["containers"]
        args = c.get("args", [])
        need(args[:1] == ["load"], "linkcert-shards: args must start with load")
        for want in (f"--shards={shards}", f"--start-at={start_at}", f"--run-id={run_id}",
                     f"--out=/work/runs/{run_id}"):
            need(want in args, f"linkcert-shards: args lack {want} (rendered)")
        key_files = [a.split("=", 1)[1] for a in args if a.startswith("--key-file=")]
        need(len(key_files) == 1, "linkcert-shards: one --key-file=PATH in args")
        need(not any(a == "--key" or a.startswith("--key=") for a in args),
             "linkcert-shards: a key on the command line (--key)")
        mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
        volumes = {v["name"]: v for v in s["template"]["spec"].get("volumes", [])}
        secret_mounts = [n for n, v in volumes.items() if "secret" in v]
        need(len(secret_mounts) == 1, "linkcert-shards: one Secret volume, the keys")
        for n in secret_mounts:
            sec = volumes[n]["secret"]
            need(sec.get("secretName") == "linkcert-keys", "keys volume: secretName linkcert-keys")
            need(sec.get("defaultMode") == 0o400, "keys volume: defaultMode must be 0400")
            need(mounts.get(n, {}).get("readOnly") is True, "keys volume: mounted readOnly")
            mp = mounts.get(n, {}).get("mountPath", "?")
            need(all(k.startswith(mp + "/") for k in key_files),
                 f"--key-file must be a file of the keys mount ({mp})")
        fs = s["template"]["spec"].get("securityContext", {}).get("fsGroup")
        need(fs == 65532, "linkcert-shards: fsGroup 65532 (the keys file 0400 is read by group)")

    merge = by_name.get(("Job", "linkcert-merge"))
    need(merge is not None, "no Job linkcert-merge")
    if merge:
        need(merge["spec"].get("suspend") is True,
             "linkcert-merge: created suspended (started after the shards)")
        [c] = merge["spec"]["template"]["spec"]["containers"]
        need(c.get("args", [])[:2] == ["load", "merge"], "linkcert-merge: args load merge ...")

    for name, spec in pod_specs(objects):
        need(spec.get("restartPolicy") == "Never", f"{name}: restartPolicy Never")
        need(spec.get("automountServiceAccountToken") is False,
             f"{name}: automountServiceAccountToken false")
        sc = spec.get("securityContext", {})
        need(sc.get("runAsNonRoot") is True and sc.get("runAsUser") == 65532,
             f"{name}: runAsNonRoot, runAsUser 65532")
        need(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
             f"{name}: seccompProfile RuntimeDefault")
        claims = [v["persistentVolumeClaim"]["claimName"] for v in spec.get("volumes", [])
                  if "persistentVolumeClaim" in v]
        need(claims == ["linkcert-runs"], f"{name}: mounts the claim linkcert-runs")
        for c in spec["containers"]:
            where = f"{name}/{c['name']}"
            csc = c.get("securityContext", {})
            need(csc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
            need(csc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation false")
            need(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}: capabilities drop ALL")
            r = c.get("resources", {})
            for kind in ("requests", "limits"):
                need({"cpu", "memory"} <= set(r.get(kind, {})), f"{where}: {kind} cpu and memory")
            for e in c.get("env", []):
                need("secretKeyRef" not in e.get("valueFrom", {}), f"{where}: a Secret in env")
            need(not any("secretRef" in e for e in c.get("envFrom", [])), f"{where}: a Secret in envFrom")
            if c["image"].endswith("linkcert") or "/linkcert:" in c["image"]:
                tmp = [m for m in c.get("volumeMounts", []) if m["mountPath"] == "/tmp"]
                empty = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
                need(len(tmp) == 1 and tmp[0]["name"] in empty, f"{where}: /tmp an emptyDir")


def check_workflows(action_yml, workflows):
    inputs = set(yaml.safe_load(open(action_yml))["inputs"])
    for path in workflows:
        doc = yaml.safe_load(open(path))
        for jname, job in doc["jobs"].items():
            for step in job.get("steps", []):
                if "/linkcert@" in step.get("uses", ""):
                    for k in step.get("with", {}):
                        need(k in inputs, f"{path}: job {jname} gives the Action `{k}`, not an input")
        if "shard" in doc["jobs"]:
            shard, merge = doc["jobs"]["shard"], doc["jobs"].get("merge", {})
            need(shard["strategy"].get("fail-fast") is False,
                 f"{path}: shard jobs need fail-fast: false")
            need("shard" in merge.get("needs", []), f"{path}: merge needs the shards")
            need("always()" in str(merge.get("if", "")), f"{path}: merge runs whatever the shards' outcome")


def main():
    rendered, shards, start_at, run_id, action_yml, *workflows = sys.argv[1:]
    objects = [o for o in yaml.safe_load_all(open(rendered)) if o]
    check_kubernetes(objects, int(shards), start_at, run_id)
    check_workflows(action_yml, workflows)
    for p in problems:
        print(f"contract: {p}")
    if problems:
        sys.exit(1)
    what = f"{len(objects)} objects" + (f" and {len(workflows)} workflows" if workflows else "")
    print(f"contract: {what} hold (docs/src/sharding.md)")


main()
