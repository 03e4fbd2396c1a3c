-- The change log's wake-up names the writer when it set one: a daemon writing its own new pins
-- sets `scavenger.writer` (local to that transaction) to an id of its own, and its listener
-- sleeps through wake-ups carrying that id, since it has put those pins into its feed itself.
-- Every other change (other daemons, `scavengerd expire` and `region`, psql) wakes with an
-- empty payload, as before. Only the payload changes; the lock and the log are as in 0009.
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
        PERFORM pg_notify('scavenger_feed', coalesce(current_setting('scavenger.writer', true), ''));
    END IF;
    -- The name covers the statement that set it, not later ones in the same transaction.
    PERFORM set_config('scavenger.writer', '', true);
    RETURN NULL;
END
$$;
