# shellcheck shell=bash
# 4e. The crowd (issue 38): --crowd-players players in --crowd-hunts running hunts of 10 stops,
#     on a database of its own, and --crowd-teams teams of 5 in team hunts of 10 teams and
#     CROWD_TEAM_STOPS stops (protocol 1.4). Phase A at each of --crowd-conns: POST (loadgen), the
#     mixed crowd (scripts/bench/crowd.py), then the same mix played by the team crowd without LEAVE
#     and JOIN (a LEAVE of a running team hunt is final since protocol 1.5); phase B: --crowd-joiners JOINs of one hunt by its
#     code at one instant, each from a connection of its own.

# The crowd: its database, the daemon on it, phase A at each of --crowd-conns, phase B, then
# what it left.
crowd_step() {
    crowd_database
    crowd_daemon
    crowd_phase_a
    crowd_phase_b
    crowd_check
}

# Inputs: CROWD_PLAYERS, CROWD_HUNTS, CROWD_TEAMS, CROWD_TEAM_STOPS, PG_PORT, DAEMON_PID (stopped). Sets CROWD_DB, CROWD_TAG,
# CROWD_OUT (the crowd's figures' file), SCAV_URL.
crowd_database() {
    meta crowd_loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
    CROWD_DB=bench_scav_crowd
    CROWD_TAG=$RANDOM$RANDOM
    CROWD_OUT=$RUN_DIR/crowd.txt
    : >"$CROWD_OUT"
    if [[ -n $DAEMON_PID ]]; then
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
    fi
    step "crowd: a database of its own ($CROWD_DB): $CROWD_PLAYERS players in $CROWD_HUNTS running hunts of 10 stops, $CROWD_TEAMS teams of 5 in $(((CROWD_TEAMS + 9) / 10)) team hunts of $CROWD_TEAM_STOPS stops, and a join hunt"
    pg_psql -d postgres -c "CREATE DATABASE $CROWD_DB"
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$CROWD_DB
    scav_migrate
    T_SETUP=$EPOCHREALTIME
    pg_psql -d "$CROWD_DB" -v players="$CROWD_PLAYERS" -v hunts="$CROWD_HUNTS" -v teams="$CROWD_TEAMS" -v team_stops="$CROWD_TEAM_STOPS" -v tag="$CROWD_TAG" \
        -f scripts/bench/crowd.sql >"$RUN_DIR/crowd-setup.log" || die "writing the crowd failed (scripts/bench/crowd.sql)"
    pg_psql -d postgres -c "CHECKPOINT" >/dev/null
    log "    crowd written in $(awk -v a="$T_SETUP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s (not a result)"
}

# Inputs: CROWD_JOINERS, CROWD_DB, MAX_CONNS, SCAV_PORT, SCAV_URL. Sets MAX_CONNS_PER_ADDR (and MAX_CONNS
# when it is below it), DAEMON_PID, CROWD_JOIN_CODE.
crowd_daemon() {
    # Phase B's connections and the mixed crowd's all come from 127.0.0.1; one address, players
    # joining, leaving and chatting as fast as they can: those per-user limits are off too. The
    # per-address limit on JOINs by unknown codes stays at its default: right codes cost it
    # nothing, however many arrive at once (at 44aa246 it let 26 of 300 in; see the bench README).
    MAX_CONNS_PER_ADDR=$((CROWD_JOINERS + 64))
    ((MAX_CONNS_PER_ADDR <= MAX_CONNS)) || MAX_CONNS=$((MAX_CONNS_PER_ADDR + 64))
    step "crowd: starting scavengerd on $CROWD_DB (--max-connections-per-address $MAX_CONNS_PER_ADDR --join-rate off --reply-rate off)"
    spawn_daemon crowd DAEMON_PID "$SCAV_PORT" "$SCAV_URL" --join-rate off --reply-rate off
    log "    started: $SPAWN_READY"
    CROWD_JOIN_CODE=$(pg_psql -d "$CROWD_DB" -Atc "SELECT code FROM hunts WHERE id LIKE 'hcrowd%' AND name = 'Crowd join'")
}

