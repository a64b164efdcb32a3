-- Back to one row per entry, and an auth's fee posted on its own when it was approved.
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

UPDATE ledger_journals
   SET merchant_pending = merchant_pending
         - (SELECT a.fee FROM transactions c JOIN transactions a ON a.id = c.parent_id
             WHERE c.id = ledger_journals.source_id),
       platform_fees = platform_fees
         + (SELECT a.fee FROM transactions c JOIN transactions a ON a.id = c.parent_id
             WHERE c.id = ledger_journals.source_id)
 WHERE kind = 'charge'
   AND source_id IN (SELECT c.id FROM transactions c JOIN transactions a ON a.id = c.parent_id
                      WHERE c.kind = 'capture' AND a.kind = 'auth' AND a.fee > 0);

INSERT INTO ledger_entries
       (source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on)
SELECT source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on
  FROM (SELECT j.source_id, j.kind, p.purpose, j.platform_id, j.mode, j.merchant_id,
               j.currency, j.posted_on,
               CASE p.purpose
                 WHEN 'merchant_pending' THEN j.merchant_pending
                 WHEN 'merchant_available' THEN j.merchant_available
                 WHEN 'merchant_in_transit' THEN j.merchant_in_transit
                 WHEN 'platform_fees' THEN j.platform_fees
                 ELSE j.processor_receivable
               END AS amount
          FROM ledger_journals j
         CROSS JOIN (SELECT 'merchant_pending' AS purpose UNION ALL SELECT 'merchant_available'
                     UNION ALL SELECT 'merchant_in_transit' UNION ALL SELECT 'platform_fees'
                     UNION ALL SELECT 'processor_receivable') p) unpivoted
 WHERE amount <> 0;

INSERT INTO ledger_entries
       (source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on)
SELECT t.id, 'auth_fee', p.purpose, t.platform_id, t.mode, t.merchant_id, t.currency,
       CASE p.purpose WHEN 'merchant_pending' THEN t.fee ELSE -t.fee END, t.created_on
  FROM transactions t
 CROSS JOIN (SELECT 'merchant_pending' AS purpose UNION ALL SELECT 'platform_fees') p
 WHERE t.kind = 'auth' AND t.state IN ('authorized', 'closing', 'captured', 'voided')
   AND t.fee > 0;

DROP TABLE ledger_journals;
