-- The ledger's storage becomes one row per journal (issue 41, docs/money.md): a journal is
-- known by what it records and why (source_id, kind) and holds one column per account it can
-- move, named by the account's purpose, 0 where it moves none. The row must sum to zero (a
-- CHECK, so no writer can post an unbalanced journal), and a posting writes one row and its
-- index entries, where the entries took one row per account (docs/performance.md). A purpose
-- added later (a loan's receivable, a reserve) is a column added with default 0.
CREATE TABLE ledger_journals (
    source_id            TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    platform_id          TEXT NOT NULL REFERENCES platforms (id),
    mode                 TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    merchant_id          TEXT NOT NULL,
    currency             TEXT NOT NULL,
    posted_on            TEXT NOT NULL,
    merchant_pending     BIGINT NOT NULL DEFAULT 0,
    merchant_available   BIGINT NOT NULL DEFAULT 0,
    merchant_in_transit  BIGINT NOT NULL DEFAULT 0,
    platform_fees        BIGINT NOT NULL DEFAULT 0,
    processor_receivable BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (source_id, kind),
    CONSTRAINT ledger_journals_sum_to_zero CHECK (
        merchant_pending + merchant_available + merchant_in_transit + platform_fees
          + processor_receivable = 0)
);
-- A merchant's balances, read from the index alone.
CREATE INDEX ledger_journals_merchant_idx
    ON ledger_journals (merchant_id, currency, platform_id, mode, merchant_pending,
                        merchant_available, merchant_in_transit);

-- The journals posted so far, one row each. An auth now moves no money: its fee is collected
-- with its capture, in the capture's charge, so an auth and its capture post what a sale
-- posts and an auth voided or never captured charges nothing. The auth-fee journals the first
-- rule posted are left behind, and each capture's charge takes its auth's fee.
INSERT INTO ledger_journals
       (source_id, kind, platform_id, mode, merchant_id, currency, posted_on, merchant_pending,
        merchant_available, merchant_in_transit, platform_fees, processor_receivable)
SELECT source_id, kind, min(platform_id), min(mode), min(merchant_id), min(currency),
       min(posted_on),
       sum(CASE WHEN purpose = 'merchant_pending' THEN amount ELSE 0 END),
       sum(CASE WHEN purpose = 'merchant_available' THEN amount ELSE 0 END),
       sum(CASE WHEN purpose = 'merchant_in_transit' THEN amount ELSE 0 END),
       sum(CASE WHEN purpose = 'platform_fees' THEN amount ELSE 0 END),
       sum(CASE WHEN purpose = 'processor_receivable' THEN amount ELSE 0 END)
  FROM ledger_entries
 WHERE kind <> 'auth_fee'
 GROUP BY source_id, kind;

UPDATE ledger_journals
   SET merchant_pending = merchant_pending
         + (SELECT a.fee FROM transactions c JOIN transactions a ON a.id = c.parent_id
             WHERE c.id = ledger_journals.source_id),
       platform_fees = platform_fees
         - (SELECT a.fee FROM transactions c JOIN transactions a ON a.id = c.parent_id
             WHERE c.id = ledger_journals.source_id)
 WHERE kind = 'charge'
   AND source_id IN (SELECT c.id FROM transactions c JOIN transactions a ON a.id = c.parent_id
                      WHERE c.kind = 'capture' AND a.kind = 'auth' AND a.fee > 0);

DROP TABLE ledger_entries;
