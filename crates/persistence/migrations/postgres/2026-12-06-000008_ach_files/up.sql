-- The live bank rail (issue 41, docs/money.md "The live rail"): each NACHA file of live
-- payouts as it was written, kept so that it is put in the outbox from here (a crash between
-- recording it and writing it never makes a second file of the same payouts). Its text holds
-- account numbers: it is kept sealed by the vault (key id, nonce, ciphertext), like a form's.
CREATE TABLE ach_files (
    id           TEXT PRIMARY KEY,
    -- the originating bank's routing number: trace numbers and modifiers count per bank
    odfi         TEXT NOT NULL,
    created_on   TIMESTAMPTZ NOT NULL,
    -- the UTC day it was created on (YYYY-MM-DD): a day's files take modifiers A, B, ...
    created_day  TEXT NOT NULL,
    modifier     TEXT NOT NULL,
    -- the day it settles (YYYY-MM-DD)
    effective_on TEXT NOT NULL,
    first_trace  BIGINT NOT NULL CHECK (first_trace BETWEEN 1 AND 9999999),
    last_trace   BIGINT NOT NULL CHECK (last_trace BETWEEN first_trace AND 9999999),
    entries      BIGINT NOT NULL CHECK (entries > 0),
    total        BIGINT NOT NULL CHECK (total > 0),
    body_key     TEXT NOT NULL,
    body_nonce   BYTEA NOT NULL,
    body_sealed  BYTEA NOT NULL,
    -- when it was put in the outbox; NULL until then
    sent_on      TIMESTAMPTZ,
    UNIQUE (odfi, created_day, modifier)
);
-- The next numbers: a bank's newest file.
CREATE INDEX ach_files_odfi_idx ON ach_files (odfi, created_on);
-- Files not yet in the outbox.
CREATE INDEX ach_files_unsent_idx ON ach_files (created_on) WHERE sent_on IS NULL;

-- The file that carried a live payout, and its entry's trace number there. (No foreign key:
-- the payouts are moved first, in the transaction that then writes their file.)
ALTER TABLE payouts ADD COLUMN ach_file_id TEXT;
ALTER TABLE payouts ADD COLUMN trace_number TEXT;
-- A return names its entry by trace.
CREATE INDEX payouts_trace_idx ON payouts (trace_number) WHERE trace_number IS NOT NULL;
