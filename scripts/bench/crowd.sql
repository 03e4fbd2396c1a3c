-- The crowd of the crowd benchmark (scripts/bench.sh --only crowd, issue 38), written straight into
-- a migrated scavengerd database of its own before the daemon starts (it reads hunts, players and
-- sessions from the database; nothing of these is cached yet).
--
-- Written with SQL rather than through the protocol: 1,000 REGISTERs would be 1,000 argon2id
-- hashes (two hashing threads, ~20 s that measure nothing of the crowd), and the hunts' set-up
-- (CREATEHUNT, ADDSTOP, STARTHUNT) is not what the benchmark measures. The rows are those the
-- commands would leave, as scripts/bench/hunts.sql writes them.
--
-- psql variables:
--   players  players of the crowd: player p plays hunt 1 + (p - 1) % hunts, joined already
--   hunts    running hunts of 10 stops each
--   teams    teams of 5 in team hunts (protocol 1.4, TEAMS SIZE 5), 10 teams to a hunt; 0: none
--   team_stops  stops of each team hunt (1–100; 100 is the daemon's default --max-stops-per-hunt)
--   team_sets   sets of team hunts: every team plays in one hunt of each set (a set per team run)
--   tag      a word of [a-z0-9] unique to the run: part of every session token
--
-- Users are 'hchost' (the host of every hunt) and 'hcp0001'… (the players); a player's session
-- token is 'hct_<tag>_<name>' (only its SHA-256 stored, as the daemon stores its own). Hunt
-- number 0 is the join hunt of phase B: running, no players, joined by its code. Hunts 1 … hunts
-- lie on a grid about 1 km apart around Berlin's centre; each one's 10 stops stand on a circle of
-- about 200 m around its centre (radius 50 m, 5 to 50 points), so two stops of one hunt are at
-- most ~400 m apart and a player, who plays one crowd hunt, never trips the travel-speed check
-- (over 1 km). Hunts are private, joined by their codes as a class would join one.
--
-- The team crowd: 'hcq0001'… (5 × teams players), in teams of 5 ('Crowd team 001'…: players
-- 5t − 4 … 5t make team t), ten teams to a running team hunt of team_stops stops ('Crowd teams
-- <set>.<n>', hunt numbers 2000 + 1000 × (set − 1) + n, TEAMS SIZE 5, on a grid of their own south
-- of the others), every player joined to their team already, in one hunt of each of team_sets
-- sets. The teams are written as JOIN … TEAM leaves them (db/0030: a hunt_teams row per team, at
-- 0 points; the player's hunt_players row names it by team_id). A team finds each stop once and
-- its members never leave (a LEAVE of a running team hunt is final since protocol 1.5), so a
-- hunt's stops are all its teams have to find: 100 by default, and each team run plays a set of
-- its own. The stops stand on a circle of about 200 m as the other hunts' do (about 13 m apart),
-- and a team's hunts of every set on the same circle, so no two of a player's stops are more than
-- ~400 m apart (the travel-speed check looks at the player's last check-in in any hunt).
--
-- Ids have the daemon's shapes: 'h', 's' + 'crowdaaaaaaaaaaa' + eight base-32 digits of a number
-- (a crowd hunt's stop: hunt × 100 + stop; a team hunt's: hunt × 1000 + stop, hunt ≥ 2001).
-- Set s's hunt n: crowd_id('h', 2000 + 1000 × (s − 1) + n).
-- Join codes: 'C' + five base-32 digits (the join codes' alphabet), unlike hunts.sql's.

\set ON_ERROR_STOP 1

CREATE FUNCTION pg_temp.crowd_id(prefix text, n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT prefix || 'crowdaaaaaaaaaaa' || string_agg(
        substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> (5 * (7 - k))) & 31)::int + 1, 1), '' ORDER BY k)
    FROM generate_series(0, 7) k
$$;
CREATE FUNCTION pg_temp.crowd_code(n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT 'C' || string_agg(substr('23456789ABCDEFGHJKLMNPQRSTUVWXYZ', ((n >> (5 * (4 - k))) & 31)::int + 1, 1), '' ORDER BY k)
    FROM generate_series(0, 4) k
$$;

BEGIN;

INSERT INTO users (name, email, password_hash)
SELECT name, name || '@crowd.invalid', '$argon2id$placeholder-not-a-real-hash'
FROM (SELECT 'hchost' AS name
      UNION ALL SELECT 'hcp' || lpad(p::text, 4, '0') FROM generate_series(1, :players) p
      UNION ALL SELECT 'hcq' || lpad(q::text, 4, '0') FROM generate_series(1, 5 * :teams) q) u;

INSERT INTO hunts (id, host_id, name, code, starts_at)
SELECT pg_temp.crowd_id('h', h), u.id, CASE WHEN h = 0 THEN 'Crowd join' ELSE 'Crowd ' || h END,
       pg_temp.crowd_code(h), now() - interval '1 hour'
FROM generate_series(0, :hunts) h, users u WHERE u.name = 'hchost';

INSERT INTO hunt_stops (id, hunt_id, n, title, lat, lon, radius_m, points, proof)
SELECT pg_temp.crowd_id('s', h * 100 + k), pg_temp.crowd_id('h', h), k, 'Crowd ' || h || ' stop ' || k,
       round((52.475 + ((h - 1) / 10) * 0.009 + 0.0018 * cos(2 * pi() * k / 10))::numeric, 6),
       round((13.330 + ((h - 1) % 10) * 0.015 + 0.0030 * sin(2 * pi() * k / 10))::numeric, 6),
       50, 5 * k, 'place'
FROM generate_series(0, :hunts) h, generate_series(1, 10) k;

-- The team hunts: 10 teams of 5 each (the last one fewer when teams is not a multiple of 10), in
-- each set.
INSERT INTO hunts (id, host_id, name, code, starts_at, team_size)
SELECT pg_temp.crowd_id('h', 2000 + 1000 * (x - 1) + t), u.id, 'Crowd teams ' || x || '.' || t,
       pg_temp.crowd_code(2000 + 1000 * (x - 1) + t), now() - interval '1 hour', 5
FROM generate_series(1, (:teams + 9) / 10) t, generate_series(1, :team_sets) x, users u WHERE u.name = 'hchost';

INSERT INTO hunt_stops (id, hunt_id, n, title, lat, lon, radius_m, points, proof)
SELECT pg_temp.crowd_id('s', (2000 + 1000 * (x - 1) + t) * 1000 + k), pg_temp.crowd_id('h', 2000 + 1000 * (x - 1) + t), k,
       'Crowd teams ' || x || '.' || t || ' stop ' || k,
       round((52.430 + ((t - 1) / 10) * 0.009 + 0.0018 * cos(2 * pi() * k / :team_stops))::numeric, 6),
       round((13.330 + ((t - 1) % 10) * 0.015 + 0.0030 * sin(2 * pi() * k / :team_stops))::numeric, 6),
       50, 5 * (1 + (k - 1) % 10), 'place'
FROM generate_series(1, (:teams + 9) / 10) t, generate_series(1, :team_sets) x, generate_series(1, :team_stops) k;

INSERT INTO hunt_teams (hunt_id, name)
SELECT pg_temp.crowd_id('h', 2000 + 1000 * (x - 1) + 1 + (t - 1) / 10), 'Crowd team ' || lpad(t::text, 3, '0')
FROM generate_series(1, :teams) t, generate_series(1, :team_sets) x;

INSERT INTO hunt_players (hunt_id, user_id, name, joined_at)
SELECT pg_temp.crowd_id('h', 1 + (substr(u.name, 4)::int - 1) % :hunts), u.id, u.name, now() - interval '1 hour'
FROM users u WHERE u.name LIKE 'hcp%';

INSERT INTO hunt_players (hunt_id, user_id, name, joined_at, team_id)
SELECT t.hunt_id, u.id, u.name, now() - interval '1 hour', t.id
FROM users u JOIN hunt_teams t ON t.hunt_id LIKE 'hcrowd%'
     AND t.name = 'Crowd team ' || lpad((1 + (substr(u.name, 4)::int - 1) / 5)::text, 3, '0')
WHERE u.name LIKE 'hcq%';

-- Each player's totals as their JOINs left them: one hunt played, a team player's one per set (a
-- LEAVE takes it back; without the row it would go below 0 and the LEAVE fail).
INSERT INTO user_scores (user_id, hunts_played)
SELECT id, CASE WHEN name LIKE 'hcq%' THEN :team_sets ELSE 1 END FROM users WHERE name LIKE 'hcp%' OR name LIKE 'hcq%';

UPDATE hunts h SET stop_count = (SELECT count(*) FROM hunt_stops s WHERE s.hunt_id = h.id),
                   player_count = (SELECT count(*) FROM hunt_players p WHERE p.hunt_id = h.id)
WHERE h.id LIKE 'hcrowd%';

INSERT INTO sessions (token_hash, user_id, expires_at)
SELECT sha256(convert_to('hct_' || :'tag' || '_' || name, 'UTF8')), id, now() + interval '7 days'
FROM users WHERE name LIKE 'hcp%' OR name LIKE 'hcq%';

COMMIT;

VACUUM ANALYZE users;
VACUUM ANALYZE sessions;
VACUUM ANALYZE hunts;
VACUUM ANALYZE hunt_stops;
VACUUM ANALYZE hunt_players;
VACUUM ANALYZE hunt_teams;
VACUUM ANALYZE user_scores;
