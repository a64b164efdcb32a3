DROP TABLE events;
DROP TABLE transactions;
ALTER TABLE merchants DROP COLUMN plan_id;
DROP TABLE plans;
DROP TABLE processor_connections;
