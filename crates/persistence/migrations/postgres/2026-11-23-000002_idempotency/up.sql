-- Idempotency keys of POST requests: the first request's fingerprint and, once it completes
-- without a 5xx, its response for replay.
CREATE TABLE idempotency_keys (
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key         TEXT NOT NULL,
    fingerprint BYTEA NOT NULL,
    created_on  TIMESTAMPTZ NOT NULL,
    status      INTEGER,
    body        TEXT,
    PRIMARY KEY (platform_id, mode, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_on);
