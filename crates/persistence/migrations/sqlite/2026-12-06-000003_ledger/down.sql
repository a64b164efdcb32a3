DROP TABLE ledger_entries;
DROP TABLE journals;
