#!/usr/bin/env bash
# Load on the payment hot path: POST /v1/transactions (an auth on the sandbox, or a sale with
# TYPE=sale, each request with its own Idempotency-Key) against a release build on PostgreSQL, at
# 1, 8, 32 and 64 connections; then pgbench runs an auth's SQL (bench/auth-ceiling.sql) at the
# same client counts, as the ceiling the database sets on this machine (CEILING=0 skips it, for a
# base build whose schema that SQL does not fit).
#
#   bench/transactions.sh
#   DURATION=30s bench/transactions.sh
#   BIN=/tmp/base/holdfast CLIENTS="8 32" bench/transactions.sh
#   TYPE=sale CEILING=0 bench/transactions.sh
#   HISTORY=500000 bench/transactions.sh   # on 14 days of history (bench/history.sql)
#
# Needs wrk and pgbench (apt-get install wrk postgresql-client) and PostgreSQL at
# HOLDFAST_BENCH_PG (default: local, trust). Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/wrk.sh
source bench/wrk.sh
DURATION="${DURATION:-10s}"
TYPE="${TYPE:-auth}"
case "$TYPE" in
  auth) final=authorized ;;
  sale) final=settled ;;
  *) echo "TYPE is auth or sale" >&2; exit 2 ;;
esac
CLIENTS="${CLIENTS:-1 8 32 64}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18182
# BIN=path/to/holdfast measures that binary (an A/B against a base build); otherwise this
# checkout is built.
if [ -z "${BIN:-}" ]; then
  BIN=target/release/holdfast
  cargo build --release --locked --quiet -p holdfast --bin holdfast
fi
# shellcheck source=bench/lib.sh
source bench/lib.sh
# shellcheck source=bench/cpu.sh
source bench/cpu.sh

# The kernel names a process by its file's first 15 characters: a copy named otherwise
# (BIN=/tmp/holdfast-base) is still counted.
app=$(basename "$BIN" | cut -c1-15)
echo "| load | connections | requests/s | p50 | p99 | non-2xx | CPU µs/request: holdfast | postgres |"
echo "|---|---|---|---|---|---|---|---|"
for conns in $CLIENTS; do
  threads=$(( conns < 2 ? 1 : 2 ))
  app0=$(cpu_ms "$app"); db0=$(cpu_ms postgres)
  out=$(HOLDFAST_KEY="$key" HOLDFAST_MERCHANT="$merchant" HOLDFAST_RUN="$conns" HOLDFAST_TYPE="$TYPE" wrk -t"$threads" -c"$conns" -d"$DURATION" \
        --latency -s bench/post-auth.lua "http://127.0.0.1:$PORT/v1/transactions")
  app1=$(cpu_ms "$app"); db1=$(cpu_ms postgres)
  wrk_figures "$out"
  done_n=$(awk '/requests in/ {print $1}' <<<"$out")
  printf "| POST /v1/transactions ($TYPE) | %s | %s | %s | %s | %s | %s | %s |\n" "$conns" "$rps" "$p50" "$p99" "$errors" \
    $(( (app1 - app0) * 1000 / done_n )) $(( (db1 - db0) * 1000 / done_n ))
done
kill "$server"; wait "$server" 2>/dev/null || true; server=""

# Every answered payment is a row: count them, so a fast run that lost writes cannot pass unseen
# (history's rows, whose ids start with 00, left out).
rows=$(psql "$url" -Atc "SELECT count(*) FROM transactions WHERE state = '$final' AND id NOT LIKE 'txn\_00%'")
events=$(psql "$url" -Atc "SELECT count(*) FROM events WHERE event_type = 'transaction.created' AND id NOT LIKE 'evt\_00%'")
echo
echo "$final rows: $rows; transaction.created events: $events"
echo
[ "${CEILING:-1}" = 0 ] && exit 0

read -r hash pfm < <(psql "$url" -AtF ' ' -c \
  "SELECT encode(value_hash, 'hex'), platform_id FROM api_keys
    WHERE key_type = 'private' AND mode = 'test' LIMIT 1")
echo "| pgbench (same SQL) | clients | transactions/s | mean latency |"
echo "|---|---|---|---|"
for conns in $CLIENTS; do
  threads=$(( conns < 2 ? 1 : 2 ))
  out=$(pgbench -n -M prepared -c "$conns" -j "$threads" -T "${DURATION%s}" \
        -D hash="$hash" -D pfm="$pfm" -D mid="$merchant" \
        -f bench/auth-ceiling.sql "$url" 2>&1)
  tps=$(awk -F'= ' '/^tps/ {split($2, a, " "); print a[1]}' <<<"$out")
  lat=$(awk -F'= ' '/latency average/ {print $2}' <<<"$out")
  printf '| auth SQL | %s | %s | %s |\n' "$conns" "$tps" "$lat"
done
