-- Every process that caches API keys LISTENs on holdfast_api_keys (crates/persistence/src/
-- key_cache.rs): a change that can decide whether a key is admitted names the key's hash, and
-- PostgreSQL delivers it when the changing transaction commits, whichever process or tool made
-- it. The time of last use and the name are not such changes.
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
