#!/usr/bin/env bash
# Fault injection: does scavengerd lose or duplicate acknowledged writes, and do its feeds come
# back in step with the database, when PostgreSQL restarts or the daemon dies (issue 15), or a
# standby takes over from a dead primary (issue 41)?
#
#   scripts/chaos.sh [--short] [--seconds S] [--connections N] [--scenarios N,N,…  (1 to 14)]
#                    [--scavengerd PATH] [--keep] [--sabotage]
#
# Scenarios (scripts/chaos/driver.py runs them; each prints PASS or FAIL with its figures):
#  1. PostgreSQL restarted with `pg_ctl restart -m fast` while 8 connections POST in a loop;
#  2. the same with `-m immediate` (a crash: recovery from the WAL);
#  3. the daemon killed with SIGKILL under the same load, and a new one started at once;
#  4. a daemon started while PostgreSQL is down: PING and HELLO answer, NEARBY, REGIONS and
#     AUTH answer ERR UNAVAILABLE, and once PostgreSQL is started NEARBY answers by itself;
#  5. two daemons on one database under POST, DELETE and REPORT (each report hides its pin),
#     then the same with a PostgreSQL restart in the middle;
#  6. a synchronous standby that never answers: a keyed POST's commit waits for it, the wait is
#     cancelled (pg_cancel_backend), and the POST must be ERR UNAVAILABLE, not OK; once the
#     requirement is lifted the same line is answered OK from its key, the pin stored once;
#  7. a primary and a synchronous streaming standby of their own (`pg_basebackup -R`, its
#     application_name in `synchronous_standby_names = 'FIRST 1 (standby7)'`), two daemons
#     given both in one URL (`…@127.0.0.1:P1,127.0.0.1:P2/chaos`); under load through both the
#     primary's server is killed outright (SIGKILL to the postmaster and every process it
#     started, all stopped first: a machine's death), a second later the standby promoted
#     (`pg_ctl promote`) and the setting it inherited cleared there. Nothing acknowledged may be
#     lost, the daemons run on (same pids), none finds its change log rewritten. (Killed one by
#     one while running, a backend waiting for the standby saw the postmaster die first, gave the
#     wait up with its commit visible on the old primary, and a daemon could read that change
#     before the last process died: the now-and-then "rewritten" failure of issue 54. A primary
#     whose postmaster alone dies does the same; the daemons then reload, as in 8.);
#  8. the same with an asynchronous standby cut off from its primary (`primary_conninfo`
#     emptied) 1.5 s before the crash, so that the promoted node lacks the last writes (pausing
#     its replay would not do: a promotion replays all the WAL received). The loss is reported,
#     not judged; every daemon must notice that positions of its change log were handed out
#     again (scavenger_change_log_rewrites_total > 0 on /metrics) and reload, and every watcher
#     end with the database's view (told to read again, `resumed: false` or a SINCE past the
#     log's end, it takes a SNAPSHOT), writes succeed after it, none doubled. Then (issue 52) the
#     daemons stop and the old primary is started again, unfenced (timeline 1, the lost writes):
#     a new daemon C given it as --read-database-url must load from the new primary (its log says
#     why) and hold its pins, and answer `WATCH … SINCE` the old primary's end `resumed: false`,
#     SINCE the new log's end `resumed: true`;
#  9. a rolling restart behind HAProxy (issue 41; full runs only, --short leaves it out): two
#     daemons on ports of their own, each with `--http-port` and `--drain-seconds 2`, behind an
#     HAProxy the driver runs itself (`haproxy -f <run dir>/haproxy.cfg -db`, never the system's
#     service; scripts/chaos/rolling.py writes the config): `mode tcp`, `balance leastconn`, each
#     server checked with `GET /healthz` on its HTTP port every 200 ms (`fall 1 rise 2`), client
#     and server timeouts of an hour. Every client (the load, the retrying clients and four more
#     that abandon no write, so keep their connection until the daemon closes it, a pair of
#     watchers) connects through HAProxy only. Under load A gets SIGTERM (its /healthz answers
#     503, HAProxy marks it DOWN, it stops, finishing what it was sent), must exit 0, and a new A
#     is started on the same ports; once HAProxy has it UP, the same for B. Checks as below, and
#     every old daemon exited 0 and HAProxy still runs; when HAProxy saw each daemon DOWN and UP,
#     its counters, and how many requests met a closed connection or ERR UNAVAILABLE and were
#     sent again (and for how long) are reported. The Debian package haproxy is installed when
#     missing. With --sabotage, A is killed with SIGKILL instead (no drain, exit status not 0).
# 10. 7 with pg_auto_failover deciding (scripts/chaos/autofailover.py; Debian's
#     postgresql-15-auto-failover and pg-auto-failover-cli): a monitor and two data nodes of
#     their own (`pg_autoctl create monitor`, `pg_autoctl create postgres` twice, each run by
#     `pg_autoctl run`), the second a synchronous standby by the monitor's defaults
#     (`synchronous_standby_names = 'ANY 1 (pgautofailover_standby_2)'`); the monitor's health
#     checks made faster (`ALTER SYSTEM SET pgautofailover.health_check_period = 1000`,
#     health_check_timeout 1000, health_check_max_retries 1, health_check_retry_delay 500,
#     node_considered_unhealthy_timeout 4000, primary_demote_timeout 6000; the nodes'
#     `timeout.network_partition_timeout` 3 s, below the demote timeout). Under load the
#     primary's machine dies: its pg_autoctl processes and its PostgreSQL all get SIGKILL, and
#     nothing but the monitor promotes the standby. The checks of 7, against the node the monitor
#     then reports primary; the time to the promotion is reported;
# 11. the dead node's `pg_autoctl run` started again, two new daemons up: the monitor has it
#     rewound (pg_rewind, or copied again when that fails) and back as the synchronous standby;
#     once it reports it secondary, under load, `pg_autoctl perform switchover` makes it primary
#     again. The checks of 7. pg_auto_failover 2.0 (bookworm's) can lose writes there: a race
#     of its monitor turns the old primary's draining into wait_primary (no synchronous standby)
#     while the standby is promoted; 11 then fails and names the monitor's event.
#     After 10 it goes on with 10's formation; alone, it first has a formation of its own fail
#     over without load. 10 and 11 run only in full runs (not with --short), or when named;
# 12. (full runs only, or --scenarios 12) a new daemon started with --read-database-url naming an
#     asynchronous standby while another daemon takes writes on the primary, 200,000 pins in the
#     database (the driver's --standby-pins) and the standby's replay held for 2 s as it starts:
#     it must load its pins and rankings from the standby (its log says so, the standby returned
#     at least the pins), end holding every live pin (scavenger_feed_pins = the database's), its
#     NEARBY equal to the database, nothing acknowledged lost. With --sabotage the replay is held
#     past its wait: it loads from the primary, and 12 must FAIL.
# 13. (full runs only, or --scenarios 13) the automatic-failover runbook as scripts/chaos/RUNBOOK.md
#     writes it, on three machines made of network namespaces (scripts/chaos/runbook.sh: scram-sha-256, TLS,
#     the passwords in .pgpass files), a daemon on a fourth under keyed writes, the primary's
#     machine killed: the monitor promotes the standby by itself, nothing acknowledged is lost
#     or doubled, the daemon is never restarted, and the old primary's `pg_autoctl run` has it
#     rejoin as secondary. Needs root (it is skipped, and says so, without).
# 14. (issue 54) writes that commit side by side: a primary and a synchronous standby that applies
#     each commit 2 ms late (`recovery_min_apply_delay`, the primary's `synchronous_commit =
#     remote_apply`), two daemons under the load below, and a reader of the driver's own following
#     the feed log as the daemons do (no lock): each read must go on exactly from the last
#     position. At 40 % daemon B is frozen (SIGSTOP) so that what it sent commits but is never
#     numbered by it, killed (SIGKILL) and replaced: the rows it left are counted, and the other
#     daemon must number them by itself. Then both logs must be numbered, dense (apart from epoch
#     starts), without a position twice, each pin's changes in their written order, and the usual
#     checks hold (scripts/chaos/log_order.py);
# In 1, 2, 3, 5, 7, 8, 10 and 11, watchers follow a circle around one of the area's four
# places: `WATCH … SNAPSHOT`, then after every lost connection `WATCH … SINCE <last seq seen>`
# (in 3 to the new daemon; in 5, 7, 8, 10 and 11 a pair on each daemon, in 5 through both
# phases); one of each pair also drops its connection itself every 0.3-1 s. In 7, 8, 10 and 11
# a third on each daemon is away from the crash (the switchover) to the load's end and comes
# back with SINCE its old seq (in 8 once the new primary's log reaches past it: it numbers its
# changes past the lost history's).
# Beside the load there, 4 retrying clients (in 5, in each phase) send every write with
# `REQUEST <key>` (a new uuid each): POSTs into the watched circle, and side pins outside it that
# they REPLY to or DELETE. A write that gets no answer (connection broken, or no reply within
# 3 s) or ERR UNAVAILABLE/INTERNAL/TIMEOUT is sent again, the very same line, reconnecting
# (AUTH, one time in ten LOGIN) when the connection went, until OK or a definitive ERR. One
# write in eight is abandoned at its first send (its connection closed 0-5 ms after, the reply
# unread), so retries meet first attempts that committed unanswered or still run under every
# fault. Every fifth POST's line, and every REPLY's and DELETE's, is sent again after its OK on
# a new connection (through the other daemon in 5, 7 and 8), every eleventh POST's key with
# another text. How many retried writes were answered from their key (an earlier send had
# committed) is reported.
# Checks: every POST answered OK is stored exactly once, under its id and with its text, and no
# text is stored twice (texts are unique, so that catches a retry written under a new id);
# a DELETE answered OK took effect, a REPORT answered OK hid its pin; writes succeed after the
# fault; every daemon's NEARBY, read page by page, equals the database's live, visible pins in
# the scenario's area within 2 s once the load has stopped and the database is reachable.
# Watchers: the pins their events leave visible equal the database's in the circle (missing 0;
# how long after the load they came level is reported, the check waits at most 10 s), no pin's
# `pin` or `gone` event came twice (doubled 0), no seq went down, and no `WATCH … SINCE`
# answered `resumed: false` (but in 8). Retrying clients: lost (a write answered OK whose POST
# or REPLY is not stored under its id, or whose DELETE did not take effect; in 8 reported, with
# what that loss alone explains) and doubled (a keyed text stored twice) must be 0; every OK
# line got for one key is the same line (a DELETE sent again gets `OK true` again, not
# NOT_FOUND); a key used with another text gets ERR CONFLICT and stores nothing; every write
# ends OK (a definitive ERR fails, as does one still unanswered 30 s after the load stopped, a
# hang guard). The watchers' and the retrying clients' counts end the output, one line each,
# after the summary.
# How long clients saw ERR UNAVAILABLE, and how long no POST succeeded, are reported, not judged.
#
# Load lasts --seconds per scenario (20; --short: 5, the whole run two to three minutes); the
# fault comes at 40 % of it (8 cuts its standby off at 25 %, the crash comes 1.5 s or 15 %
# later) and the load goes on at least 3 s (or 30 %) past the fault's end.
#
# It starts a PostgreSQL cluster of its own under .data/chaos/pg (or /tmp/scavenger-chaos-pg-*
# when the postgres user cannot reach the checkout) on a free port, never the checkout's own
# cluster, creates the database `chaos` and runs `scavengerd migrate` on it; 7 and 8 make
# their pair in its pairs/ directory, on two more free ports each, 10 and 11 their formation in
# pairs/autofailover (three free ports). Every cluster and every pg_autoctl is stopped and
# removed on exit, whatever the reason (--keep leaves the data directories). Daemons
# run with `serve --port 0` and no rate limits. Without --scavengerd it builds the debug
# daemon (`swift build --product scavengerd`). Logs (each daemon's stderr, PostgreSQL's log) and
# results.txt go to .data/chaos/runs/<UTC time>/.
# --sabotage checks the checks: in scenarios 1 and 2 it deletes an acknowledged pin, stores
# another's text again under a new id and hides a third without a change-log entry, behind the
# daemon's back, does the first two to the retrying clients' pins too (lost 1, doubled 1),
# changes the reply stored under one of their keys and sends that write again (two lines for
# one key), and writes a pin into the watched circle without a change-log entry (the watchers
# miss it); both must then FAIL (and the run exit 1).
# Exit code: 0 when every scenario passed, 1 when one failed, other values when the run broke.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

