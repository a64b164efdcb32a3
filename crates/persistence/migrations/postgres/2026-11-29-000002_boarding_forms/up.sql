-- Boarding forms (docs/onboarding.md). The link's secret is kept by its SHA-256 only; the tax id
-- and the payout account are sealed by the vault (key id, nonce, ciphertext), with their last
-- four characters, the only part ever shown again.
CREATE TABLE boarding_forms (
    id                TEXT PRIMARY KEY,
    platform_id       TEXT NOT NULL,
    mode              TEXT NOT NULL,
    merchant_id       TEXT NOT NULL,
    status            TEXT NOT NULL,
    link_hash         BYTEA NOT NULL UNIQUE,
    expires_on        TIMESTAMPTZ NOT NULL,
    answers           TEXT NOT NULL,
    tax_id_key        TEXT,
    tax_id_nonce      BYTEA,
    tax_id_sealed     BYTEA,
    tax_id_last4      TEXT,
    bank_key          TEXT,
    bank_nonce        BYTEA,
    bank_sealed       BYTEA,
    bank_last4        TEXT,
    requested_fields  TEXT NOT NULL,
    reason            TEXT,
    submitted_by      TEXT,
    submitted_on      TIMESTAMPTZ,
    submitted_from    TEXT,
    created_on        TIMESTAMPTZ NOT NULL,
    updated_on        TIMESTAMPTZ NOT NULL
);
CREATE INDEX boarding_forms_scope_idx ON boarding_forms (platform_id, mode, id);
