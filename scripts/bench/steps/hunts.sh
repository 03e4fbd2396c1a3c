# shellcheck shell=bash
# Hunts (step 4b, issue 27): CHECKIN against POST, then LEADERBOARD. HUNT_LB and hunt_walk serve
# the rankings' check-ins (step 4c) too.

# The hunts are those of scripts/bench/hunts.sql, written before the daemon started. Hunt number
# 0 there is the leaderboard's; the others are walked by the CHECKIN players (of step 4b, and of
# step 4c's check-ins on a database of its own).
HUNT_LB=hbenchaaaaaaaaaaaaaaaaaaa
# The walk: every walk stop of database $1 once, as "stop lat lon", the fix 3.3 m north of the
# stop (inside its 50 m).
hunt_walk() {
    pg_psql -d "$1" -At -F ' ' -c "SELECT s.id, round((s.lat + 0.00003)::numeric, 6), s.lon FROM hunt_stops s
        WHERE s.hunt_id LIKE 'hbench%' AND s.hunt_id <> '$HUNT_LB' ORDER BY s.hunt_id, s.n"
}

hunt_token() { printf 'hbt_%s_%s\n' "$HUNT_TAG" "$1"; }

# On the hunts written into bench_scav before the daemon started (write_bench_hunts).
hunts_step() {
    hunts_checkin_vs_post
    hunts_leaderboard
}

# Inputs: RUN_DIR, HUNT_LB, HUNT_WALK_HUNTS, HUNT_CONNS, HUNT_PLAYERS, WRITE_ROUNDS, HUNT_TAG
# (hunt_token). Sets WALK (the walk's file).
hunts_checkin_vs_post() {
    HUNT_STATS="SELECT count(*), count(*) FILTER (WHERE c.status = 'accepted'), coalesce(sum(c.points), 0)
        FROM checkins c WHERE c.hunt_id LIKE 'hbench%' AND c.hunt_id <> '$HUNT_LB'"

    # The walk (hunt_walk). Connection i of a run starts at line i*lines/conns and takes the next
    # line for each request, so each request is a (player, stop) pair never used before, and no two
    # connections are at one stop at once.
    WALK=$RUN_DIR/hunt-walk.txt
    hunt_walk bench_scav >"$WALK"
    ((HUNT_WALK_HUNTS * 100 == $(wc -l <"$WALK"))) || die "expected $((HUNT_WALK_HUNTS * 100)) walk stops, found $(wc -l <"$WALK")"
    read -r CHECKINS_BEFORE _ < <(pg_psql -d bench_scav -At -F ' ' -c "$HUNT_STATS")
    ((CHECKINS_BEFORE == 0)) || die "the walk hunts already hold $CHECKINS_BEFORE check-ins"
    meta hunt_conns "$HUNT_CONNS"
    meta hunt_walk_hunts "$HUNT_WALK_HUNTS"
    meta hunt_walk_stops "$((HUNT_WALK_HUNTS * 100))"
    meta hunt_players "$HUNT_PLAYERS"

    # CHECKIN against POST, alternating. Round r's connections are the walkers (r-1)*conns+1 … r*conns,
    # each logged in with AUTH on a connection of its own and already a player of every walk hunt.
    # Only an accepted check-in counts: any other reply (a CONFLICT, TOO_FAR, a flagged check-in) is
    # an error.
    for ((round = 1; round <= WRITE_ROUNDS; round++)); do
        step "hunts round $round of $WRITE_ROUNDS: CHECKIN vs POST, $HUNT_CONNS connections"
        WALKERS=$RUN_DIR/hunt-walkers-r$round.txt
        for ((i = 1; i <= HUNT_CONNS; i++)); do
            hunt_token "$(printf 'hbw%04d' $(((round - 1) * HUNT_CONNS + i)))"
        done >"$WALKERS"
        run_load scav post "$HUNT_CONNS" "hunts$round"
        run_load scav checkin "$HUNT_CONNS" "hunts$round" --walk "$WALK" --setup 'AUTH {value}' --setup-values "$WALKERS" \
            --expect '"status":"accepted"'
    done
    # What the check-ins left: every one accepted, and the players' points are their check-ins' sum.
    await_scav_writes
    read -r CHECKINS_WRITTEN CHECKINS_ACCEPTED CHECKIN_POINTS < <(pg_psql -d bench_scav -At -F ' ' -c "$HUNT_STATS")
    PLAYER_POINTS=$(pg_psql -d bench_scav -Atc "SELECT coalesce(sum(p.points), 0) FROM hunt_players p
        WHERE p.hunt_id LIKE 'hbench%' AND p.hunt_id <> '$HUNT_LB'")
    meta hunt_checkins_written "$CHECKINS_WRITTEN"
    meta hunt_checkins_accepted "$CHECKINS_ACCEPTED"
    meta hunt_checkin_points "$CHECKIN_POINTS"
    meta hunt_player_points "$PLAYER_POINTS"
    log "    $CHECKINS_WRITTEN check-ins written, $CHECKINS_ACCEPTED accepted; $CHECKIN_POINTS points in them, $PLAYER_POINTS in the players' standings"
    ((CHECKINS_WRITTEN == CHECKINS_ACCEPTED)) || warn "$((CHECKINS_WRITTEN - CHECKINS_ACCEPTED)) check-ins were not accepted"
    ((CHECKIN_POINTS == PLAYER_POINTS)) || warn "the players' points ($PLAYER_POINTS) are not their check-ins' ($CHECKIN_POINTS)"
}

# Inputs: RUN_DIR, HUNT_CONNS, HUNT_PLAYERS, HUNT_LB, SCAV_PORT, ROUNDS, DAEMON_PID.
hunts_leaderboard() {
    # LEADERBOARD: the first read loads the board from the players' standings (timed here, once);
    # then LIMIT 50 with no login, and AROUND with each connection logged in as a player spread over
    # the board (players 1, 1 + players/conns, …), alternating, as many rounds as NEARBY.
    AROUND=$RUN_DIR/hunt-around.txt
    for ((i = 0; i < HUNT_CONNS; i++)); do
        hunt_token "$(printf 'hbp%05d' $((1 + i * HUNT_PLAYERS / HUNT_CONNS)))"
    done >"$AROUND"
    BOARD_REPLY=""
    T_BOARD=$EPOCHREALTIME
    if exec 8<>"/dev/tcp/127.0.0.1/$SCAV_PORT"; then
        printf 'LEADERBOARD %s LIMIT 1\n' "$HUNT_LB" >&8
        read -r -t 60 BOARD_REPLY <&8 || true
        exec 8>&-
    fi
    BOARD_MS=$(awk -v a="$T_BOARD" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
    [[ $BOARD_REPLY == 'OK {"entries":[{"rank":1,'* ]] || die "LEADERBOARD of the bench hunt: ${BOARD_REPLY:-no reply}"
    meta hunt_board_load_ms "$BOARD_MS"
    log "    first LEADERBOARD (loads the board of $HUNT_PLAYERS players): $BOARD_MS ms"
    for ((round = 1; round <= ROUNDS; round++)); do
        step "hunts round $round of $ROUNDS: LEADERBOARD of $HUNT_PLAYERS players, LIMIT 50 and AROUND, $HUNT_CONNS connections"
        run_load scav leaderboard "$HUNT_CONNS" "hunts$round" --hunt "$HUNT_LB" --limit 50
        run_load scav leaderboard-around "$HUNT_CONNS" "hunts$round" --hunt "$HUNT_LB" --setup 'AUTH {value}' --setup-values "$AROUND"
    done
    meta rss_after_hunts_mb "$(rss_mb "$DAEMON_PID")"
}
