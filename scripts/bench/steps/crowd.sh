# shellcheck shell=bash
# 4e. The crowd (issue 38): --crowd-players players in --crowd-hunts running hunts of 10 stops,
#     on a database of its own, and --crowd-teams teams of 5 in team hunts of 10 teams and
#     CROWD_TEAM_STOPS stops (protocol 1.4). Phase A at each of --crowd-conns: POST (loadgen), the
#     mixed crowd (scripts/bench/crowd.py), the same mix played by the team crowd without LEAVE and
#     JOIN (a LEAVE of a running team hunt is final since protocol 1.5); then check-ins alone
#     (issue 51), each right after a POST run: keyed, unkeyed, and keyed in the team hunts. Every
#     write carries a REQUEST key but in the unkeyed run. Phase B: --crowd-joiners JOINs (keyed) of
#     one hunt by its code at one instant, each from a connection of its own.

# The crowd: its database, the daemon on it, phase A at each of --crowd-conns, phase B, then
# what it left.
crowd_step() {
    crowd_database
    crowd_daemon
    crowd_phase_a
    crowd_phase_b
    crowd_check
}

# Inputs: CROWD_PLAYERS, CROWD_HUNTS, CROWD_TEAMS, CROWD_TEAM_STOPS, CROWD_CONNS, PG_PORT, DAEMON_PID (stopped).
# Sets CROWD_DB, CROWD_TAG, CROWD_TEAM_SETS,
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
    step "crowd: a database of its own ($CROWD_DB): $CROWD_PLAYERS players in $CROWD_HUNTS running hunts of 10 stops, $CROWD_TEAMS teams of 5 in $(((CROWD_TEAMS + 9) / 10)) team hunts of $CROWD_TEAM_STOPS stops in each of $((2 * $(wc -w <<<"$CROWD_CONNS"))) sets (one per team run), and a join hunt"
    pg_psql -d postgres -c "CREATE DATABASE $CROWD_DB"
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$CROWD_DB
    scav_migrate
    T_SETUP=$EPOCHREALTIME
    # A set of team hunts for each team run (two at each of --crowd-conns): a team's stops are found
    # once, and its members cannot leave to find them again, so no run plays what another found.
    CROWD_TEAM_SETS=$((2 * $(wc -w <<<"$CROWD_CONNS")))
    pg_psql -d "$CROWD_DB" -v players="$CROWD_PLAYERS" -v hunts="$CROWD_HUNTS" -v teams="$CROWD_TEAMS" -v team_stops="$CROWD_TEAM_STOPS" \
        -v team_sets="$CROWD_TEAM_SETS" -v tag="$CROWD_TAG" \
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

