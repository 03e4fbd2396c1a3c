-- Team hunts (protocol 1.4, issue 43): a hunt made with TEAMS is played by teams, created by
-- joining. A stop counts once per team; a team's points, stops found and tie-break time are kept
-- on its row as a player's are on theirs, and its members' own points still go to their totals.
CREATE TABLE hunt_teams (
    id        bigserial PRIMARY KEY,
    hunt_id   text NOT NULL REFERENCES hunts (id) ON DELETE CASCADE,
    -- As typed by the player who made it; unique per hunt case-insensitively.
    name      text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]([A-Za-z0-9_. -]{0,38}[A-Za-z0-9_.-])?$'),
    points    integer NOT NULL DEFAULT 0 CHECK (points >= 0),
    found     integer NOT NULL DEFAULT 0 CHECK (found >= 0),
    -- When the team reached these points (null at 0): the leaderboard's tie-break.
    points_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX hunt_teams_name ON hunt_teams (hunt_id, lower(name));

-- A team hunt's player plays for one team (null in a hunt of single players). Moving to another
-- team changes this; the check-ins made for the team left stay with it.
ALTER TABLE hunt_players ADD COLUMN team_id bigint REFERENCES hunt_teams (id);
CREATE INDEX hunt_players_team ON hunt_players (team_id) WHERE team_id IS NOT NULL;

-- The team a check-in was made for: its player's team when it was written (set by the trigger
-- below, so every way of writing a check-in gets it). One live check-in per team and stop: the
-- rule is judged under the team's row lock (checkin_lock_all), this index keeps the table honest.
ALTER TABLE checkins ADD COLUMN team_id bigint REFERENCES hunt_teams (id) ON DELETE CASCADE;
CREATE UNIQUE INDEX checkins_team_one_live ON checkins (team_id, stop_id) WHERE team_id IS NOT NULL AND status <> 'rejected';
CREATE INDEX checkins_team ON checkins (team_id) WHERE team_id IS NOT NULL;

CREATE FUNCTION checkins_team_of_player() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT p.team_id INTO NEW.team_id FROM hunt_players p WHERE p.hunt_id = NEW.hunt_id AND p.user_id = NEW.user_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER checkins_team BEFORE INSERT ON checkins FOR EACH ROW EXECUTE FUNCTION checkins_team_of_player();

-- Team standings travel through the hunts' change log as players' do.
ALTER TABLE hunt_changes DROP CONSTRAINT hunt_changes_kind_check;
ALTER TABLE hunt_changes ADD CONSTRAINT hunt_changes_kind_check
    CHECK (kind IN ('hunt', 'hint', 'found', 'standing', 'left', 'reply', 'totals', 'badge', 'team'));

-- The locks of a group's check-ins (as 0024's), with the players' teams: the players' advisory
-- locks by user id, the stops' hunts shared by hunt id, the teams of the callers' player rows
-- by team id (so one team's check-ins are judged one after the other, on every daemon: two
-- members at one stop at one instant, the second sees the first's), the callers' player rows by
-- (hunt, user), the stops' rows by id. JOIN and LEAVE lock a hunt's row for update before its
-- teams and players, so a player's team cannot change while a check-in holds the hunt shared.
CREATE OR REPLACE FUNCTION checkin_lock_all(p_users bigint[], p_stops text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    u bigint;
BEGIN
    FOR u IN SELECT DISTINCT x FROM unnest(p_users) AS x ORDER BY x LOOP
        PERFORM lock_player(u);
    END LOOP;
    PERFORM 1 FROM hunts h
    WHERE h.id IN (SELECT s.hunt_id FROM hunt_stops s WHERE s.id = ANY (p_stops))
    ORDER BY h.id FOR SHARE OF h;
    PERFORM 1 FROM hunt_teams t
    WHERE t.id IN (
        SELECT p.team_id FROM unnest(p_users, p_stops) AS v(user_id, stop_id)
        JOIN hunt_stops s ON s.id = v.stop_id JOIN hunt_players p ON p.hunt_id = s.hunt_id AND p.user_id = v.user_id)
    ORDER BY t.id FOR NO KEY UPDATE OF t;
    PERFORM 1 FROM hunt_players p
    WHERE (p.hunt_id, p.user_id) IN (
        SELECT s.hunt_id, v.user_id FROM unnest(p_users, p_stops) AS v(user_id, stop_id) JOIN hunt_stops s ON s.id = v.stop_id)
    ORDER BY p.hunt_id, p.user_id FOR UPDATE OF p;
    PERFORM 1 FROM hunt_stops s WHERE s.id = ANY (p_stops) ORDER BY s.id FOR NO KEY UPDATE OF s;
END
$$;

-- Sets teams' points, stops found and tie-break time from their accepted check-ins (the caller
-- holds the teams' rows, or the hunt's for update) and answers each team as it stands: its
-- members' names and user ids (by name), in a time trial its two times (the earliest live
-- check-in, the latest accepted one), and how many teams are strictly ahead of it as the
-- leaderboard ranks (by points, or in a trial by found then time).
CREATE FUNCTION team_refresh(p_teams bigint[])
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
            (extract(epoch FROM me.first_at) * 1000000)::bigint, (extract(epoch FROM me.last_at) * 1000000)::bigint,
            CASE WHEN h.trial_s IS NULL THEN
                (SELECT count(*) FROM hunt_teams o WHERE o.hunt_id = t.hunt_id
                 AND (o.points > t.points OR (t.points > 0 AND o.points = t.points AND o.points_at < t.points_at)))
            ELSE
                (SELECT count(*) FROM (
                    SELECT o.found, max(c.created_at) FILTER (WHERE c.status = 'accepted') - min(c.created_at) AS took
                    FROM hunt_teams o LEFT JOIN checkins c ON c.team_id = o.id AND c.status <> 'rejected'
                    WHERE o.hunt_id = t.hunt_id GROUP BY o.id, o.found) o
                 WHERE o.found > t.found OR (t.found > 0 AND o.found = t.found
                     AND greatest(interval '0', o.took) < greatest(interval '0', me.last_at - me.first_at)))
            END
        FROM hunt_teams t JOIN hunts h ON h.id = t.hunt_id
        CROSS JOIN LATERAL (
            SELECT min(c.created_at) AS first_at, max(c.created_at) FILTER (WHERE c.status = 'accepted') AS last_at
            FROM checkins c WHERE c.team_id = t.id AND c.status <> 'rejected' AND h.trial_s IS NOT NULL
        ) me
        WHERE t.id = ANY (p_teams)
        ORDER BY t.id;
