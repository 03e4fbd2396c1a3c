-- Time trials (protocol 1.4, issue 43): a trial hunt's leaderboard orders by stops found, then by
-- the time from each player's first live check-in (accepted, pending or flagged) to their last
-- accepted one, then name. Every daemon loads a hunt's board from this snapshot, taken under the
-- change log's lock as hunt_players_snapshot is (so the board is exactly the log through
-- `through`), with the hunt's trial seconds and, in a trial, each player's two times.
CREATE FUNCTION hunt_board_snapshot(p_hunt text)
RETURNS TABLE (through bigint, hunt_host_id bigint, hunt_public boolean, hunt_removed boolean, hunt_trial_s integer,
    user_id bigint, name text, points integer, found integer, at_us bigint, trial_first_us bigint, trial_last_us bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    RETURN QUERY
        SELECT t.through, h.host_id, h.public, h.removed, h.trial_s,
            p.user_id, p.name, p.points, p.found, (extract(epoch FROM p.points_at) * 1000000)::bigint,
            (extract(epoch FROM tt.first_at) * 1000000)::bigint, (extract(epoch FROM tt.last_at) * 1000000)::bigint
        FROM (SELECT coalesce(max(c.seq), 0) AS through FROM hunt_changes c) t
        LEFT JOIN hunts h ON h.id = p_hunt
        LEFT JOIN hunt_players p ON p.hunt_id = p_hunt
        LEFT JOIN (
            SELECT c.user_id, min(c.created_at) AS first_at, max(c.created_at) FILTER (WHERE c.status = 'accepted') AS last_at
            FROM checkins c JOIN hunts th ON th.id = c.hunt_id AND th.trial_s IS NOT NULL
            WHERE c.hunt_id = p_hunt AND c.status <> 'rejected'
            GROUP BY c.user_id
        ) tt ON tt.user_id = p.user_id;
END
$$;
