-- The two references, as they were; a record whose subscription is gone cannot keep one.
DELETE FROM notifications n WHERE NOT EXISTS (SELECT FROM webhooks w WHERE w.id = n.webhook_id);
ALTER TABLE notifications ADD CONSTRAINT notifications_webhook_id_fkey
    FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE;
ALTER TABLE merchants ADD CONSTRAINT merchants_platform_id_fkey
    FOREIGN KEY (platform_id) REFERENCES platforms (id);
