-- The dashboard's people: a password (argon2id, PHC string; none until the user sets one through
-- a one-time link) and a role. Accounts made before the dashboard are viewers, save owners.
ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'viewer';
UPDATE users SET role = 'admin' WHERE id IN (SELECT owner_id FROM platforms);

-- One-time links that set a password: an invitation (the first) or a reset. Kept by the
-- SHA-256 of the secret the link carries, never the secret.
CREATE TABLE user_links (
    token_hash  BYTEA PRIMARY KEY,
    user_id     TEXT NOT NULL,
    platform_id TEXT NOT NULL,
    purpose     TEXT NOT NULL,
    created_on  TIMESTAMPTZ NOT NULL,
    expires_on  TIMESTAMPTZ NOT NULL,
    used_on     TIMESTAMPTZ
);
CREATE INDEX user_links_user_idx ON user_links (platform_id, user_id);

-- Signed-in dashboard sessions, by the SHA-256 of the cookie's secret. A session ends at
-- expires_on (absolute), after an idle spell past last_seen_on, or at sign-out.
CREATE TABLE dashboard_sessions (
    id_hash      BYTEA PRIMARY KEY,
    user_id      TEXT NOT NULL,
    platform_id  TEXT NOT NULL,
    mode         TEXT NOT NULL,
    created_on   TIMESTAMPTZ NOT NULL,
    last_seen_on TIMESTAMPTZ NOT NULL,
    expires_on   TIMESTAMPTZ NOT NULL
);
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (platform_id, user_id);

-- Who did what to keys, webhooks and users, when, and from where: the dashboard's and the
-- operator CLI's actions.
CREATE TABLE audit_log (
    id          TEXT PRIMARY KEY,
    platform_id TEXT NOT NULL,
    mode        TEXT,
    actor       TEXT NOT NULL,
    door        TEXT NOT NULL,
    action      TEXT NOT NULL,
    target      TEXT NOT NULL,
    address     TEXT,
    created_on  TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_log_platform_idx ON audit_log (platform_id, created_on, id);
