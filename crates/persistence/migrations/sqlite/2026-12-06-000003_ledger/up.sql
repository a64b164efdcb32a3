-- The double-entry ledger (issue 41, docs/money.md): journals of entries that sum to zero,
-- posted with the outcome they record. An account is (platform, mode, merchant, purpose,
-- currency) and exists once an entry names it; its balance is the sum of its entries.
CREATE TABLE journals (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    merchant_id TEXT NOT NULL,
    kind        TEXT NOT NULL,
    source_id   TEXT NOT NULL,
    currency    TEXT NOT NULL,
    posted_on   TEXT NOT NULL,
    -- A source posts each kind of journal once, however often its writer is retried.
    UNIQUE (source_id, kind)
);

-- Each entry carries its journal's platform, mode, merchant and currency, so a balance is one
-- index range read. A platform's own accounts (fees, the processor's receivable) are told by
-- their purpose; the merchant is kept on them too, for reports by merchant.
CREATE TABLE ledger_entries (
    journal_id  TEXT NOT NULL REFERENCES journals (id),
    purpose     TEXT NOT NULL,
    platform_id TEXT NOT NULL,
    mode        TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      BIGINT NOT NULL CHECK (amount <> 0),
    PRIMARY KEY (journal_id, purpose)
);
CREATE INDEX ledger_entries_account_idx
    ON ledger_entries (platform_id, mode, merchant_id, purpose, currency, amount);

-- What was recorded before the ledger existed is posted now, by the rules of
-- `ledger::journal_for` (docs/money.md), so the books start whole: `holdfast ledger verify`
-- finds every money-moving transaction's journal, old or new.
INSERT INTO journals (id, platform_id, mode, merchant_id, kind, source_id, currency, posted_on)
SELECT 'jnl_' || substr(id, 5), platform_id, mode, merchant_id,
       CASE kind WHEN 'refund' THEN 'refund' WHEN 'auth' THEN 'auth_fee' ELSE 'charge' END,
       id, currency, created_on
  FROM transactions
 WHERE (kind IN ('sale', 'capture', 'refund') AND state = 'settled' AND fee <= approved_amount)
    OR (kind = 'auth' AND state IN ('authorized', 'closing', 'captured', 'voided') AND fee > 0);

INSERT INTO ledger_entries (journal_id, purpose, platform_id, mode, merchant_id, currency, amount)
SELECT journal_id, purpose, platform_id, mode, merchant_id, currency, amount
  FROM (
    SELECT j.id AS journal_id, p.purpose, j.platform_id, j.mode, j.merchant_id, j.currency,
           CASE
             WHEN j.kind = 'charge' AND p.purpose = 'processor_receivable' THEN t.approved_amount
             WHEN j.kind = 'charge' AND p.purpose = 'merchant_pending' THEN t.fee - t.approved_amount
             WHEN j.kind = 'auth_fee' AND p.purpose = 'merchant_pending' THEN t.fee
             WHEN j.kind = 'refund' AND p.purpose = 'merchant_available' THEN t.approved_amount + t.fee
             WHEN j.kind = 'refund' AND p.purpose = 'processor_receivable' THEN -t.approved_amount
             WHEN p.purpose = 'platform_fees' THEN -t.fee
             ELSE 0
           END AS amount
      FROM journals j
      JOIN transactions t ON t.id = j.source_id
     CROSS JOIN (SELECT 'merchant_pending' AS purpose UNION ALL SELECT 'merchant_available'
                 UNION ALL SELECT 'platform_fees' UNION ALL SELECT 'processor_receivable') p
  ) posted
 WHERE amount <> 0;
