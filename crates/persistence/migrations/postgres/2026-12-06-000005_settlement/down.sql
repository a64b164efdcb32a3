DROP TABLE settlement_runs;
DROP INDEX ledger_journals_settlements_idx;
DROP INDEX ledger_journals_charges_idx;
DELETE FROM ledger_journals WHERE kind = 'settlement';
ALTER TABLE plans DROP COLUMN settlement_delay_days;
