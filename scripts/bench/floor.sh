#!/usr/bin/env bash
# The floor under scavengerd's PING: server CPU per request of Redis, of the least a SwiftNIO
# line server can do (scripts/bench/nio-floor: a fixed reply per line, nothing else), and of
# scavengerd, with one event-loop thread and with one per core, in alternating runs.
#
#   scripts/bench/floor.sh [--conns 8] [--seconds 5] [--rounds 3]
#
# What it shows: how much of scavengerd's cost per request is SwiftNIO's and the kernel's, which
# no work in scavengerd can remove, and how that compares with Redis's whole cost. Uses this
# checkout's local PostgreSQL cluster (scripts/lib.sh; started if needed, stopped again if
# started here) for an empty database `scavenger_floor`; PING reads nothing from it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
# shellcheck source=scripts/bench/data.sh
source scripts/bench/data.sh

CONNS=8
SECONDS_RUN=5
ROUNDS=3
while (($# > 0)); do
    case $1 in
        --conns) CONNS=$2; shift 2 ;;
        --seconds) SECONDS_RUN=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
done
[[ $CONNS =~ ^[0-9]+$ && $SECONDS_RUN =~ ^[0-9]+$ && $ROUNDS =~ ^[0-9]+$ ]] || die "--conns, --seconds and --rounds take whole numbers"

ensure_swift
SCAVENGER_PACKAGES="$SCAVENGER_PACKAGES redis-server gcc libc6-dev" ensure_packages
WORK=.data/floor
mkdir -p "$WORK"
log "swift build -c release (scavengerd, then scripts/bench/nio-floor)"
swift build -c release >"$WORK/build.log" 2>&1 || die "swift build -c release failed (see $WORK/build.log)"
swift build -c release --package-path scripts/bench/nio-floor --scratch-path "$WORK/nio-floor-build" >>"$WORK/build.log" 2>&1 \
    || die "building nio-floor failed (see $WORK/build.log)"
FLOOR=$WORK/nio-floor-build/release/nio-floor
LOADGEN=$WORK/loadgen
gcc -O2 -Wall -o "$LOADGEN" scripts/bench/loadgen.c -I"$(pg_config --includedir)" -lpq -lm
CENTRES=$WORK/centres.csv
printf '0,0\n' >"$CENTRES"  # loadgen wants centres even for PING

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ ${PG_STARTED_HERE:-0} == 1 ]]; then pg_cluster_stop || true; fi
}
trap cleanup EXIT
pg_cluster_start
pg_recreate_database scavenger_floor
URL=$(pg_database_url scavenger_floor)
.build/release/scavengerd migrate --database-url "$URL" --migrations db >/dev/null

NAMES=()
start() {  # start NAME TARGET COMMAND…: the server listens on $port, given to the command as {port}
    local name=$1 target=$2 port
    shift 2
    port=$(free_port)
    "${@//\{port\}/$port}" >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    printf -v "PID_$name" '%s' "$!"
    printf -v "PORT_$name" '%s' "$port"
    printf -v "TARGET_$name" '%s' "$target"
    NAMES+=("$name")
    if [[ $target == redis ]]; then
        local tries=0
        until [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; do
            ((++tries < 600)) || die "redis-server did not answer PING (see $WORK/$name.log)"
            sleep 0.1
        done
    else
        await_ping "$LOADGEN" "$CENTRES" "$port" "${PIDS[-1]}" "$WORK/$name.log"
    fi
}
CORES=$(nproc)
start redis redis redis-server --bind 127.0.0.1 --port '{port}' --save "" --appendonly no
start floor_1 scav "$FLOOR" '{port}' 1
start floor_n scav "$FLOOR" '{port}' "$CORES"
SCAV=(.build/release/scavengerd serve --host 127.0.0.1 --port '{port}' --database-url "$URL" --idle-timeout 0)
start scav_n scav env MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 "${SCAV[@]}"
start scav_1 scav env MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 "${SCAV[@]}" --io-threads 1

declare -A LABEL=(
    [redis]="Redis $(redis-server --version | awk '{ print substr($3, 3) }')"
    [floor_1]="SwiftNIO floor, 1 thread" [floor_n]="SwiftNIO floor, $CORES threads"
    [scav_1]="scavengerd --io-threads 1" [scav_n]="scavengerd (one thread per core)"
)
RESULTS=$WORK/results.txt
: >"$RESULTS"
for ((round = 1; round <= ROUNDS; round++)); do
    for name in "${NAMES[@]}"; do
        port_var=PORT_$name pid_var=PID_$name target_var=TARGET_$name
        out=$("$LOADGEN" --target "${!target_var}" --op ping --port "${!port_var}" --conns "$CONNS" --seconds "$SECONDS_RUN" \
            --warmup 0.5 --centres "$CENTRES" --cpu-pids "${!pid_var}")
        rps=$(kv rps "$out")
        cpu=$(kv server_cpu_pct "$out")
        per=$(awk -v c="$cpu" -v r="$rps" 'BEGIN { printf "%.2f", c / 100 * 1e6 / r }')
        printf '%s %s %s %s\n' "$name" "$rps" "$cpu" "$per" >>"$RESULTS"
        printf '  round %d  %-34s %9s req/s  server CPU %6s %%  %6s µs/request\n' "$round" "${LABEL[$name]}" "$rps" "$cpu" "$per"
    done
done

log "PING, medians over $ROUNDS rounds, $CONNS connections, $SECONDS_RUN s each"
median() {  # median NAME COLUMN
    awk -v name="$1" -v column="$2" '
        $1 == name { v[n++] = $column }
        END {
            for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            print n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
        }' "$RESULTS"
}
REDIS_PER=$(median redis 4)
printf '| server | req/s | server CPU per request | ÷ Redis |\n| --- | ---: | ---: | ---: |\n'
for name in "${NAMES[@]}"; do
    per=$(median "$name" 4)
    printf '| %s | %.0f | %.1f µs | %.2f× |\n' "${LABEL[$name]}" "$(median "$name" 2)" "$per" \
        "$(awk -v a="$per" -v b="$REDIS_PER" 'BEGIN { print a / b }')"
done
