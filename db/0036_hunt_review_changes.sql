-- A check-in that waits for a review (a photo, or flagged by the travel check) travels through
-- the hunts' change log to the host's WATCH HUNT (the `review` event): the host's page lists it
-- as it comes. (0035 is another branch's.)
ALTER TABLE hunt_changes DROP CONSTRAINT hunt_changes_kind_check;
ALTER TABLE hunt_changes ADD CONSTRAINT hunt_changes_kind_check
    CHECK (kind IN ('hunt', 'hint', 'found', 'standing', 'left', 'reply', 'totals', 'badge', 'team', 'review'));
