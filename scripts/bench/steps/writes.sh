# shellcheck shell=bash
# Durable writes (step 4, the full run): POST against PostgreSQL's INSERT, INSERT + pg_notify as a
# reference, POSTPHOTO.

# Inputs: WRITE_ROUNDS, WRITE_CONNS, PG_PORT, PING_SECONDS, PHOTO_CONNS, PHOTO_BYTES,
# PHOTO_SECONDS, DAEMON_PID.
writes_step() {
    for ((round = 1; round <= WRITE_ROUNDS; round++)); do
        step "durable writes round $round of $WRITE_ROUNDS: scavengerd POST vs PostgreSQL INSERT, $WRITE_CONNS connections"
        run_load scav post "$WRITE_CONNS" "$round"
        run_load pg insert "$WRITE_CONNS" "$round" --pg "host=127.0.0.1 port=$PG_PORT dbname=bench_scav user=postgres" \
            --table bench_inserts
    done

    # A reference, not a target: the INSERT with a pg_notify in the same statement, as POST does.
    # PostgreSQL serializes the commits of notifying transactions (a lock held through the WAL
    # flush), so this shows the ceiling that design puts on durable writes.
    step "PostgreSQL INSERT + pg_notify, $WRITE_CONNS connections (reference)"
    run_load pg insert-notify "$WRITE_CONNS" 1 --pg "host=127.0.0.1 port=$PG_PORT dbname=bench_scav user=postgres" \
        --table bench_inserts --seconds "$PING_SECONDS"

    step "POSTPHOTO, $((PHOTO_BYTES / 1024)) KiB photos, $PHOTO_CONNS connections"
    run_load scav photo "$PHOTO_CONNS" 1 --photo-bytes "$PHOTO_BYTES" --seconds "$PHOTO_SECONDS"
    meta rss_end_mb "$(rss_mb "$DAEMON_PID")"
    meta hwm_end_mb "$(hwm_mb "$DAEMON_PID")"
}
