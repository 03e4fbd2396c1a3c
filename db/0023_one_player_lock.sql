-- The player's advisory lock (the first of every hunt write's locks, see the store's HuntLog) was
-- written twice, its key once in the store and once in checkin_lock: one function now, used by
-- both, so the two can never lock different keys.
CREATE FUNCTION lock_player(p_user bigint) RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(7470, hashtext(current_schema() || '.' || p_user::text))
$$;

CREATE OR REPLACE FUNCTION checkin_lock(p_user bigint, p_stop text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lock_player(p_user);
    PERFORM 1 FROM hunts h JOIN hunt_stops s ON s.hunt_id = h.id WHERE s.id = p_stop FOR SHARE OF h;
    PERFORM 1 FROM hunt_players p JOIN hunt_stops s ON s.hunt_id = p.hunt_id
    WHERE s.id = p_stop AND p.user_id = p_user FOR UPDATE OF p;
END
$$;
