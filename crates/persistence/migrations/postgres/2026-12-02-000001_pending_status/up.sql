-- A pending transaction's `authorization.status` is `P` (no answer yet), no longer `E`, which
-- means the processor failed. Rows left pending by an earlier build say so too.
UPDATE transactions SET status = 'P' WHERE state = 'pending' AND status = 'E';
