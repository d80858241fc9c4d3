#!/usr/bin/env bash
# The reference's memory with fleets of keys: for each N, a fresh `linkcert serve --plain-http
# --dev-keys N` (N keys for each of the five plans), its resident memory once ready, then after
# every key of the four plans with a fixed limit was used once (`linkcert load` with one fleet
# scenario per plan, one request per key, together), then the growth per 1,000 keys over the
# first size's.
#
#   cargo build --release && benches/fleet-memory.sh
#   SIZES="1000 20000" benches/fleet-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
SIZES=${SIZES:-"1000 5000 20000"}
work=$(mktemp -d)
trap 'kill "$serve" 2>/dev/null || true; rm -rf "$work"' EXIT
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
printf '| keys per plan | keys in all | RSS ready | RSS after one request per key | growth per 1,000 keys (after) |\n|---|---|---|---|---|\n'
first=
for n in $SIZES; do
  port=$((20000 + RANDOM % 20000))
  rm -f "$work/serve.log"
  "$BIN" serve --plain-http --addr "127.0.0.1:$port" --dev-keys "$n" >"$work/serve.log" 2>&1 &
  serve=$!
  until grep -qs ready "$work/serve.log"; do sleep 0.2; done
  ready=$(rss_mb "$serve")
  : >"$work/keys"
  scenarios=()
  for plan in free pro business advanced; do
    for i in $(seq 1 "$n"); do echo "$plan=lk_${plan}_$i" >>"$work/keys"; done
    # limit x rate x windows = 1 request per key, over one window.
    case $plan in free) limit=60 ;; pro) limit=600 ;; business) limit=1200 ;; advanced) limit=3000 ;; esac
    cat >"$work/touch-$plan.toml" <<T
name = "touch-$plan"
plan = "$plan"
shape = "fleet"
rate = $(python3 -c "print(1.5 / $limit)")
other_key_rate = $(python3 -c "print(1.5 / $limit)")
noisy = 0.0
windows = 1
[[operations]]
operation = "getTags"
query = { pageSize = "1" }
T
    scenarios+=(--scenario "$work/touch-$plan.toml")
  done
  "$BIN" load --target "http://127.0.0.1:$port" --key-file "$work/keys" \
    "${scenarios[@]}" --out "$work/out" >"$work/load.log" 2>&1 || true
  after=$(rss_mb "$serve")
  total=$((5 * n))
  if [ -z "$first" ]; then first="$after $total"; fi
  per=$(python3 -c "a, k = map(float, '$first'.split()); print('-' if k == $total else f'{($after - a) / (($total - k) / 1000):.2f} MB')")
  printf '| %s | %s | %s MB | %s MB | %s |\n' "$n" "$total" "$ready" "$after" "$per"
  grep -E '^load:' "$work/load.log" | sed 's/^/    /' >&2 || true
  kill "$serve"
  wait "$serve" 2>/dev/null || true
done
