# shellcheck shell=bash
# PING at 8 connections (step 4, the full run): Redis, scavengerd, scavengerd --io-threads 1 and
# the SwiftNIO floor (scripts/bench/nio-floor).

# Inputs: ROUNDS, PING_SECONDS, PG_PORT, FLOOR, LOADGEN, CENTRES, DAEMON_PID. Starts and stops
# the one-thread daemon (SCAV1_PORT, SCAV1_PID) and the floors (FLOOR_PORTS, FLOOR_PIDS by threads).
ping_floor_step() {
    # PING (issue 31: scavengerd's server CPU per request at most 1.15× the SwiftNIO floor's with as
    # many threads, with one thread and with one per core): scavengerd as started above (one I/O
    # thread per core), a second scavengerd with --io-threads 1 on a database of its own (no pins)
    # started for this step only, and the floor with one thread and with one per core, all up for
    # the whole step; alternating in each of --rounds rounds.
    FLOOR_THREADS=$(printf '%s\n' 1 "$(nproc)" | sort -un | tr '\n' ' ')
    step "PING at 8 connections: starting scavengerd --io-threads 1 (bench_scav_ping, no pins) and the SwiftNIO floor (threads: ${FLOOR_THREADS% })"
    pick_free_port SCAV1_PORT
    spawn_daemon ping-1thread SCAV1_PID "$SCAV1_PORT" "postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav_ping" --io-threads 1
    for threads in $FLOOR_THREADS; do
        pick_free_port "FLOOR_PORTS[$threads]"
        "$FLOOR" "${FLOOR_PORTS[$threads]}" "$threads" >"$RUN_DIR/nio-floor-$threads.log" 2>&1 9>&- &
        # shellcheck disable=SC2004  # FLOOR_PIDS is associative (declare -A in bench.sh)
        FLOOR_PIDS[$threads]=$!
        await_ping "$LOADGEN" "$CENTRES" "${FLOOR_PORTS[$threads]}" "${FLOOR_PIDS[$threads]}" "$RUN_DIR/nio-floor-$threads.log"
    done
    for ((round = 1; round <= ROUNDS; round++)); do
        step "PING round $round of $ROUNDS, 8 connections: Redis, scavengerd, scavengerd --io-threads 1, the SwiftNIO floor"
        run_load redis ping 8 "$round" --seconds "$PING_SECONDS"
        # The daemons' own CPU only (the last --cpu-pids wins): PING never touches the database,
        # and the cluster's background work (autovacuum, checkpoints) is not the daemon's.
        run_load scav ping 8 "$round" --seconds "$PING_SECONDS" --cpu-pids "$DAEMON_PID"
        run_load scav1 ping 8 "$round" --seconds "$PING_SECONDS" --cpu-pids "$SCAV1_PID"
        for threads in $FLOOR_THREADS; do
            run_load "floor$threads" ping 8 "$round" --seconds "$PING_SECONDS"
        done
    done
    stop_pid "$SCAV1_PID" 30
    SCAV1_PID=""
    for threads in $FLOOR_THREADS; do
        stop_pid "${FLOOR_PIDS[$threads]}" 5
    done
    FLOOR_PIDS=()
}
