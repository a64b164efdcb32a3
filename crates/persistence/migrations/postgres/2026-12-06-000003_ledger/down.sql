DROP TABLE ledger_entries;
