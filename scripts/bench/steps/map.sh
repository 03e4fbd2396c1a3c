# shellcheck shell=bash
# 4h. Maps and photos (issue 55), `--only map`: on the dense pins (scavengerd's database and
#     PostGIS's, loaded as for NEARBY; the daemon started with --http-port):
#   - MAP at zooms 3, 8, 12 and 16 (--map-zooms) against PostGIS's grid query on the same boxes
#     and pins (scripts/bench/map_boxes.py: a phone screen, 1280 x 800 px, around the data's
#     query centres, drawn from --seed; a table of the pins in EPSG:3857 with a GiST index,
#     `count(*), avg(lat), avg(lon) … WHERE geom && envelope GROUP BY ST_SnapToGrid(…) ORDER BY
#     count DESC LIMIT 500`), at --map-conns connections ("8 32"), alternating scavengerd →
#     PostGIS in each of --rounds rounds; first a check that both count the same pins;
#   - the memory of MAP's sets against the rest of the pin index;
#   - `GET /photos/ID?size=thumb` of --map-photos photo pins (real JPEGs, POSTPHOTOed here, each
#     thumbnail made by the daemon) against nginx serving the same thumbnails from files, with
#     wrk (keep-alive, one thread), at --map-conns, alternating scavengerd → nginx per round;
#   - every run's server CPU per request (the daemon's with its PostgreSQL backends; PostGIS's
#     backends; nginx's master and workers), and PING at --map-conns in each round: the least a
#     request costs the daemon here, MAP's ceiling.
# Every run's line goes to map.txt; report.py turns them into its "Maps and photos" section and
# issue 55's targets.

# Inputs: MAP_ZOOMS, MAP_BOXES, MAP_CONNS, MAP_PHOTOS, ROUNDS, SEED, CENTRES, RUN_SECONDS, WARMUP,
# PG_PORT, PG_BIN, PG_SOCKET, DAEMON_PID, BPG_PID, SCAV_PORT, SCAV_HTTP_PORT, RUN_DIR. Sets NGINX_PID.
map_step() {
    local z conns round
    : >"$RUN_DIR/map.txt"
    map_await_photo_sizes
    map_postgis_table
    step "MAP: $MAP_BOXES boxes a zoom ($MAP_ZOOMS), 1280 x 800 px, around the data's query centres (seed $SEED)"
    for z in $MAP_ZOOMS; do
        python3 scripts/bench/map_boxes.py boxes --centres "$CENTRES" --seed "$SEED" --zoom "$z" \
            --count "$MAP_BOXES" --out "$RUN_DIR/map-z$z"
        local check
        check=$(python3 scripts/bench/map_boxes.py check --lines "$RUN_DIR/map-z$z" --boxes 20 --port "$SCAV_PORT" \
            --psql "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCKET" -p "$PG_PORT" -U postgres -d bench_postgis) \
            || die "MAP and PostGIS's grid query count differently at zoom $z: $check"
        log "    zoom $z: the first 20 boxes counted alike by both: $check"
        meta "map_check_z$z" "$check"
    done
    for ((round = 1; round <= ROUNDS; round++)); do
        for z in $MAP_ZOOMS; do
            step "MAP round $round of $ROUNDS, zoom $z: scavengerd → PostGIS at $MAP_CONNS connections"
            for conns in $MAP_CONNS; do
                map_run "$z" scav "$conns" "$round" --lines "$RUN_DIR/map-z$z.scav"
                map_run "$z" pg "$conns" "$round" --lines "$RUN_DIR/map-z$z.pg" --pg "$MAP_PG_CONN" --sql "$MAP_PG_SQL"
                map_cancel_postgis
            done
        done
        # PING, the least any request costs this daemon on this machine: MAP's ceiling.
        for conns in $MAP_CONNS; do
            run_load scav ping "$conns" "map-ping-$round"
            printf 'map_zoom=ping %s\n' "$(tail -n 1 "$RAW")" >>"$RUN_DIR/map.txt"
        done
    done
    map_memory
    thumbs_setup
    for ((round = 1; round <= ROUNDS; round++)); do
        step "thumbnails round $round of $ROUNDS: scavengerd → nginx at $MAP_CONNS connections"
        for conns in $MAP_CONNS; do
            thumbs_run scav "$conns" "$round"
            thumbs_run nginx "$conns" "$round"
        done
    done
    stop_pid "$NGINX_PID" 10
    NGINX_PID=""
    meta rss_after_map_mb "$(rss_mb "$DAEMON_PID")"
}

