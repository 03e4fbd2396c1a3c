-- Photos as apps show them (protocol 1.5): each photo's width and height as shown, read from its
-- header at the write, on the pin's or check-in's row (feeds read them with the pin); and the
-- sizes made from it once, in the background, kept beside the original in the photo's row.
-- (0037 and 0039 are other branches'.)
--
-- Photos stored before this have no width and height (NULL, shown as 0) and their sizes
-- `pending`: the daemon's background sizes read both from the original, so they are filled in
-- after the first start on this schema, photo by photo, never by this migration (which cannot
-- read an image).
ALTER TABLE pins ADD COLUMN photo_width integer CHECK (photo_width > 0),
                 ADD COLUMN photo_height integer CHECK (photo_height > 0);
ALTER TABLE checkins ADD COLUMN photo_width integer CHECK (photo_width > 0),
                     ADD COLUMN photo_height integer CHECK (photo_height > 0);

-- `sizes`: pending until the background job has made them (made) or found that the original
-- cannot be decoded (failed: the original is served for every size).
ALTER TABLE photos ADD COLUMN sizes text NOT NULL DEFAULT 'pending' CHECK (sizes IN ('pending', 'made', 'failed')),
                   ADD COLUMN thumb_jpeg bytea, ADD COLUMN display_jpeg bytea,
                   ADD COLUMN thumb_webp bytea, ADD COLUMN display_webp bytea;
ALTER TABLE checkin_photos ADD COLUMN sizes text NOT NULL DEFAULT 'pending' CHECK (sizes IN ('pending', 'made', 'failed')),
                           ADD COLUMN thumb_jpeg bytea, ADD COLUMN display_jpeg bytea,
                           ADD COLUMN thumb_webp bytea, ADD COLUMN display_webp bytea;
CREATE INDEX photos_sizes_pending ON photos (pin_id) WHERE sizes = 'pending';
CREATE INDEX checkin_photos_sizes_pending ON checkin_photos (checkin_id) WHERE sizes = 'pending';
