#!/usr/bin/env bash
# Two `holdfast serve` replicas and two `holdfast worker`s on one PostgreSQL database: webhook
# load (wrk posting merchants, one merchant.created subscription to the project's receiver) on
# both replicas at once for DURATION seconds, half the connections each. Then everything settles
# and the script checks that every committed merchant's notification was delivered and its
# outcome recorded once: every row succeeded, the requests the rows count equal the requests the
# receiver saw, and duplicates (more than one request per webhook-id) are counted.
#
#   bench/replicas.sh                  # 20 s at 8 connections
#   DURATION=30 CONNECTIONS=16 bench/replicas.sh
#   BIN=/tmp/base/holdfast bench/replicas.sh
#
# Needs wrk and PostgreSQL (HOLDFAST_BENCH_PG, default local trust). Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-20}"
CONNECTIONS="${CONNECTIONS:-8}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORTS=(18185 18186)
RADDR=127.0.0.1:18395
# shellcheck source=bench/webhook-env.sh
source bench/webhook-env.sh
for port in "${PORTS[@]}"; do
  HOLDFAST_BIND="127.0.0.1:$port" "$BIN" serve >>"$work/serve-$port.log" 2>&1 & pids+=($!)
done
for n in 1 2; do "$BIN" worker >>"$work/worker-$n.log" 2>&1 & pids+=($!); done
for port in "${PORTS[@]}"; do
  for _ in $(seq 1 50); do curl -sf "127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
done
curl -sf "127.0.0.1:${PORTS[0]}/v1/webhooks" -H "x-api-key: $key" \
  -d "{\"endpointUrl\": \"http://$RADDR/hooks\", \"events\": [\"merchant.created\"]}" >/dev/null
"$RECEIVER" "$RADDR" 4000 >"$work/recv.json" & receiver=$!; pids+=("$receiver")
sleep 0.3

half=$(( CONNECTIONS / 2 ))
loads=()
for port in "${PORTS[@]}"; do
  wrk -t1 -c"$half" -d"${DURATION}s" --latency -s bench/post-merchant.lua "http://127.0.0.1:$port/v1/merchants" \
    >"$work/wrk-$port.txt" 2>&1 & loads+=($!)
done
for l in "${loads[@]}"; do wait "$l"; done
wait "$receiver" || true

q() { psql "$url" -Atc "$1"; }
api=0
for port in "${PORTS[@]}"; do
  rate=$(awk '/Requests\/sec/ {print $2}' "$work/wrk-$port.txt")
  echo "replica :$port: ${rate}/s, p99 $(awk '$1 == "99%" {print $2}' "$work/wrk-$port.txt"), $(awk '/Non-2xx|Socket errors/' "$work/wrk-$port.txt" | tr '\n' ' ')"
  api=$(python3 -c "print(round($api + $rate, 1))")
done
merchants=$(q "SELECT count(*) FROM merchants")
notifications=$(q "SELECT count(*) FROM notifications")
undelivered=$(q "SELECT count(*) FROM notifications WHERE state <> 'succeeded'")
counted=$(q "SELECT coalesce(sum(requests), 0) FROM notifications")
repeated=$(q "SELECT count(*) FROM notifications WHERE requests > 1")
received=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['requests'])" "$work/recv.json")
echo "API, both replicas: ${api}/s"
echo "merchants committed: $merchants; notifications: $notifications; not delivered: $undelivered"
echo "requests counted on the rows: $counted; received: $received; rows sent more than once: $repeated"
echo "receiver: $(cat "$work/recv.json")"
[ "$merchants" = "$notifications" ] && [ "$undelivered" = 0 ] && [ "$counted" = "$received" ] \
  || { echo "MISMATCH: see above" >&2; exit 1; }
echo "every notification delivered, its outcome recorded once"
