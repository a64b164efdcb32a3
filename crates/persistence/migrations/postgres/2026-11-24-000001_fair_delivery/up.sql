-- The fair claim (stores/claim.rs) walks pending rows by subscription and counts the attempts
-- in flight; it never reads notifications_due_idx, so that index goes: one index less to write
-- per fanned-out notification. On a large table, create the two indexes CONCURRENTLY by hand
-- before deploying (PostgreSQL); IF NOT EXISTS then makes this a no-op.
CREATE INDEX IF NOT EXISTS notifications_pending_idx
    ON notifications (webhook_id, due_on, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS notifications_leased_idx
    ON notifications (webhook_id, platform_id, lease_until)
    WHERE state = 'pending' AND lease_until IS NOT NULL;
DROP INDEX IF EXISTS notifications_due_idx;
