#!/usr/bin/env bash
# What combined rate the generator holds with scenarios running together: the figure behind
# `load --max-rate`'s default. For each combined rate R, three steady overload scenarios on
# three keys (Pro, Business, Advanced, R split in proportion to their limits) run together
# (`--max-rate` out of the way) for two 6 s windows against a fresh `linkcert serve` (HTTPS, in
# its own process, as a target is), ROUNDS times. Prints, per R and round, each scenario's
# verdict, late and lagged sends and the worst lateness; a round holds R when no scenario is
# client-saturated.
#
#   cargo build --release && benches/max-rate.sh
#   RATES="2000 4000" ROUNDS=1 benches/max-rate.sh
#
# Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/linkcert}
RATES=${RATES:-1000 2000 3000 4000 6000}
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
# The plans' limits per 6 s window: Pro 600, Business 1,200, Advanced 3,000 (4,800 in all).
scenario() { # plan, rate multiple
  cat >"$work/$1.toml" <<T
name = "$1-steady"
description = "$1 at $2x its limit"
plan = "$1"
class = "standard"
shape = "steady"
rate = $2
windows = 2

[[operations]]
operation = "getTags"
weight = 1
query = { pageSize = "1" }
T
}
for rate in $RATES; do
  multiple=$(python3 -c "print(round($rate * 6 / 4800, 3))")
  for plan in pro business advanced; do scenario "$plan" "$multiple"; done
  for round in $(seq "$ROUNDS"); do
    port=$(free_port)
    "$BIN" serve --window 6 --addr "127.0.0.1:$port" >/dev/null 2>&1 &
    server=$!
    sleep 1
    "$BIN" load --target "https://127.0.0.1:$port" --insecure --rate-window 6 \
      --key pro=lk_pro_1 --key business=lk_business_1 --key advanced=lk_advanced_1 \
      --scenario "$work/pro.toml" --scenario "$work/business.toml" \
      --scenario "$work/advanced.toml" --max-rate 1000000 --out "$work/out" >/dev/null 2>&1 || true
    kill "$server"
    wait "$server" 2>/dev/null || true
    python3 - "$work/out/load.json" "$rate" "$round" <<'P'
import json, sys
r = json.load(open(sys.argv[1]))
rate, rnd = sys.argv[2], sys.argv[3]
rows, held = [], True
for s in r["scenarios"]:
    g = s.get("generator") or {}
    held &= s["verdict"] != "client-saturated"
    rows.append(f"{s['name']}: {s['verdict']}, {g.get('achieved_rate', 0):.0f}/{g.get('scheduled_rate', 0):.0f} req/s, "
                f"late {g.get('late', 0)}, lagged {g.get('lagged', 0)}, worst {g.get('max_late_ms', 0):.0f} ms")
print(f"{rate:>5} req/s combined, round {rnd}: {'held' if held else 'SATURATED'}; " + "; ".join(rows))
P
  done
done
