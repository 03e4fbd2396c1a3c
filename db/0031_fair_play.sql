-- Fair play with friends (protocol 1.5 revisions, issue 52). The rules are the game's (Swift,
-- ScavengerCore's GameRules and Achievements); these tables hold the facts they judge from.

-- A LEAVE of a running time trial or team hunt is final: who left, so that their JOIN is refused
-- until the hunt ends. A LEAVE before the start, or of any other hunt, records nothing.
CREATE TABLE hunt_departures (
    hunt_id text NOT NULL REFERENCES hunts (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (hunt_id, user_id)
);

-- A team's trial clock, once started, stays the team's: the check-in that started it (its time
-- and id) is kept on the team's row, so a member who leaves with their check-ins takes no time
-- off it. Only a REJECT of that check-in moves it (to the team's earliest remaining live one).
ALTER TABLE hunt_teams ADD COLUMN trial_started_at timestamptz, ADD COLUMN trial_started_by text;
UPDATE hunt_teams t SET trial_started_at = f.created_at, trial_started_by = f.id
FROM (
    SELECT DISTINCT ON (c.team_id) c.team_id, c.id, c.created_at
    FROM checkins c JOIN hunts h ON h.id = c.hunt_id AND h.trial_s IS NOT NULL
    WHERE c.team_id IS NOT NULL AND c.status <> 'rejected'
    ORDER BY c.team_id, c.created_at, c.id
) f
WHERE t.id = f.team_id;

-- Whether a player's completion of the hunt is counted (in their hunts_completed, with the badges
-- that follow it), for players of teams and single players alike: set and cleared by the writes
-- that settle achievements, so it always equals "their side has an accepted check-in at every
-- stop of a hunt that was not removed".
ALTER TABLE hunt_players RENAME COLUMN team_completed TO completed;
UPDATE hunt_players p SET completed = true
FROM hunts h WHERE h.id = p.hunt_id AND p.team_id IS NULL AND h.stop_count > 0 AND p.found >= h.stop_count AND NOT h.removed;
UPDATE hunt_players p SET completed = false FROM hunts h WHERE h.id = p.hunt_id AND h.removed AND p.completed;
CREATE INDEX hunt_players_completed ON hunt_players (user_id) WHERE completed;

-- A stop has at most one pathfinder ever: the accepted check-ins at a stop that no REJECT took
-- back, those whose player left included (found_by counts only the ones that stand, and drops
-- when a finder leaves). A check-in accepted while it is 0 is the stop's first find.
ALTER TABLE hunt_stops ADD COLUMN finds_ever integer NOT NULL DEFAULT 0 CHECK (finds_ever >= 0);
UPDATE hunt_stops SET finds_ever = found_by;

-- checkin_write as 0030's, without deciding a completion (the settle step does, for single
-- players and teams alike) and counting the stop's finds ever. p_stop_count is no longer read.
CREATE OR REPLACE FUNCTION checkin_write(
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
        UPDATE hunt_stops s SET found_by = s.found_by + 1, finds_ever = s.finds_ever + 1 WHERE s.id = p_stop;
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

-- team_refresh as 0030's, with a trial team's clock read from its row (its first time) rather
-- than from its live check-ins, which a member's LEAVE takes away.
CREATE OR REPLACE FUNCTION team_refresh(p_teams bigint[])
RETURNS TABLE (team_id bigint, hunt_id text, name text, points integer, found integer, at_us bigint,
    members text[], member_ids bigint[], trial_first_us bigint, trial_last_us bigint, ahead bigint)
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
            (extract(epoch FROM me.last_at) * 1000000)::bigint,
            CASE WHEN h.trial_s IS NULL THEN
                (SELECT count(*) FROM hunt_teams o WHERE o.hunt_id = t.hunt_id
                 AND (o.points > t.points OR (t.points > 0 AND o.points = t.points AND o.points_at < t.points_at)))
            ELSE
                (SELECT count(*) FROM (
                    SELECT o.found, max(c.created_at) - o.trial_started_at AS took
                    FROM hunt_teams o LEFT JOIN checkins c ON c.team_id = o.id AND c.status = 'accepted'
                    WHERE o.hunt_id = t.hunt_id GROUP BY o.id, o.found, o.trial_started_at) o
                 WHERE o.found > t.found OR (t.found > 0 AND o.found = t.found
                     AND greatest(interval '0', o.took) < greatest(interval '0', me.last_at - t.trial_started_at)))
            END
        FROM hunt_teams t JOIN hunts h ON h.id = t.hunt_id
        CROSS JOIN LATERAL (
            SELECT max(c.created_at) AS last_at
            FROM checkins c WHERE c.team_id = t.id AND c.status = 'accepted' AND h.trial_s IS NOT NULL
        ) me
        WHERE t.id = ANY (p_teams)
        ORDER BY t.id;
END
$$;

-- hunt_team_board_snapshot as 0030's, with the trial clock read from the team's row.
CREATE OR REPLACE FUNCTION hunt_team_board_snapshot(p_hunt text)
RETURNS TABLE (through bigint, hunt_host_id bigint, hunt_public boolean, hunt_removed boolean, hunt_trial_s integer,
    hunt_team_size integer, team_name text, points integer, found integer, at_us bigint, trial_first_us bigint,
    trial_last_us bigint, user_id bigint, name text)
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM hunts h WHERE h.id = p_hunt AND h.team_size IS NOT NULL) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT l.through, h.host_id, h.public, h.removed, h.trial_s, h.team_size,
            t.name, t.points, t.found, (extract(epoch FROM t.points_at) * 1000000)::bigint,
            CASE WHEN h.trial_s IS NOT NULL THEN (extract(epoch FROM t.trial_started_at) * 1000000)::bigint END,
            (extract(epoch FROM tt.last_at) * 1000000)::bigint,
            p.user_id, p.name
        FROM (SELECT coalesce(max(c.seq), 0) AS through FROM hunt_changes c) l
        LEFT JOIN hunts h ON h.id = p_hunt
        LEFT JOIN hunt_teams t ON t.hunt_id = p_hunt AND h.team_size IS NOT NULL
        LEFT JOIN hunt_players p ON p.team_id = t.id
        LEFT JOIN (
            SELECT c.team_id, max(c.created_at) AS last_at
            FROM checkins c WHERE c.hunt_id = p_hunt AND c.team_id IS NOT NULL AND c.status = 'accepted'
            GROUP BY c.team_id
        ) tt ON tt.team_id = t.id
        ORDER BY t.id, p.name;
END
$$;
