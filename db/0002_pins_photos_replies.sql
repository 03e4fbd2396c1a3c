-- Pins, their photos and the chat under them.
-- Ids are opaque random strings made by the daemon: 'p…' for pins, 'r…' for replies.
CREATE TABLE pins (
    id          text PRIMARY KEY CHECK (id ~ '^p[a-z2-7]{24}$'),
    author_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    lat         double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon         double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
    kind        text NOT NULL CHECK (kind IN ('text', 'photo')),
    body        text NOT NULL CHECK (char_length(body) <= 500),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    -- Photo facts live on the row so feeds never touch the bytes.
    photo_mime  text,
    photo_bytes integer,
    reply_count integer NOT NULL DEFAULT 0 CHECK (reply_count >= 0),
    CHECK ((kind = 'photo') = (photo_mime IS NOT NULL AND photo_bytes IS NOT NULL)),
    CHECK (expires_at > created_at)
);
CREATE INDEX pins_author ON pins (author_id);
CREATE INDEX pins_expires ON pins (expires_at);

-- Photo bytes, stored once, apart from the pin row.
CREATE TABLE photos (
    pin_id text PRIMARY KEY REFERENCES pins (id) ON DELETE CASCADE,
    data   bytea NOT NULL
);

CREATE TABLE replies (
    id         text PRIMARY KEY CHECK (id ~ '^r[a-z2-7]{24}$'),
    pin_id     text NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    author_id  bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    body       text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 500),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- REPLIES pages oldest first with a keyset cursor on (created_at, id).
CREATE INDEX replies_pin_order ON replies (pin_id, created_at, id);
CREATE INDEX replies_author ON replies (author_id);
