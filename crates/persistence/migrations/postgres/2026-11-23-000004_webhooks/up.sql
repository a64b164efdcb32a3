-- Webhook subscriptions, their notifications (each also its delivery record), and the email
-- outbox. The creator is not a foreign key: a deleted user's subscriptions keep naming them,
-- and the disable email is then skipped (spec 6.3).
CREATE TABLE webhooks (
    id                   TEXT PRIMARY KEY,
    platform_id          TEXT NOT NULL REFERENCES platforms (id),
    mode                 TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    endpoint_url         TEXT NOT NULL,
    events               TEXT NOT NULL,
    description          TEXT,
    header_name          TEXT,
    header_value         TEXT,
    active               BOOLEAN NOT NULL,
    secret               TEXT NOT NULL,
    creator_id           TEXT NOT NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    created_on           TIMESTAMPTZ NOT NULL,
    updated_on           TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhooks_scope_idx ON webhooks (platform_id, mode, id);

CREATE TABLE notifications (
    id           TEXT PRIMARY KEY,
    webhook_id   TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    platform_id  TEXT NOT NULL REFERENCES platforms (id),
    mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    event_id     TEXT NOT NULL REFERENCES events (id),
    event_type   TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed', 'skipped')),
    due_on       TIMESTAMPTZ NOT NULL,
    lease_until  TIMESTAMPTZ,
    endpoint_url TEXT,
    request_body TEXT,
    response     TEXT,
    requests     INTEGER NOT NULL DEFAULT 0,
    attempted_on TIMESTAMPTZ,
    archived     BOOLEAN NOT NULL DEFAULT FALSE,
    resent_from  TEXT,
    created_on   TIMESTAMPTZ NOT NULL
);
CREATE INDEX notifications_due_idx ON notifications (due_on) WHERE state = 'pending';
CREATE INDEX notifications_history_idx ON notifications (webhook_id, id);
CREATE INDEX notifications_archive_idx ON notifications (attempted_on) WHERE NOT archived;

CREATE TABLE emails (
    id          TEXT PRIMARY KEY,
    recipient   TEXT NOT NULL,
    subject     TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_on  TIMESTAMPTZ NOT NULL,
    due_on      TIMESTAMPTZ NOT NULL,
    lease_until TIMESTAMPTZ,
    attempts    INTEGER NOT NULL DEFAULT 0,
    sent_on     TIMESTAMPTZ,
    failed_on   TIMESTAMPTZ,
    last_error  TEXT
);
CREATE INDEX emails_due_idx ON emails (due_on) WHERE sent_on IS NULL AND failed_on IS NULL;
