-- When a payment for a merchant first carried a raw card number: its questionnaire is SAQ D
-- from then on, else SAQ A (docs/compliance.md).
ALTER TABLE merchants ADD COLUMN raw_cards_on TEXT;

-- A merchant's yearly PCI compliance form: issued at approval and each year after, due 90
-- days after issue; attested by a named signer.
CREATE TABLE compliance_forms (
    id             TEXT PRIMARY KEY,
    platform_id    TEXT NOT NULL,
    mode           TEXT NOT NULL,
    merchant_id    TEXT NOT NULL,
    status         TEXT NOT NULL,
    issued_on      TEXT NOT NULL,
    due_on         TEXT NOT NULL,
    signer_name    TEXT,
    signer_title   TEXT,
    attested_on    TEXT,
    attested_from  TEXT,
    attested_saq   TEXT
);
CREATE INDEX compliance_forms_merchant_idx ON compliance_forms (platform_id, mode, merchant_id, issued_on);
CREATE INDEX compliance_forms_due_idx ON compliance_forms (status, due_on);
