-- Guests (protocol 1.5, "a class gets in"): a player who joined one hunt with its code and a
-- name, without an account.
--
-- A guest is a row of users with role 'guest' and guest_hunt naming the one hunt they play: so
-- their check-ins, standings, sessions and rates are a player's, with nothing copied. They have
-- no email and no password. Their name follows the username rules but need only be unique in
-- their hunt (hunt_players_name says so), so the unique index of names covers accounts only;
-- every look-up of an account by name or email skips guests. Their totals carry role 'guest',
-- which the rankings leave out. REGISTER on a guest's connection turns the row into an account
-- (role 'user', guest_hunt NULL, a name, email and password), keeping every row that points at it.

ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('user', 'moderator', 'admin', 'guest'));
ALTER TABLE users ADD COLUMN guest_hunt text REFERENCES hunts (id) ON DELETE CASCADE;
ALTER TABLE users ALTER COLUMN email DROP NOT NULL, ALTER COLUMN password_hash DROP NOT NULL;
ALTER TABLE users ADD CONSTRAINT users_guest_shape CHECK (
    CASE WHEN role = 'guest' THEN guest_hunt IS NOT NULL AND email IS NULL AND password_hash IS NULL
         ELSE guest_hunt IS NULL AND email IS NOT NULL AND password_hash IS NOT NULL END);

DROP INDEX users_name_unique;
CREATE UNIQUE INDEX users_name_unique ON users (lower(name)) WHERE role <> 'guest';
CREATE INDEX users_guests ON users (guest_hunt) WHERE guest_hunt IS NOT NULL;

-- CREATEHUNT … GUESTS [n]: at most n guests in the hunt; NULL: accounts only.
ALTER TABLE hunts ADD COLUMN guests integer CHECK (guests BETWEEN 1 AND 1000);
