-- The ranked users of the ranking benchmark (scripts/bench.sh, issue 28), written straight into
-- scavengerd's database (migrated, before the daemon starts: it loads the rankings from these
-- totals at start-up).
--
-- psql variables:
--   users   ranked users: 'rk0000001' … (seven digits), each with points
--   around  users given a session, for RANKING AROUND: 'rka0001' …, with totals in the middle of
--           the board
--   tag     a word of [a-z0-9] unique to the run: part of every session token
--
-- The totals are what CHECKIN would have left (user_scores, user_week_scores), drawn from a
-- generator seeded here, so the same --ranking-users gives the same board:
--   points     5 × round(e^(3 + 1.1 z)) with z standard normal, at least 5: a log-normal skew with
--              a median of 100, a few users in the tens of thousands, and many ties (every score a
--              multiple of 5; about 18,000 users share 100 points in a million)
--   found      points ÷ (10 to 40 points a stop), at least 1
--   points_at  when they reached their points, to the microsecond (distinct in practice): this
--              week for a fifth of them (who also have this week's totals), last week for another
--              15 % (last week's totals), earlier in the past year for the rest
--   week       this or last week's points: a share of the all-time points (5 at least), found in
--              proportion; points_at as above
--   hunts      played: 1 + found ÷ (3 to 22); completed: up to half of those
-- The session users ('rka…') get the points at the 40th to 60th percentile of the others, reached
-- before last week (so AROUND reads a page in the middle of the all-time board).
-- A session token is 'rkt_<tag>_<user name>'; only its SHA-256 is stored, as the daemon stores its
-- own.

\set ON_ERROR_STOP 1
SELECT setseed(0.28) \g /dev/null

BEGIN;

CREATE TEMP TABLE rk_draw ON COMMIT DROP AS
SELECT n, 'rk' || lpad(n::text, 7, '0') AS name,
       5 * greatest(1, round(exp(3.0 + 1.1 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))))::int AS points,
       10 + floor(random() * 31)::int AS per_stop,
       random() AS r_at, random() AS r_week, random() AS r_share, random() AS r_hunts, random() AS r_done
FROM generate_series(1, :users) n;

-- Monday 00:00 UTC of this week.
CREATE TEMP TABLE rk_monday ON COMMIT DROP AS
SELECT date_trunc('week', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS monday;

CREATE TEMP TABLE rk ON COMMIT DROP AS
SELECT d.n, d.name, d.points, greatest(1, d.points / d.per_stop) AS found,
       CASE WHEN d.r_share < 0.20 THEN m.monday + d.r_at * (now() - m.monday)
            WHEN d.r_share < 0.35 THEN m.monday - interval '7 days' + d.r_at * interval '7 days'
            ELSE m.monday - interval '7 days' - d.r_at * interval '358 days' END AS points_at,
       d.r_share < 0.35 AS in_week,
       5 * greatest(1, floor(d.points / 5 * d.r_week))::int AS week_points,
       d.per_stop, d.r_hunts, d.r_done
FROM rk_draw d CROSS JOIN rk_monday m;

INSERT INTO rk (n, name, points, found, points_at, in_week, week_points, per_stop, r_hunts, r_done)
SELECT :users + i, 'rka' || lpad(i::text, 4, '0'), q.points, greatest(1, q.points / 25),
       m.monday - interval '8 days' - i * interval '1 hour', false, 0, 25, 0.5, 0.5
FROM generate_series(1, :around) i CROSS JOIN rk_monday m
CROSS JOIN LATERAL (SELECT percentile_disc(0.4 + 0.2 * (i - 1) / greatest(:around - 1, 1)) WITHIN GROUP (ORDER BY points) AS points
                    FROM rk_draw) q;

INSERT INTO users (name, email, password_hash)
SELECT name, name || '@bench.invalid', '$argon2id$placeholder-not-a-real-hash' FROM rk ORDER BY n;

INSERT INTO user_scores (user_id, points, found, points_at, hunts_played, hunts_completed)
SELECT u.id, r.points, r.found, r.points_at, 1 + r.found / (3 + floor(r.r_hunts * 20)::int) AS played,
       floor((1 + r.found / (3 + floor(r.r_hunts * 20)::int)) * r.r_done * 0.5)::int
FROM rk r JOIN users u ON u.name = r.name;

INSERT INTO user_week_scores (week, user_id, points, found, points_at)
SELECT score_week(r.points_at), u.id, r.week_points, least(r.found, greatest(1, r.week_points / r.per_stop)), r.points_at
FROM rk r JOIN users u ON u.name = r.name
WHERE r.in_week;

INSERT INTO sessions (token_hash, user_id, expires_at)
SELECT sha256(convert_to('rkt_' || :'tag' || '_' || name, 'UTF8')), id, now() + interval '7 days'
FROM users WHERE name LIKE 'rka%';

COMMIT;

VACUUM ANALYZE users;
VACUUM ANALYZE sessions;
VACUUM ANALYZE user_scores;
VACUUM ANALYZE user_week_scores;
