-- No process listens on holdfast_api_keys any more: a request reads its key every time
-- (docs/decisions.md, "Finding a request's API key"), so the notifications go.
DROP TRIGGER api_keys_truncated ON api_keys;
DROP TRIGGER api_keys_changed ON api_keys;
DROP FUNCTION holdfast_notify_key_change();
