-- Every daemon ranks all users in memory (RANKING, PROFILE's rank) and keeps those rankings in
-- step through the hunts' change log: a change of a user's totals is logged ('totals') by the
-- transaction that changes them, with the totals it left (all-time and that week's), so a daemon
-- applies it without reading anything else.
ALTER TABLE hunt_changes DROP CONSTRAINT hunt_changes_kind_check;
ALTER TABLE hunt_changes ADD CONSTRAINT hunt_changes_kind_check
    CHECK (kind IN ('hunt', 'hint', 'found', 'standing', 'left', 'reply', 'totals'));

-- The totals a change left, as score_credit and score_debit answer them: the user's name, the
-- all-time totals and the totals of the week of the check-in (weeks as days since 1970-01-01 of
-- their Monday; times in microseconds since 1970, null at 0 points), the hunts played and
-- completed, and the user's role (what PROFILE shows, so daemons answer it from memory).
CREATE TYPE score_totals AS (
    name           text,
    points         integer,
    found          integer,
    points_at_us   bigint,
    week_day       integer,
    week_points    integer,
    week_found     integer,
    week_at_us     bigint,
    hunts_played   integer,
    hunts_completed integer,
    role           text
);

CREATE FUNCTION score_totals_of(p_user bigint, p_week date) RETURNS score_totals LANGUAGE sql STABLE AS $$
    SELECT u.name, s.points, s.found, (extract(epoch FROM s.points_at) * 1000000)::bigint,
           (p_week - date '1970-01-01'), coalesce(w.points, 0), coalesce(w.found, 0),
           (extract(epoch FROM w.points_at) * 1000000)::bigint, s.hunts_played, s.hunts_completed, u.role
    FROM users u JOIN user_scores s ON s.user_id = u.id
    LEFT JOIN user_week_scores w ON w.user_id = u.id AND w.week = p_week
    WHERE u.id = p_user
$$;

DROP FUNCTION score_credit(bigint, integer, timestamptz);
DROP FUNCTION score_debit(bigint, integer, timestamptz);

-- As 0014's, answering the totals it left.
CREATE FUNCTION score_credit(p_user bigint, earned integer, accepted timestamptz) RETURNS score_totals LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO user_scores (user_id) VALUES (p_user) ON CONFLICT (user_id) DO NOTHING;
    UPDATE user_scores s SET points = s.points + earned, found = s.found + 1,
        points_at = CASE WHEN earned > 0 THEN accepted ELSE s.points_at END
    WHERE s.user_id = p_user;
    INSERT INTO user_week_scores AS w (week, user_id, points, found, points_at)
    VALUES (score_week(accepted), p_user, earned, 1, CASE WHEN earned > 0 THEN accepted END)
    ON CONFLICT (week, user_id) DO UPDATE SET points = w.points + excluded.points, found = w.found + 1,
        points_at = CASE WHEN excluded.points > 0 THEN excluded.points_at ELSE w.points_at END;
    RETURN score_totals_of(p_user, score_week(accepted));
END
$$;

-- As 0014's, answering the totals it left.
CREATE FUNCTION score_debit(p_user bigint, earned integer, accepted timestamptz) RETURNS score_totals LANGUAGE plpgsql AS $$
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
    RETURN score_totals_of(p_user, score_week(accepted));
END
$$;

