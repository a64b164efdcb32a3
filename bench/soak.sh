#!/usr/bin/env bash
# Durability under faults: webhook load (wrk posting merchants, one merchant.created subscription
# to the project's receiver) for DURATION seconds on PostgreSQL, while `holdfast serve` (which
# delivers what it writes) and a separate `holdfast worker` are SIGKILLed and started again every
# 10-20 s. Then the load stops, everything is left to settle, and the script checks, at the
# receiver, that every committed merchant (at least every one answered 2xx) has its notification
# delivered, and in the database that each is recorded as delivered; it counts duplicates at the
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
# wrk counts a request once its response is read: those answered minus the non-2xx are the
# merchants the API said it committed (a request cut by a kill is a socket error, not counted).
requests=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
non_2xx=$(awk '/Non-2xx/ {print $NF}' "$work/wrk.txt")
answered=$((requests - ${non_2xx:-0}))
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$work/recv.json" "$1"; }
received=$(field notifications)
received_requests=$(field requests)
echo "kills: $kills over ${DURATION} s"
echo "wrk: $requests requests, $answered answered 2xx; $(awk '/Non-2xx|Socket errors/' "$work/wrk.txt" | tr '\n' ' ')"
echo "merchants committed: $merchants; notifications: $notifications; not recorded as delivered: $undelivered"
echo "receiver: $received notifications (distinct webhook-id) in $received_requests requests: $((received_requests - received)) sent more than once"
echo "receiver figures: $(cat "$work/recv.json")"
# Every answered merchant is committed (a 201 means committed), and every committed merchant's
# notification reached the receiver: so every answered one did.
if [ "$merchants" -ge "$answered" ] && [ "$merchants" = "$notifications" ] \
  && [ "$received" = "$notifications" ] && [ "$undelivered" = 0 ]; then
  echo "nothing lost"
else
  echo "LOST: see above" >&2
  exit 1
fi