LOAD_SECONDS=20
CONNECTIONS=8
SCENARIOS=""
# Without --scenarios: every scenario, but --short (scripts/test.sh) leaves out 9 to 13.
DEFAULT_SCENARIOS=1,2,3,4,5,6,7,8,9,10,11,12,13,14
SCAVENGERD_GIVEN=""
KEEP=0
KEEP_ARG=()
SABOTAGE=()

usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while (($# > 0)); do
    case $1 in
        --short) LOAD_SECONDS=5; DEFAULT_SCENARIOS=1,2,3,4,5,6,7,8,14; shift ;;
        --seconds) LOAD_SECONDS=${2:-}; shift 2 ;;
        --connections) CONNECTIONS=${2:-}; shift 2 ;;
        --scenarios) SCENARIOS=${2:-}; shift 2 ;;
        --scavengerd) SCAVENGERD_GIVEN=${2:-}; shift 2 ;;
        --keep) KEEP=1; KEEP_ARG=(--keep); shift ;;
        --sabotage) SABOTAGE=(--sabotage); shift ;;
        -h|--help) usage 0 ;;
        *) printf 'unknown argument: %s\n' "$1" >&2; usage 2 ;;
    esac
done
if ! [[ $LOAD_SECONDS =~ ^[0-9]+(\.[0-9]+)?$ ]] || ! awk -v s="$LOAD_SECONDS" 'BEGIN { exit !(s >= 2 && s <= 600) }'; then
    die "--seconds must be a number from 2 to 600"
