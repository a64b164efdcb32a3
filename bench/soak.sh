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
cargo build --release --locked --quiet -p holdfast --bin holdfast
cargo build --release --locked --quiet -p holdfast-e2e --example webhook_receiver
BIN=target/release/holdfast
RECEIVER=target/release/examples/webhook_receiver

work=$(mktemp -d)
db="holdfast_soak_$$"
url="${PG_ADMIN%/*}/$db"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql "$PG_ADMIN" -qc "CREATE DATABASE $db" >/dev/null
export HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn HOLDFAST_VAULT_KEY_FILE="$work/vault.key" \
  HOLDFAST_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8 HOLDFAST_MAIL_DIR="$work/mail" \
  HOLDFAST_RATE_LIMIT_PRIVATE_PER_S=0 HOLDFAST_RATE_LIMIT_PUBLIC_PER_S=0 \
  HOLDFAST_BOOTSTRAP_DEMO=false HOLDFAST_BIND="127.0.0.1:$PORT"
key=$("$BIN" --json platforms create --name Soak --owner-email soak@example.com \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["value"])')

start_serve() { "$BIN" serve >>"$work/serve.log" 2>&1 & serve=$!; pids+=("$serve"); }
start_worker() { "$BIN" worker >>"$work/worker.log" 2>&1 & worker=$!; pids+=("$worker"); }
start_serve
start_worker
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "127.0.0.1:$PORT/v1/webhooks" -H "x-api-key: $key" \
  -d "{\"endpointUrl\": \"http://$RADDR/hooks\", \"events\": [\"merchant.created\"]}" >/dev/null
# The receiver reports once nothing has come for 45 s: longer than a killed process's lease.
"$RECEIVER" "$RADDR" 45000 >"$work/recv.json" & receiver=$!; pids+=("$receiver")

cat > "$work/m.lua" <<LUA
wrk.method = "POST"
wrk.headers["x-api-key"] = "$key"
wrk.headers["content-type"] = "application/json"
wrk.body = '{"name": "Soak shop"}'
LUA
# wrk keeps going through the kills (its failed requests are counted as errors).
wrk -t2 -c8 -d"${DURATION}s" -s "$work/m.lua" "http://127.0.0.1:$PORT/v1/merchants" >"$work/wrk.txt" 2>&1 &
load=$!
kills=0
end=$((SECONDS + DURATION))
while [ $SECONDS -lt $((end - 10)) ]; do
  sleep $((10 + RANDOM % 11))
  [ $SECONDS -ge $end ] && break
  if (( RANDOM % 2 )); then kill -9 "$serve"; start_serve; else kill -9 "$worker"; start_worker; fi
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
