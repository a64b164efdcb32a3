-- What a session's next page shows once (a new key's value, a change's notice), sealed by the
-- vault; taken, and cleared, by that page.
ALTER TABLE dashboard_sessions ADD COLUMN flash TEXT;
