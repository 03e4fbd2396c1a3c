-- The chat of a hunt, and hunts, stops and their chat in the moderation queue.

-- A reply is under a pin or under a hunt (the chat of its host and players), never both.
ALTER TABLE replies ALTER COLUMN pin_id DROP NOT NULL;
ALTER TABLE replies ADD COLUMN hunt_id text REFERENCES hunts (id) ON DELETE CASCADE;
ALTER TABLE replies ADD CONSTRAINT replies_one_parent CHECK ((pin_id IS NULL) <> (hunt_id IS NULL));
CREATE INDEX replies_hunt_order ON replies (hunt_id, created_at, id) WHERE hunt_id IS NOT NULL;

-- Reports hide a hunt (it leaves HUNTS) or a stop (its title and clue are withheld from all but
-- the host and moderators) until a moderator decides; a removed hunt has ended and is gone for all
-- but its host and moderators; a removed stop's title and clue stay withheld.
ALTER TABLE hunts ADD COLUMN moderation_hidden boolean NOT NULL DEFAULT false;
ALTER TABLE hunts ADD COLUMN removed boolean NOT NULL DEFAULT false;
ALTER TABLE hunt_stops ADD COLUMN moderation_hidden boolean NOT NULL DEFAULT false;
ALTER TABLE hunt_stops ADD COLUMN removed boolean NOT NULL DEFAULT false;

ALTER TABLE moderation_items DROP CONSTRAINT moderation_items_kind_check;
ALTER TABLE moderation_items ADD CONSTRAINT moderation_items_kind_check CHECK (kind IN ('pin', 'reply', 'hunt', 'stop'));

-- How far `scavengerd expire` has trimmed the hunts' change log: a daemon whose place is before it
-- cannot replay, and loads its hunts' leaderboards afresh instead.
CREATE TABLE hunt_changes_trimmed (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    through  bigint NOT NULL
);
INSERT INTO hunt_changes_trimmed (through) VALUES (0);