END
$$;

-- A team hunt's board as every daemon loads it (as hunt_board_snapshot, under the change log's
-- lock, so it is exactly the log through `through`): one row per team and member (a team with
-- no members has one row with null member columns), with the team's standing and in a time
-- trial its times. Nothing at all for a hunt of single players (or no hunt), without taking the
-- log's lock: the caller reads hunt_board_snapshot then.
CREATE FUNCTION hunt_team_board_snapshot(p_hunt text)
RETURNS TABLE (through bigint, hunt_host_id bigint, hunt_public boolean, hunt_removed boolean, hunt_trial_s integer,
    hunt_team_size integer, team_name text, points integer, found integer, at_us bigint, trial_first_us bigint,
    trial_last_us bigint, user_id bigint, name text)
LANGUAGE plpgsql AS $$
BEGIN
    -- A hunt's team size never changes, so this look needs no lock.
    IF NOT EXISTS (SELECT 1 FROM hunts h WHERE h.id = p_hunt AND h.team_size IS NOT NULL) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT l.through, h.host_id, h.public, h.removed, h.trial_s, h.team_size,
            t.name, t.points, t.found, (extract(epoch FROM t.points_at) * 1000000)::bigint,
            (extract(epoch FROM tt.first_at) * 1000000)::bigint, (extract(epoch FROM tt.last_at) * 1000000)::bigint,
            p.user_id, p.name
        FROM (SELECT coalesce(max(c.seq), 0) AS through FROM hunt_changes c) l
        LEFT JOIN hunts h ON h.id = p_hunt
        LEFT JOIN hunt_teams t ON t.hunt_id = p_hunt AND h.team_size IS NOT NULL
        LEFT JOIN hunt_players p ON p.team_id = t.id
        LEFT JOIN (
            SELECT c.team_id, min(c.created_at) AS first_at, max(c.created_at) FILTER (WHERE c.status = 'accepted') AS last_at
            FROM checkins c WHERE c.hunt_id = p_hunt AND c.team_id IS NOT NULL AND c.status <> 'rejected'
            GROUP BY c.team_id
        ) tt ON tt.team_id = t.id
        ORDER BY t.id, p.name;
END
$$;

-- A team hunt is completed by the team (every member, when its last stop is found: the store marks
-- them in team_completed and counts it in their hunts_completed), not by a member's own finds:
-- checkin_write (as 0019's otherwise) counts a completed hunt for players of no team only.
ALTER TABLE hunt_players ADD COLUMN team_completed boolean NOT NULL DEFAULT false;

-- Writes a judged check-in with its consequences, under checkin_lock's locks: the row (and its
-- photo), and for an accepted one the player's points, found and tie-break time, the stop's
-- found_by, a completed hunt and the user's totals (score_credit). Answers the check-in's
-- times, the player's standing as it leaves it, the user's totals when they changed (null
-- columns otherwise) and how many players are strictly ahead (as the leaderboard ranks).
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
        UPDATE hunt_stops s SET found_by = s.found_by + 1 WHERE s.id = p_stop;
        -- Before the credit, whose answer (the totals logged) includes it.
        IF player.found = p_stop_count AND player.team_id IS NULL THEN
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
