-- Payouts (issue 41, docs/money.md): a merchant's available money taken to in transit and
-- handed to its bank. Each move's journal is in ledger_journals, with the payout as source.
CREATE TABLE payouts (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL,
    mode         TEXT NOT NULL,
    merchant_id  TEXT NOT NULL,
    currency     TEXT NOT NULL,
    amount       BIGINT NOT NULL CHECK (amount > 0),
    state        TEXT NOT NULL,
    method       TEXT NOT NULL,
    -- The boarding form whose sealed account it goes to; NULL for a test payout of a merchant
    -- without one (the sandbox bank's paying account).
    bank_form_id TEXT,
    bank_last4   TEXT NOT NULL,
    failure_code TEXT,
    created_on   TEXT NOT NULL,
    updated_on   TEXT NOT NULL
);
-- Lists, newest first: a platform's, and one merchant's.
CREATE INDEX payouts_scope_idx ON payouts (platform_id, mode, id);
CREATE INDEX payouts_merchant_idx ON payouts (merchant_id, id);
-- What the rails hand to their banks: a mode's payouts in one state, oldest first.
CREATE INDEX payouts_state_idx ON payouts (mode, state, created_on);
