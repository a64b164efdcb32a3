-- Reconciliation looks for transactions left pending by a process that stopped mid-call.
CREATE INDEX transactions_pending_idx ON transactions (created_on) WHERE state = 'pending';
