DROP INDEX payouts_trace_idx;
ALTER TABLE payouts DROP COLUMN trace_number;
ALTER TABLE payouts DROP COLUMN ach_file_id;
DROP TABLE ach_files;
