-- The hunts of the hunt benchmark (scripts/bench.sh), written straight into scavengerd's database
-- (migrated, before or while a daemon serves: no daemon has read these hunts yet, and each loads a
-- hunt's leaderboard from its players' standings on first use).
--
-- psql variables:
--   walk_hunts  hunts of 100 stops each (the default --max-stops-per-hunt), all at one place, for
--               CHECKIN: every walker has joined every one of them
--   walkers     players who walk those stops, one per connection and round of CHECKIN
--   lb_players  players of the leaderboard's hunt
--   around      players of the leaderboard's hunt given a session, for LEADERBOARD … AROUND
--   tag         a word of [a-z0-9] unique to the run: part of every session token
--
-- Ids have the daemon's shapes: 'h', 's' or 'c' + 'benchaaaaaaaaaaa' + eight base-32 digits of a
-- number (never one of the daemon's random ids in practice). Users are 'hbhost' (the host of every
-- hunt), 'hbp00001'… (the leaderboard's players) and 'hbw0001'… (the walkers). A session token is
-- 'hbt_<tag>_<user name>'; only its SHA-256 is stored, as the daemon stores its own.
--
-- The leaderboard's hunt is public, running for three hours, with 20 stops worth 10, 20, … 200
-- points. Each player found each stop with a probability of their own (0 to 1 in steps of about
-- 1 %, so every score from 0 to 2,100 is common and a few players have none), at a random moment
-- of those three hours; the check-ins are written as accepted, and each player's points, found
-- stops and points_at (the moment of their last check-in) follow from them, as CHECKIN would have
-- left them.

\set ON_ERROR_STOP 1
SELECT setseed(0.42) \g /dev/null

CREATE FUNCTION pg_temp.bench_id(prefix text, n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT prefix || 'benchaaaaaaaaaaa' || string_agg(
        substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> (5 * (7 - k))) & 31)::int + 1, 1), '' ORDER BY k)
    FROM generate_series(0, 7) k
$$;
-- A join code: six digits of base 32 in the join codes' alphabet (A-Z 2-9 without I O 0 1).
CREATE FUNCTION pg_temp.bench_code(n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(substr('23456789ABCDEFGHJKLMNPQRSTUVWXYZ', ((n >> (5 * (5 - k))) & 31)::int + 1, 1), '' ORDER BY k)
    FROM generate_series(0, 5) k
$$;

BEGIN;

INSERT INTO users (name, email, password_hash)
SELECT name, name || '@bench.invalid', '$argon2id$placeholder-not-a-real-hash'
FROM (SELECT 'hbhost' AS name
      UNION ALL SELECT 'hbp' || lpad(p::text, 5, '0') FROM generate_series(1, :lb_players) p
      UNION ALL SELECT 'hbw' || lpad(w::text, 4, '0') FROM generate_series(1, :walkers) w) u;

-- The leaderboard's hunt: number 0.
INSERT INTO hunts (id, host_id, name, description, code, public, starts_at)
SELECT pg_temp.bench_id('h', 0), id, 'Bench leaderboard', 'The leaderboard benchmark''s hunt', pg_temp.bench_code(0),
       true, now() - interval '3 hours'
FROM users WHERE name = 'hbhost';
INSERT INTO hunt_stops (id, hunt_id, n, title, lat, lon, radius_m, points, proof)
SELECT pg_temp.bench_id('s', k), pg_temp.bench_id('h', 0), k, 'Stop ' || k,
       52.5163 + k * 0.0005, 13.3777 + k * 0.0007, 30, 10 * k, 'place'
FROM generate_series(1, 20) k;

CREATE TEMP TABLE lb_players ON COMMIT DROP AS
SELECT p, u.id AS user_id, u.name, ((p * 37) % 101) / 100.0 AS chance
FROM generate_series(1, :lb_players) p JOIN users u ON u.name = 'hbp' || lpad(p::text, 5, '0');
INSERT INTO checkins (id, hunt_id, stop_id, user_id, status, points, created_at, accepted_at, lat, lon, distance_m)
SELECT pg_temp.bench_id('c', p * 32 + n), hunt_id, stop_id, user_id, 'accepted', points, at, at, lat, lon, 3.5
FROM (SELECT lp.p, lp.user_id, lp.chance, s.n, s.hunt_id, s.id AS stop_id, s.points, s.lat, s.lon, random() AS draw,
             now() - interval '3 hours' + random() * interval '3 hours' AS at
      FROM lb_players lp CROSS JOIN hunt_stops s WHERE s.hunt_id = pg_temp.bench_id('h', 0)) f
WHERE draw < chance;
INSERT INTO hunt_players (hunt_id, user_id, name, points, found, points_at, joined_at)
SELECT pg_temp.bench_id('h', 0), lp.user_id, lp.name, coalesce(sum(c.points), 0), count(c.id),
       max(c.accepted_at), now() - interval '3 hours'
FROM lb_players lp LEFT JOIN checkins c ON c.user_id = lp.user_id AND c.hunt_id = pg_temp.bench_id('h', 0)
GROUP BY lp.user_id, lp.name;

-- The walkers' hunts: numbers 1 … walk_hunts, private, running for an hour, 100 stops each at one
-- place (so no check-in is ever far from the walker's previous one: the travel-speed check never
-- fires), worth 5 to 50 points.
INSERT INTO hunts (id, host_id, name, code, starts_at)
SELECT pg_temp.bench_id('h', h), u.id, 'Bench walk ' || h, pg_temp.bench_code(h), now() - interval '1 hour'
FROM generate_series(1, :walk_hunts) h, users u WHERE u.name = 'hbhost';
INSERT INTO hunt_stops (id, hunt_id, n, title, lat, lon, radius_m, points, proof)
SELECT pg_temp.bench_id('s', h * 1000 + k), pg_temp.bench_id('h', h), k, 'Walk ' || h || ' stop ' || k,
       52.520008, 13.404954, 50, 5 + 5 * (k % 10), 'place'
FROM generate_series(1, :walk_hunts) h, generate_series(1, 100) k;
INSERT INTO hunt_players (hunt_id, user_id, name, joined_at)
SELECT pg_temp.bench_id('h', h), u.id, u.name, now() - interval '1 hour'
FROM generate_series(1, :walk_hunts) h, users u WHERE u.name LIKE 'hbw%';

UPDATE hunt_stops s SET found_by = f.n
FROM (SELECT stop_id, count(*) AS n FROM checkins GROUP BY stop_id) f WHERE f.stop_id = s.id;
UPDATE hunts h SET stop_count = (SELECT count(*) FROM hunt_stops s WHERE s.hunt_id = h.id),
                   player_count = (SELECT count(*) FROM hunt_players p WHERE p.hunt_id = h.id)
WHERE h.id LIKE 'hbench%';

INSERT INTO sessions (token_hash, user_id, expires_at)
SELECT sha256(convert_to('hbt_' || :'tag' || '_' || name, 'UTF8')), id, now() + interval '7 days'
FROM users
WHERE name LIKE 'hbw%'
   OR name IN (SELECT 'hbp' || lpad((1 + i * :lb_players / :around)::text, 5, '0') FROM generate_series(0, :around - 1) i);

COMMIT;

VACUUM ANALYZE users;
VACUUM ANALYZE sessions;
VACUUM ANALYZE hunts;
VACUUM ANALYZE hunt_stops;
VACUUM ANALYZE hunt_players;
VACUUM ANALYZE checkins;
