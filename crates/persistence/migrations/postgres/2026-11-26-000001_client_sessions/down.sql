DROP TABLE client_sessions;
