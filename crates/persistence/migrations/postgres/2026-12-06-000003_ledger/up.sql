-- The double-entry ledger (issue 41, docs/money.md): journals of entries that sum to zero,
-- posted with the outcome they record. A journal is its entries, known by what it records and
-- why (source_id, kind): a source posts each kind once. An account is (platform, mode,
-- merchant, purpose, currency) and exists once an entry names it; its balance is the sum of its
-- entries. Each entry carries its journal's heading, so posting writes no row but its entries
-- and a balance is one index range read. A platform's own accounts (fees, the processor's
-- receivable) are told by their purpose; the merchant is kept on them too, for reports.
CREATE TABLE ledger_entries (
    source_id   TEXT NOT NULL,
    kind        TEXT NOT NULL,
    purpose     TEXT NOT NULL,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    merchant_id TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      BIGINT NOT NULL CHECK (amount <> 0),
    posted_on   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source_id, kind, purpose)
);
CREATE INDEX ledger_entries_account_idx
    ON ledger_entries (platform_id, mode, merchant_id, purpose, currency, amount);

-- What was recorded before the ledger existed is posted now, by the rules of
-- `ledger::journal_for` (docs/money.md), so the books start whole: `holdfast ledger verify`
-- finds every money-moving transaction's journal, old or new.
INSERT INTO ledger_entries
       (source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on)
SELECT source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on
  FROM (
    SELECT t.id AS source_id, j.kind, p.purpose, t.platform_id, t.mode, t.merchant_id,
           t.currency, t.created_on AS posted_on,
           CASE
             WHEN j.kind = 'charge' AND p.purpose = 'processor_receivable' THEN t.approved_amount
             WHEN j.kind = 'charge' AND p.purpose = 'merchant_pending' THEN t.fee - t.approved_amount
             WHEN j.kind = 'auth_fee' AND p.purpose = 'merchant_pending' THEN t.fee
             WHEN j.kind = 'refund' AND p.purpose = 'merchant_available' THEN t.approved_amount + t.fee
             WHEN j.kind = 'refund' AND p.purpose = 'processor_receivable' THEN -t.approved_amount
             WHEN p.purpose = 'platform_fees' THEN -t.fee
             ELSE 0
           END AS amount
      FROM transactions t
      JOIN (SELECT 'sale' AS txn_kind, 'charge' AS kind UNION ALL SELECT 'capture', 'charge'
            UNION ALL SELECT 'refund', 'refund' UNION ALL SELECT 'auth', 'auth_fee') j
        ON j.txn_kind = t.kind
     CROSS JOIN (SELECT 'merchant_pending' AS purpose UNION ALL SELECT 'merchant_available'
                 UNION ALL SELECT 'platform_fees' UNION ALL SELECT 'processor_receivable') p
     WHERE (t.kind IN ('sale', 'capture', 'refund') AND t.state = 'settled' AND t.fee <= t.approved_amount)
        OR (t.kind = 'auth' AND t.state IN ('authorized', 'closing', 'captured', 'voided') AND t.fee > 0)
  ) posted
 WHERE amount <> 0;
