-- Accounts and login sessions.
-- Names and emails are unique case-insensitively, enforced here (not only by a prior SELECT).
CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{3,32}$'),
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    -- libsodium crypto_pwhash_str output (argon2id, salted); never the password.
    password_hash text NOT NULL,
    role          text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'moderator', 'admin')),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_name_unique ON users (lower(name));
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

-- A session token is stored only as its SHA-256 hash.
CREATE TABLE sessions (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
