-- A pin's log row says whether the pin was shown (not hidden by moderation) before the change.
--
-- A watch resumed with `WATCH … SINCE n` is sent `gone` for each pin that changed after n and is
-- no longer visible inside its circle. Without knowing how the pin stood at n, a pin hidden before
-- n (whose `gone` the watcher had already been sent) and deleted after it was sent `gone` a second
-- time, where a watcher that stayed connected was sent nothing for the delete. The replay now
-- looks at the pin's first change after n: `gone` only when that change found it shown.
--
-- `shown_before`: for an update or a delete, NOT hidden on the row before it; false for an
-- insert (the pin did not exist); NULL for regions and for rows logged before this migration
-- (read as "shown": the replay says `gone`, as before, which a client that never held the pin
-- ignores). Expiry is not part of it: a pin's expiry is judged by each daemon's clock, not at
-- the write.
ALTER TABLE feed_changes ADD COLUMN shown_before boolean;

-- The update trigger needs the rows as they were.
DROP TRIGGER pins_updated_log ON pins;
CREATE TRIGGER pins_updated_log AFTER UPDATE ON pins REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION log_feed_changes();

CREATE OR REPLACE FUNCTION log_feed_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'pins' THEN
        IF TG_OP = 'DELETE' THEN
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind, shown_before)
                SELECT 'pin', id, lat, lon, kind, NOT hidden FROM old_rows ORDER BY id;
        ELSIF TG_OP = 'UPDATE' THEN
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind, shown_before)
                SELECT 'pin', n.id, n.lat, n.lon, n.kind, NOT o.hidden
                FROM new_rows n JOIN old_rows o ON o.id = n.id ORDER BY n.id;
        ELSE
            INSERT INTO feed_changes (kind, subject, lat, lon, pin_kind, shown_before)
                SELECT 'pin', id, lat, lon, kind, false FROM new_rows ORDER BY id;
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO feed_changes (kind, subject) SELECT 'region', name FROM old_rows ORDER BY name;
    ELSE
        INSERT INTO feed_changes (kind, subject) SELECT 'region', name FROM new_rows ORDER BY name;
    END IF;
    RETURN NULL;
END
$$;
