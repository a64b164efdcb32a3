-- The archive (hourly) looks only for records attempted before a time, so a record never
-- attempted (every new notification) needs no entry: one index entry fewer written per
-- notification fanned out. On a large table, create the new index CONCURRENTLY by hand under
-- another name and swap the names before deploying.
DROP INDEX notifications_archive_idx;
CREATE INDEX notifications_archive_idx ON notifications (attempted_on)
    WHERE NOT archived AND attempted_on IS NOT NULL;
