-- Each change-log row carries a random stamp (issue 41), so that a daemon can tell the row at its
-- place from another row given the same position. After an asynchronous standby is promoted, the
-- new primary's log may end before a daemon's place (its last changes were lost with the old
-- primary) and then hand out those positions again to other changes: a daemon that only compared
-- positions would skip real changes and keep lost ones. A daemon keeps the stamp of the row at its
-- place; when that row is missing (and not trimmed by `expire`) or has another stamp, it loads
-- everything afresh. 53 random bits: two rows sharing a position and a stamp is not a concern.
ALTER TABLE feed_changes ADD COLUMN stamp bigint NOT NULL DEFAULT floor(random() * 9007199254740992)::bigint;
ALTER TABLE hunt_changes ADD COLUMN stamp bigint NOT NULL DEFAULT floor(random() * 9007199254740992)::bigint;

-- As 0020's, with each row's stamp and, on every row (and alone on one row with no change when
-- there is none after `after`), the trim mark and the stamp of the row at `after` (null when it is
-- not there).
DROP FUNCTION hunt_changes_after(bigint, integer);
CREATE FUNCTION hunt_changes_after(after bigint, lim integer)
RETURNS TABLE (seq bigint, hunt_id text, kind text, payload text, stamp bigint, trimmed_through bigint, place_stamp bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT c.seq, c.hunt_id, c.kind, c.payload::text, c.stamp, m.through, m.place
        FROM (SELECT (SELECT t.through FROM hunt_changes_trimmed t) AS through,
                     (SELECT p.stamp FROM hunt_changes p WHERE p.seq = after) AS place) m
        LEFT JOIN LATERAL (
            SELECT h.seq, h.hunt_id, h.kind, h.payload, h.stamp FROM hunt_changes h WHERE h.seq > after ORDER BY h.seq LIMIT lim
        ) c ON true
        ORDER BY c.seq;
END
$$;

-- The log's last position and its row's stamp (0 and 0 when empty), every position below it
-- committed (read under the exclusive lock).
DROP FUNCTION hunt_changes_through();
CREATE FUNCTION hunt_changes_end() RETURNS TABLE (seq bigint, stamp bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT coalesce(max(c.seq), 0), coalesce((SELECT l.stamp FROM hunt_changes l ORDER BY l.seq DESC LIMIT 1), 0)
        FROM hunt_changes c;
END
$$;
