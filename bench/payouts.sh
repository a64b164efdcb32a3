#!/usr/bin/env bash
# A scheduled payout run over many merchants (issue 41's goal: 100,000 within 60 s on
# PostgreSQL on this machine): MERCHANTS live merchants, each with a settled sale's net (941)
# available, an approved boarding form holding a bank account and a daily schedule; then one
# `holdfast ledger pay-out`, timed (it makes one payout per merchant, with its journal and
# event, in one transaction; live payouts wait for the bank file, so the sandbox bank takes
# none), a second one (nothing: once a day), and `holdfast ledger verify` over the result.
#
#   bench/payouts.sh
#   MERCHANTS=10000 bench/payouts.sh
#
# Needs PostgreSQL at HOLDFAST_BENCH_PG (default: local, trust) and psql.
set -euo pipefail
cd "$(dirname "$0")/.."
MERCHANTS="${MERCHANTS:-100000}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18185
if [ -z "${BIN:-}" ]; then
  BIN=target/release/holdfast
  cargo build --release --locked --quiet -p holdfast --bin holdfast
fi
# shellcheck source=bench/lib.sh
source bench/lib.sh
kill "$server"; wait "$server" 2>/dev/null || true; server=""

started=$(date +%s%N)
psql "$url" -q -v ON_ERROR_STOP=1 -v merchants="$MERCHANTS" <<'SQL'
-- A live plan and live merchants made from the test ones the API created, so every column is
-- one it would write.
INSERT INTO plans
SELECT (jsonb_populate_record(NULL::plans,
          to_jsonb(p) || jsonb_build_object('id', 'plan_blive', 'mode', 'live'))).*
  FROM plans p WHERE p.is_default;
INSERT INTO merchants
SELECT (jsonb_populate_record(NULL::merchants,
          to_jsonb(m) || jsonb_build_object('id', 'mid_b' || lpad(g::text, 9, '0'),
                                            'mode', 'live'))).*
  FROM merchants m, generate_series(1, :merchants) g;
CREATE TEMPORARY TABLE sold AS
SELECT 'txn_b' || lpad(g::text, 12, '0') AS id,
       'mid_b' || lpad(g::text, 9, '0') AS merchant_id,
       p.platform_id, p.default_connection_id,
       now() - interval '3 days' + interval '1 millisecond' * g AS at
  FROM generate_series(1, :merchants) g, plans p WHERE p.id = 'plan_blive';
INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount, currency, fee,
    created_on, bin, brand, last4, funding, plan_id, plan_name, connection_id, connection_name,
    approved_amount, avs, cvv, partial, processor_code, processor_message,
    processor_transaction_id, status, parent_id, refunded_amount)
SELECT id, platform_id, 'live', merchant_id, 'sale', 'settled', 1000, 'USD', 59, at,
       '411111', 'visa', '1111', 'credit', 'plan_blive', 'Default plan', default_connection_id,
       'Adyen', 1000, 'Y', 'M', false, '00', 'Approved', 'psp_' || id, 'A', NULL, 0
  FROM sold;
INSERT INTO ledger_journals
       (source_id, kind, platform_id, mode, merchant_id, currency, posted_on, merchant_pending,
        merchant_available, platform_fees, processor_receivable)
SELECT id, 'charge', platform_id, 'live', merchant_id, 'USD', at, -941, 0, -59, 1000 FROM sold
UNION ALL
SELECT id, 'settlement', platform_id, 'live', merchant_id, 'USD', at + interval '2 days', 941,
       -941, 0, 0 FROM sold;
INSERT INTO boarding_forms (id, platform_id, mode, merchant_id, status, link_hash, expires_on,
    answers, bank_key, bank_nonce, bank_sealed, bank_last4, requested_fields, created_on,
    updated_on)
SELECT 'bf_b' || substr(merchant_id, 6), platform_id, 'live', merchant_id, 'approved',
       sha256(convert_to(merchant_id, 'UTF8')), now(), '{"routingNumber":"021000021"}',
       'k1', '\x00', '\x00', '6789', '',
       at, at
  FROM sold;
INSERT INTO payout_schedules (merchant_id, platform_id, mode, every, weekday, minimum, updated_on)
SELECT merchant_id, platform_id, 'live', 'daily', NULL, 0, now() FROM sold;
DELETE FROM settlement_runs;
VACUUM ANALYZE merchants, transactions, ledger_journals, boarding_forms, payout_schedules;
SQL
loaded=$(date +%s%N)
echo "loaded $MERCHANTS merchants in $(( (loaded - started) / 1000000 )) ms"

run() {
  local t0 t1 out
  t0=$(date +%s%N)
  out=$(HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn "$BIN" --json ledger "$1" || true)
  t1=$(date +%s%N)
  echo "| holdfast ledger $1 | $(( (t1 - t0) / 1000000 )) ms | $(tr -d '\n' <<<"$out" | cut -c1-120) |"
}
echo "| command | wall time | answer |"
echo "|---|---|---|"
run pay-out
run pay-out
run verify
psql "$url" -Atc "SELECT 'payouts: ' || count(*) || ', events: ' || (SELECT count(*) FROM events WHERE event_type = 'payout.created') FROM payouts"
