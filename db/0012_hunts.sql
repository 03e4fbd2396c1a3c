-- Hunts: a host's game of stops, its players, their check-ins and the host's hints.
-- Ids are opaque random strings made by the daemon: 'h…' hunts, 's…' stops, 'c…' check-ins.
--
-- A hunt's state is not stored: it follows from starts_at, ends_at, duration_s and the clock
-- (scheduled before starts_at, running from it, ended from its end), so every daemon agrees and
-- a hunt whose time comes starts or ends without a write. duration_s is a DURATION waiting for
-- the start: STARTHUNT turns it into ends_at; a STARTS time reached by the clock leaves it here,
-- and readers take starts_at + duration_s as the end.
CREATE TABLE hunts (
    id           text PRIMARY KEY CHECK (id ~ '^h[a-z2-7]{24}$'),
    host_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
    description  text NOT NULL DEFAULT '' CHECK (char_length(description) <= 2000),
    -- The join code, upper case; unique among hunts that have not ended (CREATEHUNT checks it
    -- under an advisory lock on the code, since "not ended" moves with the clock).
    code         text NOT NULL CHECK (code ~ '^[2-9A-HJ-NP-Z]{6}$'),
    ordered      boolean NOT NULL DEFAULT false,
    public       boolean NOT NULL DEFAULT false,
    starts_at    timestamptz,
    ends_at      timestamptz,
    duration_s   integer CHECK (duration_s BETWEEN 1 AND 2592000),
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    stop_count   integer NOT NULL DEFAULT 0 CHECK (stop_count >= 0),
    player_count integer NOT NULL DEFAULT 0 CHECK (player_count >= 0),
    CHECK (ends_at IS NULL OR duration_s IS NULL)
);
CREATE INDEX hunts_code ON hunts (code);
CREATE INDEX hunts_host ON hunts (host_id, created_at DESC);
CREATE INDEX hunts_public ON hunts (starts_at) WHERE public;

CREATE TABLE hunt_stops (
    id        text PRIMARY KEY CHECK (id ~ '^s[a-z2-7]{24}$'),
    hunt_id   text NOT NULL REFERENCES hunts (id) ON DELETE CASCADE,
    -- Its place in the hunt, 1, 2, …; REMOVESTOP moves later stops up, so the rule is checked at
    -- the end of the transaction.
    n         integer NOT NULL CHECK (n >= 1),
    title     text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 80),
    clue      text NOT NULL DEFAULT '' CHECK (char_length(clue) <= 500),
    lat       double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon       double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
    radius_m  double precision NOT NULL CHECK (radius_m BETWEEN 5 AND 1000),
    points    integer NOT NULL CHECK (points BETWEEN 0 AND 10000),
    proof     text NOT NULL CHECK (proof IN ('place', 'code', 'photo')),
    -- A code stop's secret, only as a salted memory-hard hash (libsodium's argon2id string).
    code_hash text,
    hidden    boolean NOT NULL DEFAULT false,
    found_by  integer NOT NULL DEFAULT 0 CHECK (found_by >= 0),
    CHECK ((proof = 'code') = (code_hash IS NOT NULL)),
    CONSTRAINT hunt_stops_place UNIQUE (hunt_id, n) DEFERRABLE INITIALLY DEFERRED
);