# No photo may be waiting for its sizes when the runs start (the daemon makes them in the
# background, db/0038), so that work does not land in a run: the loaded ones are marked as
# standing for themselves before the daemon starts (load_scav_database); this waits for any left.
map_await_photo_sizes() {
    local pending t0=$EPOCHREALTIME i
    for ((i = 0; i < 3600; i++)); do
        pending=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM photos WHERE sizes = 'pending'")
        ((pending == 0)) && break
        ((i % 30 == 0)) && step "waiting for the daemon to make the sizes of the loaded photos: $pending still pending"
        sleep 1
    done
    ((pending == 0)) || die "$pending loaded photos still without sizes after an hour"
    log "the loaded photos' sizes made ($(pg_psql -d bench_scav -Atc "SELECT count(*) FROM photos") photos; waited \
$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s here; not a result)"
}

# PostGIS's pins for the grid query: the same pins in Web Mercator (EPSG:3857, the map's own
# projection, so a cell is a square of the grid), lat and lon beside them for the means, a GiST
# index, the table clustered on it (pins near each other on the map near each other on disk: the
# layout that favours box queries). Each PostGIS run's connections have parallel query and JIT
# off: at 8 or more busy connections on this machine's cores parallel workers only add start-up
# cost (and, exiting inside the window, their CPU would not be counted), and JIT compiles every
# execution of the heavy low-zoom queries again.
map_postgis_table() {
    step "PostGIS: the pins in Web Mercator for the grid query (map_pins: geometry(Point, 3857) + GiST, clustered)"
    local t0=$EPOCHREALTIME
    pg_psql -d bench_postgis <<'SQL'
CREATE TABLE map_pins AS
    SELECT id, ST_Y(geog::geometry) AS lat, ST_X(geog::geometry) AS lon,
           ST_Transform(geog::geometry, 3857)::geometry(Point, 3857) AS geom
    FROM pins;
CREATE INDEX map_pins_geom ON map_pins USING gist (geom);
CLUSTER map_pins USING map_pins_geom;
VACUUM ANALYZE map_pins;
CHECKPOINT;
SQL
    log "map_pins written in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s (not a result)"
    meta map_postgis_table_mb "$(pg_psql -d bench_postgis -Atc "SELECT round(pg_total_relation_size('map_pins') / 1048576.0, 1)")"
    MAP_PG_CONN="host=127.0.0.1 port=$PG_PORT dbname=bench_postgis user=postgres options='-c max_parallel_workers_per_gather=0 -c jit=off'"
    MAP_PG_SQL=$(python3 -c 'import sys; sys.path.insert(0, "scripts/bench"); import map_boxes; print(map_boxes.GRID_SQL)')
    meta map_pg_sql "$MAP_PG_SQL"
}

# map_run ZOOM TARGET CONNS ROUND ARGS…: one MAP run (run_load), its line kept with its zoom. A
# reply counts when it comes inside the window, and the window goes on until 40 have (at most a
# minute): a low zoom's grid query takes seconds (loadgen.c, --op map).
map_run() {
    local z=$1 target=$2 conns=$3 round=$4
    shift 4
    run_load "$target" map "$conns" "map-z$z-$round" --min-requests 40 --max-seconds 60 "$@"
    printf 'map_zoom=%s %s\n' "$z" "$(tail -n 1 "$RAW")" >>"$RUN_DIR/map.txt"
}

