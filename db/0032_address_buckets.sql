-- Token buckets per client address (issue 52): REGISTER and FORGOT draw from one bucket per
-- address, kept here rather than in each daemon's memory, so the address limit holds however many
-- daemons share the database. `expire` sweeps buckets untouched for a week (full again by then at
-- any rate that refills within a week; a swept one starts full, as a new one does).
CREATE TABLE address_buckets (
    address    text NOT NULL,
    action     text NOT NULL CHECK (action IN ('accounts')),
    tokens     double precision NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (address, action)
);
CREATE INDEX address_buckets_updated ON address_buckets (updated_at);

-- take_rate_token's rule for an address: 0 when a token was taken, else the seconds until one
-- will be there (taking nothing). The row lock makes concurrent takers wait in turn.
CREATE FUNCTION take_address_token(p_address text, p_action text, p_capacity double precision, p_per_second double precision)
RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    at_now timestamptz := clock_timestamp();
    available double precision;
BEGIN
    INSERT INTO address_buckets (address, action, tokens, updated_at) VALUES (p_address, p_action, p_capacity, at_now)
    ON CONFLICT (address, action) DO NOTHING;
    SELECT least(p_capacity, tokens + greatest(0, extract(epoch FROM at_now - updated_at)) * p_per_second)
      INTO available
      FROM address_buckets WHERE address = p_address AND action = p_action FOR UPDATE;
    IF available >= 1 THEN
        UPDATE address_buckets SET tokens = available - 1, updated_at = at_now
         WHERE address = p_address AND action = p_action;
        RETURN 0;
    END IF;
    RETURN (1 - available) / p_per_second;
END
$$;
