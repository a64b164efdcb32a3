DROP INDEX notifications_archive_idx;
CREATE INDEX notifications_archive_idx ON notifications (attempted_on) WHERE NOT archived;
