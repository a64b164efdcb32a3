-- Client sessions: one checkout a page may tokenize for. Only the SHA-256 of the client secret
-- is kept. `expired` is never stored: an open session past expires_on reads as expired.
CREATE TABLE client_sessions (
    id              TEXT PRIMARY KEY,
    platform_id     TEXT NOT NULL REFERENCES platforms (id),
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    amount          BIGINT NOT NULL CHECK (amount > 0),
    currency        TEXT NOT NULL,
    payment_methods TEXT NOT NULL,
    secret_hash     BYTEA NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('open', 'completed', 'canceled')),
    transaction_id  TEXT,
    created_on      TIMESTAMPTZ NOT NULL,
    expires_on      TIMESTAMPTZ NOT NULL,
    closed_on       TIMESTAMPTZ
);
CREATE INDEX client_sessions_scope_idx ON client_sessions (platform_id, mode, id);
