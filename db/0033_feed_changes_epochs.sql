-- Positions of a history the database lost in a failover, known to every daemon (issue 52).
--
-- After an asynchronous standby is promoted, the last changes of the old primary's log are lost,
-- and before this migration the new primary handed their positions out again to other changes:
-- a `WATCH … SINCE s` naming one of them could not be told from a place in the new log, except by
-- a daemon that had applied the lost rows itself (and remembered them in memory only).
--
-- Now the log is written in epochs, one per (system identifier, WAL timeline) it was written on:
-- a promotion starts a new timeline, and a restore into another cluster a new system. The first
-- change written in an epoch (under the log's lock, in log_feed_changes) records the epoch and
-- moves the log's numbering on to the start of a block of its own:
--     first_seq = max(timeline, previous_end / 2^40 + 1) * 2^40
-- where previous_end is the log's last position then. So positions are never handed out twice:
-- the history lost with the old primary numbered its changes after previous_end (what reached the
-- standby ends there, every position below it committed in order) and below the next block, and
-- the new epoch begins past that. A position between an epoch's previous_end and its first_seq
-- (exclusive) is therefore in no history this database has: it belongs to a lost one, and a SINCE
-- from there answers `resumed: false` (feed_position_lost). Until the new epoch's first change,
-- every position past the log's end is such a position. Exact as long as (1) a timeline hands out
-- fewer than 2^40 positions, and (2) timeline ids are not used twice in one system: PostgreSQL
-- assumes it too (a promoted standby takes the next id after every history file it can see, so
-- two standbys promoted from one primary need a shared WAL archive to tell them apart).
--
-- The timeline is the one new WAL is written on: pg_walfile_name() names a WAL file by
-- GetWALInsertionTimeLine() (PostgreSQL 15, src/backend/access/transam/xlogfuncs.c), which a
-- promotion sets before the first write is allowed. pg_control_checkpoint().timeline_id would
-- lag: since 9.3 a promotion writes only an end-of-recovery record and leaves the checkpoint that
-- records the new timeline in pg_control for later. pg_control_system() reads pg_control from
-- disk (about 35 µs), so the system identifier, fixed for the server's life, is kept per session.

-- The epoch this server writes in (on a primary: pg_walfile_name fails during recovery).
CREATE FUNCTION log_epoch_now(OUT system_identifier bigint, OUT timeline bigint) LANGUAGE plpgsql AS $$
DECLARE
    known text := current_setting('scavenger.system_identifier', true);
BEGIN
    IF coalesce(known, '') = '' THEN
        SELECT c.system_identifier INTO system_identifier FROM pg_control_system() c;
        PERFORM set_config('scavenger.system_identifier', system_identifier::text, false);
    ELSE
        system_identifier := known::bigint;
    END IF;
    timeline := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint;
END
$$;

CREATE TABLE feed_changes_epochs (
    system_identifier bigint NOT NULL,
    timeline          bigint NOT NULL,
    -- The log's last position when the epoch's first change was written.
    previous_end      bigint NOT NULL,
    -- The first position the epoch hands out.
    first_seq         bigint NOT NULL,
    PRIMARY KEY (system_identifier, timeline)
);

-- The epoch the log is in now, with no positions left out (its past was written here).
INSERT INTO feed_changes_epochs (system_identifier, timeline, previous_end, first_seq)
SELECT e.system_identifier, e.timeline, m.latest, m.latest + 1
FROM log_epoch_now() e, (SELECT coalesce(max(seq), 0) AS latest FROM feed_changes) m;

-- Records the epoch the server writes in when it is new, and moves the log's numbering to its
-- block. Called under the log's lock, before a change is logged.
CREATE FUNCTION feed_changes_enter_epoch() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    now_epoch record;
    latest bigint;
    first_pos bigint;
BEGIN
    SELECT * INTO now_epoch FROM log_epoch_now();
    IF EXISTS (SELECT 1 FROM feed_changes_epochs e
               WHERE e.system_identifier = now_epoch.system_identifier AND e.timeline = now_epoch.timeline) THEN
        RETURN;
    END IF;
    SELECT coalesce(max(seq), 0) INTO latest FROM feed_changes;
    first_pos := greatest(now_epoch.timeline, latest / 1099511627776 + 1) * 1099511627776;
    INSERT INTO feed_changes_epochs (system_identifier, timeline, previous_end, first_seq)
    VALUES (now_epoch.system_identifier, now_epoch.timeline, latest, first_pos)
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM setval(pg_get_serial_sequence(format('%I.feed_changes', current_schema()), 'seq'), first_pos, false);
    END IF;
END
$$;

-- Whether `pos` belongs to a history this database lost: between an epoch's previous end and its
-- first position, or past the log's end while the server writes in an epoch not yet begun.
CREATE FUNCTION feed_position_lost(pos bigint) RETURNS boolean LANGUAGE sql AS $$
    SELECT EXISTS (SELECT 1 FROM feed_changes_epochs e WHERE pos > e.previous_end AND pos < e.first_seq)
        OR (pos > (SELECT coalesce(max(f.seq), 0) FROM feed_changes f)
            AND NOT EXISTS (SELECT 1 FROM feed_changes_epochs e JOIN log_epoch_now() n USING (system_identifier, timeline)))
$$;

-- As 0016's, entering the epoch first.
CREATE OR REPLACE FUNCTION log_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    logged bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7467, hashtext(current_schema()));
    PERFORM feed_changes_enter_epoch();
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
    GET DIAGNOSTICS logged = ROW_COUNT;
    IF logged > 0 THEN
        PERFORM pg_notify('scavenger_feed', coalesce(current_setting('scavenger.writer', true), ''));
    END IF;
    -- The name covers the statement that set it, not later ones in the same transaction.
    PERFORM set_config('scavenger.writer', '', true);
    RETURN NULL;
END
$$;
