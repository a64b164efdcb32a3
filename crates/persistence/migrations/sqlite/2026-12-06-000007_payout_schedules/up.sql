-- Payout schedules (issue 41, docs/money.md): how often a merchant's available balance is paid
-- out without being asked. A merchant without a row is paid out only when asked (manual).
CREATE TABLE payout_schedules (
    merchant_id  TEXT PRIMARY KEY,
    platform_id  TEXT NOT NULL,
    mode         TEXT NOT NULL,
    -- daily, weekly or manual
    every        TEXT NOT NULL,
    -- monday to sunday, for a weekly schedule only
    weekday      TEXT,
    -- the least available balance paid out, in the merchant's currency's minor units
    minimum      BIGINT NOT NULL CHECK (minimum >= 0),
    updated_on   TEXT NOT NULL
);
-- What a run reads: the schedules due today.
CREATE INDEX payout_schedules_due_idx ON payout_schedules (every, weekday);
-- "Paid out today already": a merchant's scheduled payouts by when they were made.
CREATE INDEX payouts_scheduled_idx ON payouts (merchant_id, created_on)
    WHERE method = 'scheduled';
