-- Resumable watches (`WATCH … SINCE seq`) replay the pin changes inside a circle after a place
-- in the log. A deleted pin has no row left to say where it was, so each pin change now logs
-- the pin's place and kind with it (pins never move, and never change kind). Region changes
-- and entries written before this migration leave them null. The lock, the order and the
-- wake-up's payload are as in 0011.
ALTER TABLE feed_changes
    ADD COLUMN lat      double precision,
    ADD COLUMN lon      double precision,
    ADD COLUMN pin_kind text;

CREATE OR REPLACE FUNCTION log_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7467, hashtext(current_schema()));
    IF TG_TABLE_NAME = 'pins' THEN
        IF TG_OP = 'DELETE' THEN
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind)
                SELECT 'pin', id, lat, lon, kind FROM old_rows ORDER BY id;
        ELSE
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind)
                SELECT 'pin', id, lat, lon, kind FROM new_rows ORDER BY id;
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
