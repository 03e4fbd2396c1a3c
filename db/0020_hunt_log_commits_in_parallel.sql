-- Hunt writes commit side by side (issue 38). Until now every hunt write in the database took
-- the log's ordering lock (advisory 7468) exclusively for its log rows and its commit, and
-- notified in the same transaction (PostgreSQL orders notifying commits under one lock of the
-- database as well): each check-in waited ~1.3 ms for the commits ahead of it, one disk flush
-- each. Now:
-- * writers take 7468 *shared*, as the last lock of their transaction, so their commits (and
--   PostgreSQL's group commit of the WAL) run in parallel, and send no NOTIFY (the daemon wakes
--   the listeners once the commit is done, several commits to one wake-up);
-- * a reader takes 7468 *exclusively* for the moment of its read: no writer is then between its
--   log rows and its commit, so the rows it sees are a complete prefix of the log (no position
--   below the highest it sees can still appear), and every daemon applies the same prefix in
--   position order.
-- Positions still follow commit order for any two writes that touch a common row (the row
-- locks are taken before the log rows and held to the commit), which is all the order the
-- daemons' boards depend on: changes of disjoint rows commute.

CREATE OR REPLACE FUNCTION log_hunt_changes(changes jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    IF jsonb_array_length(changes) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(7468, hashtext(current_schema()));
    WITH written AS (
        INSERT INTO hunt_changes (hunt_id, kind, payload)
        SELECT entry.value->>'hunt', entry.value->>'kind', entry.value->'payload'
        FROM jsonb_array_elements(changes) WITH ORDINALITY AS entry
        ORDER BY entry.ordinality
        RETURNING seq
    )
    SELECT max(seq) INTO logged FROM written;
    RETURN logged;
END
$$;

-- log_hunt_changes is the only writer of the log now.
DROP FUNCTION log_hunt_change(text, text, jsonb);

-- Changes after `after`, in order, at most `lim`, each with the trim mark (see the store's
-- huntChanges): a complete prefix, read under the exclusive lock.
CREATE FUNCTION hunt_changes_after(after bigint, lim integer)
RETURNS TABLE (seq bigint, hunt_id text, kind text, payload text, trimmed_through bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT c.seq, c.hunt_id, c.kind, c.payload::text, (SELECT t.through FROM hunt_changes_trimmed t)
        FROM hunt_changes c WHERE c.seq > after ORDER BY c.seq LIMIT lim;
END
$$;

-- The last position of the log (0 when empty), every position below it committed.
CREATE FUNCTION hunt_changes_through() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN (SELECT coalesce(max(c.seq), 0) FROM hunt_changes c);
END
$$;

-- A hunt's players, who may read it, and the log's position they stand at, read in one
-- snapshot taken under the exclusive lock (so the players are exactly the log's prefix through
-- that position). One row with null players when it has none; no hunt columns when it is gone.
CREATE FUNCTION hunt_players_snapshot(p_hunt text)
RETURNS TABLE (through bigint, hunt_host_id bigint, hunt_public boolean, hunt_removed boolean,
    user_id bigint, name text, points integer, found integer, at_us bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT t.through, h.host_id, h.public, h.removed,
            p.user_id, p.name, p.points, p.found, (extract(epoch FROM p.points_at) * 1000000)::bigint
        FROM (SELECT coalesce(max(c.seq), 0) AS through FROM hunt_changes c) t
        LEFT JOIN hunts h ON h.id = p_hunt
        LEFT JOIN hunt_players p ON p.hunt_id = p_hunt;
END
$$;
