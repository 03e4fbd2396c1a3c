-- Geography: the grid cell of every pin and named regions.

-- Named polygon regions, defined by `scavengerd region set`. The shape is kept as given (GeoJSON);
-- the box and area let the daemon and the CLI find candidates and the most specific region.
CREATE TABLE regions (
    name       text PRIMARY KEY CHECK (name ~ '^[a-z0-9-]{1,64}$'),
    geojson    text NOT NULL,
    min_lat    double precision NOT NULL,
    min_lon    double precision NOT NULL,
    max_lat    double precision NOT NULL,
    max_lon    double precision NOT NULL,
    area       double precision NOT NULL CHECK (area > 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The finest grid cell (level 0 of the daemon's grid, about 435 m) of each pin, set on write.
-- Rows written before this migration get theirs when a daemon next loads them.
ALTER TABLE pins ADD COLUMN cell bigint;
-- The named region that contains the pin, if any; deleting a region unassigns its pins.
ALTER TABLE pins ADD COLUMN region text REFERENCES regions (name) ON DELETE SET NULL;

CREATE INDEX pins_cell ON pins (cell);
CREATE INDEX pins_region_newest ON pins (region, created_at DESC, id DESC) WHERE region IS NOT NULL;
-- Candidates for region reassignment by bounding box.
CREATE INDEX pins_lat_lon ON pins (lat, lon);
