-- LEAVE (and a hunt's removal) takes a player's points back in one statement, not one
-- score_debit per accepted check-in (issue 38: in a crowd's mixed run, LEAVE's per-check-in
-- debits were a tenth of PostgreSQL's time). As score_debit, for many check-ins at once: the
-- all-time totals lose their points and count, and each week's its own; the tie-break times are
-- those of the check-ins that remain (the taken ones are already deleted or rejected).
CREATE FUNCTION score_debit_all(p_user bigint, earned integer[], accepted timestamptz[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(array_length(earned, 1), 0) = 0 THEN
        RETURN;
    END IF;
    UPDATE user_scores s SET points = s.points - (SELECT sum(e) FROM unnest(earned) AS e),
        found = s.found - array_length(earned, 1),
        points_at = (SELECT max(c.accepted_at) FROM checkins c
                     WHERE c.user_id = p_user AND c.status = 'accepted' AND c.points > 0)
    WHERE s.user_id = p_user;
    UPDATE user_week_scores w SET points = w.points - taken.points, found = w.found - taken.found,
        points_at = (SELECT max(c.accepted_at) FROM checkins c
                     WHERE c.user_id = p_user AND c.status = 'accepted' AND c.points > 0
                       AND score_week(c.accepted_at) = w.week)
    FROM (SELECT score_week(a) AS week, sum(e) AS points, count(*) AS found
          FROM unnest(earned, accepted) AS t(e, a) GROUP BY score_week(a)) AS taken
    WHERE w.user_id = p_user AND w.week = taken.week;
END
$$;
