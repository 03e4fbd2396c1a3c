-- The change log that keeps every daemon's feed exactly in step with the database.
--
-- Every change that affects feeds (a pin written, changed, hidden, shown, reassigned to a region,
-- deleted, removed or expired; a region defined, replaced or deleted) gets a row here, in the
-- same transaction, numbered in commit order. A daemon applies the rows in order after the last
-- one it applied, its own changes included; after losing its LISTEN connection it replays from
-- there. NOTIFY only wakes it up.
--
-- Commit order equals number order because every transaction that changes pins or regions takes
-- one transaction-level advisory lock before its first change and holds it until it ends: a
-- number is only ever taken by the one transaction holding the lock. So when a daemon sees
-- change n, every change before n has committed (or rolled back, leaving a gap forever).
-- Triggers write the log, so no path that changes pins can forget it (the daemon, the command
-- line, an operator's psql).
CREATE TABLE feed_changes (
    seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT now(),
    kind    text NOT NULL CHECK (kind IN ('pin', 'region')),
    -- The pin's id, or the region's name.
    subject text NOT NULL
);
CREATE INDEX feed_changes_at ON feed_changes (at);

-- The lock that orders the log. Taken before a statement on pins or regions touches any row
-- (so its row locks always come after it); transactions that lock pin rows earlier (SELECT …
-- FOR UPDATE) take it first themselves.
CREATE FUNCTION lock_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7467, 1);
    RETURN NULL;
END
$$;

CREATE FUNCTION log_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7467, 1);
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
        -- Only a wake-up: the log says what changed. One per transaction (equal ones merge).
        PERFORM pg_notify('scavenger_feed', '');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER pins_lock_feed_changes BEFORE INSERT OR UPDATE OR DELETE ON pins
    FOR EACH STATEMENT EXECUTE FUNCTION lock_feed_changes();
CREATE TRIGGER pins_inserted_log AFTER INSERT ON pins REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();
CREATE TRIGGER pins_updated_log AFTER UPDATE ON pins REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();
CREATE TRIGGER pins_deleted_log AFTER DELETE ON pins REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();

CREATE TRIGGER regions_lock_feed_changes BEFORE INSERT OR UPDATE OR DELETE ON regions
    FOR EACH STATEMENT EXECUTE FUNCTION lock_feed_changes();
CREATE TRIGGER regions_inserted_log AFTER INSERT ON regions REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();
CREATE TRIGGER regions_updated_log AFTER UPDATE ON regions REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();
CREATE TRIGGER regions_deleted_log AFTER DELETE ON regions REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();

-- How far `scavengerd expire` has trimmed the log: a daemon that last applied a change before
-- this cannot replay and reloads its whole feed instead.
CREATE TABLE feed_changes_trimmed (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    through  bigint NOT NULL
);
INSERT INTO feed_changes_trimmed (through) VALUES (0);
