-- A merchant's insert and every notification's insert no longer check a foreign key. Each check
-- took a KEY SHARE lock on its parent: every merchant a platform created locked its one
-- `platforms` row, and every notification fanned out to a subscription locked that one
-- `webhooks` row, so concurrent writers made a MultiXact for each pair and queued on the row's
-- page (docs/decisions.md, "Fan-out locks no parent row"). Platforms are never deleted, and the
-- writer has just read its platform; a subscription's delete takes its history itself
-- (`delete_webhook`), and the row of a fan-out that commits after that delete is removed by the
-- hourly retention pass (`delete_orphaned_deliveries`).
ALTER TABLE merchants DROP CONSTRAINT merchants_platform_id_fkey;
ALTER TABLE notifications DROP CONSTRAINT notifications_webhook_id_fkey;
