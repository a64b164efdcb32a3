#!/usr/bin/env bash
# Webhook delivery from one `holdfast worker` process on PostgreSQL to a local receiver that
# answers 204 at once (tests/e2e/examples/webhook_receiver.rs):
#   1. throughput: a backlog of notifications is written with the worker stopped, then one
#      worker drains it; notifications per second as counted at the receiver;
#   2. latency: with the worker running, auths arrive at a steady pace; p50/p99 from each
#      event's createdOn to its first request at the receiver.
#
#   bench/webhooks.sh
#   BACKLOG_SECONDS=20 SUBSCRIPTIONS=8 bench/webhooks.sh
#   HISTORY=250000 bench/webhooks.sh   # on 14 days of history (bench/history.sql)
#
# Needs wrk (apt-get install wrk) and PostgreSQL at HOLDFAST_BENCH_PG. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
BACKLOG_SECONDS="${BACKLOG_SECONDS:-10}"
STEADY_SECONDS="${STEADY_SECONDS:-10}"
SUBSCRIPTIONS="${SUBSCRIPTIONS:-4}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18183
RECEIVER_ADDR=127.0.0.1:18300
# shellcheck source=bench/webhook-env.sh
source bench/webhook-env.sh
HOLDFAST_BIND="127.0.0.1:$PORT" HOLDFAST_WORKERS=0 \
  $BIN serve >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
api() { curl -sf "127.0.0.1:$PORT$1" -H "x-api-key: $key" -d "$2"; }
merchant=$(api /v1/merchants '{"name": "Bench shop"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
for _ in $(seq 1 "$SUBSCRIPTIONS"); do
  api /v1/webhooks "{\"endpointUrl\": \"http://$RECEIVER_ADDR/hooks\", \"events\": [\"transaction.created\"]}" >/dev/null
done
if [ -n "${HISTORY:-}" ]; then
  [[ $HISTORY =~ ^[0-9]+$ ]] || { echo "HISTORY must be a number of rows" >&2; exit 2; }
  psql "$url" -q -v ON_ERROR_STOP=1 -v rows="$HISTORY" -f bench/history.sql >/dev/null
  echo "history: $(psql "$url" -Atc "SELECT count(*) FROM notifications") delivered notifications, analyzed"
fi
load() { # seconds connections run-tag
  HOLDFAST_KEY="$key" HOLDFAST_MERCHANT="$merchant" HOLDFAST_RUN="$3" \
    wrk -t1 -c"$2" -d"$1s" -s bench/post-auth.lua "http://127.0.0.1:$PORT/v1/transactions" >/dev/null
}

# 1. Throughput: a backlog, then one worker drains it.
load "$BACKLOG_SECONDS" 8 backlog
backlog=$(psql "$url" -Atc "SELECT count(*) FROM notifications WHERE state = 'pending'")
$RECEIVER "$RECEIVER_ADDR" 3000 >"$work/drain.json" &
receiver=$!
pids+=($receiver)
sleep 0.3
$BIN worker >"$work/worker.log" 2>&1 &
worker=$!
pids+=($worker)
wait "$receiver"
failed=$(psql "$url" -Atc "SELECT count(*) FROM notifications WHERE state <> 'succeeded'")
echo "backlog: $backlog notifications ($SUBSCRIPTIONS subscriptions); not succeeded after the drain: $failed"
echo "drain:   $(cat "$work/drain.json")"

# 2. Latency: steady load with the worker running.
$RECEIVER "$RECEIVER_ADDR" 3000 >"$work/steady.json" &
receiver=$!
pids+=($receiver)
sleep 0.3
load "$STEADY_SECONDS" 2 steady
wait "$receiver"
echo "steady:  $(cat "$work/steady.json")"
kill "$worker" 2>/dev/null; wait "$worker" 2>/dev/null || true