fi
if ! [[ $CONNECTIONS =~ ^[0-9]+$ ]] || ((CONNECTIONS < 2 || CONNECTIONS > 50)); then
    die "--connections must be 2..50"
fi
SCENARIOS=${SCENARIOS:-$DEFAULT_SCENARIOS}
[[ $SCENARIOS =~ ^([1-9]|1[0-4])(,([1-9]|1[0-4]))*$ ]] || die "--scenarios takes numbers 1 to 14, comma-separated"
# 13 is scripts/chaos/runbook.sh, run after the driver's scenarios.
RUNBOOK=0
if [[ ,$SCENARIOS, == *,13,* ]]; then
    RUNBOOK=1
    SCENARIOS=$(printf '%s' ",$SCENARIOS," | sed 's/,13,/,/g; s/^,//; s/,$//')
fi

T_START=$EPOCHREALTIME
elapsed() { awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
step() { log "[$(elapsed) s] $*"; }

CHAOS_DIR=$PROJECT_ROOT/.data/chaos
RUN_DIR=$CHAOS_DIR/runs/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RUN_DIR"

# One run at a time per checkout: the cluster's directory is shared.
exec 9>"$CHAOS_DIR/lock"
flock -n 9 || die "another scripts/chaos.sh is running in this checkout (lock: $CHAOS_DIR/lock)"

# ---------------------------------------------------------------------------------------------
# Clean-up: the driver (which stops its daemons) and the cluster, whatever the reason.
# ---------------------------------------------------------------------------------------------

DRIVER_PID=""
CPG_STARTED=0

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local rc=$? i
    trap - EXIT INT TERM
    if [[ -n $DRIVER_PID ]] && kill -0 "$DRIVER_PID" 2>/dev/null; then
        kill -TERM "$DRIVER_PID" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            kill -0 "$DRIVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$DRIVER_PID" 2>/dev/null || true
        wait "$DRIVER_PID" 2>/dev/null || true
    fi
    local pid_file pid
    # Scenarios 10 and 11's pg_autoctl processes first (they would start their PostgreSQL again):
    # each runs in a session and process group of its own, whose id the driver wrote in a .pgid
    # file and removes once it is gone; only one holding pg_autoctl or postgres is killed.
    for pid_file in "${PAIR_ROOT:-/nonexistent}"/*/*.pgid; do
        [[ -f $pid_file ]] || continue
        pid=$(<"$pid_file")
        [[ $pid =~ ^[0-9]+$ ]] || continue
        pgrep -s "$pid" -x "pg_autoctl|postgres" >/dev/null || continue
        kill -KILL -- "-$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            pgrep -s "$pid" >/dev/null || break
            sleep 0.1
        done
    done
    # Scenarios 7 and 8's primaries and standbys (the driver stops them itself, unless it was
    # killed): whatever still runs there. A killed primary leaves its postmaster.pid behind: only
    # a process that is that directory's postmaster is stopped, not one that took its pid since.
    for pid_file in "${PAIR_ROOT:-/nonexistent}"/*/*/postmaster.pid; do
        [[ -f $pid_file ]] || continue
        pid=$(head -n 1 "$pid_file")
        [[ $pid =~ ^[0-9]+$ ]] || continue
        tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | grep -qxF -- "${pid_file%/*}" || continue
        pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "${pid_file%/*}" >/dev/null 2>&1 || true
    done
    if ((CPG_STARTED)); then
        pg_run "$PG_BIN/pg_ctl" stop -w -t 60 -m fast -D "$PG_DATA" >/dev/null 2>&1 \
            || pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$PG_DATA" >/dev/null 2>&1 || true
    fi
    if [[ -n ${PG_ROOT:-} && $PG_ROOT == */*chaos-pg* || ${PG_ROOT:-} == "$CHAOS_DIR/pg" ]]; then
        [[ -f $PG_LOG ]] && cp "$PG_LOG" "$RUN_DIR/postgres.log"
        ((KEEP)) || rm -rf "$PG_ROOT"
    fi
    if ((rc != 0)); then
        warn "chaos run ended with exit $rc after $(elapsed) s; logs in $RUN_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A free loopback TCP port outside the kernel's ephemeral range (as scripts/bench.sh picks them):
# a client polling a port there while nothing listens can end up connected to itself and hold
# it, and here PostgreSQL's port is closed and reopened on purpose. Not one of the ports given.
pick_free_port() {
    local lo=32768 hi=60999 base i port
    read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    base=$((25000 + $$ % 4000))
    for ((i = 0; i < 4000; i++)); do
        port=$((base + i))
        ((port >= lo && port <= hi)) && continue
        [[ " $* " == *" $port "* ]] && continue
        if port_is_free "$port"; then
            printf '%s\n' "$port"
            return 0
        fi
    done
    die "no free TCP port from $base outside the ephemeral range $lo-$hi"
}

# ---------------------------------------------------------------------------------------------
# The daemon
# ---------------------------------------------------------------------------------------------

ensure_packages
command -v python3 >/dev/null 2>&1 || SCAVENGER_PACKAGES="python3" ensure_packages
if [[ ,$SCENARIOS, == *,9,* ]]; then SCAVENGER_PACKAGES="haproxy" ensure_packages; fi
# shellcheck disable=SC2086  # a list of package names
[[ ,$SCENARIOS, != *,1[01],* && $RUNBOOK == 0 ]] || install_missing_packages $SCAVENGER_FAILOVER_PACKAGES
if [[ -n $SCAVENGERD_GIVEN ]]; then
    [[ -x $SCAVENGERD_GIVEN ]] || die "--scavengerd $SCAVENGERD_GIVEN is not an executable"
    SCAVENGERD=$(cd "$(dirname "$SCAVENGERD_GIVEN")" && pwd -P)/$(basename "$SCAVENGERD_GIVEN")
    step "using $SCAVENGERD as given (no build)"
else
    ensure_swift
    step "building scavengerd (swift build --product scavengerd; log: $RUN_DIR/build.log)"
    swift build --product scavengerd >"$RUN_DIR/build.log" 2>&1 \
        || { tail -n 40 "$RUN_DIR/build.log" >&2; die "swift build failed"; }
    SCAVENGERD=$(swift build --show-bin-path)/scavengerd
    [[ -x $SCAVENGERD ]] || die "no $SCAVENGERD after the build"
fi

# ---------------------------------------------------------------------------------------------
# The cluster: lib.sh's layout (PG_ROOT, PG_DATA, PG_SOCKET, PG_LOG, PG_PORT), so its helpers
# (pg_run, pg_prepare_dirs, pg_cluster_initdb, pg_psql) work on it. The checkout's own cluster
# (.data/postgres) is not touched.
# ---------------------------------------------------------------------------------------------

PG_BIN=$(pg_find_bin)
PG_ROOT=$CHAOS_DIR/pg
if is_root && ! runuser -u postgres -- test -x "$PROJECT_ROOT" 2>/dev/null; then
    PG_ROOT=/tmp/scavenger-chaos-pg-$(short_hash "$PROJECT_ROOT")
fi
PG_DATA=$PG_ROOT/data
PG_SOCKET=$PG_ROOT/socket
PG_LOG=$PG_ROOT/log
((${#PG_SOCKET} <= 85)) || PG_SOCKET=/tmp/scavenger-chaos-pg-$(short_hash "$PROJECT_ROOT").socket
# A cluster left running by a run that was killed outright: stop it before starting afresh.
if [[ -f $PG_DATA/postmaster.pid ]]; then
    warn "stopping a chaos cluster left over from an earlier run"
    pg_run "$PG_BIN/pg_ctl" stop -w -t 30 -m immediate -D "$PG_DATA" >/dev/null 2>&1 || true
fi
rm -rf "$PG_ROOT"
if [[ $PG_ROOT == "$CHAOS_DIR"/* ]]; then
    chmod go+x "$PROJECT_ROOT/.data" "$CHAOS_DIR"
fi
pg_prepare_dirs
pg_cluster_initdb
PG_PORT=$(pick_free_port)
# The options every start of this cluster gets (the driver starts it again in scenario 4).
PG_OPTS="-p $PG_PORT -k '$PG_SOCKET' -h 127.0.0.1 -c max_connections=200"
step "starting PostgreSQL $(<"$PG_DATA/PG_VERSION") on 127.0.0.1:$PG_PORT ($PG_DATA)"
pg_run "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DATA" -l "$PG_LOG" -o "$PG_OPTS" 9>&- >/dev/null \
    || { tail -n 20 "$PG_LOG" >&2; die "cannot start the chaos PostgreSQL"; }
CPG_STARTED=1
pg_psql -d postgres -c "CREATE DATABASE chaos"
# Scenarios 7 and 8 start a primary and a streaming standby of their own under $PAIR_ROOT, on
# two of these ports each (their sockets in $PG_SOCKET).
PAIR_ROOT=$PG_ROOT/pairs
mkdir -p "$PAIR_ROOT"
FAILOVER_PORTS=()
for _ in 1 2 3 4; do
    FAILOVER_PORTS+=("$(pick_free_port "$PG_PORT" "${FAILOVER_PORTS[@]}")")
done
DATABASE_URL=postgresql://postgres@127.0.0.1:$PG_PORT/chaos
"$SCAVENGERD" migrate --database-url "$DATABASE_URL" >"$RUN_DIR/migrate.log" 2>&1 \
    || { cat "$RUN_DIR/migrate.log" >&2; die "scavengerd migrate failed"; }

# ---------------------------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------------------------

PG_OWNER=""
is_root && PG_OWNER=postgres
status=0
if [[ -n $SCENARIOS ]]; then
step "scenarios $SCENARIOS, $LOAD_SECONDS s of load each, $CONNECTIONS connections (logs: $RUN_DIR)"
python3 -u scripts/chaos/driver.py \
    --scavengerd "$SCAVENGERD" --database-url "$DATABASE_URL" --database chaos \
    --pg-bin "$PG_BIN" --pg-data "$PG_DATA" --pg-log "$PG_LOG" --pg-socket "$PG_SOCKET" \
    --pg-port "$PG_PORT" --pg-opts "$PG_OPTS" --pg-user "$PG_OWNER" --run-dir "$RUN_DIR" \
    --pair-root "$PAIR_ROOT" --failover-ports "$(IFS=,; printf '%s' "${FAILOVER_PORTS[*]}")" \
    "${KEEP_ARG[@]}" \
    --seconds "$LOAD_SECONDS" --connections "$CONNECTIONS" --scenarios "$SCENARIOS" "${SABOTAGE[@]}" 9>&- &
DRIVER_PID=$!
wait "$DRIVER_PID" || status=$?
DRIVER_PID=""
fi
if ((RUNBOOK)); then
    if is_root; then
        step "scenario 13: the failover runbook (scripts/chaos/RUNBOOK.md) on three machines (log: $RUN_DIR/runbook.log)"
        runbook_status=0
        scripts/chaos/runbook.sh --scavengerd "$SCAVENGERD" --run-dir "$RUN_DIR" "${KEEP_ARG[@]}" 9>&- \
            >"$RUN_DIR/runbook.log" 2>&1 || runbook_status=$?
        grep -E '^[0-9:]+ (PASS|FAIL) 13' "$RUN_DIR/runbook.log" || true
        if ((runbook_status != 0)); then
            tail -n 5 "$RUN_DIR/runbook.log" >&2
            log "FAIL 13: the runbook (exit $runbook_status; log: $RUN_DIR/runbook.log)"
            ((status != 0)) || status=1
        else
            log "PASS 13: the runbook"
        fi
    else
        warn "scenario 13 needs root (network namespaces): skipped"
    fi
fi
step "chaos run done: exit $status (logs: $RUN_DIR)"
exit "$status"
