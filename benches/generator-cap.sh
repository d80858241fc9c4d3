#!/usr/bin/env bash
# The load generator at its cap beside a dedicated HTTP load tool, against one reference:
# for each in-flight count C, three alternating rounds, each against a fresh
# `linkcert serve --plain-http --window 6`: `wrk -t2 -cC -d6s`, then `linkcert load` offered
# 50,000 requests/s (Advanced at 100x, one 6 s window, or WINDOWS of them) with
# --max-in-flight C. Prints both rates, their ratio and linkcert's peak RSS.
#
#   cargo build --release && benches/generator-cap.sh
#   CONNS=1024 WINDOWS=10 benches/generator-cap.sh     # a run ten times longer (memory)
#
# Needs wrk (Debian: apt-get install wrk), python3 and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
WINDOWS=${WINDOWS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/cap.toml" <<T
name = "cap"
description = "Advanced at 100x its limit: 50,000 req/s offered at a 6 s window"
plan = "advanced"
class = "standard"
shape = "steady"
rate = 100
windows = $WINDOWS

[[operations]]
operation = "getTags"
weight = 1
query = { pageSize = "1" }
T
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
for c in ${CONNS:-64 1024}; do
  for round in 1 2 3; do
    port=$(free_port)
    "$BIN" serve --plain-http --window 6 --addr "127.0.0.1:$port" >/dev/null 2>&1 &
    server=$!
    sleep 1
    wrk_rate=$(wrk -t2 -c"$c" -d6s -H "Authorization: Bearer lk_advanced_1" \
      "http://127.0.0.1:$port/tags?pageSize=1" | awk '/Requests\/sec/ {print $2}')
    sleep 7 # the key's window passes: linkcert starts on a fresh quota, as wrk did
    /usr/bin/time -o "$work/time" -f "%M" "$BIN" load --target "http://127.0.0.1:$port" \
      --key advanced=lk_advanced_1 --rate-window 6 --scenario "$work/cap.toml" \
      --out "$work/out" --max-in-flight "$c" >/dev/null 2>&1 || true
    kill "$server"
    wait "$server" 2>/dev/null || true
    python3 - "$work/out/load.json" "$wrk_rate" "$(tail -1 "$work/time")" "$c" "$round" <<'P'
import json, sys
g = json.load(open(sys.argv[1]))["scenarios"][0]["generator"]
wrk, rss, c, rnd = float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
print(f"in flight {c:>5} round {rnd}: wrk {wrk:8.0f} req/s  linkcert {g['achieved_rate']:8.0f} req/s "
      f"({g['sent']} sent)  ratio {g['achieved_rate'] / wrk:.2f}  linkcert peak RSS {rss / 1024:.0f} MB")
P
  done
done
