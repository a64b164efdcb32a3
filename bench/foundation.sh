#!/usr/bin/env bash
# Load on the foundation's hot path: key authentication (SHA-256 + one indexed lookup) plus one
# merchant query, against a release build, on PostgreSQL and on SQLite, on this machine.
#
#   bench/foundation.sh                 # both backends, 10 s per run
#   DURATION=30s bench/foundation.sh
#
# Needs wrk (apt-get install wrk) and PostgreSQL at HOLDFAST_BENCH_PG (default: local, trust).
# Traffic goes to 127.0.0.1 only; every run is bounded by DURATION.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/wrk.sh
source bench/wrk.sh
DURATION="${DURATION:-10s}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18181
BIN=target/release/holdfast

cargo build --release --locked --quiet -p holdfast --bin holdfast
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

run_backend() {
  local label=$1 url=$2
  local key
  key=$(HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn $BIN --json platforms create \
        --name Bench --owner-email bench@example.com | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["value"])')
  HOLDFAST_DATABASE_URL="$url" HOLDFAST_BIND="127.0.0.1:$PORT" HOLDFAST_LOG=warn \
    HOLDFAST_BOOTSTRAP_DEMO=false HOLDFAST_RATE_LIMIT_PRIVATE_PER_S=0 $BIN serve >"$work/$label.log" 2>&1 &
  server=$!
  for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  for script in post-merchant get-merchants; do
    for conns in 1 8 32 64; do
      local threads=$(( conns < 2 ? 1 : 2 ))
      local out
      out=$(HOLDFAST_KEY="$key" wrk -t"$threads" -c"$conns" -d"$DURATION" --latency \
            -s "bench/$script.lua" "http://127.0.0.1:$PORT/v1/merchants")
      local rps p50 p99 errors
      wrk_figures "$out"
      printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$script" "$conns" "$rps" "$p50" "$p99" "$errors"
    done
  done
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
}

echo "| backend | request | connections | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|---|---|"
db="holdfast_bench_$$"
psql "$PG_ADMIN" -qc "CREATE DATABASE $db" >/dev/null
run_backend postgres "${PG_ADMIN%/*}/$db"
psql "$PG_ADMIN" -qc "DROP DATABASE $db WITH (FORCE)" >/dev/null
run_backend sqlite "sqlite://$work/bench.db"
