DROP INDEX transactions_reference_idx;
ALTER TABLE transactions DROP COLUMN metadata;
ALTER TABLE transactions DROP COLUMN reference;
