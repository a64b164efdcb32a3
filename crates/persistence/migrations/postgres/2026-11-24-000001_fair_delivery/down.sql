CREATE INDEX IF NOT EXISTS notifications_due_idx ON notifications (due_on) WHERE state = 'pending';
DROP INDEX IF EXISTS notifications_leased_idx;
DROP INDEX IF EXISTS notifications_pending_idx;
