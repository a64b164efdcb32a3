-- Processor connections, plans, transactions and the event outbox.
CREATE TABLE processor_connections (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    created_on  TEXT NOT NULL
);
CREATE INDEX processor_connections_scope_idx ON processor_connections (platform_id, mode, id);

CREATE TABLE plans (
    id                    TEXT PRIMARY KEY,
    platform_id           TEXT NOT NULL REFERENCES platforms (id),
    mode                  TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name                  TEXT NOT NULL,
    fee_basis_points      BIGINT NOT NULL CHECK (fee_basis_points BETWEEN 0 AND 10000),
    fee_fixed             BIGINT NOT NULL CHECK (fee_fixed >= 0),
    default_connection_id TEXT NOT NULL REFERENCES processor_connections (id),
    -- "brand=midCon_…" pairs, comma-separated, in order.
    brand_routes          TEXT NOT NULL,
    -- connection ids, comma-separated, in order.
    fallbacks             TEXT NOT NULL,
    is_default            BOOLEAN NOT NULL,
    created_on            TEXT NOT NULL
);
CREATE INDEX plans_scope_idx ON plans (platform_id, mode, id);
CREATE UNIQUE INDEX plans_one_default_idx ON plans (platform_id, mode) WHERE is_default;

ALTER TABLE merchants ADD COLUMN plan_id TEXT REFERENCES plans (id);

CREATE TABLE transactions (
    id                       TEXT PRIMARY KEY,
    platform_id              TEXT NOT NULL REFERENCES platforms (id),
    mode                     TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    merchant_id              TEXT NOT NULL REFERENCES merchants (id),
    kind                     TEXT NOT NULL,
    state                    TEXT NOT NULL,
    amount                   BIGINT NOT NULL CHECK (amount > 0),
    currency                 TEXT NOT NULL,
    fee                      BIGINT NOT NULL CHECK (fee >= 0),
    created_on               TEXT NOT NULL,
    -- The masked card only: never the number, the CVV or the expiration.
    bin                      TEXT NOT NULL,
    brand                    TEXT NOT NULL,
    last4                    TEXT NOT NULL,
    funding                  TEXT NOT NULL,
    plan_id                  TEXT NOT NULL,
    plan_name                TEXT NOT NULL,
    connection_id            TEXT NOT NULL,
    connection_name          TEXT NOT NULL,
    approved_amount          BIGINT NOT NULL,
    avs                      TEXT NOT NULL,
    cvv                      TEXT NOT NULL,
    partial                  BOOLEAN NOT NULL,
    processor_code           TEXT NOT NULL,
    processor_message        TEXT NOT NULL,
    processor_transaction_id TEXT NOT NULL,
    status                   TEXT NOT NULL,
    parent_id                TEXT REFERENCES transactions (id),
    refunded_amount          BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT transactions_refunds_within_amount
        CHECK (refunded_amount >= 0 AND refunded_amount <= approved_amount)
);
CREATE INDEX transactions_scope_idx ON transactions (platform_id, mode, id);
CREATE INDEX transactions_merchant_idx ON transactions (platform_id, mode, merchant_id, id);
CREATE INDEX transactions_parent_idx ON transactions (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    event_type  TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_on  TEXT NOT NULL
);
CREATE INDEX events_scope_idx ON events (platform_id, mode, id);
