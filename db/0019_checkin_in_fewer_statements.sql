-- A check-in in fewer round trips and less server work (issue 38): a profile of a crowd of
-- check-ins put most of PostgreSQL's time in statements sent one by one and in functions that
-- planned their bodies on every call. The rules are still judged by the daemon between reading
-- the facts and writing the verdict; these functions only read and write.

-- The totals of a user as score_totals, in PL/pgSQL so that its query's plan is kept for the
-- session (a LANGUAGE sql function called from another function or in FROM plans its body on
-- every call: 15 % of PostgreSQL's time under check-ins).
CREATE OR REPLACE FUNCTION score_totals_of(p_user bigint, p_week date) RETURNS score_totals LANGUAGE plpgsql STABLE AS $$
DECLARE
    totals score_totals;
BEGIN
    SELECT u.name, s.points, s.found, (extract(epoch FROM s.points_at) * 1000000)::bigint,
           (p_week - date '1970-01-01'), coalesce(w.points, 0), coalesce(w.found, 0),
           (extract(epoch FROM w.points_at) * 1000000)::bigint, s.hunts_played, s.hunts_completed, u.role
    INTO totals
    FROM users u JOIN user_scores s ON s.user_id = u.id
    LEFT JOIN user_week_scores w ON w.user_id = u.id AND w.week = p_week
    WHERE u.id = p_user;
    RETURN totals;
END
$$;

-- As 0018's, in one INSERT: the ordering lock once, the rows in array order (their positions
-- follow it), one wake-up.
CREATE OR REPLACE FUNCTION log_hunt_changes(changes jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    IF jsonb_array_length(changes) = 0 THEN
        RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    WITH written AS (
        INSERT INTO hunt_changes (hunt_id, kind, payload)
        SELECT entry.value->>'hunt', entry.value->>'kind', entry.value->'payload'
        FROM jsonb_array_elements(changes) WITH ORDINALITY AS entry
        ORDER BY entry.ordinality
        RETURNING seq
    )
    SELECT max(seq) INTO logged FROM written;
    PERFORM pg_notify('scavenger_hunts', '');
    RETURN logged;
END
$$;

-- The locks a check-in takes before it reads its facts, in the order every hunt write keeps
-- (the store's HuntLog): the player (advisory, so their check-ins in any hunt are judged one
-- after the other), the stop's hunt shared (ENDHUNT, REMOVESTOP and LEAVE wait), then the
-- caller's row as a player of that hunt if they are one. The facts are read by the next
-- statement, whose snapshot sees everything committed before these locks were granted.
CREATE FUNCTION checkin_lock(p_user bigint, p_stop text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7470, hashtext(current_schema() || '.' || p_user::text));
    PERFORM 1 FROM hunts h JOIN hunt_stops s ON s.hunt_id = h.id WHERE s.id = p_stop FOR SHARE OF h;
    PERFORM 1 FROM hunt_players p JOIN hunt_stops s ON s.hunt_id = p.hunt_id
    WHERE s.id = p_stop AND p.user_id = p_user FOR UPDATE OF p;
END
$$;

-- Writes a judged check-in with its consequences, under checkin_lock's locks: the row (and its
-- photo), and for an accepted one the player's points, found and tie-break time, the stop's
-- found_by, a completed hunt and the user's totals (score_credit). Answers the check-in's
-- times, the player's standing as it leaves it, the user's totals when they changed (null
-- columns otherwise) and how many players are strictly ahead (as the leaderboard ranks).
CREATE FUNCTION checkin_write(
    p_id text, p_hunt text, p_stop text, p_user bigint, p_status text, p_points integer,
    p_lat double precision, p_lon double precision, p_accuracy double precision, p_distance double precision,
    p_photo_mime text, p_photo bytea, p_travel_m double precision, p_travel_s double precision, p_stop_count integer
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
    INSERT INTO checkins (id, hunt_id, stop_id, user_id, status, points, accepted_at, lat, lon, accuracy_m, distance_m,
        photo_mime, photo_bytes, travel_from_m, travel_seconds)
    VALUES (p_id, p_hunt, p_stop, p_user, p_status, p_points,
        CASE WHEN p_status = 'accepted' THEN clock_timestamp() END, p_lat, p_lon, p_accuracy, p_distance,
        p_photo_mime, octet_length(p_photo), p_travel_m, p_travel_s)
    RETURNING checkins.created_at, checkins.accepted_at INTO created, accepted;
    IF p_photo IS NOT NULL THEN
        INSERT INTO checkin_photos (checkin_id, data) VALUES (p_id, p_photo);
    END IF;
    IF p_status = 'accepted' THEN
        UPDATE hunt_players hp SET points = hp.points + p_points, found = hp.found + 1,
            points_at = CASE WHEN p_points > 0 THEN accepted ELSE hp.points_at END
        WHERE hp.hunt_id = p_hunt AND hp.user_id = p_user
        RETURNING hp.* INTO player;
        UPDATE hunt_stops s SET found_by = s.found_by + 1 WHERE s.id = p_stop;
        -- Before the credit, whose answer (the totals logged) includes it.
        IF player.found = p_stop_count THEN
            UPDATE user_scores us SET hunts_completed = us.hunts_completed + 1 WHERE us.user_id = p_user;
        END IF;
        totals := score_credit(p_user, p_points, accepted);
    ELSE
        SELECT hp.* INTO player FROM hunt_players hp WHERE hp.hunt_id = p_hunt AND hp.user_id = p_user;
    END IF;
    RETURN QUERY SELECT
        (extract(epoch FROM created) * 1000000)::bigint, (extract(epoch FROM accepted) * 1000000)::bigint,
        player.user_id, player.name, player.points, player.found, (extract(epoch FROM player.points_at) * 1000000)::bigint,
        (SELECT count(*) FROM hunt_players o
         WHERE o.hunt_id = p_hunt AND (o.points > player.points
             OR (player.points > 0 AND o.points = player.points AND o.points_at < player.points_at))),
        totals.name, totals.points, totals.found, totals.points_at_us, totals.week_day, totals.week_points,
        totals.week_found, totals.week_at_us, totals.hunts_played, totals.hunts_completed, totals.role;
END
$$;
