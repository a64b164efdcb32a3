-- A token made under a client session is bound to it: a payment with it must be for the
-- session's merchant, amount and currency.
ALTER TABLE tokens ADD COLUMN client_session_id TEXT REFERENCES client_sessions (id);
