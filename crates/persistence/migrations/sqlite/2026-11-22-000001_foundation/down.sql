DROP TABLE merchants;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE platforms;
