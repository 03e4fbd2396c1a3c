# shellcheck shell=bash
# NEARBY against Redis GEOSEARCH and PostGIS on the dense data (step 4, the full run), and against
# Redis again on the sparse data (step 5b).

# Step 4: NEARBY at each of CONNS_LEVELS, alternating Redis → scavengerd → PostGIS, ROUNDS rounds.
# Inputs: ROUNDS, CONNS_LEVELS, PGIS_CONN, DAEMON_PID (and run_load's).
nearby_step() {
    for ((round = 1; round <= ROUNDS; round++)); do
        step "NEARBY round $round of $ROUNDS"
        for conns in $CONNS_LEVELS; do
            run_load redis nearby "$conns" "$round"
            run_load scav nearby "$conns" "$round"
            run_load pg nearby "$conns" "$round" --pg "$PGIS_CONN"
        done
    done
    meta rss_after_nearby_mb "$(rss_mb "$DAEMON_PID")"
}

# ---------------------------------------------------------------------------------------------
# 5b. Sparse data (issue 18): NEARBY against Redis again, on fewer pins from another seed, where
#     a query finds a few pins and the fixed cost per request weighs most
# ---------------------------------------------------------------------------------------------

# Inputs: BENCH_DIR, SPARSE_PINS, SPARSE_SEED, SPARSE_ROUNDS, PYLIB, PG_PORT, CONNS_LEVELS,
# REDIS_PORT, DAEMON_PID (stopped: a daemon on bench_scav_sparse replaces it). Sets SCAV_URL and
# DAEMON_PID to the sparse database's; CENTRES is the sparse set's during the runs, the dense
# set's again after.
sparse_nearby_step() {
    SPARSE_DIR=$BENCH_DIR/data-s$SPARSE_SEED-n$SPARSE_PINS
    bench_data "$SPARSE_DIR" "$SPARSE_PINS" "$SPARSE_SEED" "$PYLIB"
    step "sparse data: loading redis (after FLUSHALL) and a database of scavengerd's own, bench_scav_sparse"
    stop_pid "$DAEMON_PID" 60
    DAEMON_PID=""
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" flushall >/dev/null
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe <"$SPARSE_DIR/redis.resp" >>"$RUN_DIR/redis-load.log" 2>&1 \
        || die "loading redis with the sparse data failed"
    LOADED=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zcard pins)
    [[ $LOADED == "$SPARSE_PINS" ]] || die "expected $SPARSE_PINS members in redis, found $LOADED"
    pg_psql -d postgres -c "CREATE DATABASE bench_scav_sparse"
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav_sparse
    "$SCAVENGERD" migrate --database-url "$SCAV_URL" >>"$RUN_DIR/migrate.log" 2>&1 || die "scavengerd migrate (sparse) failed"
    bench_load_scav bench_scav_sparse "$SPARSE_DIR"
    start_daemon sparse
    pg_psql -d bench_scav_sparse -c "VACUUM ANALYZE pins" -c "CHECKPOINT"
    DENSE_CENTRES=$CENTRES
    CENTRES=$SPARSE_DIR/centres.csv
    for ((round = 1; round <= SPARSE_ROUNDS; round++)); do
        step "sparse data: NEARBY round $round of $SPARSE_ROUNDS"
        for conns in $CONNS_LEVELS; do
            run_load redis nearby "$conns" "sparse$round"
            run_load scav nearby "$conns" "sparse$round"
        done
    done
    meta sparse_pins "$SPARSE_PINS"
    meta sparse_seed "$SPARSE_SEED"
    meta sparse_rounds "$SPARSE_ROUNDS"
    meta sparse_centres "$(wc -l <"$CENTRES")"
    CENTRES=$DENSE_CENTRES
}
