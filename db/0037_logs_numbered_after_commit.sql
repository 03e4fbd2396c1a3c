-- Writes commit in parallel: the change logs are numbered after their writers commit (issue 54).
--
-- Until now every pin write in the database took the feed log's advisory lock (7467) from its
-- log row to its commit, and every hunt write 7468 (shared, with readers taking it exclusively),
-- and pin writes notified in their own transaction. PostgreSQL releases a transaction's locks
-- only after its commit has been flushed and, with a synchronous standby, confirmed by it; so
-- every write in the cluster waited in one line through the commits ahead of it, and a standby
-- 2 ms away capped the cluster at a few hundred writes a second.
--
-- Now a writer only inserts its log rows, unnumbered (`seq` null), and commits beside the others
-- (PostgreSQL's group commit shares their flushes and standby waits). A position is handed out
-- later, by a *numbering*: one short transaction that takes the log's lock, gives every
-- unnumbered row it can see the next positions, in the order of the rows' ids, and commits.
-- Every daemon numbers before it reads the log (its catch-up after its own write, the listener's
-- wake-up, and the listener's poll while idle), and a numbering that gave out positions wakes
-- the other daemons (NOTIFY, from its own transaction only).
--
-- Why no reader sees position n+1 before n, or skips one:
-- * positions are given out only under the log's lock, which a numbering holds until its commit
--   is visible (PostgreSQL ends a transaction's visibility before it releases its locks): the
--   next numbering starts after the last is visible, and each reads the log's last position
--   under the lock (max(seq)), so positions grow with numbering order;
-- * a numbering's rows become visible at once, all together (one commit). So any snapshot sees
--   the positions of a prefix of the numberings: every position up to the highest it sees.
--   A reader needs no lock at all, and a row numbered after a reader read past n is numbered
--   past the highest position then given out.
-- * every row is numbered exactly once: only numberings update `seq`, one at a time, and only
--   rows whose `seq` is null (a writer's row is visible to a numbering only once committed, so
--   a numbering never waits on a writer and never sees a row that might still roll back).
-- Why each row's, pin's, hunt's and user's changes are applied in commit order: two writes of
-- one row take its row lock; the second inserts its log rows after it got the lock, so after the
-- first committed; its rows therefore have higher ids, and are visible to a numbering only when
-- the first's are too (the first committed earlier). In one numbering rows go in id order, and
-- a later numbering only numbers rows after an earlier one's. Writes of disjoint rows commute
-- (the daemons' views depend on no order between them), as they did for hunts since 0020.
-- Hunt writes already take a player's lock (7470) and the hunt's row before their log rows.
--
-- A numbering's commit waits for the synchronous standby like any write (it is one), so a
-- position a daemon has read is on the standby: a failover to it rewrites nothing. The epochs of
-- 0033 (positions never given out twice across a failover) now apply at numbering; the hunts'
-- log gets the same epochs.

-- The feed log: ids in insert order, positions given later.
DROP TRIGGER pins_lock_feed_changes ON pins;
DROP TRIGGER regions_lock_feed_changes ON regions;
DROP FUNCTION lock_feed_changes();

ALTER TABLE feed_changes ALTER COLUMN seq DROP IDENTITY;
ALTER TABLE feed_changes DROP CONSTRAINT feed_changes_pkey;
ALTER TABLE feed_changes ALTER COLUMN seq DROP NOT NULL;
ALTER TABLE feed_changes ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE feed_changes ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX feed_changes_seq ON feed_changes (seq);
CREATE INDEX feed_changes_unnumbered ON feed_changes (id) WHERE seq IS NULL;

ALTER TABLE hunt_changes ALTER COLUMN seq DROP IDENTITY;
ALTER TABLE hunt_changes DROP CONSTRAINT hunt_changes_pkey;
ALTER TABLE hunt_changes ALTER COLUMN seq DROP NOT NULL;
ALTER TABLE hunt_changes ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE hunt_changes ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX hunt_changes_seq ON hunt_changes (seq);
CREATE INDEX hunt_changes_unnumbered ON hunt_changes (id) WHERE seq IS NULL;

-- Writers: rows only. No lock, no NOTIFY.
CREATE OR REPLACE FUNCTION log_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'pins' THEN
        IF TG_OP = 'DELETE' THEN
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind)
                SELECT 'pin', id, lat, lon, kind FROM old_rows ORDER BY id;
        ELSE
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind)
                SELECT 'pin', id, lat, lon, kind FROM new_rows ORDER BY id;
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO feed_changes (kind, subject) SELECT 'region', name FROM old_rows ORDER BY name;
    ELSE
        INSERT INTO feed_changes (kind, subject) SELECT 'region', name FROM new_rows ORDER BY name;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION log_hunt_changes(changes jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    IF jsonb_array_length(changes) = 0 THEN
        RETURN 0;
    END IF;
    INSERT INTO hunt_changes (hunt_id, kind, payload)
    SELECT entry.value->>'hunt', entry.value->>'kind', entry.value->'payload'
    FROM jsonb_array_elements(changes) WITH ORDINALITY AS entry
    ORDER BY entry.ordinality;
    GET DIAGNOSTICS logged = ROW_COUNT;
    RETURN logged;
END
$$;

-- The position before the next numbering's first, under the log's lock: the log's last, or when
-- this server writes in an epoch the log has not entered yet, the position before that epoch's
-- block (recorded now: see 0033).
DROP FUNCTION feed_changes_enter_epoch();
CREATE FUNCTION feed_changes_base() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    now_epoch record;
    latest bigint := (SELECT coalesce(max(seq), 0) FROM feed_changes);
    first_pos bigint;
BEGIN
    SELECT * INTO now_epoch FROM log_epoch_now();
    SELECT e.first_seq INTO first_pos FROM feed_changes_epochs e
    WHERE e.system_identifier = now_epoch.system_identifier AND e.timeline = now_epoch.timeline;
    IF NOT FOUND THEN
        first_pos := greatest(now_epoch.timeline, latest / 1099511627776 + 1) * 1099511627776;
        INSERT INTO feed_changes_epochs (system_identifier, timeline, previous_end, first_seq)
        VALUES (now_epoch.system_identifier, now_epoch.timeline, latest, first_pos);
    END IF;
    RETURN greatest(latest, first_pos - 1);
END
$$;

CREATE TABLE hunt_changes_epochs (LIKE feed_changes_epochs INCLUDING ALL);
INSERT INTO hunt_changes_epochs (system_identifier, timeline, previous_end, first_seq)
SELECT e.system_identifier, e.timeline, m.latest, m.latest + 1
FROM log_epoch_now() e, (SELECT coalesce(max(seq), 0) AS latest FROM hunt_changes) m;

CREATE FUNCTION hunt_changes_base() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    now_epoch record;
    latest bigint := (SELECT coalesce(max(seq), 0) FROM hunt_changes);
    first_pos bigint;
BEGIN
    SELECT * INTO now_epoch FROM log_epoch_now();
    SELECT e.first_seq INTO first_pos FROM hunt_changes_epochs e
    WHERE e.system_identifier = now_epoch.system_identifier AND e.timeline = now_epoch.timeline;
    IF NOT FOUND THEN
        first_pos := greatest(now_epoch.timeline, latest / 1099511627776 + 1) * 1099511627776;
        INSERT INTO hunt_changes_epochs (system_identifier, timeline, previous_end, first_seq)
        VALUES (now_epoch.system_identifier, now_epoch.timeline, latest, first_pos);
    END IF;
    RETURN greatest(latest, first_pos - 1);
END
$$;

-- Numbers every unnumbered row of the feed log this transaction can see, in id order, after the
-- log's last position; wakes the daemons (payload: `writer`, the numbering daemon) when it gave
-- any out. Answers how many. Nothing unnumbered: no lock, no write (its commit waits for nothing).
CREATE FUNCTION feed_changes_number(writer text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    base bigint;
    numbered bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM feed_changes WHERE seq IS NULL) THEN
        RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock(7467, hashtext(current_schema()));
    -- A new statement, so a new snapshot: the numbering before this one is visible.
    IF NOT EXISTS (SELECT 1 FROM feed_changes WHERE seq IS NULL) THEN
        RETURN 0;
    END IF;
    base := feed_changes_base();
    UPDATE feed_changes f SET seq = d.pos
    FROM (SELECT c.id, base + row_number() OVER (ORDER BY c.id) AS pos FROM feed_changes c WHERE c.seq IS NULL) d
    WHERE f.id = d.id;
    GET DIAGNOSTICS numbered = ROW_COUNT;
    IF numbered > 0 THEN
        PERFORM pg_notify('scavenger_feed', coalesce(writer, ''));
    END IF;
    RETURN numbered;
END
$$;

CREATE FUNCTION hunt_changes_number(writer text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    base bigint;
    numbered bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM hunt_changes WHERE seq IS NULL) THEN
        RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    IF NOT EXISTS (SELECT 1 FROM hunt_changes WHERE seq IS NULL) THEN
        RETURN 0;
    END IF;
    base := hunt_changes_base();
    UPDATE hunt_changes h SET seq = d.pos
    FROM (SELECT c.id, base + row_number() OVER (ORDER BY c.id) AS pos FROM hunt_changes c WHERE c.seq IS NULL) d
    WHERE h.id = d.id;
    GET DIAGNOSTICS numbered = ROW_COUNT;
    IF numbered > 0 THEN
        PERFORM pg_notify('scavenger_hunts', coalesce(writer, ''));
    END IF;
    RETURN numbered;
END
$$;

-- Readers: number first, then read (a new snapshot: the numbering's rows included). The rows
-- reach the daemon only once this statement's transaction has committed.
DROP FUNCTION hunt_changes_after(bigint, integer);
CREATE FUNCTION hunt_changes_after(after bigint, lim integer, writer text)
RETURNS TABLE (seq bigint, hunt_id text, kind text, payload text, stamp bigint, trimmed_through bigint, place_stamp bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hunt_changes_number(writer);
    RETURN QUERY
        SELECT c.seq, c.hunt_id, c.kind, c.payload::text, c.stamp, m.through, m.place
        FROM (SELECT (SELECT t.through FROM hunt_changes_trimmed t) AS through,
                     (SELECT p.stamp FROM hunt_changes p WHERE p.seq = after) AS place) m
        LEFT JOIN LATERAL (
            SELECT h.seq, h.hunt_id, h.kind, h.payload, h.stamp FROM hunt_changes h WHERE h.seq > after ORDER BY h.seq LIMIT lim
        ) c ON true
        ORDER BY c.seq;
END
$$;

-- The log's last position and its row's stamp: every position below it is numbered and
-- visible. (Rows committed and not yet numbered come after it.)
CREATE OR REPLACE FUNCTION hunt_changes_end() RETURNS TABLE (seq bigint, stamp bigint) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
        SELECT coalesce(max(c.seq), 0), coalesce((SELECT l.stamp FROM hunt_changes l WHERE l.seq IS NOT NULL ORDER BY l.seq DESC LIMIT 1), 0)
        FROM hunt_changes c;
END
$$;

-- A hunt's board and the log's position it is exact at. The board must hold exactly the writes
-- whose rows are numbered up to `through`: so under the lock, in one statement (one snapshot),
-- the rows that snapshot sees unnumbered are numbered and the board is read. Wakes the daemons
-- when it numbered any. (hunt_players_snapshot is no longer read: dropped.)
DROP FUNCTION IF EXISTS hunt_players_snapshot(text);
CREATE OR REPLACE FUNCTION hunt_board_snapshot(p_hunt text)
RETURNS TABLE (through bigint, hunt_host_id bigint, hunt_public boolean, hunt_removed boolean, hunt_trial_s integer,
    user_id bigint, name text, points integer, found integer, at_us bigint, trial_first_us bigint, trial_last_us bigint)
LANGUAGE plpgsql AS $$
DECLARE
    base bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    base := hunt_changes_base();
    RETURN QUERY
        WITH numbered AS (
            UPDATE hunt_changes h SET seq = d.pos
            FROM (SELECT c.id, base + row_number() OVER (ORDER BY c.id) AS pos FROM hunt_changes c WHERE c.seq IS NULL) d
            WHERE h.id = d.id
            RETURNING h.seq
        ), t AS (
            SELECT greatest(base, coalesce(max(n.seq), 0)) AS through,
                   CASE WHEN count(*) > 0 THEN pg_notify('scavenger_hunts', '') END AS woke
            FROM numbered n
        )
        SELECT t.through, h.host_id, h.public, h.removed, h.trial_s,
            p.user_id, p.name, p.points, p.found, (extract(epoch FROM p.points_at) * 1000000)::bigint,
            (extract(epoch FROM tt.first_at) * 1000000)::bigint, (extract(epoch FROM tt.last_at) * 1000000)::bigint
        FROM t
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

CREATE OR REPLACE FUNCTION hunt_team_board_snapshot(p_hunt text)
RETURNS TABLE (through bigint, hunt_host_id bigint, hunt_public boolean, hunt_removed boolean, hunt_trial_s integer,
    hunt_team_size integer, team_name text, points integer, found integer, at_us bigint, trial_first_us bigint,
    trial_last_us bigint, user_id bigint, name text)
LANGUAGE plpgsql AS $$
DECLARE
    base bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM hunts h WHERE h.id = p_hunt AND h.team_size IS NOT NULL) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7468, hashtext(current_schema()));
    base := hunt_changes_base();
    RETURN QUERY
        WITH numbered AS (
            UPDATE hunt_changes h SET seq = d.pos
            FROM (SELECT c.id, base + row_number() OVER (ORDER BY c.id) AS pos FROM hunt_changes c WHERE c.seq IS NULL) d
            WHERE h.id = d.id
            RETURNING h.seq
        ), l AS (
            SELECT greatest(base, coalesce(max(n.seq), 0)) AS through,
                   CASE WHEN count(*) > 0 THEN pg_notify('scavenger_hunts', '') END AS woke
            FROM numbered n
        )
        SELECT l.through, h.host_id, h.public, h.removed, h.trial_s, h.team_size,
            t.name, t.points, t.found, (extract(epoch FROM t.points_at) * 1000000)::bigint,
            CASE WHEN h.trial_s IS NOT NULL THEN (extract(epoch FROM t.trial_started_at) * 1000000)::bigint END,
            (extract(epoch FROM tt.last_at) * 1000000)::bigint,
            p.user_id, p.name
        FROM l
        LEFT JOIN hunts h ON h.id = p_hunt
        LEFT JOIN hunt_teams t ON t.hunt_id = p_hunt AND h.team_size IS NOT NULL
        LEFT JOIN hunt_players p ON p.team_id = t.id
        LEFT JOIN (
            SELECT c.team_id, max(c.created_at) AS last_at
            FROM checkins c WHERE c.hunt_id = p_hunt AND c.team_id IS NOT NULL AND c.status = 'accepted'
            GROUP BY c.team_id
        ) tt ON tt.team_id = t.id
        ORDER BY t.id, p.name;
END
$$;
