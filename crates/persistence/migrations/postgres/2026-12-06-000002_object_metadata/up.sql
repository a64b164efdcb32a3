-- A platform's own key/value pairs on merchants, tokens and webhook subscriptions (issue 40),
-- as on transactions: a JSON object of strings, `{}` for the many that have none.
ALTER TABLE merchants ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tokens ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE webhooks ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
