ALTER TABLE client_sessions DROP COLUMN held_until;
