DROP TRIGGER api_keys_truncated ON api_keys;
DROP TRIGGER api_keys_changed ON api_keys;
DROP FUNCTION holdfast_notify_key_change();
