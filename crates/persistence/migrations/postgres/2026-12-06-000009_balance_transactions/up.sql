-- Balance transactions (issue 41, docs/money.md): a platform's journals listed newest first,
-- and one merchant's, by when posted, then source and kind (the order lists page in).
CREATE INDEX ledger_journals_listed_idx ON ledger_journals (platform_id, mode, posted_on, source_id, kind);
CREATE INDEX ledger_journals_merchant_listed_idx ON ledger_journals (merchant_id, posted_on, source_id, kind);
