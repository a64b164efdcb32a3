DROP INDEX transactions_pending_idx;
