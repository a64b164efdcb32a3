DROP TABLE emails;
DROP TABLE notifications;
DROP TABLE webhooks;