# The queries a PostGIS run left running when its window closed (a low zoom's take up to seconds):
# cancelled, and waited for, so they do not run into the next run.
map_cancel_postgis() {
    local busy
    for _ in $(seq 100); do
        busy=$(pg_psql -d postgres -Atc "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
            WHERE datname = 'bench_postgis' AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
        ((busy == 0)) && return 0
        sleep 0.1
    done
    warn "PostGIS backends still there after 10 s"
}

# The memory of MAP's sets against the rest of the pin index. The daemon logs the index's
# approximate bytes (MAP's sets included) when its feed is loaded, not the sets' own bytes: those
# are 32 bytes a pin counted (a CountedTree node: the 12-byte (key, slot) element in 16, links,
# size and height; a bulk load shrinks the storage to the elements: scripts/DEVELOPERS.md, "MAP's
# cell counts"), and the pins counted are MAP's total over the whole world. A daemon whose log
# names the sets' bytes (map_mb=…) is taken at its word instead.
map_memory() {
    local line index_mb map_log_mb reply mapped
    line=$(grep -m1 'feed loaded' "$RUN_DIR/scavengerd-serve.log" || true)
    index_mb=$(sed -n 's/.*index_mb=\([0-9.]*\).*/\1/p' <<<"$line")
    map_log_mb=$(sed -n 's/.*map_mb=\([0-9.]*\).*/\1/p' <<<"$line")
    reply=""
    if exec 8<>"/dev/tcp/127.0.0.1/$SCAV_PORT"; then
        printf 'MAP -85 -180 85 180 ZOOM 0 LIMIT 1\n' >&8
        read -r -t 10 reply <&8 || true
        exec 8>&-
    fi
    mapped=$(sed -n 's/.*"total":\([0-9]*\)}.*/\1/p' <<<"$reply")
    [[ -n $index_mb && -n $mapped ]] || { warn "no index size in the daemon's log or no MAP total: memory not measured"; return 0; }
    meta map_index_mb "$index_mb"
    meta map_pins_counted "$mapped"
    meta map_sets_mb "${map_log_mb:-$(awk -v n="$mapped" 'BEGIN { printf "%.1f", n * 32 / 1e6 }')}"
    meta map_sets_from "$([[ -n $map_log_mb ]] && echo log || echo layout)"
    meta rss_map_mb "$(rss_mb "$DAEMON_PID")"
    log "    MAP's sets: $(grep '^map_sets_mb=' "$META" | cut -d= -f2) MB for $mapped pins counted; the index (MAP's sets included): $index_mb MB"
}

# The photo pins and nginx: --map-photos real JPEGs POSTPHOTOed (scripts/bench/photos.py), each
# thumbnail fetched once from the daemon into THUMB_ROOT/photos/ID, once the daemon has made it;
# nginx (scripts/bench/nginx.conf) serves that directory on a free loopback port. Sets NGINX_PORT,
# NGINX_PID, THUMB_ROOT.
thumbs_setup() {
    step "photo pins: $MAP_PHOTOS real JPEGs POSTPHOTOed, their thumbnails made by the daemon and saved for nginx"
    # Outside the project: nginx's workers run as nobody, who may not reach .data/.
    THUMB_ROOT=$(mktemp -d /tmp/scavenger-bench-thumbs.XXXXXX)
    chmod 755 "$THUMB_ROOT"
    local out
    out=$(python3 scripts/bench/photos.py --port "$SCAV_PORT" --http-port "$SCAV_HTTP_PORT" --count "$MAP_PHOTOS" \
        --centres "$CENTRES" --workdir "$RUN_DIR/photos" --out "$THUMB_ROOT") || die "posting the photos failed"
    log "    $out"
    meta thumbs_line "$out"
    chmod -R a+rX "$THUMB_ROOT"
    pick_free_port NGINX_PORT
    local conf=$RUN_DIR/nginx/nginx.conf user=""
    mkdir -p "$RUN_DIR/nginx"
    is_root && user="user nobody nogroup;"
    sed -e "s|@DIR@|$RUN_DIR/nginx|g" -e "s|@ROOT@|$THUMB_ROOT|g" -e "s|@PORT@|$NGINX_PORT|g" -e "s|@USER@|$user|g" \
        scripts/bench/nginx.conf >"$conf"
    nginx -e "$RUN_DIR/nginx/nginx-error.log" -c "$conf" -p "$RUN_DIR/nginx" -g 'daemon off;' 9>&- &
    NGINX_PID=$!
    local first i
    first=$(head -n 1 "$THUMB_ROOT/paths.txt")
    for ((i = 0; i < 100; i++)); do
        [[ $(http_status 127.0.0.1 "$NGINX_PORT" "$first") == 200 ]] && break
        kill -0 "$NGINX_PID" 2>/dev/null || die "nginx exited (see $RUN_DIR/nginx/nginx-error.log)"
        sleep 0.1
    done
    [[ $(http_status 127.0.0.1 "$NGINX_PORT" "$first") == 200 ]] || die "nginx does not serve $first"
    cmp -s <(curl -s "http://127.0.0.1:$SCAV_HTTP_PORT$first") <(curl -s "http://127.0.0.1:$NGINX_PORT$first") \
        || die "nginx and the daemon serve different bytes for $first"
    meta nginx_version "$(nginx -v 2>&1 | sed 's|.*nginx/|nginx |')"
    meta wrk_version "$(wrk -v 2>&1 | awk 'NR == 1 { print $1, $2 }')"
    log "nginx $(nginx -v 2>&1 | sed 's|.*/||') on 127.0.0.1:$NGINX_PORT serving $THUMB_ROOT"
}

# tree_cpu_s PID,PID…: utime + stime of the processes and of their direct children, in seconds
# (as loadgen's --cpu-pids: the postmaster's covers its backends, nginx's master its workers), and
# the listed processes' cutime + cstime: a child that exits inside a run (a backend the daemon's
# pool lets go, an autovacuum worker) takes its CPU out of the children's sum and into its
# parent's cutime, so the total does not drop. (Read through cat, which goes on past a process
# that exits meanwhile; awk may stop there.)
tree_cpu_s() {
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pids="$1" -v hz="$(getconf CLK_TCK)" '
        BEGIN { n = split(pids, p, ","); for (i = 1; i <= n; i++) want[p[i]] = 1 }
        {
            pid = $1; line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
            # f[1] state, f[2] ppid, f[12] utime, f[13] stime, f[14] cutime, f[15] cstime
            if (pid in want) total += f[12] + f[13] + f[14] + f[15]
            else if (f[2] in want) total += f[12] + f[13]
        }
        END { printf "%.3f\n", total / hz }'
}

# The CPU of this shell's children reaped so far (wrk's, once it has exited), in seconds.
children_cpu_s() {
    awk -v hz="$(getconf CLK_TCK)" '{ line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
        printf "%.3f\n", (f[14] + f[15]) / hz }' "/proc/$$/stat"
}

