-- A hunt write appends its change-log entries in one statement, its last before COMMIT, so the
-- log's ordering lock (advisory 7468, taken by log_hunt_change) is held only for those rows and
-- the commit, never while the write waits for a row lock: no lock cycle can pass through it.
-- `changes` is a JSON array of {"hunt": text, "kind": text, "payload": jsonb}, appended in array
-- order; answers the last position written (0 for an empty array).
CREATE FUNCTION log_hunt_changes(changes jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    entry jsonb;
    logged bigint := 0;
BEGIN
    FOR entry IN SELECT value FROM jsonb_array_elements(changes) WITH ORDINALITY ORDER BY ordinality LOOP
        logged := log_hunt_change(entry->>'hunt', entry->>'kind', entry->'payload');
    END LOOP;
    RETURN logged;
END
$$;

-- Each wrong code has an id: a guess is counted before the code is checked (under the player's
-- lock, so the limit holds however many arrive at once) and taken back by its id when the code
-- was right.
ALTER TABLE code_guesses ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE code_guesses ADD PRIMARY KEY (id);

-- A hunt removed by moderators has its points taken out of its players' totals once (protocol
-- 1.3); this marks that it was done, so a second removal takes nothing twice.
ALTER TABLE hunts ADD COLUMN points_taken_back boolean NOT NULL DEFAULT false;

-- JOIN and LEAVE draw from a bucket of their own (protocol 1.3: 60 per user per 10 minutes).
ALTER TABLE rate_buckets DROP CONSTRAINT rate_buckets_action_check;
ALTER TABLE rate_buckets ADD CONSTRAINT rate_buckets_action_check CHECK (action IN ('post', 'photo', 'reply', 'report', 'join'));

-- Check-ins refused as too far, per player and stop, for the limit on tries (protocol 1.3: 30 per
-- player and stop per 10 minutes); counted under the player's lock, trimmed by `expire`.
CREATE TABLE checkin_tries (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stop_id text NOT NULL REFERENCES hunt_stops (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX checkin_tries_by_player ON checkin_tries (stop_id, user_id, at);
CREATE INDEX checkin_tries_at ON checkin_tries (at);

-- A flagged check-in keeps what flagged it, for its reviewers: the distance from the player's
-- previous standing fix and the seconds between them.
ALTER TABLE checkins ADD COLUMN travel_from_m double precision;
ALTER TABLE checkins ADD COLUMN travel_seconds double precision;

-- The daemons' shared secrets, made once by the first daemon that needs one. `request_keys`:
-- the HMAC key of REQUEST keys' request digests, used when the operator sets none of their own.
CREATE TABLE daemon_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);
