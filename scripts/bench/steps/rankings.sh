# shellcheck shell=bash
# 4c. Rankings (issue 28): RANKING and PROFILE among --ranking-users ranked users against Redis's
#     sorted set of the same scores, while check-ins are accepted. After the sweep in the full
#     run, on a database of its own.

# The rankings: a database of their own, the daemon's baseline, the ranked users written into it
# and loaded into Redis, the daemon started on them, the boards compared, the measured runs, then
# what the check-ins left.
rankings_step() {
    rankings_database
    rankings_baseline
    rankings_write_users
    rankings_load_redis
    rankings_start_daemon
    rankings_compare_boards
    rankings_runs
    rankings_check_after
}

# Inputs: ROUNDS, RANK_CHECKIN_CONNS, PG_PORT, HUNT_WALK_HUNTS, DAEMON_PID (stopped). Sets RANK_DB,
# RANK_TAG, SCAV_URL.
rankings_database() {
    meta ranking_loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
    RANK_DB=bench_scav_ranking
    RANK_TAG=$RANDOM$RANDOM
    # Each measured run (3 reads × 2 servers × the rounds) has check-ins by walkers of its own: a
    # walker checks in at a stop once.
    RANK_WALKERS=$((3 * 2 * ROUNDS * RANK_CHECKIN_CONNS))
    if [[ -n $DAEMON_PID ]]; then
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
    fi
    step "rankings: a database of their own ($RANK_DB), with the check-ins' hunts ($RANK_WALKERS walkers, $HUNT_WALK_HUNTS of 100 stops)"
    pg_psql -d postgres -c "CREATE DATABASE $RANK_DB"
    # shellcheck disable=SC2034  # SCAV_URL: read by scav_migrate and start_daemon
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$RANK_DB
    scav_migrate
    pg_psql -d "$RANK_DB" -v lb_players=100 -v walkers="$RANK_WALKERS" -v around=1 -v walk_hunts="$HUNT_WALK_HUNTS" \
        -v tag="$RANK_TAG" -f scripts/bench/hunts.sql >"$RUN_DIR/ranking-hunts-setup.log" \
        || die "writing the check-ins' hunts failed (scripts/bench/hunts.sql)"
    pg_psql -d postgres -c "CHECKPOINT"
}

# Sets RANK_BASE_KB, the daemon's RSS with no ranked users.
rankings_baseline() {
    # The baseline: the same daemon on the same database before the ranked users are written.
    step "rankings: scavengerd with no ranked users (the baseline of its memory)"
    start_daemon ranking-base
    rank_ready ranking-base
    sleep 1
    RANK_BASE_KB=$(rss_kb "$DAEMON_PID")
    meta ranking_hwm_base_mb "$(hwm_mb "$DAEMON_PID")"
    log "    no ranked users: RSS $(rss_mb "$DAEMON_PID") MB"
    stop_pid "$DAEMON_PID" 60
    DAEMON_PID=""
}