-- A player of a hunt and their standing, kept by the same transactions that change check-ins.
CREATE TABLE hunt_players (
    hunt_id   text NOT NULL REFERENCES hunts (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The name in this hunt: the username, or JOIN's AS name.
    name      text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{3,32}$'),
    points    integer NOT NULL DEFAULT 0 CHECK (points >= 0),
    found     integer NOT NULL DEFAULT 0 CHECK (found >= 0),
    -- When the player reached these points (null at 0): the leaderboard's tie-break.
    points_at timestamptz,
    joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (hunt_id, user_id)
);
CREATE UNIQUE INDEX hunt_players_name ON hunt_players (hunt_id, lower(name));
CREATE INDEX hunt_players_user ON hunt_players (user_id);

CREATE TABLE checkins (
    id          text PRIMARY KEY CHECK (id ~ '^c[a-z2-7]{24}$'),
    hunt_id     text NOT NULL REFERENCES hunts (id) ON DELETE CASCADE,
    stop_id     text NOT NULL REFERENCES hunt_stops (id) ON DELETE CASCADE,
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    status      text NOT NULL CHECK (status IN ('accepted', 'pending', 'flagged', 'rejected')),
    -- What it earns: the stop's points plus a bonus once accepted, else 0.
    points      integer NOT NULL DEFAULT 0 CHECK (points >= 0),
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    accepted_at timestamptz,
    lat         double precision NOT NULL,
    lon         double precision NOT NULL,
    accuracy_m  double precision NOT NULL DEFAULT 0,
    distance_m  double precision NOT NULL,
    photo_mime  text,
    photo_bytes integer,
    reviewed_by bigint REFERENCES users (id),
    review_note text CHECK (char_length(review_note) <= 500),
    CHECK ((status = 'accepted') = (accepted_at IS NOT NULL)),
    CHECK ((photo_mime IS NULL) = (photo_bytes IS NULL))
);
-- One live check-in per player and stop: a second is a CONFLICT, even when two race.
CREATE UNIQUE INDEX checkins_one_live ON checkins (stop_id, user_id) WHERE status <> 'rejected';
CREATE INDEX checkins_review ON checkins (hunt_id, created_at, id) WHERE status IN ('pending', 'flagged');
CREATE INDEX checkins_player ON checkins (user_id, created_at DESC);
CREATE INDEX checkins_hunt_player ON checkins (hunt_id, user_id);

CREATE TABLE checkin_photos (
    checkin_id text PRIMARY KEY REFERENCES checkins (id) ON DELETE CASCADE,
    data       bytea NOT NULL
);

-- Wrong codes entered at a code stop, for the lockout; old ones are trimmed by `expire`.
CREATE TABLE code_guesses (
    stop_id text NOT NULL REFERENCES hunt_stops (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX code_guesses_by_player ON code_guesses (stop_id, user_id, at);

CREATE TABLE hunt_hints (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hunt_id text NOT NULL REFERENCES hunts (id) ON DELETE CASCADE,
    body    text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 500),
    at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX hunt_hints_hunt ON hunt_hints (hunt_id, at, id);

-- The hunts' change log: what every daemon's live hunts (leaderboards in memory, WATCH HUNT)
-- apply in order. Written by the same transaction as the change; numbered in commit order
-- because every writer takes the advisory lock below just before its first row here and holds
-- it to its commit (the lock of feed_changes, for hunts). NOTIFY 'scavenger_hunts' only wakes.
CREATE TABLE hunt_changes (
    seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    hunt_id text NOT NULL,
    kind    text NOT NULL CHECK (kind IN ('hunt', 'hint', 'found', 'standing', 'left', 'reply')),
    -- The change's facts (see the store's HuntChange).
    payload jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX hunt_changes_at ON hunt_changes (at);

-- Logs one change and answers its number.
CREATE FUNCTION log_hunt_change(hunt text, change_kind text, facts jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    INSERT INTO hunt_changes (hunt_id, kind, payload) VALUES (hunt, change_kind, facts) RETURNING seq INTO logged;
    PERFORM pg_notify('scavenger_hunts', '');
    RETURN logged;
END
$$;

-- A moderator's reviews of check-ins and ENDHUNT of someone else's hunt are logged like the rest.
ALTER TABLE moderation_log DROP CONSTRAINT moderation_log_action_check;
ALTER TABLE moderation_log ADD CONSTRAINT moderation_log_action_check
    CHECK (action IN ('claim', 'release', 'dismiss', 'remove', 'ban', 'unban', 'delete', 'approve', 'reject', 'endhunt'));
