ALTER TABLE tokens DROP COLUMN client_session_id;
