DROP TABLE loan_repayments;
DROP TABLE loans;
CREATE TABLE ledger_journals_next (
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
INSERT INTO ledger_journals_next
       (source_id, kind, platform_id, mode, merchant_id, currency, posted_on,
        merchant_pending, merchant_available, merchant_in_transit, platform_fees, processor_receivable)
SELECT source_id, kind, platform_id, mode, merchant_id, currency, posted_on,
       merchant_pending, merchant_available, merchant_in_transit, platform_fees, processor_receivable
  FROM ledger_journals
 WHERE kind NOT IN ('loan_advance', 'loan_withholding', 'loan_repayment', 'loan_charge_off');
DROP TABLE ledger_journals;
ALTER TABLE ledger_journals_next RENAME TO ledger_journals;
CREATE INDEX ledger_journals_merchant_idx
    ON ledger_journals (merchant_id, currency, platform_id, mode, merchant_pending,
                        merchant_available, merchant_in_transit);
CREATE INDEX ledger_journals_charges_idx ON ledger_journals (posted_on)
    WHERE kind = 'charge' AND merchant_pending <> 0;
CREATE INDEX ledger_journals_settlements_idx ON ledger_journals (posted_on)
    WHERE kind = 'settlement';
CREATE INDEX ledger_journals_listed_idx ON ledger_journals (platform_id, mode, posted_on, source_id, kind);
CREATE INDEX ledger_journals_merchant_listed_idx ON ledger_journals (merchant_id, posted_on, source_id, kind);