# Inputs: CROWD_PLAYERS, CROWD_HUNTS, CROWD_TEAMS, CROWD_TEAM_STOPS, CROWD_JOINERS, CROWD_MIX, CROWD_CONNS,
# RUN_SECONDS, WARMUP, SEED, CROWD_TAG, CROWD_OUT, SCAV_PORT, DAEMON_PID, BPG_PID, RAW.
crowd_phase_a() {
    meta crowd_players "$CROWD_PLAYERS"
    meta crowd_hunts "$CROWD_HUNTS"
    meta crowd_teams "$CROWD_TEAMS"
    meta crowd_team_stops "$CROWD_TEAM_STOPS"
    meta crowd_team_sets "$CROWD_TEAM_SETS"
    meta crowd_joiners "$CROWD_JOINERS"
    meta crowd_mix "$CROWD_MIX"
    meta crowd_keyed 1
    meta crowd_conns "$CROWD_CONNS"
    local conns post out set=0
    for conns in $CROWD_CONNS; do
        step "crowd phase A at $conns connections: POST, then the mixed crowd ($CROWD_MIX, every write keyed), $RUN_SECONDS s each"
        run_load scav post "$conns" crowd1
        crowd_run players "$conns" rcrowd1 mixed "$CROWD_MIX"
        out=$CROWD_LAST
        log "    crowd  $(printf '%3s' "$conns") conns  $(kv rps "$out") req/s, $(kv accepted_per_s "$out") accepted check-ins/s  CHECKIN p50 $(kv checkin_p50_us "$out") µs  p99 $(kv checkin_p99_us "$out") µs  server cpu $(kv server_cpu_pct "$out") % (daemon:postgres $(kv cpu_pct_by_pid "$out")), $(kv server_cpu_ms_per_accepted "$out") ms per accepted  client cpu $(kv client_cpu_pct "$out") %"
        log "    replies: $(kv replies "$out"); CHECKIN: $(kv replies_checkin "$out")"
        if ((CROWD_TEAMS > 0)); then
            # The same mix in the team hunts (protocol 1.4), without LEAVE and JOIN (final there since 1.5).
            step "crowd phase A at $conns connections: the team crowd, $CROWD_TEAMS teams of 5 ($CROWD_MIX without leave and join), $RUN_SECONDS s"
            crowd_run teams:$((++set)) "$conns" rcrowdteams1 teams "$CROWD_MIX"
            out=$CROWD_LAST
            log "    teams  $(printf '%3s' "$conns") conns  $(kv rps "$out") req/s, $(kv accepted_per_s "$out") accepted team check-ins/s  CHECKIN p50 $(kv checkin_p50_us "$out") µs  p99 $(kv checkin_p99_us "$out") µs  server cpu $(kv server_cpu_pct "$out") %, $(kv server_cpu_ms_per_accepted "$out") ms per accepted  (mix $(kv mix "$out"); teams done $(kv teams_done "$out"), stops left $(kv team_stops_left "$out"))"
            log "    replies: $(kv replies "$out"); CHECKIN: $(kv replies_checkin "$out")"
        fi
        # Check-ins alone (issue 51): keyed (as clients send them), unkeyed (the old path) and keyed in
        # the team hunts, each right after a POST run at as many connections, so each pair shares
        # the machine's conditions.
        crowd_checkins_beside_post players "$conns" rcrowdck1 keyed
        crowd_checkins_beside_post players "$conns" rcrowdcu1 unkeyed
        if ((CROWD_TEAMS > 0)); then crowd_checkins_beside_post teams:$((++set)) "$conns" rcrowdct1 keyed; fi
    done
}

# crowd_checkins_beside_post WHO CONNS LABEL keyed|unkeyed: POST (loadgen, label LABEL) then
# check-ins alone (crowd.py --mix checkin=100, label LABEL, phase=checkin for the single players,
# teamcheckin for the teams), logged side by side.
crowd_checkins_beside_post() {
    local who=$1 conns=$2 label=$3 keyed=$4 post out phase=checkin
    [[ $who == teams* ]] && phase=teamcheckin
    step "crowd phase A at $conns connections: POST, then check-ins alone ($who, $keyed), $RUN_SECONDS s each"
    run_load scav post "$conns" "${label#r}"
    post=$(tail -n 1 "$RAW")
    crowd_run "$who" "$conns" "$label" "$phase" checkin=100 "$keyed"
    out=$CROWD_LAST
    log "    $(printf '%-22s %3s' "$phase $keyed" "$conns") conns  $(kv accepted_per_s "$out") accepted/s against POST's $(kv rps "$post")/s ($(awk -v a="$(kv accepted_per_s "$out")" -v b="$(kv rps "$post")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')×)  CHECKIN p50 $(kv checkin_p50_us "$out") µs  p99 $(kv checkin_p99_us "$out") µs  server cpu $(kv server_cpu_ms_per_accepted "$out") ms per accepted (POST's $(awk -v c="$(kv server_cpu_pct "$post")" -v r="$(kv rps "$post")" 'BEGIN { printf "%.3f", (r > 0 ? c * 10 / r : 0) }') ms)"
    log "    replies: $(kv replies "$out"); CHECKIN: $(kv replies_checkin "$out")$([[ $who == teams* ]] && printf '; teams done %s, stops left %s' "$(kv teams_done "$out")" "$(kv team_stops_left "$out")")"
}

