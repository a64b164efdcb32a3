DROP TABLE settlement_runs;
DROP INDEX ledger_entries_pending_idx;
DELETE FROM ledger_entries WHERE kind = 'settlement';
ALTER TABLE plans DROP COLUMN settlement_delay_days;
