#!/usr/bin/env bash
# Durability under faults: webhook load (wrk posting merchants, one merchant.created subscription
# to the project's receiver) for DURATION seconds on PostgreSQL, while `holdfast serve` (which
# delivers what it writes) and a separate `holdfast worker` are SIGKILLed and started again every
# 10-20 s. Then the load stops, everything is left to settle, and the script checks that every
# committed merchant has its notification delivered and recorded, and counts duplicates at the
# receiver (requests beyond one per webhook-id).
#
#   bench/soak.sh                      # 120 s
#   DURATION=30 bench/soak.sh
#
# Needs wrk and PostgreSQL (HOLDFAST_BENCH_PG, default local trust). Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-120}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18184
RADDR=127.0.0.1:18394
# shellcheck source=bench/webhook-env.sh
source bench/webhook-env.sh
export HOLDFAST_BIND="127.0.0.1:$PORT"

start_serve() { "$BIN" serve >>"$work/serve.log" 2>&1 & serve=$!; pids+=("$serve"); }
start_worker() { "$BIN" worker >>"$work/worker.log" 2>&1 & worker=$!; pids+=("$worker"); }
start_serve
start_worker
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "127.0.0.1:$PORT/v1/webhooks" -H "x-api-key: $key" \
  -d "{\"endpointUrl\": \"http://$RADDR/hooks\", \"events\": [\"merchant.created\"]}" >/dev/null
# The receiver reports once nothing has come for 45 s: longer than a killed process's lease.
"$RECEIVER" "$RADDR" 45000 >"$work/recv.json" & receiver=$!; pids+=("$receiver")

# wrk keeps going through the kills (its failed requests are counted as errors).
wrk -t2 -c8 -d"${DURATION}s" -s bench/post-merchant.lua "http://127.0.0.1:$PORT/v1/merchants" >"$work/wrk.txt" 2>&1 &
load=$!
kills=0
end=$((SECONDS + DURATION))
while [ $SECONDS -lt $((end - 10)) ]; do
  sleep $((10 + RANDOM % 11))
  [ $SECONDS -ge $end ] && break
  # Reaped before its successor starts: a listening socket not yet closed by a dying `serve`
  # made the next one fail to bind, and the loop then killed a process that had already exited.
  if (( RANDOM % 2 )); then
    kill -9 "$serve"; wait "$serve" 2>/dev/null || true; start_serve
  else
    kill -9 "$worker"; wait "$worker" 2>/dev/null || true; start_worker
  fi
  kills=$((kills + 1))
done
wait "$load" || true
wait "$receiver" || true

q() { psql "$url" -Atc "$1"; }
merchants=$(q "SELECT count(*) FROM merchants")
notifications=$(q "SELECT count(*) FROM notifications")
undelivered=$(q "SELECT count(*) FROM notifications WHERE state <> 'succeeded'")
echo "kills: $kills over ${DURATION} s ($(grep -c . "$work/serve.log" 2>/dev/null || echo 0) log lines)"
echo "wrk: $(awk '/requests in/ {print $1, "requests"}' "$work/wrk.txt"), $(awk '/Non-2xx|Socket errors/' "$work/wrk.txt" | tr '\n' ' ')"
echo "merchants committed: $merchants; notifications: $notifications; not delivered: $undelivered"
echo "receiver: $(cat "$work/recv.json")"
[ "$merchants" = "$notifications" ] && [ "$undelivered" = 0 ] || { echo "LOST: see above" >&2; exit 1; }
echo "nothing lost"
