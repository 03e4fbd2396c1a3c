-- pins_cell served only the one-time backfill of pins written before 0003 (WHERE cell IS NULL),
-- yet every pin write maintained it. A partial index over the pins still without a cell finds
-- the same rows and costs a write nothing once cells are set.
DROP INDEX pins_cell;
CREATE INDEX pins_missing_cell ON pins (id) WHERE cell IS NULL;
