#!/usr/bin/env bash
# A settlement run over many captured charges (issue 41's goal: 1,000,000 within 60 s on
# PostgreSQL on this machine): CHARGES sales, spread over MERCHANTS merchants, each with its
# charge journal posted three days ago on the default plan (two days' delay), so every one is
# due; then one `holdfast ledger settle`, timed, and `holdfast ledger verify` over the result.
#
#   bench/settlement.sh
#   CHARGES=100000 MERCHANTS=1000 bench/settlement.sh
#   BIN=/tmp/base/holdfast bench/settlement.sh
#   LOANS=10000 bench/settlement.sh     # that many merchants with a loan being repaid (issue 42):
#                                       # the run withholds for each of them
#
# Needs PostgreSQL at HOLDFAST_BENCH_PG (default: local, trust) and psql.
set -euo pipefail
cd "$(dirname "$0")/.."
CHARGES="${CHARGES:-1000000}"
MERCHANTS="${MERCHANTS:-10000}"
LOANS="${LOANS:-0}"
PG_ADMIN="${HOLDFAST_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
PORT=18184
if [ -z "${BIN:-}" ]; then
  BIN=target/release/holdfast
  cargo build --release --locked --quiet -p holdfast --bin holdfast
fi
# shellcheck source=bench/lib.sh
source bench/lib.sh
kill "$server"; wait "$server" 2>/dev/null || true; server=""

started=$(date +%s%N)
psql "$url" -q -v ON_ERROR_STOP=1 -v charges="$CHARGES" -v merchants="$MERCHANTS" -v loans="$LOANS" <<'SQL'
-- Merchants made from the one the API created, so every column is one it would write.
INSERT INTO merchants
SELECT (jsonb_populate_record(NULL::merchants,
          to_jsonb(m) || jsonb_build_object('id', 'mid_b' || lpad(g::text, 9, '0')))).*
  FROM merchants m, generate_series(1, :merchants) g;
CREATE TEMPORARY TABLE charged AS
SELECT 'txn_b' || lpad(g::text, 12, '0') AS id,
       'mid_b' || lpad((1 + g % :merchants)::text, 9, '0') AS merchant_id,
       p.platform_id, p.mode, p.id AS plan_id, p.default_connection_id,
       now() - interval '3 days' + interval '1 millisecond' * g / 100 AS at
  FROM generate_series(1, :charges) g, plans p WHERE p.is_default;
INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount, currency, fee,
    created_on, bin, brand, last4, funding, plan_id, plan_name, connection_id, connection_name,
    approved_amount, avs, cvv, partial, processor_code, processor_message,
    processor_transaction_id, status, parent_id, refunded_amount)
SELECT id, platform_id, mode, merchant_id, 'sale', 'settled', 1000, 'USD', 59, at,
       '411111', 'visa', '1111', 'credit', plan_id, 'Default plan', default_connection_id,
       'Sandbox', 1000, 'Y', 'M', false, '00', 'Approved', 'sbx_' || id, 'A', NULL, 0
  FROM charged;
INSERT INTO ledger_journals
       (source_id, kind, platform_id, mode, merchant_id, currency, posted_on, merchant_pending,
        platform_fees, processor_receivable)
SELECT id, 'charge', platform_id, mode, merchant_id, 'USD', at, -941, -59, 1000 FROM charged;
-- The first LOANS merchants each have a loan paid out (advance 1,000.00, fee 100.00, 10 %
-- withheld), with its advance journal and its pending payout, as the service writes them.
CREATE TEMPORARY TABLE lent AS
SELECT 'loan_b' || lpad(g::text, 9, '0') AS id, 'po_bl' || lpad(g::text, 9, '0') AS payout_id,
       'mid_b' || lpad(g::text, 9, '0') AS merchant_id, p.platform_id, p.mode,
       now() - interval '4 days' AS at
  FROM generate_series(1, LEAST(:loans, :merchants)) g, plans p WHERE p.is_default;
INSERT INTO loans (id, platform_id, mode, merchant_id, currency, state, advance, fee,
    withhold_bps, minimum_per_30_days, repaid, offer_expires_on, accepted_by, accepted_name,
    accepted_address, accepted_on, payout_id, paid_out_on, created_on, updated_on)
SELECT id, platform_id, mode, merchant_id, 'USD', 'paid_out', 100000, 10000, 1000, NULL, 0,
       at + interval '30 days', 'platform', 'Bench', '127.0.0.1', at, payout_id, at, at, at
  FROM lent;
INSERT INTO payouts (id, platform_id, mode, merchant_id, currency, amount, state, method,
    bank_form_id, bank_last4, failure_code, created_on, updated_on)
SELECT payout_id, platform_id, mode, merchant_id, 'USD', 100000, 'pending', 'loan', NULL,
       '6789', NULL, at, at
  FROM lent;
INSERT INTO ledger_journals (source_id, kind, platform_id, mode, merchant_id, currency,
    posted_on, merchant_available, loan_receivable, loan_fees)
SELECT id, 'loan_advance', platform_id, mode, merchant_id, 'USD', at, -100000, 110000, -10000
  FROM lent;
INSERT INTO ledger_journals (source_id, kind, platform_id, mode, merchant_id, currency,
    posted_on, merchant_available, merchant_in_transit)
SELECT payout_id, 'payout', platform_id, mode, merchant_id, 'USD', at, 100000, -100000
  FROM lent;
VACUUM ANALYZE loans, payouts;
-- The server's workers ran settlement as it started, over an empty ledger: that run's floor
-- (the oldest charge it left pending, none, so its own time) would hide these charges, dated
-- days before it. The bench's history never had that run.
DELETE FROM settlement_runs;
VACUUM ANALYZE merchants, transactions, ledger_journals;
SQL
loaded=$(date +%s%N)
echo "loaded $CHARGES charges of $MERCHANTS merchants in $(( (loaded - started) / 1000000 )) ms"

run() {
  local t0 t1 out
  t0=$(date +%s%N)
  out=$(HOLDFAST_DATABASE_URL="$url" HOLDFAST_LOG=warn "$BIN" --json ledger "$1")
  t1=$(date +%s%N)
  echo "| holdfast ledger $1 | $(( (t1 - t0) / 1000000 )) ms | $(tr -d '\n' <<<"$out" | cut -c1-120) |"
}
echo "| command | wall time | answer |"
echo "|---|---|---|"
run settle
run settle
run verify
