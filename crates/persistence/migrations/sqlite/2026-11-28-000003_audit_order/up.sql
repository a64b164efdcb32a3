-- The Audit Log page reads a platform's entries newest first by id (ids are time-ordered),
-- paging on the id.
DROP INDEX audit_log_platform_idx;
CREATE INDEX audit_log_platform_idx ON audit_log (platform_id, id);
