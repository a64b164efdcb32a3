#!/usr/bin/env bash
# Both throughput benches on the embedded SQLite default, each on a fresh file, release build:
# 1. auths (POST /v1/transactions on the sandbox, an Idempotency-Key each, as
#    bench/transactions.sh) at 1 and 8 connections, delivery off;
# 2. webhooks end to end (POST /v1/merchants -> merchant.created -> signed delivery to the
#    project's receiver, delivery inside `holdfast serve`) at 8 connections, then the same API
#    work with delivery off (notifications only queued), as ../shared/bench/webhooks-e2e.sh does
#    on PostgreSQL.
#
#   bench/sqlite.sh
#   BIN=/tmp/base/holdfast DURATION=20 bench/sqlite.sh
#
# Needs wrk. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/wrk.sh
source bench/wrk.sh
DURATION="${DURATION:-15}"
PORT=18187
RADDR=127.0.0.1:18397
# shellcheck source=bench/binaries.sh
source bench/binaries.sh
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
export HOLDFAST_LOG=warn HOLDFAST_BOOTSTRAP_DEMO=false HOLDFAST_BIND="127.0.0.1:$PORT" \
  HOLDFAST_RATE_LIMIT_PRIVATE_PER_S=0 HOLDFAST_RATE_LIMIT_PUBLIC_PER_S=0 \
  HOLDFAST_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8 HOLDFAST_VAULT_KEY_FILE="$work/vault.key" \
  HOLDFAST_MAIL_DIR="$work/mail"

# A fresh file with a platform, `serve` on it; sets key and server. $1 names the file.
fresh() {
  export HOLDFAST_DATABASE_URL="sqlite://$work/$1.db"
  key=$("$BIN" --json platforms create --name Bench --owner-email bench@example.com \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["value"])')
  "$BIN" serve >"$work/$1.log" 2>&1 & server=$!; pids+=("$server")
  for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
}
stop() { kill "$server"; wait "$server" 2>/dev/null || true; }

echo "| SQLite | connections | requests/s | p50 | p99 | non-2xx | delivered |"
echo "|---|---|---|---|---|---|---|"
HOLDFAST_WORKERS=0 fresh auths
merchant=$(curl -sf "127.0.0.1:$PORT/v1/merchants" -H "x-api-key: $key" -d '{"name": "Bench shop"}' \
           | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
for conns in 1 8; do
  threads=$(( conns < 2 ? 1 : 2 ))
  out=$(HOLDFAST_KEY="$key" HOLDFAST_MERCHANT="$merchant" HOLDFAST_RUN="$conns" wrk -t"$threads" -c"$conns" \
        -d"${DURATION}s" --latency -s bench/post-auth.lua "http://127.0.0.1:$PORT/v1/transactions")
  wrk_figures "$out"
  printf '| auth | %s | %s | %s | %s | %s | — |\n' "$conns" "$rps" "$p50" "$p99" "$errors"
done
stop

for run in deliver api-only; do
  if [ "$run" = api-only ]; then export HOLDFAST_WORKERS=0; fi
  fresh "$run"
  curl -sf "127.0.0.1:$PORT/v1/webhooks" -H "x-api-key: $key" \
    -d "{\"endpointUrl\": \"http://$RADDR/hooks\", \"events\": [\"merchant.created\"]}" >/dev/null
  receiver=""
  if [ "$run" = deliver ]; then "$RECEIVER" "$RADDR" 4000 >"$work/recv.json" & receiver=$!; pids+=("$receiver"); fi
  sleep 0.3
  out=$(HOLDFAST_KEY="$key" wrk -t2 -c8 -d"${DURATION}s" --latency -s bench/post-merchant.lua "http://127.0.0.1:$PORT/v1/merchants")
  wrk_figures "$out"
  delivered="—"
  if [ -n "$receiver" ]; then wait "$receiver" || true; delivered=$(cat "$work/recv.json"); fi
  printf '| webhooks, %s | 8 | %s | %s | %s | %s | %s |\n' "$run" "$rps" "$p50" "$p99" "$errors" "$delivered"
  stop
done
