-- The secret a rotation replaced keeps signing beside the new one until previous_secret_until
-- (POST /v1/webhooks/{id}/rotate-secret).
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until TIMESTAMPTZ;