# thumbs_run TARGET CONNS ROUND: one wrk run (after an unrecorded warm-up) against the daemon's
# HTTP port (TARGET scav) or nginx, random thumbnails among the photo pins'; its line into map.txt.
thumbs_run() {
    local target=$1 conns=$2 round=$3 port pids out cpu0 cpu1 own0 own1 c0 c1 secs warm
    case $target in
        scav) port=$SCAV_HTTP_PORT pids="$DAEMON_PID,$BPG_PID" ;;
        nginx) port=$NGINX_PORT pids=$NGINX_PID ;;
    esac
    secs=$(awk -v s="$RUN_SECONDS" 'BEGIN { s = int(s + 0.5); print (s < 1) ? 1 : s }')
    warm=$(awk -v s="$WARMUP" 'BEGIN { s = int(s + 0.999); print (s < 1) ? 1 : s }')
    THUMB_PATHS=$THUMB_ROOT/paths.txt THUMB_SEED=$((SEED + round)) wrk -t 1 -c "$conns" -d "${warm}s" --timeout 10s \
        -s scripts/bench/thumbs.lua "http://127.0.0.1:$port" >/dev/null 2>>"$RUN_DIR/wrk.err" || die "wrk failed (warm-up)"
    c0=$(children_cpu_s)
    own0=$(tree_cpu_s "${pids%%,*}")
    cpu0=$(tree_cpu_s "$pids")
    out=$(THUMB_PATHS=$THUMB_ROOT/paths.txt THUMB_SEED=$((SEED + round)) wrk -t 1 -c "$conns" -d "${secs}s" --timeout 10s \
        -s scripts/bench/thumbs.lua "http://127.0.0.1:$port" 2>>"$RUN_DIR/wrk.err") || die "wrk failed: $target at $conns connections"
    cpu1=$(tree_cpu_s "$pids")
    own1=$(tree_cpu_s "${pids%%,*}")
    c1=$(children_cpu_s)
    out=$(grep '^requests=' <<<"$out")
    [[ -n $out ]] || die "no figures from wrk ($target at $conns connections)"
    local seconds server_cpu client_cpu
    seconds=$(kv seconds "$out")
    server_cpu=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.3f", b - a }')
    client_cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }')
    # own_cpu_s: the first of the server's processes with its children (the daemon without its
    # PostgreSQL backends; for nginx, the same as the whole).
    out="thumbs=1 label=r$round target=$target conns=$conns $out server_cpu_s=$server_cpu \
own_cpu_s=$(awk -v a="$own0" -v b="$own1" 'BEGIN { printf "%.3f", b - a }') \
server_cpu_pct=$(awk -v c="$server_cpu" -v s="$seconds" 'BEGIN { printf "%.1f", (s > 0) ? 100 * c / s : 0 }') \
client_cpu_pct=$(awk -v c="$client_cpu" -v s="$seconds" 'BEGIN { printf "%.1f", (s > 0) ? 100 * c / s : 0 }')"
    printf '%s\n' "$out" >>"$RUN_DIR/map.txt"
    printf '    %-6s thumb  %3s conns  %9s req/s  p50 %8s µs  p99 %8s µs  server cpu %5s %%  client cpu %5s %%  errors %s\n' \
        "$target" "$conns" "$(kv rps "$out")" "$(kv p50_us "$out")" "$(kv p99_us "$out")" "$(kv server_cpu_pct "$out")" \
        "$(kv client_cpu_pct "$out")" "$(kv errors "$out")" >&2
    [[ $(kv errors "$out") == 0 ]] || warn "wrk counted $(kv errors "$out") errors ($(kv non2xx "$out") not 2xx) against $target"
}