# Inputs: CROWD_PLAYERS, CROWD_HUNTS, CROWD_TEAMS, CROWD_JOINERS, CROWD_MIX, CROWD_CONNS, RUN_SECONDS,
# WARMUP, SEED, CROWD_TAG, CROWD_OUT, SCAV_PORT, DAEMON_PID, BPG_PID.
crowd_phase_a() {
    meta crowd_players "$CROWD_PLAYERS"
    meta crowd_hunts "$CROWD_HUNTS"
    meta crowd_teams "$CROWD_TEAMS"
    meta crowd_team_stops "$CROWD_TEAM_STOPS"
    meta crowd_joiners "$CROWD_JOINERS"
    meta crowd_mix "$CROWD_MIX"
    for conns in $CROWD_CONNS; do
        step "crowd phase A at $conns connections: POST, then the mixed crowd ($CROWD_MIX), $RUN_SECONDS s each"
        run_load scav post "$conns" crowd1
        crowd_state >"$RUN_DIR/crowd-state-c$conns.txt"
        (($(grep -c '^player ' "$RUN_DIR/crowd-state-c$conns.txt") == CROWD_PLAYERS)) || die "the crowd's state lists $(grep -c '^player ' "$RUN_DIR/crowd-state-c$conns.txt") players, not $CROWD_PLAYERS"
        if ! out=$(python3 scripts/bench/crowd.py mixed --port "$SCAV_PORT" --tag "$CROWD_TAG" --state "$RUN_DIR/crowd-state-c$conns.txt" \
                --conns "$conns" --seconds "$RUN_SECONDS" --warmup "$WARMUP" --mix "$CROWD_MIX" --cpu-pids "$DAEMON_PID,$BPG_PID" \
                --seed "$SEED" --label rcrowd1 2>>"$RUN_DIR/crowd.err"); then
            tail -n 5 "$RUN_DIR/crowd.err" >&2
            die "the crowd driver failed at $conns connections (log: $RUN_DIR/crowd.err)"
        fi
        printf '%s\n' "$out" >>"$CROWD_OUT"
        log "    crowd  $(printf '%3s' "$conns") conns  $(kv rps "$out") req/s, $(kv accepted_per_s "$out") accepted check-ins/s  CHECKIN p50 $(kv checkin_p50_us "$out") µs  p99 $(kv checkin_p99_us "$out") µs  server cpu $(kv server_cpu_pct "$out") % (daemon:postgres $(kv cpu_pct_by_pid "$out")), $(kv server_cpu_ms_per_accepted "$out") ms per accepted  client cpu $(kv client_cpu_pct "$out") %"
        log "    replies: $(kv replies "$out"); CHECKIN: $(kv replies_checkin "$out")"
        if ((CROWD_TEAMS > 0)); then crowd_teams_run "$conns"; fi
    done
}

# The team crowd at CONNS connections (protocol 1.4): the same mix in the team hunts without LEAVE
# and JOIN (crowd.py leaves them out: final in a running team hunt since protocol 1.5), right
# after the single players' run; its figures beside theirs. Inputs: as crowd_phase_a's.
crowd_teams_run() {
    local conns=$1 out single
    single=$(tail -n 1 "$CROWD_OUT")
    step "crowd phase A at $conns connections: the team crowd, $CROWD_TEAMS teams of 5 ($CROWD_MIX without leave and join), $RUN_SECONDS s"
    crowd_team_state >"$RUN_DIR/crowd-team-state-c$conns.txt"
    (($(grep -c '^member ' "$RUN_DIR/crowd-team-state-c$conns.txt") == 5 * CROWD_TEAMS)) \
        || die "the team crowd's state lists $(grep -c '^member ' "$RUN_DIR/crowd-team-state-c$conns.txt") players, not $((5 * CROWD_TEAMS))"
    if ! out=$(python3 scripts/bench/crowd.py mixed --port "$SCAV_PORT" --tag "$CROWD_TAG" --state "$RUN_DIR/crowd-team-state-c$conns.txt" \
            --conns "$conns" --seconds "$RUN_SECONDS" --warmup "$WARMUP" --mix "$CROWD_MIX" --cpu-pids "$DAEMON_PID,$BPG_PID" \
            --seed "$SEED" --label rcrowdteams1 2>>"$RUN_DIR/crowd.err"); then
        tail -n 5 "$RUN_DIR/crowd.err" >&2
        die "the crowd driver failed on the team hunts at $conns connections (log: $RUN_DIR/crowd.err)"
    fi
    printf '%s\n' "$out" >>"$CROWD_OUT"
    log "    teams  $(printf '%3s' "$conns") conns  $(kv rps "$out") req/s, $(kv accepted_per_s "$out") accepted team check-ins/s (single players: $(kv accepted_per_s "$single"))  CHECKIN p50 $(kv checkin_p50_us "$out") µs  p99 $(kv checkin_p99_us "$out") µs  server cpu $(kv server_cpu_pct "$out") %, $(kv server_cpu_ms_per_accepted "$out") ms per accepted  (mix $(kv mix "$out"); teams done $(kv teams_done "$out"), stops left $(kv team_stops_left "$out"))"
    log "    replies: $(kv replies "$out"); CHECKIN: $(kv replies_checkin "$out")"
}

