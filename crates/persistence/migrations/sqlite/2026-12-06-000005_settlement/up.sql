-- Settlement (issue 41, docs/money.md): a charge's net moves from the merchant's pending
-- balance to its available one once its plan's delay has passed, as a `settlement` journal of
-- the charge's source (so each charge settles once).
ALTER TABLE plans ADD COLUMN settlement_delay_days INTEGER NOT NULL DEFAULT 2
    CHECK (settlement_delay_days BETWEEN 0 AND 30);

-- What a run reads: the charges that put money in pending, by when they were posted, and its
-- own settlements, for its events. A sale writes one entry here; a refund none.
CREATE INDEX ledger_journals_charges_idx ON ledger_journals (posted_on)
    WHERE kind = 'charge' AND merchant_pending <> 0;
CREATE INDEX ledger_journals_settlements_idx ON ledger_journals (posted_on)
    WHERE kind = 'settlement';

-- Each run, kept in the run's own SQL transaction with what it settled. `unsettled_from` is
-- the oldest charge it left pending: the next run looks no further back (less a grace for
-- charges stamped before it and committed after), so a run reads days of charges, not years.
CREATE TABLE settlement_runs (
    id             TEXT PRIMARY KEY,
    ran_on         TEXT NOT NULL,
    unsettled_from TEXT NOT NULL,
    transactions   BIGINT NOT NULL,
    merchants      BIGINT NOT NULL
);
CREATE INDEX settlement_runs_ran_on_idx ON settlement_runs (ran_on);
