# shellcheck shell=bash
# 4f. A synchronous standby (issue 41): what "OK means on two machines" costs. The crowd's
#     database and daemon (steps/crowd.sh), a streaming standby of the bench cluster
#     (`pg_basebackup -R`, on a port of its own, named in `synchronous_standby_names`), then
#     POST (loadgen) and accepted CHECKINs (crowd.py, mix --standby-mix) at --standby-conns,
#     with `synchronous_commit = local` and `= on` alternating, --standby-rounds rounds each.

# Inputs: STANDBY_CONNS, STANDBY_ROUNDS, STANDBY_MIX, plus the crowd's (crowd_database,
# crowd_daemon). Sets STANDBY_PID (stopped by cleanup through standby_stop).
standby_step() {
    # After the crowd step (a full run) its database goes: a fresh crowd for this step.
    if [[ -n $DAEMON_PID ]]; then
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
    fi
    pg_psql -d postgres -c "DROP DATABASE IF EXISTS bench_scav_crowd WITH (FORCE)" >/dev/null
    crowd_database
    crowd_daemon
    standby_start
    local round mode out
    for ((round = 1; round <= STANDBY_ROUNDS; round++)); do
        for mode in local on; do
            standby_commit_mode "$mode"
            step "standby round $round: synchronous_commit = $mode, $STANDBY_CONNS connections, POST then CHECKIN ($STANDBY_MIX), $RUN_SECONDS s each"
            run_load scav post "$STANDBY_CONNS" "standby-$mode-$round"
            crowd_state >"$RUN_DIR/standby-state-$mode-$round.txt"
            if ! out=$(python3 scripts/bench/crowd.py mixed --port "$SCAV_PORT" --tag "$CROWD_TAG" \
                    --state "$RUN_DIR/standby-state-$mode-$round.txt" --conns "$STANDBY_CONNS" --seconds "$RUN_SECONDS" \
                    --warmup "$WARMUP" --mix "$STANDBY_MIX" --cpu-pids "$DAEMON_PID,$BPG_PID" --seed "$SEED" \
                    --label "rstandby-$mode-$round" 2>>"$RUN_DIR/standby.err"); then
                tail -n 5 "$RUN_DIR/standby.err" >&2
                die "the crowd driver failed with synchronous_commit = $mode (log: $RUN_DIR/standby.err)"
            fi
            printf 'standby_mode=%s round=%s %s\n' "$mode" "$round" "$out" >>"$RUN_DIR/standby.txt"
            log "    $mode: $(kv accepted_per_s "$out") accepted check-ins/s, CHECKIN p50 $(kv checkin_p50_us "$out") µs p99 $(kv checkin_p99_us "$out") µs; replies $(kv replies "$out")"
        done
    done
    standby_commit_mode on
    standby_report
    standby_stop
}

# Inputs: PG_PORT, PG_ROOT, PG_SOCKET, PG_BIN. Sets STANDBY_DATA, STANDBY_PORT, STANDBY_PID.
standby_start() {
    STANDBY_DATA=$PG_ROOT/standby
    pick_free_port STANDBY_PORT "$PG_PORT"
    step "a synchronous streaming standby of the bench cluster on 127.0.0.1:$STANDBY_PORT"
    pg_psql -d postgres -c "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (benchstandby)'" >/dev/null
    pg_psql -d postgres -c "SELECT pg_reload_conf()" >/dev/null
    pg_run "$PG_BIN/pg_basebackup" -D "$STANDBY_DATA" -R -X stream -c fast \
        -d "host=127.0.0.1 port=$PG_PORT user=postgres application_name=benchstandby" \
        || die "pg_basebackup of the bench cluster failed"
    pg_run "$PG_BIN/pg_ctl" start -w -t 60 -D "$STANDBY_DATA" -l "$PG_ROOT/standby.log" 9>&- \
        -o "-p $STANDBY_PORT -k '$PG_SOCKET' -h 127.0.0.1 -c max_connections=200 -c shared_buffers=512MB" >/dev/null \
        || { tail -n 20 "$PG_ROOT/standby.log" >&2; die "cannot start the bench standby"; }
    STANDBY_PID=$(head -n 1 "$STANDBY_DATA/postmaster.pid")
    local state="" tries=0
    until [[ $state == "streaming sync" ]]; do
        ((tries++ < 600)) || die "the bench standby is not a streaming synchronous standby after 60 s ($state)"
        sleep 0.1
        state=$(pg_psql -d postgres -Atc "SELECT state || ' ' || sync_state FROM pg_stat_replication WHERE application_name = 'benchstandby'")
    done
    meta standby_port "$STANDBY_PORT"
}

# standby_commit_mode MODE: `synchronous_commit` for every session of the bench cluster (a reload
# reaches the daemon's sessions, which do not set it).
standby_commit_mode() {
    pg_psql -d postgres -c "ALTER SYSTEM SET synchronous_commit = '$1'" >/dev/null
    pg_psql -d postgres -c "SELECT pg_reload_conf()" >/dev/null
}

# The figures, local against on, medians over the rounds, into the log and meta.
standby_report() {
    local mode post checkin
    for mode in local on; do
        post=$(awk -v m="$mode" '$0 ~ "label=rstandby-" m "-" { for (i = 1; i <= NF; i++) if ($i ~ /^rps=/) { split($i, a, "="); print a[2] } }' "$RUN_DIR/raw.txt" | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }')
        checkin=$(awk -v m="$mode" '$1 == "standby_mode=" m { for (i = 1; i <= NF; i++) if ($i ~ /^accepted_per_s=/) { split($i, a, "="); print a[2] } }' "$RUN_DIR/standby.txt" | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }')
        meta "standby_${mode}_post_rps" "$post"
        meta "standby_${mode}_checkin_rps" "$checkin"
        log "    synchronous_commit = $mode: POST $post/s, accepted CHECKIN $checkin/s (medians of $STANDBY_ROUNDS rounds, $STANDBY_CONNS connections)"
    done
}

# Stops the standby and takes the requirement off the primary.
standby_stop() {
    pg_psql -d postgres -c "ALTER SYSTEM RESET synchronous_standby_names" >/dev/null || true
    pg_psql -d postgres -c "ALTER SYSTEM RESET synchronous_commit" >/dev/null || true
    pg_psql -d postgres -c "SELECT pg_reload_conf()" >/dev/null || true
    if [[ -n ${STANDBY_DATA:-} && -f $STANDBY_DATA/postmaster.pid ]]; then
        pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m fast -D "$STANDBY_DATA" >/dev/null 2>&1 || true
    fi
    [[ -f $PG_ROOT/standby.log ]] && cp "$PG_ROOT/standby.log" "$RUN_DIR/standby-postgres.log"
    STANDBY_PID=""
}
