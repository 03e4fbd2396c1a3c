# shellcheck shell=bash
# 4g. Writes under a standby that waits (issue 54): does the cluster's write rate grow with
#     connections when every commit waits for a standby about a zone away? The hunts' database
#     and daemon (as --only hunts), a synchronous streaming standby (steps/standby.sh) that
#     applies each commit 2 ms late (`recovery_min_apply_delay = 2ms`, the primary's
#     `synchronous_commit = remote_apply`: every commit waits ~2 ms), and, at 1, 8 and 32
#     connections (--standby-wait-conns), alternating in each of --write-rounds rounds: plain
#     INSERT + COMMIT into a table shaped like pins (loadgen --target pg: PostgreSQL's own
#     parallel commits, as pgbench measures them), keyed POST and keyed CHECKIN (loadgen --keyed:
#     each line with `REQUEST <key>` of its own, as the clients send writes; a check-in must be
#     accepted). Then the same with `synchronous_commit = local` (no wait). The targets are
#     printed met or MISSED.

# Inputs: STANDBY_WAIT_CONNS, WRITE_ROUNDS, HUNT_TAG, HUNT_WALK_HUNTS, RUN_DIR, PG_PORT, plus the
# hunts' walk (hunt_walk, hunt_token). Uses standby_start/standby_stop (steps/standby.sh).
standby_wait_step() {
    local walk=$RUN_DIR/standby-wait-walk.txt walkers mode conns round next=0
    hunt_walk bench_scav >"$walk"
    ((HUNT_WALK_HUNTS * 100 == $(wc -l <"$walk"))) || die "expected $((HUNT_WALK_HUNTS * 100)) walk stops, found $(wc -l <"$walk")"
    pg_psql -d bench_scav -c "CREATE TABLE IF NOT EXISTS bench_inserts (LIKE pins INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)" >/dev/null
    standby_start
    pg_run "$PG_BIN/psql" -X -q -h "$PG_SOCKET" -p "$STANDBY_PORT" -U postgres -d postgres \
        -c "ALTER SYSTEM SET recovery_min_apply_delay = '2ms'" -c "SELECT pg_reload_conf()" >/dev/null \
        || die "cannot set the standby's apply delay"
    : >"$RUN_DIR/standby-wait.txt"
    for mode in remote_apply local; do
        standby_commit_mode "$mode"
        for ((round = 1; round <= WRITE_ROUNDS; round++)); do
            for conns in $STANDBY_WAIT_CONNS; do
                step "standby wait ($mode) round $round: INSERT, keyed POST, keyed CHECKIN at $conns connections"
                standby_wait_run "$mode" "$round" "$conns" insert pg insert --pg "host=127.0.0.1 port=$PG_PORT dbname=bench_scav user=postgres" --table bench_inserts
                standby_wait_run "$mode" "$round" "$conns" post scav post --keyed "sw$HUNT_TAG-$mode-$round-$conns-p"
                # Fresh walkers for each run (each connection a player of its own, logged in).
                walkers=$RUN_DIR/standby-wait-walkers-$mode-$round-$conns.txt
                for ((i = 1; i <= conns; i++)); do
                    next=$((next + 1))
                    hunt_token "$(printf 'hbw%04d' "$next")"
                done >"$walkers"
                standby_wait_run "$mode" "$round" "$conns" checkin scav checkin --walk "$walk" --setup 'AUTH {value}' \
                    --setup-values "$walkers" --expect '"status":"accepted"' --keyed "sw$HUNT_TAG-$mode-$round-$conns-c"
            done
        done
    done
    standby_commit_mode on
    standby_stop
    standby_wait_report
}

# standby_wait_run MODE ROUND CONNS NAME TARGET OP ARGS…: one run, its line kept with its mode.
standby_wait_run() {
    local mode=$1 round=$2 conns=$3 name=$4 target=$5 op=$6
    shift 6
    run_load "$target" "$op" "$conns" "sw-$mode-$name-$round" "$@"
    printf 'sw_mode=%s sw_op=%s sw_conns=%s %s\n' "$mode" "$name" "$conns" "$(tail -n 1 "$RAW")" >>"$RUN_DIR/standby-wait.txt"
}

# The medians over the rounds of each mode, operation and connection count; the ratios and the
# issue's targets, each met or MISSED, into the log and meta.
standby_wait_report() {
    local mode name conns
    declare -A rate
    for mode in remote_apply local; do
        for name in insert post checkin; do
            for conns in $STANDBY_WAIT_CONNS; do
                rate[$mode.$name.$conns]=$(awk -v m="$mode" -v o="$name" -v c="$conns" '
                    $1 == "sw_mode=" m && $2 == "sw_op=" o && $3 == "sw_conns=" c {
                        for (i = 4; i <= NF; i++) if ($i ~ /^rps=/) { split($i, a, "="); print a[2] } }' \
                    "$RUN_DIR/standby-wait.txt" | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }')
                meta "standby_wait_${mode}_${name}_${conns}_rps" "${rate[$mode.$name.$conns]}"
            done
            log "    $mode: $name $(for conns in $STANDBY_WAIT_CONNS; do printf '%s/s at %s  ' "${rate[$mode.$name.$conns]}" "$conns"; done)"
        done
    done
    local first last
    first=$(awk '{ print $1 }' <<<"$STANDBY_WAIT_CONNS")
    last=$(awk '{ print $NF }' <<<"$STANDBY_WAIT_CONNS")
    standby_wait_target "keyed POST ≥ 0.5× INSERT at $last connections, commits waiting 2 ms" \
        "${rate[remote_apply.post.$last]}" "${rate[remote_apply.insert.$last]}" 0.5
    standby_wait_target "keyed CHECKIN ≥ 0.25× INSERT at $last connections, commits waiting 2 ms" \
        "${rate[remote_apply.checkin.$last]}" "${rate[remote_apply.insert.$last]}" 0.25
    standby_wait_target "keyed POST at $last connections ≥ 10× at $first, commits waiting 2 ms" \
        "${rate[remote_apply.post.$last]}" "${rate[remote_apply.post.$first]}" 10
    standby_wait_target "keyed POST ≥ 1.0× INSERT at $last connections, no wait" \
        "${rate[local.post.$last]}" "${rate[local.insert.$last]}" 1.0
}

# standby_wait_target TEXT A B MIN: A ÷ B against MIN, logged and kept in meta.
standby_wait_target() {
    local ratio verdict
    ratio=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
    verdict=$(awk -v r="$ratio" -v m="$4" 'BEGIN { print (r >= m) ? "met" : "MISSED" }')
    log "    target: $1: ${ratio}× ($2 / $3): $verdict"
    printf 'standby-wait target: %s: %s× — %s\n' "$1" "$ratio" "$verdict" >>"$RUN_DIR/standby-wait-targets.txt"
}
