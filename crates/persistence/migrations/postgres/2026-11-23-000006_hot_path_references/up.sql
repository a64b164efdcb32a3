-- Every payment inserts into these tables, and each foreign key check there runs a query of its
-- own and takes a KEY SHARE lock on the parent row: every concurrent payment of a platform locks
-- the same platforms row. The parents checked here are never deleted (platforms) or only
-- soft-deleted (merchants), and the writer has just read them in the same request, so these
-- checks guarded nothing the code does not already guarantee (docs/decisions.md, "References on
-- the payment path"). References the database must act on stay: notifications -> webhooks
-- (ON DELETE CASCADE), and every reference between configuration tables.
ALTER TABLE transactions DROP CONSTRAINT transactions_platform_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT transactions_merchant_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_platform_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_platform_id_fkey;
ALTER TABLE notifications DROP CONSTRAINT notifications_platform_id_fkey;
ALTER TABLE notifications DROP CONSTRAINT notifications_event_id_fkey;
