ALTER TABLE processor_connections DROP COLUMN account;
