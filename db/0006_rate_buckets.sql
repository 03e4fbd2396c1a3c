-- Per-user token buckets for writes (POST, POSTPHOTO, REPLY, REPORT). They live here, not in a
-- daemon's memory, so a user's rate holds however many daemons share the database.
CREATE TABLE rate_buckets (
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    action     text NOT NULL CHECK (action IN ('post', 'photo', 'reply', 'report')),
    tokens     double precision NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, action)
);

-- Takes one token from a user's bucket for an action: the bucket holds at most p_capacity
-- tokens and refills at p_per_second. Returns 0 when a token was taken; otherwise the seconds
-- until one will be there, taking nothing. The row lock makes concurrent takers wait in turn,
-- and each call sees the calls before it, even within one statement.
CREATE FUNCTION take_rate_token(p_user bigint, p_action text, p_capacity double precision, p_per_second double precision)
RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    at_now timestamptz := clock_timestamp();
    available double precision;
BEGIN
    INSERT INTO rate_buckets (user_id, action, tokens, updated_at) VALUES (p_user, p_action, p_capacity, at_now)
    ON CONFLICT (user_id, action) DO NOTHING;
    SELECT least(p_capacity, tokens + greatest(0, extract(epoch FROM at_now - updated_at)) * p_per_second)
      INTO available
      FROM rate_buckets WHERE user_id = p_user AND action = p_action FOR UPDATE;
    IF available >= 1 THEN
        UPDATE rate_buckets SET tokens = available - 1, updated_at = at_now
         WHERE user_id = p_user AND action = p_action;
        RETURN 0;
    END IF;
    RETURN (1 - available) / p_per_second;
END
$$;
