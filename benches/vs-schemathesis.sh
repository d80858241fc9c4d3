#!/usr/bin/env bash
# The runner's cost per request beside Schemathesis, on the same target: one fresh
# `linkcert serve --plain-http` with the bench's unlimited key set, then
#   Schemathesis 4 twice (every check, the spec's OpenAPI file, the key in a header, one worker)
#   `linkcert check --only` every family but ratelimit (whose bursts wait for windows), five
#   times, each against a fresh reference, the median taken
# each timed whole; requests counted from Schemathesis' HAR report and linkcert's summary line.
# Each tool runs at its defaults: Schemathesis one worker, linkcert `--concurrency 4` (LC_ARGS
# adds to linkcert's command line: LC_ARGS="--concurrency 1" sends one request at a time).
# Prints requests, seconds, requests per second, and the ratio.
#
#   cargo build --release && benches/vs-schemathesis.sh
#   ST=/path/to/schemathesis EXAMPLES=50 benches/vs-schemathesis.sh
#   KEEP=1 ...   keeps the work directory (both tools' logs, linkcert's reports, the servers' logs)
# Needs Schemathesis (pip install schemathesis; ST names the executable) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
ST=${ST:-schemathesis}
EXAMPLES=${EXAMPLES:-100}
work=$(mktemp -d)
serve=""
trap 'kill "$serve" 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 20000))
cat >"$work/keys.toml" <<T
[[workspace]]
name = "bench"
plan = "enterprise"
keys = ["lk_bench"]
rate_limit_per_minute = 100000000
analytics_per_second = 1000000
T
# A reference on a free port, its log in $work/serve$1.log; its pid in $serve.
start_serve() {
  local tries=0
  port=$((20000 + RANDOM % 20000))
  "$BIN" serve --plain-http --addr "127.0.0.1:$port" --keys "$work/keys.toml" >"$work/serve$1.log" 2>&1 &
  serve=$!
  until grep -q ready "$work/serve$1.log"; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$serve" 2>/dev/null; then
      echo "the reference did not start (port $port): $work/serve$1.log says:" >&2
      cat "$work/serve$1.log" >&2
      exit 1
    fi
    sleep 0.05
  done
}
start_serve ""
url="http://127.0.0.1:$port"
# The shell's own clock: starting an interpreter to read it would add its start-up to each run.
now() { date +%s.%N; }

# Schemathesis runs twice from the work directory. It keeps the failures it found in
# `.schemathesis/` under its working directory and replays them first: the first run starts
# from none (as in a fresh checkout), the second replays the first's, as a user's next run
# does; it was the faster of the two here. The ratio is taken against the faster.
spec=$PWD/specs/link-attribution.openapi.yaml
st_run() {
  local t0 t1 n
  t0=$(now)
  (cd "$work" && "$ST" run "$spec" --url "$url" -H "Authorization: Bearer lk_bench" \
    --max-examples "$EXAMPLES" --workers 1 --report har --report-har-path "$work/st$1.har" \
    >"$work/st$1.log" 2>&1) || true
  t1=$(now)
  n=$(python3 -c "import json; print(len(json.load(open('$work/st$1.har'))['log']['entries']))")
  echo "$n $t0 $t1"
}
st_first=$(st_run 1)
st_again=$(st_run 2)

# The check families, from the catalogue's list of checks (ids before the dot), but ratelimit.
families=$("$BIN" catalogue 2>/dev/null | sed -n '/^Checks/,/^Rules/p' | awk '/^  [a-z]/ {print $1}' |
  cut -d. -f1 | sort -u | grep -v -x ratelimit | sed 's/^/--only /' | tr '\n' ' ')
# linkcert runs LC_RUNS times (default 5), each against a reference of its own, started fresh
# (nothing drawn or stored yet: harder than the server Schemathesis' second run met); the
# median run is taken (the slower middle one for an even count). One run of 0.15 s is at the
# mercy of the machine's moment.
lc_times=""
for i in $(seq "${LC_RUNS:-5}"); do
  kill "$serve" 2>/dev/null || true
  start_serve "$i"
  t2=$(now)
  # shellcheck disable=SC2086
  "$BIN" check --target "http://127.0.0.1:$port" --key "enterprise=lk_bench" $families \
    ${LC_ARGS:-} --out "$work/lc$i" >"$work/lc$i.log" 2>&1 || true
  t3=$(now)
  lc_requests=$( (grep -o '[0-9][0-9]* requests' "$work/lc$i.log" || true) | tail -1 | awk '{print $1}')
  if [ -z "$lc_requests" ]; then
    echo "linkcert's run $i printed no request count: $work/lc$i.log (KEEP=1 keeps it)" >&2
    exit 1
  fi
  lc_times="$lc_times $lc_requests:$t2:$t3"
done

# shellcheck disable=SC2086
python3 - $st_first $st_again $lc_times <<'P'
import sys
a = sys.argv[1:]
runs = [(int(a[0]), float(a[1]), float(a[2])), (int(a[3]), float(a[4]), float(a[5]))]
lc = [tuple(map(float, r.split(":"))) for r in a[6:]]
print("| runner | requests | seconds | requests/s |\n|---|---|---|---|")
rates = []
for label, (n, t0, t1) in zip(["first run", "again, replaying its stored failures"], runs):
    rates.append(n / (t1 - t0))
    print(f"| Schemathesis ({label}) | {n} | {t1 - t0:.1f} | {rates[-1]:.0f} |")
lc_rates = sorted((n / (t3 - t2), n, t3 - t2) for n, t2, t3 in lc)
lc_rate, lc_n, lc_secs = lc_rates[(len(lc_rates) - 1) // 2]
every = ", ".join(f"{t3 - t2:.2f}" for _, t2, t3 in lc)
if len({n for n, _, _ in lc}) > 1:
    # Every run sends the same requests for one seed; a different count is worth a look.
    print("linkcert's runs sent different numbers of requests:", [int(n) for n, _, _ in lc])
print(f"| linkcert check (every family but ratelimit; median of {len(lc)}: {every} s) | {lc_n:.0f} | {lc_secs:.2f} | {lc_rate:.0f} |")
print(f"linkcert / Schemathesis per request: {lc_rate / max(rates):.0f}x against its faster run, "
      f"{lc_rate / min(rates):.0f}x against its slower")
P
