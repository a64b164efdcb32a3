ALTER TABLE webhooks DROP COLUMN metadata;
ALTER TABLE tokens DROP COLUMN metadata;
ALTER TABLE merchants DROP COLUMN metadata;
