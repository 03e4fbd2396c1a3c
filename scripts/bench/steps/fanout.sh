# shellcheck shell=bash
# 4d. Live fan-out (issue 31): --fanout-watchers connections each watching a circle of one city
#     while --fanout-rate pins a second are POSTed into it; delivery delay from the POST's OK,
#     memory per idle watching connection, CPU per delivered event. Last in the full run, on a
#     database of its own.

# fo KEY: the value of KEY in the fan-out client's line (FO).
fo() { kv "$1" "$FO"; }

# Inputs: FANOUT_WATCHERS, FANOUT_POSTERS, FANOUT_RATE, FANOUT_SECONDS, FANOUT_RADIUS, SEED, FANOUT
# (the client), PG_PORT, SCAV_PORT, DAEMON_PID (stopped; the fan-out's daemon replaces it). Sets
# MAX_CONNS and MAX_CONNS_PER_ADDR (for the fan-out's daemon), SCAV_URL, DAEMON_PID, FO.
fanout_step() {
    meta fanout_loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
    FANOUT_DB=bench_scav_fanout
    if [[ -n $DAEMON_PID ]]; then
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
    fi
    # Sockets: the client holds every watcher and poster; the daemon as many, its database pool and
    # its files besides.
    FANOUT_FDS=$((FANOUT_WATCHERS + FANOUT_POSTERS + 1024))
    if (($(ulimit -n) < FANOUT_FDS)); then
        if (($(ulimit -Hn) < FANOUT_FDS)) && ! ulimit -Hn "$FANOUT_FDS" 2>/dev/null; then
            die "--fanout-watchers $FANOUT_WATCHERS needs $FANOUT_FDS open files; the hard limit is $(ulimit -Hn) (raise it, or watch fewer)"
        fi
        ulimit -n "$FANOUT_FDS"
    fi
    MAX_CONNS=$((FANOUT_WATCHERS + FANOUT_POSTERS + 64))
    # shellcheck disable=SC2034  # MAX_CONNS_PER_ADDR: read by the fan-out daemon's limits (spawn_daemon)
    MAX_CONNS_PER_ADDR=$MAX_CONNS
    step "fan-out: a database of its own ($FANOUT_DB, no pins); scavengerd with --max-connections $MAX_CONNS (ulimit -n $(ulimit -n))"
    pg_psql -d postgres -c "CREATE DATABASE $FANOUT_DB"
    # shellcheck disable=SC2034  # SCAV_URL: read by scav_migrate and start_daemon
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$FANOUT_DB
    scav_migrate
    start_daemon fanout
    log "    started: $READY"
    FANOUT_OUT=$RUN_DIR/fanout.txt
    step "fan-out: $FANOUT_WATCHERS watchers (one WATCH of $FANOUT_RADIUS m each in a 10 km square around Berlin), then $FANOUT_RATE pins/s for $FANOUT_SECONDS s from $FANOUT_POSTERS posters"
    if ! "$FANOUT" --port "$SCAV_PORT" --daemon-pid "$DAEMON_PID" --watchers "$FANOUT_WATCHERS" --posters "$FANOUT_POSTERS" \
            --rate "$FANOUT_RATE" --seconds "$FANOUT_SECONDS" --radius "$FANOUT_RADIUS" --seed "$SEED" \
            >"$FANOUT_OUT" 2>>"$RUN_DIR/fanout.err"; then
        tail -n 5 "$RUN_DIR/fanout.err" >&2
        tail -n 10 "$RUN_DIR/scavengerd-fanout.log" >&2
        die "the fan-out client failed (log: $RUN_DIR/fanout.err)"
    fi
    FO=$(cat "$FANOUT_OUT")
    FO_KB=$(awk -v b="$(fo watch_conn_bytes)" 'BEGIN { printf "%.1f", b / 1024 }')
    FO_IDLE_KB=$(awk -v b="$(fo idle_conn_bytes)" 'BEGIN { printf "%.1f", b / 1024 }')
    FO_P99_MET=$(awk -v x="$(fo p99_ms)" 'BEGIN { print (x < 50) ? "met" : "missed" }')
    FO_MEM_MET=$(awk -v x="$FO_KB" 'BEGIN { print (x <= 16) ? "met" : "missed" }')
    log "    RSS: $(fo rss_before_kb) KB before, $(fo rss_idle_kb) KB with $FANOUT_WATCHERS idle connections ($FO_IDLE_KB KB each), $(fo rss_watch_kb) KB with a watch on each"
    log "    connecting took $(fo connect_s) s, the WATCHes $(fo watch_s) s"
    log "    posted $(fo posts_ok) of $(fo posts) ($(fo post_errors) errors; $(fo achieved_rate)/s); events delivered $(fo events): $(fo expected) expected (and $(fo edge) within 1 m of a circle's edge, either way), $(fo missing) missing, $(fo stray) stray, $(fo duplicates) twice; $(fo overflows) overflows; $(fo events_before_ok) read before their POST's OK (counted as 0 ms)"
    log "    POST (send → OK): p50 $(fo post_p50_ms) ms  p99 $(fo post_p99_ms) ms  max $(fo post_max_ms) ms"
    log "    delivery from the POST's OK: p50 $(fo p50_ms) ms  p90 $(fo p90_ms) ms  p99 $(fo p99_ms) ms  p99.9 $(fo p999_ms) ms  max $(fo max_ms) ms"
    log "    daemon CPU $(fo daemon_cpu_s) s over $(fo window_s) s ($(fo daemon_cpu_pct) %): $(fo cpu_us_per_event) µs per delivered event; client: $(fo client_cpu_pct) % CPU, POSTs sent late by p99 $(fo send_lag_p99_ms) ms, max $(fo send_lag_max_ms) ms"
    log "    fan-out: delivery p99 $(fo p99_ms) ms (target < 50 ms: $FO_P99_MET)"
    log "    memory per idle watching connection $FO_KB KB (target ≤ 16 KB: $FO_MEM_MET)"
    (($(fo missing) + $(fo stray) + $(fo duplicates) + $(fo overflows) == 0)) \
        || warn "events: $(fo missing) missing, $(fo stray) stray, $(fo duplicates) duplicates, $(fo overflows) overflows"
    ((FANOUT_WATCHERS == 10000)) || log "    (the issue's targets are for 10,000 watchers at 200 pins/s)"
    meta fanout_line "$FO"
    meta fanout_hwm_mb "$(hwm_mb "$DAEMON_PID")"
    meta fanout_loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
}
