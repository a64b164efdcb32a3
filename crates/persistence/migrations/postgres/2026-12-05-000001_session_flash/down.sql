ALTER TABLE dashboard_sessions DROP COLUMN flash;
