ALTER TABLE transactions DROP COLUMN decline_code;
