# shellcheck shell=bash
# The expiry sweep (step 5, issue 5, the full run): NEARBY without a sweep, then while
# `scavengerd expire` runs; only the expired rows may go.

# The set-up (expired copies of the loaded pins), NEARBY without a sweep, NEARBY during
# `scavengerd expire`, then what the sweep left.
sweep_step() {
    sweep_setup
    sweep_baseline
    sweep_during
    sweep_check
}

# Inputs: RUN_DIR, PINS, LOADED_AT, SWEEP_CONNS. Sets SWEEP (the sweep's figures' file),
# LIVE_BEFORE.
sweep_setup() {
    # The set-up: $PINS more pins that expired a day ago, copies of the loaded ones (same author,
    # place, kind, text, cell) under new ids: 'psweepbench' + 7 zeros ('a') + the copy's number in
    # base 32 (a-z2-7), so they cannot collide with the random ids. Every tenth gets two replies
    # ('rsweepbench…', numbered the same way) and photo pins get their photo copied, so the sweep
    # removes replies and photo bytes too. The daemon never sees them: they are written behind its
    # back and were expired before it could have loaded them.
    SWEEP=$RUN_DIR/sweep.txt
    : >"$SWEEP"
    # Writes the load generator abandoned when its window closed (a POSTPHOTO of a megabyte can take
    # a while) still commit.
    await_scav_writes
    LIVE_BEFORE=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM pins WHERE expires_at > now()")
    EXPIRED_BEFORE=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM pins WHERE expires_at <= now()")
    ((EXPIRED_BEFORE == 0)) || warn "$EXPIRED_BEFORE pins had already expired before the sweep's set-up"
    step "expiry sweep: adding $PINS expired pins (every tenth with 2 replies) to bench_scav"
    T_SETUP=$EPOCHREALTIME
    pg_psql -d bench_scav -v pins="$PINS" -v loaded_at="$LOADED_AT" >"$RUN_DIR/sweep-setup.log" <<'SQL'
CREATE FUNCTION pg_temp.sweep_id(prefix text, n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT prefix || 'sweepbenchaaaaaaa'
        || substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> 30) & 31)::int + 1, 1)
        || substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> 25) & 31)::int + 1, 1)
        || substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> 20) & 31)::int + 1, 1)
        || substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> 15) & 31)::int + 1, 1)
        || substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> 10) & 31)::int + 1, 1)
        || substr('abcdefghijklmnopqrstuvwxyz234567', ((n >> 5) & 31)::int + 1, 1)
        || substr('abcdefghijklmnopqrstuvwxyz234567', (n & 31)::int + 1, 1)
$$;
BEGIN;
CREATE TEMP TABLE sweep_src ON COMMIT DROP AS
    SELECT row_number() OVER () AS n, p.*
    FROM (SELECT * FROM pins WHERE created_at <= :'loaded_at'::timestamptz LIMIT :pins) p;
INSERT INTO pins (id, author_id, lat, lon, kind, body, created_at, expires_at, photo_mime, photo_bytes,
                  reply_count, cell, region)
SELECT pg_temp.sweep_id('p', n), author_id, lat, lon, kind, body, now() - interval '2 days',
       now() - interval '1 day', photo_mime, photo_bytes, CASE WHEN n % 10 = 0 THEN 2 ELSE 0 END, cell, region
FROM sweep_src;
INSERT INTO photos (pin_id, data)
SELECT pg_temp.sweep_id('p', s.n), ph.data FROM sweep_src s JOIN photos ph ON ph.pin_id = s.id;
INSERT INTO replies (id, pin_id, author_id, body, created_at)
SELECT pg_temp.sweep_id('r', 2 * s.n + k), pg_temp.sweep_id('p', s.n), s.author_id, 'bench reply ' || k,
       now() - interval '2 days' + k * interval '1 minute'
