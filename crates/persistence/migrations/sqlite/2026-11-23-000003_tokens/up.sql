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
    nonce       BLOB NOT NULL,
    ciphertext  BLOB NOT NULL,
    created_on  TEXT NOT NULL,
    expires_on  TEXT,
    used_on     TEXT
);
CREATE INDEX tokens_scope_idx ON tokens (platform_id, mode, id);
