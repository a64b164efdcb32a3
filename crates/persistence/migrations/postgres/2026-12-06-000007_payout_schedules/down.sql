DROP INDEX payouts_scheduled_idx;
DROP TABLE payout_schedules;
