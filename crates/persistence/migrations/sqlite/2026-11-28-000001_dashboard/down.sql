DROP TABLE audit_log;
DROP TABLE dashboard_sessions;
DROP TABLE user_links;
ALTER TABLE users DROP COLUMN role;
ALTER TABLE users DROP COLUMN password_hash;
