-- What an event is about (the transaction or merchant its data describes), so a resource's
-- notifications are found without reading every event's data: the dashboard's Transaction Log
-- lists a transaction's Webhook Deliveries by it.
ALTER TABLE events ADD COLUMN subject_id TEXT;
UPDATE events SET subject_id = json_extract(data, '$.id');
CREATE INDEX events_subject_idx ON events (platform_id, subject_id);