# Inputs: RANK_DB, RANK_USERS, RANK_CONNS, RANK_TAG. Sets RANK_ALL (users with points).
rankings_write_users() {
    step "rankings: writing $RANK_USERS ranked users and $RANK_CONNS with sessions into $RANK_DB (scripts/bench/ranking.sql)"
    T_SETUP=$EPOCHREALTIME
    pg_psql -d "$RANK_DB" -v users="$RANK_USERS" -v around="$RANK_CONNS" -v tag="$RANK_TAG" \
        -f scripts/bench/ranking.sql >"$RUN_DIR/ranking-setup.log" || die "writing the ranked users failed (scripts/bench/ranking.sql)"
    pg_psql -d postgres -c "CHECKPOINT"
    RANK_SETUP_S=$(awk -v a="$T_SETUP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    read -r RANK_ALL RANK_WEEK RANK_LASTWEEK RANK_SCORES_DISTINCT RANK_TOP_POINTS RANK_MEDIAN_POINTS < <(pg_psql -d "$RANK_DB" -At -F ' ' -c "
        SELECT count(*), (SELECT count(*) FROM user_week_scores WHERE week = score_week(now()) AND points > 0),
               (SELECT count(*) FROM user_week_scores WHERE week = score_week(now()) - 7 AND points > 0),
               count(DISTINCT points), max(points), percentile_disc(0.5) WITHIN GROUP (ORDER BY points)
        FROM user_scores WHERE points > 0")
    ((RANK_ALL == RANK_USERS + RANK_CONNS)) || die "expected $((RANK_USERS + RANK_CONNS)) users with points, found $RANK_ALL"
    log "ranked users: $RANK_ALL all-time ($RANK_SCORES_DISTINCT distinct scores, median $RANK_MEDIAN_POINTS, top $RANK_TOP_POINTS), $RANK_WEEK this week, $RANK_LASTWEEK last week; written in $RANK_SETUP_S s (not a result)"
    meta ranking_users "$RANK_ALL"
    meta ranking_week_users "$RANK_WEEK"
    meta ranking_lastweek_users "$RANK_LASTWEEK"
    meta ranking_distinct_points "$RANK_SCORES_DISTINCT"
    meta ranking_median_points "$RANK_MEDIAN_POINTS"
    meta ranking_top_points "$RANK_TOP_POINTS"
    meta ranking_setup_s "$RANK_SETUP_S"
}

# Inputs: RANK_DB, RANK_ALL, REDIS_PID and REDIS_PORT (Redis is started when not running yet).
rankings_load_redis() {
    # Redis: the same scores in one sorted set, and each user's profile fields in a hash of its own.
    # The score is points × 2^32 + (2^32 − 1 − the second they were reached, since 1970), exact in a
    # double: more points first, then who reached them first, as the daemon orders a board (to the
    # second: the daemon breaks ties within one by the microsecond, then by name).
    if [[ -z $REDIS_PID ]]; then
        step "starting redis-server (no persistence)"
        start_redis
        log "redis-server on 127.0.0.1:$REDIS_PORT"
    fi
    step "rankings: loading Redis with the same scores (ZADD into one sorted set) and each user's profile (HSET, a hash per user)"
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" del ranking >/dev/null
    RANK_SCORES=$RUN_DIR/ranking-scores.txt
    pg_psql -d "$RANK_DB" -At -F ' ' -c "SELECT u.name,
            s.points::bigint * 4294967296 + (4294967295 - floor(extract(epoch FROM s.points_at))::bigint),
            s.points, s.found, s.hunts_played, s.hunts_completed
        FROM user_scores s JOIN users u ON u.id = s.user_id WHERE s.points > 0" >"$RANK_SCORES"
    REDIS_MEM0=$(redis_used)
    awk '{ printf "*4\r\n$4\r\nZADD\r\n$7\r\nranking\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length($2), $2, length($1), $1 }' "$RANK_SCORES" \
        | redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe >>"$RUN_DIR/redis-load.log" 2>&1 || die "loading the scores into redis failed"
    REDIS_MEM1=$(redis_used)
    awk '{ printf "*10\r\n$4\r\nHSET\r\n$%d\r\nrkp:%s\r\n$6\r\npoints\r\n$%d\r\n%s\r\n$5\r\nfound\r\n$%d\r\n%s\r\n$12\r\nhunts_played\r\n$%d\r\n%s\r\n$15\r\nhunts_completed\r\n$%d\r\n%s\r\n",
                 length($1) + 4, $1, length($3), $3, length($4), $4, length($5), $5, length($6), $6 }' "$RANK_SCORES" \
        | redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe >>"$RUN_DIR/redis-load.log" 2>&1 || die "loading the profiles into redis failed"
    REDIS_MEM2=$(redis_used)
    rm -f "$RANK_SCORES"
    LOADED=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zcard ranking)
    [[ $LOADED == "$RANK_ALL" ]] || die "expected $RANK_ALL members in redis's ranking, found $LOADED"
    meta redis_ranking_bytes_per_user "$(((REDIS_MEM1 - REDIS_MEM0) / RANK_ALL))"
    meta redis_profile_bytes_per_user "$(((REDIS_MEM2 - REDIS_MEM1) / RANK_ALL))"
    log "    Redis used_memory: +$(((REDIS_MEM1 - REDIS_MEM0) / RANK_ALL)) bytes per user for the sorted set, +$(((REDIS_MEM2 - REDIS_MEM1) / RANK_ALL)) for the hashes"
}

