-- A moderator may hand back a claim before it lapses (the console's "release", issue 17); the
-- log records it like a claim. Changing the constraint touches no row: the log stays append-only.
ALTER TABLE moderation_log DROP CONSTRAINT moderation_log_action_check;
ALTER TABLE moderation_log ADD CONSTRAINT moderation_log_action_check
    CHECK (action IN ('claim', 'release', 'dismiss', 'remove', 'ban', 'unban', 'delete'));

-- The console filters the queue by reason: reports by item and reason.
CREATE INDEX reports_by_item_reason ON reports (item, reason);
