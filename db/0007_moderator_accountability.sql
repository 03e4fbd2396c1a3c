-- Moderator accountability (issue 14).

-- Who set a user's current ban: 'moderator' or 'admin' (the role at the time it was set). While
-- an admin's ban lasts, only an admin may lift, shorten or replace it. NULL when not banned.
ALTER TABLE users ADD COLUMN banned_by_role text CHECK (banned_by_role IN ('moderator', 'admin'));

-- Bans set before this migration: the role, now, of whoever logged the latest ban of the user
-- (best effort; a ban with no such entry counts as a moderator's).
UPDATE users u SET banned_by_role = (
    SELECT CASE WHEN m.role = 'admin' THEN 'admin' ELSE 'moderator' END
    FROM moderation_log l JOIN users m ON m.id = l.moderator_id
    WHERE l.user_id = u.id AND l.action = 'ban'
    ORDER BY l.id DESC LIMIT 1
)
WHERE u.banned_until > now();

-- A moderator's DELETE of someone else's pin is logged as 'delete', with the pin's evidence
-- snapshot kept in moderation_items. Changing the constraint touches no row, so the log stays
-- append-only.
ALTER TABLE moderation_log DROP CONSTRAINT moderation_log_action_check;
ALTER TABLE moderation_log ADD CONSTRAINT moderation_log_action_check
    CHECK (action IN ('claim', 'dismiss', 'remove', 'ban', 'unban', 'delete'));