# Inputs: RANK_ALL, RANK_BASE_KB. Sets DAEMON_PID, READY, RANK_READY.
rankings_start_daemon() {
    step "rankings: starting scavengerd with $RANK_ALL ranked users"
    start_daemon ranking
    rank_ready ranking
    sleep 1
    RANK_KB=$(rss_kb "$DAEMON_PID")
    RANK_LOG=$(grep -m1 'rankings loaded' "$RUN_DIR/scavengerd-ranking.log" || true)
    RANK_LOADED=$(sed -n 's/.*users=\([0-9]*\).*/\1/p' <<<"$RANK_LOG")
    RANK_LOAD_S=$(sed -n 's/.*seconds=\([0-9.e+-]*\).*/\1/p' <<<"$RANK_LOG")
    if [[ -z $RANK_LOADED ]]; then
        warn "no 'rankings loaded' line in $RUN_DIR/scavengerd-ranking.log (the first RANKING loaded them?)"
        RANK_LOADED=$RANK_ALL
    fi
    ((RANK_LOADED == RANK_ALL)) || warn "the daemon ranked $RANK_LOADED users, the database has $RANK_ALL with points"
    RANK_BYTES=$(((RANK_KB - RANK_BASE_KB) * 1024 / RANK_LOADED))
    meta ranking_loaded_users "$RANK_LOADED"
    meta ranking_load_s "$RANK_LOAD_S"
    meta ranking_ready_s "$(kv ready_s "$RANK_READY")"
    # exec → PING from start_daemon's poll: the RANKING poll starts later, so its first PING is no measure.
    meta ranking_ping_s "$(kv ping_s "$READY")"
    meta ranking_nearby_s "$(kv ready_s "$READY")"
    meta ranking_rss_base_mb "$(awk -v k="$RANK_BASE_KB" 'BEGIN { printf "%.1f", k / 1024 }')"
    meta ranking_rss_mb "$(awk -v k="$RANK_KB" 'BEGIN { printf "%.1f", k / 1024 }')"
    meta ranking_hwm_mb "$(hwm_mb "$DAEMON_PID")"
    meta ranking_bytes_per_user "$RANK_BYTES"
    log "    started: exec → PING $(kv ping_s "$READY") s, → NEARBY $(kv ready_s "$READY") s, → RANKING answered $(kv ready_s "$RANK_READY") s; its log: rankings loaded, $RANK_LOADED users in ${RANK_LOAD_S:-?} s"
    log "    RSS $(rss_mb "$DAEMON_PID") MB (no ranked users: $((RANK_BASE_KB / 1024)) MB): $RANK_BYTES bytes per ranked user"
}

# Inputs: REDIS_PORT, RANK_CONNS, RANK_TAG. Sets RANK_AROUND_NAMES and RANK_AROUND_TOKENS (the
# AROUND users' names and sessions).
rankings_compare_boards() {
    # The same board on both: the top 50, and the ranks of the users with sessions.
    SCAV_TOP=$(scav_ask 'RANKING LIMIT 50' | players)
    REDIS_TOP=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zrevrange ranking 0 49 | tr '\n' ' ')
    RANK_SAME=0
    [[ $SCAV_TOP == "$REDIS_TOP" ]] && RANK_SAME=1
    ((RANK_SAME)) || warn "the top 50 differ: scavengerd $SCAV_TOP; redis $REDIS_TOP"
    RANK_AROUND_NAMES=$RUN_DIR/ranking-around-names.txt
    RANK_AROUND_TOKENS=$RUN_DIR/ranking-around-tokens.txt
    RANK_AROUND_RANKS=""
    : >"$RANK_AROUND_NAMES"
    : >"$RANK_AROUND_TOKENS"
    for ((i = 1; i <= RANK_CONNS; i++)); do
        name=$(printf 'rka%04d' "$i")
        printf '%s\n' "$name" >>"$RANK_AROUND_NAMES"
        printf 'rkt_%s_%s\n' "$RANK_TAG" "$name" >>"$RANK_AROUND_TOKENS"
        scav_rank=$(scav_ask "PROFILE $name" | sed -n 's/.*"rank":\([0-9]*\).*/\1/p')
        redis_rank=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zrevrank ranking "$name")
        RANK_AROUND_RANKS+="$scav_rank/$((redis_rank + 1)) "
        [[ $scav_rank == $((redis_rank + 1)) ]] || RANK_SAME=0
    done
    meta ranking_same_board "$RANK_SAME"
    meta ranking_around_ranks "${RANK_AROUND_RANKS% }"
    log "    top 50 $( [[ $SCAV_TOP == "$REDIS_TOP" ]] && echo alike || echo DIFFERENT ); ranks of the AROUND users (scavengerd/Redis): $RANK_AROUND_RANKS"
}

