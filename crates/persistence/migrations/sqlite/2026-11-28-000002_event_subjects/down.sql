DROP INDEX events_subject_idx;
ALTER TABLE events DROP COLUMN subject_id;
