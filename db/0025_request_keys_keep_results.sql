-- A keyed write keeps the board's result (JSON the daemon encodes), not the reply line its
-- front end wrote: the store never renders the protocol, and a retry is answered by rendering
-- the very result the first run made. Rows written before this keep their line in `reply` and
-- no `result`; a daemon finding one answers that the request ran but left nothing to answer
-- with (a CONFLICT, never a second run). Such rows expire with the key retention (a day).
ALTER TABLE request_keys ADD COLUMN result text;
ALTER TABLE request_keys ALTER COLUMN reply DROP NOT NULL;
ALTER TABLE request_keys ADD CONSTRAINT request_keys_reply_or_result CHECK (reply IS NOT NULL OR result IS NOT NULL);