# Inputs: RUN_DIR, RANK_DB, HUNT_WALK_HUNTS, RANK_CONNS, RANK_CHECKIN_CONNS, ROUNDS, RANK_USERS,
# RANK_AROUND_NAMES, RANK_AROUND_TOKENS, DAEMON_PID.
rankings_runs() {
    RANK_WALK=$RUN_DIR/ranking-walk.txt
    hunt_walk "$RANK_DB" >"$RANK_WALK"
    ((HUNT_WALK_HUNTS * 100 == $(wc -l <"$RANK_WALK"))) || die "expected $((HUNT_WALK_HUNTS * 100)) walk stops in $RANK_DB"
    RANK_CHECKINS=$RUN_DIR/ranking-checkins.txt
    : >"$RANK_CHECKINS"

    meta ranking_conns "$RANK_CONNS"
    meta ranking_checkin_conns "$RANK_CHECKIN_CONNS"
    RANK_RUN=0
    for ((round = 1; round <= ROUNDS; round++)); do
        step "rankings round $round of $ROUNDS: RANKING LIMIT 50, RANKING AROUND and PROFILE against Redis, $RANK_CONNS connections; CHECKIN at $RANK_CHECKIN_CONNS"
        for op in ranking ranking-around profile; do
            for target in redis scav; do
                args=(--redis-key ranking --limit 50)
                case $op/$target in
                    ranking-around/scav) args+=(--setup 'AUTH {value}' --setup-values "$RANK_AROUND_TOKENS") ;;
                    ranking-around/redis) args+=(--members "$RANK_AROUND_NAMES") ;;
                    profile/*) args+=(--users "$RANK_USERS" --user-prefix rk --user-digits 7 --hash-prefix rkp:) ;;
                esac
                checkins_start "$RANK_RUN" "ranking$round-$target-$op"
                run_load "$target" "$op" "$RANK_CONNS" "ranking$round" "${args[@]}"
                checkins_stop
                RANK_RUN=$((RANK_RUN + 1))
            done
        done
    done
    meta rss_after_ranking_mb "$(rss_mb "$DAEMON_PID")"
}

# Inputs: RANK_DB, HUNT_LB.
rankings_check_after() {
    # What the check-ins left: every one accepted, the walkers' totals their check-ins' sum, and
    # the daemon's top 50 (walkers among them now) the database's.
    await_scav_writes "$RANK_DB"
    read -r W_WRITTEN W_ACCEPTED W_POINTS < <(pg_psql -d "$RANK_DB" -At -F ' ' -c "
        SELECT count(*), count(*) FILTER (WHERE status = 'accepted'), coalesce(sum(points) FILTER (WHERE status = 'accepted'), 0)
        FROM checkins WHERE hunt_id LIKE 'hbench%' AND hunt_id <> '$HUNT_LB'")
    W_TOTALS=$(pg_psql -d "$RANK_DB" -Atc "SELECT coalesce(sum(s.points), 0) FROM user_scores s JOIN users u ON u.id = s.user_id
        WHERE u.name LIKE 'hbw%'")
    DB_TOP=$(pg_psql -d "$RANK_DB" -Atc "SELECT string_agg(name, ' ' ORDER BY points DESC, points_at, name) || ' ' FROM (
        SELECT u.name, s.points, s.points_at FROM user_scores s JOIN users u ON u.id = s.user_id WHERE s.points > 0
        ORDER BY s.points DESC, s.points_at, u.name LIMIT 50) t")
    SCAV_TOP=$(scav_ask 'RANKING LIMIT 50' | players)
    meta ranking_checkins_written "$W_WRITTEN"
    meta ranking_checkins_accepted "$W_ACCEPTED"
    meta ranking_checkin_points "$W_POINTS"
    meta ranking_walker_points "$W_TOTALS"
    meta ranking_top_after_same "$([[ $SCAV_TOP == "$DB_TOP" ]] && echo 1 || echo 0)"
    log "    $W_WRITTEN check-ins written, $W_ACCEPTED accepted; $W_POINTS points in them, $W_TOTALS in the walkers' totals; the daemon's top 50 $([[ $SCAV_TOP == "$DB_TOP" ]] && echo is || echo 'is NOT') the database's"
    ((W_WRITTEN == W_ACCEPTED)) || warn "$((W_WRITTEN - W_ACCEPTED)) check-ins were not accepted"
    ((W_POINTS == W_TOTALS)) || warn "the walkers' totals ($W_TOTALS) are not their check-ins' points ($W_POINTS)"
    meta ranking_loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# ---------------------------------------------------------------------------------------------
# The rankings' helpers
# ---------------------------------------------------------------------------------------------

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# After start_daemon (NEARBY answered: the pins are loaded, and the feed listener goes on to the
# rankings at once): polls RANKING LIMIT 1 until it answers OK. Sets RANK_READY, the loadgen's
# line (ready_s: from the exec). It waits 0.3 s first, so that the listener, not the poll, loads
# the rankings: a RANKING that comes before the listener gets to them loads them itself, and
# the log then has no "rankings loaded" line.
rank_ready() {
    sleep 0.3
    RANK_READY=$("$LOADGEN" --op ready --target scav --port "$SCAV_PORT" --centres "$CENTRES" --since "$DAEMON_T0" \
        --timeout 600 --watch-pid "$DAEMON_PID" --ready-request 'RANKING LIMIT 1') \
        || { tail -n 20 "$RUN_DIR/scavengerd-$1.log" >&2; die "RANKING did not answer (log: $RUN_DIR/scavengerd-$1.log)"; }
}
# One line to scavengerd, its reply.
scav_ask() {
    local reply=""
    if exec 8<>"/dev/tcp/127.0.0.1/$SCAV_PORT"; then
        printf '%s\n' "$1" >&8
        read -r -t 60 reply <&8 || true
        exec 8>&-
    fi
    printf '%s\n' "$reply"
}
players() { grep -o '"player":"[^"]*"' | cut -d'"' -f4 | tr '\n' ' '; }

redis_used() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" info memory | awk -F: '/^used_memory:/ { print $2 + 0 }'; }

# CHECKIN in the background during one measured run ($1: the run's number from 0, $2: a label):
# walkers of its own, logged in; started first (its window opens once its connections are in
# and a short warm-up is over) and stopped (SIGTERM: it prints the window's figures) when the
# run is over, so check-ins are accepted throughout the run.
checkins_start() {
    ((RANK_CHECKIN_CONNS > 0)) || return 0
    local walkers=$RUN_DIR/ranking-walkers-$1.txt mark=$RUN_DIR/ranking-checkins.mark i
    for ((i = 1; i <= RANK_CHECKIN_CONNS; i++)); do
        printf 'hbt_%s_hbw%04d\n' "$RANK_TAG" $(($1 * RANK_CHECKIN_CONNS + i))
    done >"$walkers"
    rm -f "$mark"
    "$LOADGEN" --target scav --op checkin --conns "$RANK_CHECKIN_CONNS" --port "$SCAV_PORT" --centres "$CENTRES" \
        --walk "$RANK_WALK" --setup 'AUTH {value}' --setup-values "$walkers" --expect '"status":"accepted"' \
        --seconds 3600 --warmup 0.2 --label "$2" --mark "$mark" >"$RUN_DIR/ranking-checkins.out" 2>>"$RUN_DIR/loadgen.err" 9>&- &
    CHECKIN_LOAD_PID=$!
    for ((i = 0; i < 600; i++)); do
        [[ -e $mark ]] && return 0
        kill -0 "$CHECKIN_LOAD_PID" 2>/dev/null || { tail -n 5 "$RUN_DIR/loadgen.err" >&2; die "the check-in load exited before its window opened"; }
        sleep 0.05
    done
    die "the check-in load's window did not open within 30 s"
}
checkins_stop() {
    ((RANK_CHECKIN_CONNS > 0)) || return 0
    local out rc=0 running=0
    kill -0 "$CHECKIN_LOAD_PID" 2>/dev/null && running=1
    kill -TERM "$CHECKIN_LOAD_PID" 2>/dev/null || true
    wait "$CHECKIN_LOAD_PID" || rc=$?
    CHECKIN_LOAD_PID=""
    ((running && rc == 0)) || { tail -n 5 "$RUN_DIR/loadgen.err" >&2; die "the check-in load ended before the run did (exit $rc; out of stops? see --hunt-stops)"; }
    out=$(cat "$RUN_DIR/ranking-checkins.out")
    printf '%s\n' "$out" >>"$RANK_CHECKINS"
    log "          meanwhile CHECKIN at $RANK_CHECKIN_CONNS conns: $(kv rps "$out") accepted/s, p99 $(kv p99_us "$out") µs, errors $(kv errors "$out")"
    [[ $(kv errors "$out") == 0 ]] || warn "check-ins not accepted: $(tail -n 1 "$RUN_DIR/loadgen.err")"
}
