DROP INDEX audit_log_platform_idx;
CREATE INDEX audit_log_platform_idx ON audit_log (platform_id, created_on, id);
