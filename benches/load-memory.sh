#!/usr/bin/env bash
# `load`'s own peak memory with fleets of keys, at the real 60 s window: for each N, a fresh
# `linkcert serve --plain-http --dev-keys N`, then `linkcert load` with a light fleet of its N
# Free keys (1% noisy at 1.5 times the limit, the rest at 0.02 times: about 700 requests/s at
# 20,000 keys), 1.5 windows, measured with `/usr/bin/time` (peak RSS of the load process).
# Prints one table row per N, with load's verdict line.
#
#   cargo build --release && benches/load-memory.sh
#   SIZES="300 3000 20000" benches/load-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
SIZES=${SIZES:-"300 3000 20000"}
WINDOWS=${WINDOWS:-1.5}
work=$(mktemp -d)
serve=
trap '[ -n "$serve" ] && kill "$serve" 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/light.toml" <<T
name = "light-fleet"
description = "A light fleet: 1% of the Free keys at 1.5x their limit, the rest at 0.02x"
plan = "free"
shape = "fleet"
rate = 1.5
other_key_rate = 0.02
noisy = 0.01
windows = $WINDOWS
[[operations]]
operation = "getTags"
query = { pageSize = "1" }
T
printf '| keys | requests/s | wall | peak RSS of load | verdict |\n|---|---|---|---|---|\n'
for n in $SIZES; do
  port=$((20000 + RANDOM % 20000))
  "$BIN" serve --plain-http --addr "127.0.0.1:$port" --dev-keys "$n" >"$work/serve.log" 2>&1 &
  serve=$!
  until grep -qs ready "$work/serve.log"; do sleep 0.2; done
  : >"$work/keys"
  for i in $(seq 1 "$n"); do echo "free=lk_free_$i" >>"$work/keys"; done
  /usr/bin/time -f "%e %M" -o "$work/time" "$BIN" load --target "http://127.0.0.1:$port" \
    --key-file "$work/keys" --scenario "$work/light.toml" --out "$work/out" >"$work/load.log" 2>&1 || true
  read -r wall kb <"$work/time"
  rate=$(python3 -c "n=$n; m=max(1,round(0.01*n)); print(round((m*1.5+(n-m)*0.02)))")
  verdict=$(grep -E '^load:' "$work/load.log" | tail -1 || true)
  printf '| %s | %s | %s s | %s MB | %s |\n' "$n" "$rate" "$wall" "$((kb / 1024))" "$verdict"
  kill "$serve"; wait "$serve" 2>/dev/null || true; serve=
  cp -r "$work/out" "/tmp/load-memory-$n" 2>/dev/null || true
done
