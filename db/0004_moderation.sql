-- Reports and moderation.

-- A ban ends by itself at banned_until ('infinity' for a permanent ban).
ALTER TABLE users ADD COLUMN banned_until timestamptz;

-- Content hidden by reports until a moderator decides; hidden content is in no feed.
ALTER TABLE pins ADD COLUMN hidden boolean NOT NULL DEFAULT false;
ALTER TABLE replies ADD COLUMN hidden boolean NOT NULL DEFAULT false;

-- One queue item per reported pin or reply. The snapshot (taken at the first report) is the
-- evidence: it survives removal, deletion by the author and expiry, so it references nothing.
CREATE TABLE moderation_items (
    item             text PRIMARY KEY,
    kind             text NOT NULL CHECK (kind IN ('pin', 'reply')),
    author_id        bigint REFERENCES users (id),
    snap_author      text NOT NULL,
    snap_text        text NOT NULL,
    snap_pin         text,
    snap_lat         double precision NOT NULL,
    snap_lon         double precision NOT NULL,
    snap_pin_kind    text,
    snap_created     timestamptz NOT NULL,
    snap_expires     timestamptz,
    snap_photo_mime  text,
    snap_photo_bytes integer,
    -- A copy of the photo, kept while the item is open, dropped when it is resolved.
    photo            bytea,
    status           text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'claimed', 'resolved')),
    claimed_by       bigint REFERENCES users (id),
    claim_expires    timestamptz,
    hidden           boolean NOT NULL DEFAULT false,
    -- Once a moderator dismissed it, new reports queue it again but never hide it again.
    dismissed        boolean NOT NULL DEFAULT false,
    reports          integer NOT NULL DEFAULT 0,
    first_reported   timestamptz NOT NULL DEFAULT now(),
    last_reported    timestamptz NOT NULL DEFAULT now(),
    resolution       text CHECK (resolution IN ('dismiss', 'remove', 'ban')),
    resolved_by      bigint REFERENCES users (id),
    resolved_at      timestamptz,
    CHECK ((status = 'claimed') = (claimed_by IS NOT NULL AND claim_expires IS NOT NULL))
);
CREATE INDEX moderation_queue ON moderation_items (status, reports DESC, first_reported, item);

CREATE TABLE reports (
    id          text PRIMARY KEY,
    item        text NOT NULL REFERENCES moderation_items (item),
    reporter_id bigint NOT NULL REFERENCES users (id),
    reason      text NOT NULL CHECK (reason IN ('spam', 'harassment', 'hate', 'sexual', 'violence', 'illegal', 'other')),
    note        text CHECK (char_length(note) <= 500),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- One report per reporter per item.
    CONSTRAINT reports_one_per_reporter UNIQUE (item, reporter_id)
);
CREATE INDEX reports_by_reporter ON reports (reporter_id, created_at);

-- Every moderator action. Append-only: updates, deletes and truncation are refused.
CREATE TABLE moderation_log (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    moderator_id bigint NOT NULL REFERENCES users (id),
    action       text NOT NULL CHECK (action IN ('claim', 'dismiss', 'remove', 'ban', 'unban')),
    item         text,
    user_id      bigint REFERENCES users (id),
    note         text
);

CREATE FUNCTION moderation_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'moderation_log is append-only';
END
$$;
CREATE TRIGGER moderation_log_no_update BEFORE UPDATE OR DELETE ON moderation_log
    FOR EACH ROW EXECUTE FUNCTION moderation_log_is_append_only();
CREATE TRIGGER moderation_log_no_truncate BEFORE TRUNCATE ON moderation_log
    FOR EACH STATEMENT EXECUTE FUNCTION moderation_log_is_append_only();
