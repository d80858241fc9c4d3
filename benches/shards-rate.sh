#!/usr/bin/env bash
# What shards add on one machine: the same fleet scenario, offered far above what one process
# sends on time, run as one process and as SHARDS shards started together (`--shard I/N`,
# one `--start-at`), each against a fresh `linkcert serve --plain-http --dev-keys KEYS`.
# Prints the rate each sent (and on time) and the sum: on one 2-core machine the shards share
# the cores with each other and with the server, so they cannot add up; on N machines each
# shard has its own cores and sockets.
#
#   cargo build --release && benches/shards-rate.sh
#   SHARDS=3 KEYS=300 RATE=0.5 benches/shards-rate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
SHARDS=${SHARDS:-3}
KEYS=${KEYS:-300}
RATE=${RATE:-0.5}
work=$(mktemp -d)
trap 'kill "$serve" 2>/dev/null || true; rm -rf "$work"' EXIT
for i in $(seq 1 "$KEYS"); do echo "advanced=lk_advanced_$i"; done >"$work/keys"
# Every Advanced key at RATE x 3,000 per 6 s window, for two windows.
cat >"$work/flood.toml" <<T
name = "flood"
plan = "advanced"
shape = "fleet"
rate = $RATE
other_key_rate = $RATE
noisy = 0.0
windows = 2
[[operations]]
operation = "getTags"
query = { pageSize = "1" }
T
start_server() {
  port=$((20000 + RANDOM % 20000))
  "$BIN" serve --plain-http --addr "127.0.0.1:$port" --dev-keys "$KEYS" --window 6 >"$work/serve.log" 2>&1 &
  serve=$!
  until grep -q ready "$work/serve.log"; do sleep 0.2; done
}
rates() {
  python3 - "$@" <<'P'
import json, sys
tot_sched = tot_sent = tot_late = 0.0
for path in sys.argv[1:]:
    g = json.load(open(path))["scenarios"][0]["generator"]
    tot_sched += g["scheduled_rate"]; tot_sent += g["achieved_rate"]; tot_late += g["late"]
    print(f"    {path.split('/')[-2]}: asked {g['scheduled_rate']:.0f}/s, sent {g['achieved_rate']:.0f}/s, late {g['late']} of {g['sent']}, peak in flight {g['peak_in_flight']}")
print(f"  total: asked {tot_sched:.0f}/s, sent {tot_sent:.0f}/s, late {tot_late:.0f}")
P
}
echo "one process, $KEYS Advanced keys at ${RATE}x:"
start_server
"$BIN" load --target "http://127.0.0.1:$port" --key-file "$work/keys" --rate-window 6 \
  --scenario "$work/flood.toml" --max-rate 1000000 --out "$work/one" >"$work/one.log" 2>&1 || true
kill "$serve"; wait "$serve" 2>/dev/null || true
rates "$work/one/load.json"
echo "$SHARDS shards, the same keys:"
start_server
at=$(python3 -c 'import time; print(f"{time.time() + 4:.3f}")')
for i in $(seq 1 "$SHARDS"); do
  "$BIN" load --target "http://127.0.0.1:$port" --key-file "$work/keys" --rate-window 6 \
    --scenario "$work/flood.toml" --max-rate 1000000 --shard "$i/$SHARDS" --start-at "$at" \
    --out "$work/sharded" >"$work/shard-$i.log" 2>&1 &
done
wait $(jobs -p | grep -v "^$serve$") 2>/dev/null || true
kill "$serve"; wait "$serve" 2>/dev/null || true
rates "$work"/sharded/shard-*/load.json
