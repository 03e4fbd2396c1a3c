-- Each user's totals across every hunt, all-time and per ISO week (UTC): kept by the same
-- transactions that accept, approve or reject a check-in and that join or leave a hunt, so they are
-- never recomputed by a scan at read time and never out of step with the check-ins.
CREATE TABLE user_scores (
    user_id         bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    points          integer NOT NULL DEFAULT 0 CHECK (points >= 0),
    -- Stops found: accepted check-ins.
    found           integer NOT NULL DEFAULT 0 CHECK (found >= 0),
    -- When the user reached these points (null at 0): the ranking's tie-break.
    points_at       timestamptz,
    -- Hunts joined and not left; hunts whose every stop the user found.
    hunts_played    integer NOT NULL DEFAULT 0 CHECK (hunts_played >= 0),
    hunts_completed integer NOT NULL DEFAULT 0 CHECK (hunts_completed >= 0)
);

-- A week's totals: points from check-ins accepted in that week (Monday 00:00 UTC on).
CREATE TABLE user_week_scores (
    week      date NOT NULL,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    points    integer NOT NULL DEFAULT 0 CHECK (points >= 0),
    found     integer NOT NULL DEFAULT 0 CHECK (found >= 0),
    points_at timestamptz,
    PRIMARY KEY (week, user_id)
);

-- The Monday (UTC) of the ISO week of a moment.
CREATE FUNCTION score_week(t timestamptz) RETURNS date LANGUAGE sql IMMUTABLE AS $$
    SELECT date_trunc('week', t AT TIME ZONE 'UTC')::date
$$;

-- A check-in accepted at `accepted` earned `earned` points: the user's totals and that week's
-- grow, and the moment they reached them moves to it (when it earned any).
CREATE FUNCTION score_credit(p_user bigint, earned integer, accepted timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO user_scores (user_id) VALUES (p_user) ON CONFLICT (user_id) DO NOTHING;
    -- Columns are qualified: `found` alone would be PL/pgSQL's variable.
    UPDATE user_scores s SET points = s.points + earned, found = s.found + 1,
        points_at = CASE WHEN earned > 0 THEN accepted ELSE s.points_at END
    WHERE s.user_id = p_user;
    INSERT INTO user_week_scores AS w (week, user_id, points, found, points_at)
    VALUES (score_week(accepted), p_user, earned, 1, CASE WHEN earned > 0 THEN accepted END)
    ON CONFLICT (week, user_id) DO UPDATE SET points = w.points + excluded.points, found = w.found + 1,
        points_at = CASE WHEN excluded.points > 0 THEN excluded.points_at ELSE w.points_at END;
END
$$;

-- A check-in accepted at `accepted` with `earned` points no longer counts (rejected, or its player
-- left the hunt; its row already changed or gone): the totals shrink, and the moment is that of
-- the user's latest check-in still counting that earned points (in that week, for the week's).
CREATE FUNCTION score_debit(p_user bigint, earned integer, accepted timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE user_scores s SET points = s.points - earned, found = s.found - 1,
        points_at = (SELECT max(c.accepted_at) FROM checkins c
                     WHERE c.user_id = p_user AND c.status = 'accepted' AND c.points > 0)
    WHERE s.user_id = p_user;
    UPDATE user_week_scores w SET points = w.points - earned, found = w.found - 1,
        points_at = (SELECT max(c.accepted_at) FROM checkins c
                     WHERE c.user_id = p_user AND c.status = 'accepted' AND c.points > 0
                       AND score_week(c.accepted_at) = score_week(accepted))
    WHERE w.user_id = p_user AND w.week = score_week(accepted);
END
$$;

-- Totals for what is already there.
INSERT INTO user_scores (user_id, points, found, points_at, hunts_played, hunts_completed)
SELECT u.id,
       coalesce((SELECT sum(c.points) FROM checkins c WHERE c.user_id = u.id AND c.status = 'accepted'), 0),
       (SELECT count(*) FROM checkins c WHERE c.user_id = u.id AND c.status = 'accepted'),
       (SELECT max(c.accepted_at) FROM checkins c WHERE c.user_id = u.id AND c.status = 'accepted' AND c.points > 0),
       (SELECT count(*) FROM hunt_players p WHERE p.user_id = u.id),
       (SELECT count(*) FROM hunt_players p JOIN hunts h ON h.id = p.hunt_id WHERE p.user_id = u.id AND h.stop_count > 0 AND p.found = h.stop_count)
FROM users u
WHERE EXISTS (SELECT 1 FROM hunt_players p WHERE p.user_id = u.id);

INSERT INTO user_week_scores (week, user_id, points, found, points_at)
SELECT score_week(c.accepted_at), c.user_id, sum(c.points), count(*), max(c.accepted_at) FILTER (WHERE c.points > 0)
FROM checkins c WHERE c.status = 'accepted'
GROUP BY score_week(c.accepted_at), c.user_id;