# crowd_run players|teams:SET CONNS LABEL PHASE MIX [keyed|unkeyed]: one run of crowd.py from the
# state read from the database now (the team hunts of set SET); its line appended to CROWD_OUT and
# left in CROWD_LAST.
crowd_run() {
    local who=$1 conns=$2 label=$3 phase=$4 mix=$5 keyed=${6:-keyed} state want unkeyed=()
    state=$RUN_DIR/crowd-state-$label-c$conns.txt
    if [[ $who == teams:* ]]; then
        crowd_team_state "${who#teams:}" >"$state"
        want=$((5 * CROWD_TEAMS))
        (($(grep -c '^member ' "$state") == want)) || die "the team crowd's state lists $(grep -c '^member ' "$state") players, not $want"
    else
        crowd_state >"$state"
        (($(grep -c '^player ' "$state") == CROWD_PLAYERS)) || die "the crowd's state lists $(grep -c '^player ' "$state") players, not $CROWD_PLAYERS"
    fi
    [[ $keyed == unkeyed ]] && unkeyed=(--unkeyed)
    if ! CROWD_LAST=$(python3 scripts/bench/crowd.py mixed --port "$SCAV_PORT" --tag "$CROWD_TAG" --state "$state" \
            --conns "$conns" --seconds "$RUN_SECONDS" --warmup "$WARMUP" --mix "$mix" --cpu-pids "$DAEMON_PID,$BPG_PID" \
            --seed "$SEED" --label "$label" --phase "$phase" "${unkeyed[@]}" 2>>"$RUN_DIR/crowd.err"); then
        tail -n 5 "$RUN_DIR/crowd.err" >&2
        die "the crowd driver failed ($who, $phase, $keyed) at $conns connections (log: $RUN_DIR/crowd.err)"
    fi
    printf '%s\n' "$CROWD_LAST" >>"$CROWD_OUT"
}

# Inputs: CROWD_JOINERS, CROWD_JOIN_CODE, CROWD_TAG, CROWD_OUT, SCAV_PORT.
crowd_phase_b() {
    step "crowd phase B: $CROWD_JOINERS players, each on a connection of its own and logged in, send JOIN $CROWD_JOIN_CODE REQUEST <key> at one instant"
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
    if [[ ${BENCH_PG_OPTIONS:-} == *pg_stat_statements* ]]; then
        # A profile was asked for: the statements by total time, before the cluster goes.
        pg_psql -d "$CROWD_DB" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
        pg_psql -d "$CROWD_DB" -c "
            SELECT round(total_exec_time::numeric, 1) AS total_ms, calls, round(mean_exec_time::numeric, 3) AS mean_ms,
                   round((100 * total_exec_time / sum(total_exec_time) OVER ())::numeric, 1) AS pct,
                   toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
            FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 40" >"$RUN_DIR/pg_stat_statements.txt"
        log "    the statements' profile: $RUN_DIR/pg_stat_statements.txt"
    fi
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

# crowd_team_state SET: the team crowd's state in the team hunts of set SET, as crowd_state's:
# every team hunt of the set with its stops, every team player ('hcq…', player q of team
# 1 + (q - 1) / 5, in team hunt SET.(1 + (team - 1) / 10)) with its hunt,
# whether it plays it now, its team's name ('_' for each space) and the stops it has a live
# check-in at.
crowd_team_state() {
    pg_psql -d "$CROWD_DB" -At -F ' ' -c "
        SELECT 'hunt', h.id, h.code, string_agg(s.id || ',' || round((s.lat + 0.00003)::numeric, 6) || ',' || s.lon, ' ' ORDER BY s.n)
        FROM hunts h JOIN hunt_stops s ON s.hunt_id = h.id
        WHERE h.id LIKE 'hcrowd%' AND h.team_size IS NOT NULL AND h.name LIKE 'Crowd teams $1.%' GROUP BY h.id, h.code" -c "
        SELECT 'member', u.name, h.id, CASE WHEN p.user_id IS NULL THEN 0 ELSE 1 END,
               'Crowd_team_' || lpad((1 + (substr(u.name, 4)::int - 1) / 5)::text, 3, '0'),
               coalesce((SELECT string_agg(c.stop_id, ',') FROM checkins c WHERE c.user_id = u.id AND c.hunt_id = h.id
                         AND c.status IN ('accepted', 'pending', 'flagged')), '')
        FROM users u JOIN hunts h ON h.id LIKE 'hcrowd%' AND h.name = 'Crowd teams $1.' || (1 + (substr(u.name, 4)::int - 1) / 50)
        LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = u.id
        WHERE u.name LIKE 'hcq%' ORDER BY u.name"
}
