-- The check-in's write applies what the daemon decided, and nothing more (issue 51).
--
-- Its team is named by the daemon, which read it with the check-in's facts under the
-- locks that keep it from changing (checkin_lock_all holds the hunt shared; JOIN, LEAVE and a
-- move hold it for update), rather than picked by a trigger: no trigger decides anything.
--
-- checkin_write and checkin_write_all as 0031's and 0024's, with:
--   p_team      the check-in's team (NULL outside a team hunt), written into checkins.team_id;
--   p_photo_bytes the photo's size in place of its bytes: the store writes the photo's row itself,
--               its bytes bound as they are, so photo check-ins are written in groups too.
-- p_stop_count, unread since 0031, is gone, and so is the count of players ahead: a check-in's
-- rank is the daemon's (its hunt's board, the one rule of who is ahead), as is a team's, which
-- team_refresh no longer counts either.

DROP TRIGGER checkins_team ON checkins;
DROP FUNCTION checkins_team_of_player();

DROP FUNCTION checkin_write_all(text[], text[], text[], bigint[], text[], integer[], double precision[],
    double precision[], double precision[], double precision[], double precision[], double precision[], integer[]);
DROP FUNCTION checkin_write(text, text, text, bigint, text, integer, double precision, double precision,
    double precision, double precision, text, bytea, double precision, double precision, integer);

CREATE FUNCTION checkin_write(
    p_id text, p_hunt text, p_stop text, p_user bigint, p_team bigint, p_status text, p_points integer,
    p_lat double precision, p_lon double precision, p_accuracy double precision, p_distance double precision,
    p_photo_mime text, p_photo_bytes integer, p_travel_m double precision, p_travel_s double precision
) RETURNS TABLE (
    at_us bigint, accepted_us bigint,
    user_id bigint, name text, points integer, found integer, at_points_us bigint,
    t_name text, t_points integer, t_found integer, t_points_at_us bigint, t_week_day integer, t_week_points integer,
    t_week_found integer, t_week_at_us bigint, t_hunts_played integer, t_hunts_completed integer, t_role text
) LANGUAGE plpgsql AS $$
DECLARE
    created timestamptz;
    accepted timestamptz;
    player hunt_players;
    totals score_totals;
BEGIN
    INSERT INTO checkins (id, hunt_id, stop_id, user_id, team_id, status, points, accepted_at, lat, lon, accuracy_m, distance_m,
        photo_mime, photo_bytes, travel_from_m, travel_seconds)
    VALUES (p_id, p_hunt, p_stop, p_user, p_team, p_status, p_points,
        CASE WHEN p_status = 'accepted' THEN clock_timestamp() END, p_lat, p_lon, p_accuracy, p_distance,
        p_photo_mime, p_photo_bytes, p_travel_m, p_travel_s)
    RETURNING checkins.created_at, checkins.accepted_at INTO created, accepted;
    IF p_status = 'accepted' THEN
        UPDATE hunt_players hp SET points = hp.points + p_points, found = hp.found + 1,
            points_at = CASE WHEN p_points > 0 THEN accepted ELSE hp.points_at END
        WHERE hp.hunt_id = p_hunt AND hp.user_id = p_user
        RETURNING hp.* INTO player;
        UPDATE hunt_stops s SET found_by = s.found_by + 1, finds_ever = s.finds_ever + 1 WHERE s.id = p_stop;
        totals := score_credit(p_user, p_points, accepted);
    ELSE
        SELECT hp.* INTO player FROM hunt_players hp WHERE hp.hunt_id = p_hunt AND hp.user_id = p_user;
    END IF;
    RETURN QUERY SELECT
        (extract(epoch FROM created) * 1000000)::bigint, (extract(epoch FROM accepted) * 1000000)::bigint,
        player.user_id, player.name, player.points, player.found, (extract(epoch FROM player.points_at) * 1000000)::bigint,
        totals.name, totals.points, totals.found, totals.points_at_us, totals.week_day, totals.week_points,
        totals.week_found, totals.week_at_us, totals.hunts_played, totals.hunts_completed, totals.role;
END
$$;

CREATE FUNCTION checkin_write_all(
    p_ids text[], p_hunts text[], p_stops text[], p_users bigint[], p_teams bigint[], p_statuses text[],
    p_points integer[], p_lats double precision[], p_lons double precision[], p_accuracies double precision[],
    p_distances double precision[], p_photo_mimes text[], p_photo_bytes integer[], p_travel_m double precision[],
    p_travel_s double precision[]
) RETURNS TABLE (
    n integer, at_us bigint, accepted_us bigint,
    user_id bigint, name text, points integer, found integer, at_points_us bigint,
    t_name text, t_points integer, t_found integer, t_points_at_us bigint, t_week_day integer, t_week_points integer,
    t_week_found integer, t_week_at_us bigint, t_hunts_played integer, t_hunts_completed integer, t_role text
) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
        RETURN QUERY SELECT i, w.* FROM checkin_write(
            p_ids[i], p_hunts[i], p_stops[i], p_users[i], p_teams[i], p_statuses[i], p_points[i], p_lats[i],
            p_lons[i], p_accuracies[i], p_distances[i], p_photo_mimes[i], p_photo_bytes[i], p_travel_m[i],
            p_travel_s[i]) AS w;
    END LOOP;
END
$$;

-- team_refresh as 0031's, without the teams ahead.
DROP FUNCTION team_refresh(bigint[]);
CREATE FUNCTION team_refresh(p_teams bigint[])
RETURNS TABLE (team_id bigint, hunt_id text, name text, points integer, found integer, at_us bigint,
    members text[], member_ids bigint[], trial_first_us bigint, trial_last_us bigint)
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hunt_teams t SET points = s.points, found = s.found, points_at = s.points_at
    FROM (
        SELECT x.id, coalesce(sum(c.points) FILTER (WHERE c.status = 'accepted'), 0)::integer AS points,
            (count(*) FILTER (WHERE c.status = 'accepted'))::integer AS found,
            max(c.accepted_at) FILTER (WHERE c.status = 'accepted' AND c.points > 0) AS points_at
        FROM unnest(p_teams) AS x(id) LEFT JOIN checkins c ON c.team_id = x.id
        GROUP BY x.id
    ) s
    WHERE t.id = s.id AND (t.points, t.found, t.points_at) IS DISTINCT FROM (s.points, s.found, s.points_at);
    RETURN QUERY
        SELECT t.id, t.hunt_id, t.name, t.points, t.found, (extract(epoch FROM t.points_at) * 1000000)::bigint,
            coalesce((SELECT array_agg(p.name ORDER BY lower(p.name), p.name) FROM hunt_players p WHERE p.team_id = t.id), '{}'),
            coalesce((SELECT array_agg(p.user_id ORDER BY lower(p.name), p.name) FROM hunt_players p WHERE p.team_id = t.id), '{}'),
            CASE WHEN h.trial_s IS NOT NULL THEN (extract(epoch FROM t.trial_started_at) * 1000000)::bigint END,
            (extract(epoch FROM me.last_at) * 1000000)::bigint
        FROM hunt_teams t JOIN hunts h ON h.id = t.hunt_id
        CROSS JOIN LATERAL (
            SELECT max(c.created_at) AS last_at
            FROM checkins c WHERE c.team_id = t.id AND c.status = 'accepted' AND h.trial_s IS NOT NULL
        ) me
        WHERE t.id = ANY (p_teams)
        ORDER BY t.id;
END
$$;
