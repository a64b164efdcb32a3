-- Platforms, their users, API keys and merchants.
CREATE TABLE platforms (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    -- No foreign key: the owner row is written in the same transaction, after this one.
    owner_id    TEXT NOT NULL,
    created_on  TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    email        TEXT NOT NULL,
    created_on   TIMESTAMPTZ NOT NULL,
    CONSTRAINT users_platform_email_key UNIQUE (platform_id, email)
);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    platform_id   TEXT NOT NULL REFERENCES platforms (id),
    name          TEXT NOT NULL,
    key_type      TEXT NOT NULL CHECK (key_type IN ('public', 'private')),
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    -- SHA-256 of the full key value; the value itself is never stored.
    value_hash    BYTEA NOT NULL CHECK (length(value_hash) = 32),
    last4         TEXT NOT NULL,
    active        BOOLEAN NOT NULL,
    -- The generating user's id stays after that user is deleted.
    created_by    TEXT NOT NULL,
    created_on    TIMESTAMPTZ NOT NULL,
    last_used_on  TIMESTAMPTZ
);
CREATE UNIQUE INDEX api_keys_value_hash_idx ON api_keys (value_hash);
CREATE INDEX api_keys_platform_idx ON api_keys (platform_id, id);

CREATE TABLE merchants (
    id           TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name         TEXT NOT NULL,
    currency     TEXT NOT NULL CHECK (length(currency) = 3),
    email        TEXT,
    created_on   TIMESTAMPTZ NOT NULL,
    updated_on   TIMESTAMPTZ NOT NULL,
    deleted_on   TIMESTAMPTZ
);
CREATE INDEX merchants_scope_idx ON merchants (platform_id, mode, id) WHERE deleted_on IS NULL;
