-- Card tokens. The card number and expiration are kept only sealed (AES-256-GCM, key id for
-- rotation); the CVV is never kept.
CREATE TABLE tokens (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    kind        TEXT NOT NULL CHECK (kind IN ('single_use', 'vault')),
    bin         TEXT NOT NULL,
    brand       TEXT NOT NULL,
    last4       TEXT NOT NULL,
    funding     TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    nonce       BYTEA NOT NULL,
    ciphertext  BYTEA NOT NULL,
    created_on  TIMESTAMPTZ NOT NULL,
    expires_on  TIMESTAMPTZ,
    used_on     TIMESTAMPTZ
);
CREATE INDEX tokens_scope_idx ON tokens (platform_id, mode, id);
