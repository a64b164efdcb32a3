# Sourced by the payment load scripts: a fresh PostgreSQL database, a platform with its default
# test key, `holdfast serve` on it and one merchant. Sets work, db, url, key, server, merchant,
# and removes everything on exit. Needs BIN, PORT and PG_ADMIN set by the caller.

work=$(mktemp -d)
db="holdfast_bench_$(basename "$0" .sh)_$$"
db="${db//-/_}"
url="${PG_ADMIN%/*}/$db"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql "$PG_ADMIN" -qc "CREATE DATABASE $db" >/dev/null

key=$(HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn "$BIN" --json platforms create \
      --name Bench --owner-email bench@example.com | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["value"])')
HOLDFAST_DATABASE_URL="$url" HOLDFAST_BIND="127.0.0.1:$PORT" HOLDFAST_LOG=warn \
  HOLDFAST_BOOTSTRAP_DEMO=false HOLDFAST_VAULT_KEY_FILE="$work/vault.key" \
  HOLDFAST_RATE_LIMIT_PRIVATE_PER_S=0 HOLDFAST_RATE_LIMIT_PUBLIC_PER_S=0 "$BIN" serve >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
merchant=$(curl -sf "127.0.0.1:$PORT/v1/merchants" -H "x-api-key: $key" -d '{"name": "Bench shop"}' \
           | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
# PREPARE_SQL='…' runs on the bench database once the server is up: an A/B of a schema change
# (an index dropped, a storage parameter) without a build.
if [ -n "${PREPARE_SQL:-}" ]; then psql "$url" -qc "$PREPARE_SQL" >/dev/null; fi
# HISTORY=rows: the merchant's past auths, answers, events and notifications (bench/history.sql).
if [ -n "${HISTORY:-}" ]; then
  [[ $HISTORY =~ ^[0-9]+$ ]] || { echo "HISTORY must be a number of rows" >&2; exit 2; }
  psql "$url" -q -v ON_ERROR_STOP=1 -v rows="$HISTORY" -f bench/history.sql >/dev/null
fi
