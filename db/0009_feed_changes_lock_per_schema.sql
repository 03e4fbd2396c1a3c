-- The change log's lock (0008) is a database-wide advisory lock: name it after the schema, so
-- that change logs in different schemas of one database (the tests' isolated schemas, or two
-- deployments side by side) never wait for each other. In one schema nothing changes: every
-- transaction there still takes the same lock.
CREATE OR REPLACE FUNCTION lock_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7467, hashtext(current_schema()));
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION log_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7467, hashtext(current_schema()));
    IF TG_TABLE_NAME = 'pins' THEN
        IF TG_OP = 'DELETE' THEN
            INSERT INTO feed_changes (kind, subject) SELECT 'pin', id FROM old_rows ORDER BY id;
        ELSE
            INSERT INTO feed_changes (kind, subject) SELECT 'pin', id FROM new_rows ORDER BY id;
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO feed_changes (kind, subject) SELECT 'region', name FROM old_rows ORDER BY name;
    ELSE
        INSERT INTO feed_changes (kind, subject) SELECT 'region', name FROM new_rows ORDER BY name;
    END IF;
    GET DIAGNOSTICS logged = ROW_COUNT;
    IF logged > 0 THEN
        PERFORM pg_notify('scavenger_feed', '');
    END IF;
    RETURN NULL;
END
$$;
