-- What processors tell Holdfast later (Adyen's notifications), each item kept as received: once
-- per connection, event code, PSP reference and success (Adyen repeats an item until it is
-- accepted), with what applying it did.
CREATE TABLE processor_notices (
    id                 TEXT PRIMARY KEY,
    connection_id      TEXT NOT NULL REFERENCES processor_connections (id),
    platform_id        TEXT NOT NULL REFERENCES platforms (id),
    mode               TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    event_code         TEXT NOT NULL,
    success            BOOLEAN NOT NULL,
    psp_reference      TEXT NOT NULL,
    merchant_reference TEXT,
    item               TEXT NOT NULL,
    outcome            TEXT NOT NULL,
    received_on        TEXT NOT NULL,
    UNIQUE (connection_id, event_code, psp_reference, success)
);
CREATE INDEX processor_notices_scope_idx ON processor_notices (platform_id, mode, id);