# Inputs: CROWD_JOINERS, CROWD_JOIN_CODE, CROWD_TAG, CROWD_OUT, SCAV_PORT.
crowd_phase_b() {
    step "crowd phase B: $CROWD_JOINERS players, each on a connection of its own and logged in, send JOIN $CROWD_JOIN_CODE at one instant"
    if ! out=$(python3 scripts/bench/crowd.py join --port "$SCAV_PORT" --tag "$CROWD_TAG" --code "$CROWD_JOIN_CODE" \
            --joiners "$CROWD_JOINERS" --label rcrowdjoin 2>>"$RUN_DIR/crowd.err"); then
        tail -n 5 "$RUN_DIR/crowd.err" >&2
        die "the crowd's join phase failed (log: $RUN_DIR/crowd.err)"
    fi
    printf '%s\n' "$out" >>"$CROWD_OUT"
    log "    $(kv ok "$out") of $CROWD_JOINERS OK; replies: $(kv replies "$out"); written in $(kv written_ms "$out") ms, last reply $(kv last_ms "$out") ms after the first write"
}

# Inputs: CROWD_DB, CROWD_JOIN_CODE. Sets MAX_CONNS_PER_ADDR back to none.
crowd_check() {
    # What the crowd left: the players' points are their accepted check-ins' sum (in the team
    # hunts the teams' points are their members' accepted check-ins' sum), every stop's found_by
    # its accepted check-ins, and the join hunt holds exactly the players who got OK.
    await_scav_writes "$CROWD_DB"
    read -r C_POINTS P_POINTS BAD_STOPS JOINED PLAYER_COUNT TC_POINTS T_POINTS < <(pg_psql -d "$CROWD_DB" -At -F ' ' -c "
        SELECT (SELECT coalesce(sum(c.points), 0) FROM checkins c JOIN hunts h ON h.id = c.hunt_id
                WHERE c.hunt_id LIKE 'hcrowd%' AND c.status = 'accepted' AND h.team_size IS NULL),
               (SELECT coalesce(sum(p.points), 0) FROM hunt_players p JOIN hunts h ON h.id = p.hunt_id
                WHERE p.hunt_id LIKE 'hcrowd%' AND h.team_size IS NULL),
               (SELECT count(*) FROM hunt_stops s WHERE s.hunt_id LIKE 'hcrowd%' AND s.found_by <>
                    (SELECT count(*) FROM checkins c WHERE c.stop_id = s.id AND c.status = 'accepted')),
               (SELECT count(*) FROM hunt_players p JOIN hunts h ON h.id = p.hunt_id WHERE h.code = '$CROWD_JOIN_CODE'),
               (SELECT player_count FROM hunts WHERE code = '$CROWD_JOIN_CODE'),
               (SELECT coalesce(sum(c.points), 0) FROM checkins c JOIN hunts h ON h.id = c.hunt_id
                WHERE c.hunt_id LIKE 'hcrowd%' AND c.status = 'accepted' AND h.team_size IS NOT NULL),
               (SELECT coalesce(sum(points), 0) FROM hunt_teams WHERE hunt_id LIKE 'hcrowd%')")
    meta crowd_checkin_points "$C_POINTS"
    meta crowd_player_points "$P_POINTS"
    meta crowd_stops_miscounted "$BAD_STOPS"
    meta crowd_join_players "$JOINED"
    meta crowd_join_player_count "$PLAYER_COUNT"
    meta crowd_team_checkin_points "$TC_POINTS"
    meta crowd_team_points "$T_POINTS"
    log "    after: $C_POINTS points in accepted check-ins, $P_POINTS in the players' standings; $BAD_STOPS stops whose found_by is not their accepted check-ins; the join hunt holds $JOINED players (its count says $PLAYER_COUNT)"
    log "    the team hunts: $TC_POINTS points in accepted check-ins, $T_POINTS in the teams' standings"
    ((C_POINTS == P_POINTS)) || warn "the crowd players' points ($P_POINTS) are not their check-ins' ($C_POINTS)"
    ((TC_POINTS == T_POINTS)) || warn "the crowd teams' points ($T_POINTS) are not their members' check-ins' ($TC_POINTS)"
    ((BAD_STOPS == 0)) || warn "$BAD_STOPS crowd stops have a found_by that is not their accepted check-ins"
    ((JOINED == PLAYER_COUNT)) || warn "the join hunt holds $JOINED players but counts $PLAYER_COUNT"
    MAX_CONNS_PER_ADDR=""
    meta crowd_loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# The state the driver starts from, read from the database before each run (so each run, and
# each connection count, starts where the last one left the players): every crowd hunt with
# its stops (the fix 3.3 m north of each), every player with its hunt, whether it plays it
# now, and the stops it has a live check-in at.
crowd_state() {
    pg_psql -d "$CROWD_DB" -At -F ' ' -c "
        SELECT 'hunt', h.id, h.code, string_agg(s.id || ',' || round((s.lat + 0.00003)::numeric, 6) || ',' || s.lon, ' ' ORDER BY s.n)
        FROM hunts h JOIN hunt_stops s ON s.hunt_id = h.id
        WHERE h.id LIKE 'hcrowd%' AND h.name <> 'Crowd join' AND h.team_size IS NULL GROUP BY h.id, h.code" -c "
        SELECT 'player', u.name, h.id, CASE WHEN p.user_id IS NULL THEN 0 ELSE 1 END,
               coalesce((SELECT string_agg(c.stop_id, ',') FROM checkins c WHERE c.user_id = u.id AND c.hunt_id = h.id
                         AND c.status IN ('accepted', 'pending', 'flagged')), '')
        FROM users u JOIN hunts h ON h.id LIKE 'hcrowd%' AND h.name = 'Crowd ' || (1 + (substr(u.name, 4)::int - 1) % $CROWD_HUNTS)
        LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = u.id
        WHERE u.name LIKE 'hcp%' ORDER BY u.name"
}

# The team crowd's state, as crowd_state's: every team hunt with its stops, every team player
# ('hcq…', player q of team 1 + (q - 1) / 5, in team hunt 1 + (team - 1) / 10) with its hunt,
# whether it plays it now, its team's name ('_' for each space) and the stops it has a live
# check-in at.
crowd_team_state() {
    pg_psql -d "$CROWD_DB" -At -F ' ' -c "
        SELECT 'hunt', h.id, h.code, string_agg(s.id || ',' || round((s.lat + 0.00003)::numeric, 6) || ',' || s.lon, ' ' ORDER BY s.n)
        FROM hunts h JOIN hunt_stops s ON s.hunt_id = h.id
        WHERE h.id LIKE 'hcrowd%' AND h.team_size IS NOT NULL GROUP BY h.id, h.code" -c "
        SELECT 'member', u.name, h.id, CASE WHEN p.user_id IS NULL THEN 0 ELSE 1 END,
               'Crowd_team_' || lpad((1 + (substr(u.name, 4)::int - 1) / 5)::text, 3, '0'),
               coalesce((SELECT string_agg(c.stop_id, ',') FROM checkins c WHERE c.user_id = u.id AND c.hunt_id = h.id
                         AND c.status IN ('accepted', 'pending', 'flagged')), '')
        FROM users u JOIN hunts h ON h.id LIKE 'hcrowd%' AND h.name = 'Crowd teams ' || (1 + (substr(u.name, 4)::int - 1) / 50)
        LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = u.id
        WHERE u.name LIKE 'hcq%' ORDER BY u.name"
}
