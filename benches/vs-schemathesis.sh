#!/usr/bin/env bash
# The runner's cost per request beside Schemathesis, on the same target: one fresh
# `linkcert serve --plain-http` with the bench's unlimited key set, then
#   Schemathesis 4 (every check, the spec's OpenAPI file, the key in a header, one worker)
#   `linkcert check --only` every family but ratelimit (whose bursts wait for windows)
# each timed whole; requests counted from Schemathesis' HAR report and linkcert's report.json.
# Prints requests, seconds, requests per second, and the ratio.
#
#   cargo build --release && benches/vs-schemathesis.sh
#   ST=/path/to/schemathesis EXAMPLES=50 benches/vs-schemathesis.sh
#   KEEP=1 ...   keeps the work directory (both tools' logs, linkcert's reports, serve.log)
# Needs Schemathesis (pip install schemathesis; ST names the executable) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
ST=${ST:-schemathesis}
EXAMPLES=${EXAMPLES:-100}
work=$(mktemp -d)
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
"$BIN" serve --plain-http --addr "127.0.0.1:$port" --keys "$work/keys.toml" >"$work/serve.log" 2>&1 &
serve=$!
until grep -q ready "$work/serve.log"; do sleep 0.2; done
url="http://127.0.0.1:$port"
# The shell's own clock: starting an interpreter to read it would add its start-up to each run.
now() { date +%s.%N; }

t0=$(now)
# Run from the work directory: Schemathesis keeps the failures it found in `.schemathesis/`
# under its working directory and replays them first, so each run starts from none.
spec=$PWD/specs/link-attribution.openapi.yaml
(cd "$work" && "$ST" run "$spec" --url "$url" -H "Authorization: Bearer lk_bench" \
  --max-examples "$EXAMPLES" --workers 1 --report har --report-har-path "$work/st.har" \
  >"$work/st.log" 2>&1) || true
t1=$(now)
st_requests=$(python3 -c "import json; print(len(json.load(open('$work/st.har'))['log']['entries']))")

# The check families, from the catalogue's list of checks (ids before the dot), but ratelimit.
families=$("$BIN" catalogue 2>/dev/null | sed -n '/^Checks/,/^Rules/p' | awk '/^  [a-z]/ {print $1}' |
  cut -d. -f1 | sort -u | grep -v -x ratelimit | sed 's/^/--only /' | tr '\n' ' ')
t2=$(now)
# shellcheck disable=SC2086
"$BIN" check --target "$url" --key "enterprise=lk_bench" $families --out "$work/lc" >"$work/lc.log" 2>&1 || true
t3=$(now)
lc_requests=$(grep -o '[0-9]* requests' "$work/lc.log" | tail -1 | awk '{print $1}')

python3 - "$st_requests" "$t0" "$t1" "$lc_requests" "$t2" "$t3" <<'P'
import sys
st_n, t0, t1, lc_n, t2, t3 = int(sys.argv[1]), *map(float, sys.argv[2:4]), int(sys.argv[4]), *map(float, sys.argv[5:7])
st_rate, lc_rate = st_n / (t1 - t0), lc_n / (t3 - t2)
print("| runner | requests | seconds | requests/s |\n|---|---|---|---|")
print(f"| Schemathesis | {st_n} | {t1 - t0:.1f} | {st_rate:.0f} |")
print(f"| linkcert check (every family but ratelimit) | {lc_n} | {t3 - t2:.1f} | {lc_rate:.0f} |")
print(f"linkcert / Schemathesis per request: {lc_rate / st_rate:.0f}x")
P
