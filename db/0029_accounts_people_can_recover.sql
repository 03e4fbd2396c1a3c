-- Protocol 1.4's accounts people can recover (issue 44): reset and verification codes, a
-- verified-email flag, and the outbox mail is sent from.

-- Whether the account's email was proven by `VERIFY code`.
ALTER TABLE users ADD COLUMN email_verified boolean NOT NULL DEFAULT false;

-- A reset or verification code, stored only as its argon2id hash (the claim codes' parameters).
-- Only the newest live code of a user and purpose counts: issuing one voids the older ones.
-- `wrong_codes` counts wrong tries; at 5 the code is void. `used_at` marks it spent (or voided).
-- A row without a user is a decoy: a FORGOT that mails nothing (no such account, or its hourly
-- mails spent) writes one all the same, so that it does the same work as one that mails.
CREATE TABLE account_codes (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- No foreign key: its check would lock the user's row for a real code and not for a decoy,
    -- a difference in work FORGOT must not have. Users are not deleted; `expire` sweeps codes.
    user_id     bigint,
    purpose     text NOT NULL CHECK (purpose IN ('reset', 'verify')),
    code_hash   text NOT NULL,
    -- The address the code was mailed to: VERIFY marks only that address verified.
    email       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    wrong_codes integer NOT NULL DEFAULT 0 CHECK (wrong_codes >= 0),
    used_at     timestamptz
);
CREATE INDEX account_codes_live ON account_codes (user_id, purpose, id) WHERE used_at IS NULL;
CREATE INDEX account_codes_created ON account_codes (created_at);

-- The outbox: a mail is written here in the transaction that causes it and sent from here by
-- one daemon at a time (a row is claimed with FOR UPDATE SKIP LOCKED and leased until
-- `next_attempt_at`). `sent_at` is set once the SMTP server accepted it; `failed_at` when it was
-- given up. `message_id` is the mail's Message-ID, the same on every try. A `decoy` row is
-- never sent (due at 'infinity'): written by a FORGOT that mails nothing, for the same work.
CREATE TABLE mail_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id      text NOT NULL UNIQUE,
    user_id         bigint,  -- users (id); no foreign key, as for account_codes
    purpose         text NOT NULL CHECK (purpose IN ('reset', 'verify')),
    recipient       text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    sent_at         timestamptz,
    failed_at       timestamptz,
    last_error      text,
    decoy           boolean NOT NULL DEFAULT false
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;
CREATE INDEX mail_outbox_per_user ON mail_outbox (user_id, purpose, created_at);
CREATE INDEX mail_outbox_created ON mail_outbox (created_at);

-- One row per FORGOT, whether or not an account answered to it: every FORGOT writes and commits
-- the same way, so its time does not tell whether the account exists. Swept by `expire`.
CREATE TABLE recovery_requests (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recovery_requests_created ON recovery_requests (created_at);
