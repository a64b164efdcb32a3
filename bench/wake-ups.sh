#!/usr/bin/env bash
# A separate `holdfast worker` delivering what a `serve` without delivery loops writes
# (HOLDFAST_WORKERS=0), on PostgreSQL, at rest and at a trickle: the shape where the worker
# hears of each write by LISTEN/NOTIFY or finds it at its next poll.
#   1. at rest: transactions per second the database commits while nothing happens (the
#      worker's claims), over IDLE_SECONDS;
#   2. a trickle: TRICKLE merchants posted one at a time, GAP_MS apart (one merchant.created
#      subscription to the project's receiver); event -> arrival p50/p99 at the receiver.
#
#   bench/wake-ups.sh
#   BIN=/tmp/base/holdfast TRICKLE=200 bench/wake-ups.sh
#
# Needs PostgreSQL at HOLDFAST_BENCH_PG (default local trust). Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
IDLE_SECONDS="${IDLE_SECONDS:-10}"
TRICKLE="${TRICKLE:-100}"
GAP_MS="${GAP_MS:-70}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18185
RADDR=127.0.0.1:18395
# shellcheck source=bench/webhook-env.sh
source bench/webhook-env.sh
HOLDFAST_BIND="127.0.0.1:$PORT" HOLDFAST_WORKERS=0 "$BIN" serve >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
api() { curl -sf "127.0.0.1:$PORT$1" -H "x-api-key: $key" -d "$2" >/dev/null; }
api /v1/webhooks "{\"endpointUrl\": \"http://$RADDR/hooks\", \"events\": [\"merchant.created\"]}"
"$BIN" worker >"$work/worker.log" 2>&1 &
pids+=($!)
sleep 2

commits() { psql "$url" -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
before=$(commits)
sleep "$IDLE_SECONDS"
after=$(commits)
# Each reading is a transaction of its own: one is taken off.
echo "at rest: $(( (after - before - 1) / IDLE_SECONDS )) commits/s over ${IDLE_SECONDS} s"

"$RECEIVER" "$RADDR" 2000 >"$work/recv.json" &
receiver=$!
pids+=("$receiver")
sleep 0.3
for _ in $(seq 1 "$TRICKLE"); do
  api /v1/merchants '{"name": "Trickle shop", "currency": "EUR"}'
  sleep "$(printf '0.%03d' "$GAP_MS")"
done
wait "$receiver"
echo "trickle: $TRICKLE merchants ${GAP_MS} ms apart: $(cat "$work/recv.json")"
