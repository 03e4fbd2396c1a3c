-- Check-ins committed in groups (issue 38): several players' check-ins in one transaction, each
-- judged on its own, so that a crowd pays one BEGIN, one lock call, one read of the facts, one
-- write call, one log row insert and one commit (one WAL flush) per group instead of per check-in.

-- The locks of a group's check-ins in one call, in one order whatever order they came in, so
-- that two groups, or a group and any other hunt write, never wait on each other in a circle:
-- the players' advisory locks (lock_player) by user id, then the stops' hunts shared by hunt id,
-- then the callers' player rows by (hunt, user), then the stops' rows (found_by) by id. Every
-- other hunt write takes these in the same order (see the store's HuntLog). Row locks are taken
-- in the ORDER BY's order (PostgreSQL locks rows above the sort).
CREATE FUNCTION checkin_lock_all(p_users bigint[], p_stops text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    u bigint;
BEGIN
    FOR u IN SELECT DISTINCT x FROM unnest(p_users) AS x ORDER BY x LOOP
        PERFORM lock_player(u);
    END LOOP;
    PERFORM 1 FROM hunts h
    WHERE h.id IN (SELECT s.hunt_id FROM hunt_stops s WHERE s.id = ANY (p_stops))
    ORDER BY h.id FOR SHARE OF h;
    PERFORM 1 FROM hunt_players p
    WHERE (p.hunt_id, p.user_id) IN (
        SELECT s.hunt_id, v.user_id FROM unnest(p_users, p_stops) AS v(user_id, stop_id) JOIN hunt_stops s ON s.id = v.stop_id)
    ORDER BY p.hunt_id, p.user_id FOR UPDATE OF p;
    PERFORM 1 FROM hunt_stops s WHERE s.id = ANY (p_stops) ORDER BY s.id FOR NO KEY UPDATE OF s;
END
$$;

-- Writes a group's judged check-ins (no photos: a photo check-in is written alone) one after
-- the other with checkin_write, in the arrays' order, each seeing those before it (a stop's
-- found_by, a rank among players of one hunt). Answers checkin_write's row for each, numbered
-- from 1 in `n`.
CREATE FUNCTION checkin_write_all(
    p_ids text[], p_hunts text[], p_stops text[], p_users bigint[], p_statuses text[], p_points integer[],
    p_lats double precision[], p_lons double precision[], p_accuracies double precision[], p_distances double precision[],
    p_travel_m double precision[], p_travel_s double precision[], p_stop_counts integer[]
) RETURNS TABLE (
    n integer, at_us bigint, accepted_us bigint,
    user_id bigint, name text, points integer, found integer, at_points_us bigint,
    ahead bigint,
    t_name text, t_points integer, t_found integer, t_points_at_us bigint, t_week_day integer, t_week_points integer,
    t_week_found integer, t_week_at_us bigint, t_hunts_played integer, t_hunts_completed integer, t_role text
) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        RETURN QUERY SELECT i, w.* FROM checkin_write(
            p_ids[i], p_hunts[i], p_stops[i], p_users[i], p_statuses[i], p_points[i], p_lats[i], p_lons[i],
            p_accuracies[i], p_distances[i], NULL, NULL, p_travel_m[i], p_travel_s[i], p_stop_counts[i]) AS w;
    END LOOP;
END
$$;
