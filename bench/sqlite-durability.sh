#!/usr/bin/env bash
# What durable commits cost on SQLite: POST /v1/merchants (one committed transaction with its
# event) with wrk at 1 and 8 connections against a release build on a fresh SQLite file.
#
#   bench/sqlite-durability.sh                      # the binary at target/release/holdfast
#   BIN=/path/to/other/holdfast bench/sqlite-durability.sh
#
# For the A/B in docs/performance.md, the second binary is built from the same tree with
# `PRAGMA synchronous = NORMAL` in crates/persistence/src/database.rs, in the same sitting.
# Needs wrk (apt-get install wrk). Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/wrk.sh
source bench/wrk.sh
DURATION="${DURATION:-10s}"
PORT=18183
BIN="${BIN:-target/release/holdfast}"
[ -x "$BIN" ] || cargo build --release --locked --quiet -p holdfast --bin holdfast
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

url="sqlite://$work/bench.db"
key=$(HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn "$BIN" --json platforms create \
      --name Bench --owner-email bench@example.com | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["value"])')
HOLDFAST_DATABASE_URL="$url" HOLDFAST_BIND="127.0.0.1:$PORT" HOLDFAST_LOG=warn \
  HOLDFAST_BOOTSTRAP_DEMO=false HOLDFAST_RATE_LIMIT_PRIVATE_PER_S=0 HOLDFAST_WORKERS=0 \
  HOLDFAST_VAULT_KEY_FILE="$work/vault.key" "$BIN" serve >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
echo "| connections | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|"
for conns in 1 8; do
  threads=$(( conns < 2 ? 1 : 2 ))
  out=$(HOLDFAST_KEY="$key" wrk -t"$threads" -c"$conns" -d"$DURATION" --latency \
        -s bench/post-merchant.lua "http://127.0.0.1:$PORT/v1/merchants")
  wrk_figures "$out"
  printf '| %s | %s | %s | %s | %s |\n' "$conns" "$rps" "$p50" "$p99" "$errors"
done
