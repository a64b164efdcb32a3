-- A merchant's own reference (its order number) and key/value metadata on a transaction
-- (issue 40). Metadata is a JSON object of strings; most transactions have none.
ALTER TABLE transactions ADD COLUMN reference TEXT;
ALTER TABLE transactions ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
-- Transactions are listed by reference within a platform and mode, newest first.
CREATE INDEX transactions_reference_idx ON transactions (platform_id, mode, reference, id)
    WHERE reference IS NOT NULL;
