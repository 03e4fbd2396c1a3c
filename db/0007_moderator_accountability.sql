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
