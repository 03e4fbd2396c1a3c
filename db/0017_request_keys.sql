-- Exactly-once writes (`REQUEST key` on a write): the reply line of each keyed write, stored by
-- the write's own transaction, so a write is never committed without its key nor a key without
-- its write. A retry with the same key and the same request is answered from here on any
-- daemon; the same key with another request is refused (the digest tells them apart). Keys are
-- per user and live for the configured retention (24 hours by default); the expiry sweep
-- deletes older ones, oldest first, by the created_at index.
CREATE TABLE request_keys (
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key        text        NOT NULL,
    digest     bytea       NOT NULL,
    reply      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);

CREATE INDEX request_keys_created_at ON request_keys (created_at);