FROM sweep_src s CROSS JOIN generate_series(0, 1) k WHERE s.n % 10 = 0;
COMMIT;
SQL
    SWEEP_SETUP_S=$(awk -v a="$T_SETUP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    read -r EXP_PINS EXP_REPLIES EXP_PHOTO_BYTES < <(pg_psql -d bench_scav -At -F ' ' -c "
        SELECT (SELECT count(*) FROM pins WHERE expires_at <= now()),
               (SELECT count(*) FROM replies r JOIN pins p ON p.id = r.pin_id WHERE p.expires_at <= now()),
               (SELECT coalesce(sum(photo_bytes), 0) FROM pins WHERE expires_at <= now())")
    ((EXP_PINS == PINS)) || die "expected $PINS expired pins after the sweep's set-up, found $EXP_PINS"
    log "set-up: $EXP_PINS expired pins, $EXP_REPLIES replies, $EXP_PHOTO_BYTES photo bytes in $SWEEP_SETUP_S s (not a result)"
    # As the rows would be after a day in the table: vacuumed, analyzed, written out.
    pg_psql -d bench_scav -c "VACUUM ANALYZE pins" -c "VACUUM ANALYZE replies" -c "VACUUM ANALYZE photos" -c "CHECKPOINT"
    meta sweep_setup_s "$SWEEP_SETUP_S"
    meta sweep_live_before "$LIVE_BEFORE"
    meta sweep_expected_pins "$EXP_PINS"
    meta sweep_expected_replies "$EXP_REPLIES"
    meta sweep_expected_photo_bytes "$EXP_PHOTO_BYTES"
    meta sweep_conns "$SWEEP_CONNS"
}

# Inputs: SWEEP_CONNS, CENTRES, SCAV_PORT, DAEMON_PID, BPG_PID, RUN_SECONDS, WARMUP, SWEEP.
# Sets SWEEP_LG (the loadgen's arguments, the next run's too).
sweep_baseline() {
    step "expiry sweep: NEARBY at $SWEEP_CONNS connections without a sweep (baseline)"
    SWEEP_LG=(--target scav --op nearby --conns "$SWEEP_CONNS" --centres "$CENTRES" --port "$SCAV_PORT"
              --cpu-pids "$DAEMON_PID,$BPG_PID")
    OUT=$("$LOADGEN" "${SWEEP_LG[@]}" --seconds "$RUN_SECONDS" --warmup "$WARMUP" --label baseline \
          2>>"$RUN_DIR/loadgen.err") || { tail -n 5 "$RUN_DIR/loadgen.err" >&2; die "loadgen failed (sweep baseline)"; }
    printf '%s\n' "$OUT" >>"$SWEEP"
    log "    baseline: $(kv rps "$OUT") req/s  p50 $(kv p50_us "$OUT") µs  p99 $(kv p99_us "$OUT") µs  errors $(kv errors "$OUT")"
}

