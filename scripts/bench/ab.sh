#!/usr/bin/env bash
# Server CPU per request of two scavengerd builds or settings, side by side, alternating runs:
# what decides a change to the hot path when the host is too noisy for throughput alone.
#
#   scripts/bench/ab.sh [--a "BINARY [FLAGS…]"] [--b "BINARY [FLAGS…]"] [--ops "ping nearby"]
#                       [--conns 8] [--seconds 5] [--rounds 3] [--pins 20000] [--seed 42]
#
# Both default to this checkout's release build (built first); e.g. `--b ".build/release/scavengerd
# --http-port 17603"` measures what the HTTP port's metrics cost, and `--a /tmp/old/scavengerd`
# compares with an earlier build. Uses this checkout's local PostgreSQL cluster (scripts/lib.sh;
# started if needed, stopped again if started here) and a database `scavenger_ab` filled with the
# benchmark's generated pins (scripts/bench/gen_data.py; run scripts/bench.sh once to install its
# package). Both daemons run at once on free ports; each round measures A then B for every op.
# Per run it prints requests/s, the server's CPU (user + system, from /proc, over the measured
# window) and that CPU per request in µs; then the medians. Each daemon's time from start to
# serving and its resident memory after start are printed first.
#
# Why not instruction counts: valgrind 3.19 (Debian 12's) dies with an internal SIGSEGV on
# scavengerd's start, and perf's instruction counter is not supported on these machines.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
# shellcheck source=scripts/bench/data.sh
source scripts/bench/data.sh

A=""
B=""
OPS="ping nearby"
CONNS=8
SECONDS_RUN=5
ROUNDS=3
PINS=20000
SEED=42
while (($# > 0)); do
    case $1 in
        --a) A=$2; shift 2 ;;
        --b) B=$2; shift 2 ;;
        --ops) OPS=$2; shift 2 ;;
        --conns) CONNS=$2; shift 2 ;;
        --seconds) SECONDS_RUN=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --pins) PINS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
done

if [[ -z $A || -z $B ]]; then
    ensure_swift
    log "swift build -c release"
    swift build -c release >/dev/null 2>&1 || die "swift build -c release failed"
fi
A=${A:-.build/release/scavengerd}
B=${B:-.build/release/scavengerd}
read -ra A_COMMAND <<<"$A"
read -ra B_COMMAND <<<"$B"

mkdir -p .data/ab
LOADGEN=.data/ab/loadgen
gcc -O2 -Wall -o "$LOADGEN" scripts/bench/loadgen.c -I"$(pg_config --includedir)" -lpq -lm

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ ${PG_STARTED_HERE:-0} == 1 ]]; then pg_cluster_stop || true; fi
}
trap cleanup EXIT
pg_cluster_start

DATA_DIR=.data/bench/data-s$SEED-n$PINS
bench_data "$DATA_DIR" "$PINS" "$SEED" .data/bench/pylib \
    || die "no data: run scripts/bench.sh once first (it installs the generator's package)"
pg_recreate_database scavenger_ab
URL=$(pg_database_url scavenger_ab)
"${A_COMMAND[0]}" migrate --database-url "$URL" --migrations db >/dev/null
bench_load_scav scavenger_ab "$DATA_DIR"

start() {  # start NAME COMMAND…: sets PORT_<NAME>, PID_<NAME> and READY_<NAME> (seconds to serving)
    local name=$1 port started=$EPOCHREALTIME
    shift
    port=$(free_port)
    # As scripts/run.sh and bench.sh run it: fewer malloc arenas, a fixed mmap threshold.
    MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072} \
        "$1" serve --host 127.0.0.1 --port "$port" --database-url "$URL" --idle-timeout 0 "${@:2}" >".data/ab/$name.log" 2>&1 &
    PIDS+=($!)
    printf -v "PID_$name" '%s' "$!"
    printf -v "PORT_$name" '%s' "$port"
    local ready
    ready=$("$LOADGEN" --op ready --target scav --port "$port" --centres "$DATA_DIR/centres.csv" --timeout 300 \
        --since "$started" --watch-pid "$!")
    printf -v "READY_$name" '%s' "$(kv ready_s "$ready")"
}
# The pins were copied in without grid cells: a first start fills them (once, as after db/0003);
# then the table is vacuumed, as an operator would, so neither measured start pays for that.
start FILL "${A_COMMAND[@]}"
kill "$PID_FILL" && wait "$PID_FILL" 2>/dev/null || true
pg_psql -d scavenger_ab -qc "VACUUM ANALYZE pins" -c "CHECKPOINT"
start A "${A_COMMAND[@]}"
start B "${B_COMMAND[@]}"
log "A: ${A_COMMAND[*]} (port $PORT_A); B: ${B_COMMAND[*]} (port $PORT_B)"
log "start to serving (PING and NEARBY answered; A first, then B, one at a time): A ${READY_A} s, B ${READY_B} s"
sleep 1
log "resident memory after start: A $(awk '/^VmRSS:/ { printf "%.1f MB", $2 / 1024 }' "/proc/$PID_A/status"), B $(awk '/^VmRSS:/ { printf "%.1f MB", $2 / 1024 }' "/proc/$PID_B/status")"

RESULTS=.data/ab/results.txt
: >"$RESULTS"
for ((round = 1; round <= ROUNDS; round++)); do
    for op in $OPS; do
        for side in A B; do
            port_var=PORT_$side pid_var=PID_$side
            out=$("$LOADGEN" --target scav --op "$op" --port "${!port_var}" --conns "$CONNS" --seconds "$SECONDS_RUN" \
                --warmup 0.5 --centres "$DATA_DIR/centres.csv" --cpu-pids "${!pid_var}")
            rps=$(kv rps "$out")
            cpu=$(kv server_cpu_pct "$out")
            per=$(awk -v c="$cpu" -v r="$rps" 'BEGIN { printf "%.2f", c / 100 * 1e6 / r }')
            printf '%s %s %s %s %s\n' "$op" "$side" "$rps" "$cpu" "$per" >>"$RESULTS"
            printf '  round %d  %-6s %s  %9s req/s  server CPU %6s %%  %6s µs/request\n' "$round" "$op" "$side" "$rps" "$cpu" "$per"
        done
    done
done
log "medians over $ROUNDS rounds, $CONNS connections, $SECONDS_RUN s each"
for op in $OPS; do
    for side in A B; do
        awk -v op="$op" -v side="$side" '
            BEGIN { n = 0 }
            $1 == op && $2 == side { rps[n] = $3; per[n] = $5; n++ }
            function median(a, n,    i, j, t) {
                for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2
            }
            END { printf "  %-6s %s  %9.0f req/s  %6.2f µs of server CPU per request\n", op, side, median(rps, n), median(per, n) }
        ' "$RESULTS"
    done
done
