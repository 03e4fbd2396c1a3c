-- Badges (protocol 1.4's achievements, issue 43): awarded in the transaction of what earns them,
-- once per user and badge (the primary key; writers insert with ON CONFLICT DO NOTHING, so two
-- transactions awarding the same badge at once leave one row and no error).
--
-- `badge` is the id (`first-find`, `explorer-10`, …, or `hunt:<hunt id>` for a hunt's own);
-- `name` and `description` are kept as awarded (a hunt's badge outlives its hunt); `hunt_id` is
-- the hunt it was earned in and `checkin_id` the check-in that earned it (no foreign keys: the
-- badge stays when the hunt or the check-in is deleted; a rejection takes it back explicitly).
CREATE TABLE user_badges (
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    badge       text NOT NULL CHECK (char_length(badge) BETWEEN 1 AND 64),
    name        text NOT NULL,
    description text NOT NULL,
    hunt_id     text,
    checkin_id  text,
    at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (user_id, badge)
);

-- BADGES lists a user's oldest first.
CREATE INDEX user_badges_user_at ON user_badges (user_id, at, badge);

-- A badge earned in a hunt is told to its watchers on every daemon through the hunts' change log.
ALTER TABLE hunt_changes DROP CONSTRAINT hunt_changes_kind_check;
ALTER TABLE hunt_changes ADD CONSTRAINT hunt_changes_kind_check
    CHECK (kind IN ('hunt', 'hint', 'found', 'standing', 'left', 'reply', 'totals', 'badge'));
