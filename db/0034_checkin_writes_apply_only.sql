-- The check-in's write applies what the daemon decided, and nothing more (issue 51).
--
-- Its team is named by the daemon, which read it with the check-in's facts under the
-- locks that keep it from changing (checkin_lock_all holds the hunt shared; JOIN, LEAVE and a
-- move hold it for update), rather than picked by a trigger: no trigger decides anything.
--
-- checkin_write and checkin_write_all as 0031's and 0024's, with:
--   p_team      the check-in's team (NULL outside a team hunt), written into checkins.team_id;
--   p_ranked    whether to count the players ahead by points (the reply's rank of a single
--               player in a hunt that is not a time trial); a team's rank comes from
--               team_refresh, a trial's from the trial's order, so they skip the count.
--   p_photo_bytes the photo's size in place of its bytes: the store writes the photo's row itself,
--               its bytes bound as they are, so photo check-ins are written in groups too.
-- p_stop_count, unread since 0031, is gone.

DROP TRIGGER checkins_team ON checkins;
DROP FUNCTION checkins_team_of_player();

DROP FUNCTION checkin_write_all(text[], text[], text[], bigint[], text[], integer[], double precision[],
    double precision[], double precision[], double precision[], double precision[], double precision[], integer[]);
DROP FUNCTION checkin_write(text, text, text, bigint, text, integer, double precision, double precision,
    double precision, double precision, text, bytea, double precision, double precision, integer);

CREATE FUNCTION checkin_write(
    p_id text, p_hunt text, p_stop text, p_user bigint, p_team bigint, p_ranked boolean, p_status text, p_points integer,
    p_lat double precision, p_lon double precision, p_accuracy double precision, p_distance double precision,
    p_photo_mime text, p_photo_bytes integer, p_travel_m double precision, p_travel_s double precision
) RETURNS TABLE (
    at_us bigint, accepted_us bigint,
    user_id bigint, name text, points integer, found integer, at_points_us bigint,
    ahead bigint,
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
        CASE WHEN p_ranked THEN
            (SELECT count(*) FROM hunt_players o
             WHERE o.hunt_id = p_hunt AND (o.points > player.points
                 OR (player.points > 0 AND o.points = player.points AND o.points_at < player.points_at)))
        ELSE 0 END,
        totals.name, totals.points, totals.found, totals.points_at_us, totals.week_day, totals.week_points,
        totals.week_found, totals.week_at_us, totals.hunts_played, totals.hunts_completed, totals.role;
END
$$;

CREATE FUNCTION checkin_write_all(
    p_ids text[], p_hunts text[], p_stops text[], p_users bigint[], p_teams bigint[], p_ranked boolean[], p_statuses text[],
    p_points integer[], p_lats double precision[], p_lons double precision[], p_accuracies double precision[],
    p_distances double precision[], p_photo_mimes text[], p_photo_bytes integer[], p_travel_m double precision[],
    p_travel_s double precision[]
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
            p_ids[i], p_hunts[i], p_stops[i], p_users[i], p_teams[i], p_ranked[i], p_statuses[i], p_points[i], p_lats[i],
            p_lons[i], p_accuracies[i], p_distances[i], p_photo_mimes[i], p_photo_bytes[i], p_travel_m[i],
            p_travel_s[i]) AS w;
    END LOOP;
END
$$;