# Inputs: SWEEP_LG, SWEEP_CONNS, WARMUP, SCAV_URL, SCAVENGERD, SCAV_ARENAS, SCAV_MMAP_THRESHOLD, SWEEP. Sets
# SWEEP_LOAD_PID while the load runs.
sweep_during() {
    # During: the load starts first (warm-up, then its measured window opens and it creates the mark
    # file), then the sweep; when the sweep exits the load is stopped (SIGTERM: it prints the figures
    # of the window so far), so the window is the sweep's wall time plus a few milliseconds.
    step "expiry sweep: scavengerd expire under NEARBY load at $SWEEP_CONNS connections"
    MARK=$RUN_DIR/sweep-load.mark
    rm -f "$MARK"
    "$LOADGEN" "${SWEEP_LG[@]}" --seconds 3600 --warmup "$WARMUP" --label during --mark "$MARK" \
        >"$RUN_DIR/sweep-load.out" 2>>"$RUN_DIR/loadgen.err" 9>&- &
    SWEEP_LOAD_PID=$!
    for ((i = 0; i < 600; i++)); do
        [[ -e $MARK ]] && break
        kill -0 "$SWEEP_LOAD_PID" 2>/dev/null || { tail -n 5 "$RUN_DIR/loadgen.err" >&2; die "loadgen exited before the sweep"; }
        sleep 0.05
    done
    [[ -e $MARK ]] || die "the loadgen's measured window did not start within 30 s"
    T_SWEEP=$EPOCHREALTIME
    SWEEP_RC=0
    DATABASE_URL=$SCAV_URL MALLOC_ARENA_MAX=$SCAV_ARENAS MALLOC_MMAP_THRESHOLD_=$SCAV_MMAP_THRESHOLD timeout 7200 "$SCAVENGERD" expire \
        >"$RUN_DIR/sweep.log" 2>&1 9>&- || SWEEP_RC=$?
    SWEEP_WALL_S=$(awk -v a="$T_SWEEP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
    LOAD_RUNNING=0
    kill -0 "$SWEEP_LOAD_PID" 2>/dev/null && LOAD_RUNNING=1
    kill -TERM "$SWEEP_LOAD_PID" 2>/dev/null || true
    LOAD_RC=0
    wait "$SWEEP_LOAD_PID" || LOAD_RC=$?
    SWEEP_LOAD_PID=""
    ((SWEEP_RC == 0)) || { cat "$RUN_DIR/sweep.log" >&2; die "scavengerd expire failed (exit $SWEEP_RC)"; }
    ((LOAD_RC == 0)) || { tail -n 5 "$RUN_DIR/loadgen.err" >&2; die "loadgen failed during the sweep (exit $LOAD_RC)"; }
    ((LOAD_RUNNING)) || warn "the load ended before the sweep did (its window is shorter than the sweep)"
    OUT=$(cat "$RUN_DIR/sweep-load.out")
    printf '%s\n' "$OUT" >>"$SWEEP"
    SWEEP_LINE=$(grep -m1 '^expired ' "$RUN_DIR/sweep.log" || true)
    [[ -n $SWEEP_LINE ]] || { cat "$RUN_DIR/sweep.log" >&2; die "no summary line from scavengerd expire"; }
    log "    sweep: $SWEEP_LINE (wall $SWEEP_WALL_S s)"
    log "    during: $(kv rps "$OUT") req/s  p50 $(kv p50_us "$OUT") µs  p99 $(kv p99_us "$OUT") µs  errors $(kv errors "$OUT")  window $(kv seconds "$OUT") s"
    meta sweep_line "$SWEEP_LINE"
    meta sweep_wall_s "$SWEEP_WALL_S"
    meta sweep_pins "$(sed -n 's/.* \([0-9]\+\) pins.*/\1/p' <<<"$SWEEP_LINE")"
    meta sweep_replies "$(sed -n 's/.* \([0-9]\+\) replies.*/\1/p' <<<"$SWEEP_LINE")"
    meta sweep_photo_bytes "$(sed -n 's/.* \([0-9]\+\) photo bytes.*/\1/p' <<<"$SWEEP_LINE")"
    meta sweep_s "$(sed -n 's/.* in \([0-9.]\+\) s.*/\1/p' <<<"$SWEEP_LINE")"
}

# Inputs: LIVE_BEFORE, DAEMON_PID.
sweep_check() {
    # Only the expired rows went: the live pins are all there, nothing expired is left, and no reply
    # or photo of a swept pin survived.
    read -r LIVE_AFTER EXPIRED_AFTER LEFT_REPLIES LEFT_PHOTOS < <(pg_psql -d bench_scav -At -F ' ' -c "
        SELECT (SELECT count(*) FROM pins), (SELECT count(*) FROM pins WHERE expires_at <= now()),
               (SELECT count(*) FROM replies WHERE id LIKE 'rsweepbench%'),
               (SELECT count(*) FROM photos WHERE pin_id LIKE 'psweepbench%')")
    meta sweep_live_after "$LIVE_AFTER"
    meta sweep_expired_after "$EXPIRED_AFTER"
    meta sweep_left_replies "$LEFT_REPLIES"
    meta sweep_left_photos "$LEFT_PHOTOS"
    log "    after: $LIVE_AFTER pins (before the set-up: $LIVE_BEFORE live), $EXPIRED_AFTER expired, $LEFT_REPLIES replies and $LEFT_PHOTOS photos of swept pins left"
    ((LIVE_AFTER == LIVE_BEFORE)) || warn "live pins: $LIVE_BEFORE before the sweep, $LIVE_AFTER after"
    ((EXPIRED_AFTER == 0 && LEFT_REPLIES == 0 && LEFT_PHOTOS == 0)) || warn "the sweep left expired rows behind"
    meta rss_after_sweep_mb "$(rss_mb "$DAEMON_PID")"
}
