-- The notifications of 2026-11-30-000001_key_changes, as they were.
CREATE FUNCTION holdfast_notify_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A TRUNCATE names no key: every cached key is forgotten.
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('holdfast_api_keys', 'all');
    ELSE
        PERFORM pg_notify('holdfast_api_keys', encode(OLD.value_hash, 'hex'));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed
    AFTER UPDATE OF active, value_hash, key_type, mode, platform_id, created_by OR DELETE
    ON api_keys FOR EACH ROW EXECUTE FUNCTION holdfast_notify_key_change();

CREATE TRIGGER api_keys_truncated
    AFTER TRUNCATE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION holdfast_notify_key_change();
