-- Loans join the ledger (issue 42, docs/loans.md): three purposes, each a column of its
-- journals with default 0, and the CHECK that a journal sums to zero counts them.
ALTER TABLE ledger_journals
    ADD COLUMN loan_receivable  BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN loan_fees        BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN platform_funding BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ledger_journals DROP CONSTRAINT ledger_journals_sum_to_zero;
ALTER TABLE ledger_journals ADD CONSTRAINT ledger_journals_sum_to_zero CHECK (
    merchant_pending + merchant_available + merchant_in_transit + platform_fees
      + processor_receivable + loan_receivable + loan_fees + platform_funding = 0);

-- Loans (issue 42, docs/loans.md). A merchant has one loan that is not final at a time (the
-- unique index), so a settlement withholds for at most one loan per merchant.
CREATE TABLE loans (
    id                  TEXT PRIMARY KEY,
    platform_id         TEXT NOT NULL REFERENCES platforms (id),
    mode                TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    merchant_id         TEXT NOT NULL,
    currency            TEXT NOT NULL,
    state               TEXT NOT NULL,
    advance             BIGINT NOT NULL CHECK (advance > 0),
    fee                 BIGINT NOT NULL CHECK (fee >= 0 AND fee <= advance),
    withhold_bps        INTEGER NOT NULL CHECK (withhold_bps BETWEEN 1 AND 10000),
    minimum_per_30_days BIGINT CHECK (minimum_per_30_days > 0),
    repaid              BIGINT NOT NULL DEFAULT 0 CHECK (repaid >= 0 AND repaid <= advance + fee),
    offer_expires_on    TIMESTAMPTZ NOT NULL,
    link_hash           BYTEA UNIQUE,
    accepted_by         TEXT,
    accepted_name       TEXT,
    consent_reference   TEXT,
    accepted_address    TEXT,
    accepted_on         TIMESTAMPTZ,
    payout_id           TEXT,
    paid_out_on         TIMESTAMPTZ,
    created_on          TIMESTAMPTZ NOT NULL,
    updated_on          TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX loans_one_open_idx ON loans (merchant_id)
    WHERE state IN ('offered', 'accepted', 'paid_out', 'past_due');
CREATE INDEX loans_listed_idx ON loans (platform_id, mode, created_on, id);

-- Each repayment: a settlement run's withholding or an early repayment, the source of its
-- journal.
CREATE TABLE loan_repayments (
    id                TEXT PRIMARY KEY,
    loan_id           TEXT NOT NULL REFERENCES loans (id),
    kind              TEXT NOT NULL CHECK (kind IN ('withholding', 'early')),
    amount            BIGINT NOT NULL CHECK (amount > 0),
    settlement_run_id TEXT,
    outstanding       BIGINT NOT NULL CHECK (outstanding >= 0),
    created_on        TIMESTAMPTZ NOT NULL
);
CREATE INDEX loan_repayments_loan_idx ON loan_repayments (loan_id, created_on, id);
