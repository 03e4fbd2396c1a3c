#!/usr/bin/env bash
# Chaos scenario 13 (issue 41): the automatic-failover runbook, step by step as
# scripts/chaos/RUNBOOK.md writes it (the README points there), on three machines, with
# scram-sha-256 passwords and self-signed TLS; then a daemon on a fourth machine through a
# failover and the old primary's return.
#
#   scripts/chaos/runbook.sh --scavengerd PATH --run-dir DIR [--keep]
#
# The machines are Linux network namespaces (rb-mon, rb-db1, rb-db2 and rb-app) on a bridge of
# their own (10.213.0.0/24, named mon, db1, db2 and app in each one's /etc/hosts through
# /etc/netns), and every command on a machine runs in a mount namespace of its own where
# /var/lib/postgresql (the postgres user's home and the runbook's data directories), /run/postgresql
# and /tmp are that machine's own directories under the run directory: the same paths, the same
# port 5432 on db1 and db2, as on three real machines. "The primary's machine dies" is SIGKILL
# to every process in its namespace. Needs root, iproute2, util-linux, pg_auto_failover.
#
# Checks: the monitor promotes db2 by itself; every POST the daemon acknowledged (keyed, retried
# through the failover) is in the new primary, once; the daemon was never restarted; db1, started
# again with `pg_autoctl run`, rejoins as secondary. Prints PASS or FAIL lines; exit 0 when all pass.
set -euo pipefail

SCAVENGERD=""
RUN_DIR=""
KEEP=0
while (($# > 0)); do
    case $1 in
        --scavengerd) SCAVENGERD=$(realpath "$2"); shift 2 ;;
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
[[ -x $SCAVENGERD && -n $RUN_DIR ]] || { echo "usage: $0 --scavengerd PATH --run-dir DIR [--keep]" >&2; exit 2; }
((EUID == 0)) || { echo "runbook.sh needs root (network namespaces)" >&2; exit 2; }

PG_BIN=/usr/lib/postgresql/15/bin
ROOT=$(realpath -m "$RUN_DIR/runbook")
NET=10.213.0
MACHINES=(mon db1 db2 app)
declare -A ADDRESS=([mon]=$NET.1 [db1]=$NET.2 [db2]=$NET.3 [app]=$NET.10)
# The passwords the runbook sets; throwaway, as the machines.
MONITOR_PASSWORD=monitor-$RANDOM$RANDOM
REPLICATION_PASSWORD=replication-$RANDOM$RANDOM
APP_PASSWORD=app-$RANDOM$RANDOM
FAILED=0
DAEMON_PID=""

say() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*"; }
pass() { say "PASS 13: $*"; }
fail() { say "FAIL 13: $*"; FAILED=1; }

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local rc=$? m
    trap - EXIT INT TERM
    [[ -n $DAEMON_PID ]] && kill -9 "$DAEMON_PID" 2>/dev/null
    for m in "${MACHINES[@]}"; do
        ip netns pids "rb-$m" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    done
    sleep 0.5
    for m in "${MACHINES[@]}"; do
        ip netns del "rb-$m" 2>/dev/null || true
        ip link del "rbh-$m" 2>/dev/null || true
        rm -rf "/etc/netns/rb-$m"
    done
    ip link del rbbr 2>/dev/null || true
    if ((KEEP == 0 && rc == 0 && FAILED == 0)); then
        rm -rf "$ROOT"/*/home/monitor "$ROOT"/*/home/node
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# The machines.
# ---------------------------------------------------------------------------------------------
make_machines() {
    local m
    rm -rf "$ROOT"
    ip link add rbbr type bridge
    ip link set rbbr up
    for m in "${MACHINES[@]}"; do
        mkdir -p "$ROOT/$m"/{home,run,tmp} "/etc/netns/rb-$m"
        chown postgres:postgres "$ROOT/$m"/{home,run}
        chmod 700 "$ROOT/$m/home"
        chmod 1777 "$ROOT/$m/tmp"
        {
            echo "127.0.0.1 localhost"
            echo "${ADDRESS[$m]} $m"
            for other in "${MACHINES[@]}"; do [[ $other == "$m" ]] || echo "${ADDRESS[$other]} $other"; done
        } >"/etc/netns/rb-$m/hosts"
        echo "$m" >"/etc/netns/rb-$m/hostname"
        ip netns add "rb-$m"
        ip link add "rbh-$m" type veth peer name eth0 netns "rb-$m"
        ip link set "rbh-$m" master rbbr up
        ip -n "rb-$m" addr add "${ADDRESS[$m]}/24" dev eth0
        ip -n "rb-$m" link set eth0 up
        ip -n "rb-$m" link set lo up
    done
}

# on MACHINE COMMAND…: runs COMMAND as postgres on that machine (its network, its home, its
# sockets and /tmp), with pg_auto_failover's PATH. Output to the caller.
on() {
    local m=$1
    shift
    # shellcheck disable=SC2016  # expanded by the inner bash
    ip netns exec "rb-$m" unshare -m --propagation private bash -c '
        root=$1; shift
        mount --bind "$root/home" /var/lib/postgresql
        mount --bind "$root/run" /run/postgresql
        mount --bind "$root/tmp" /tmp
        exec setpriv --reuid=postgres --regid=postgres --init-groups \
            env -i HOME=/var/lib/postgresql USER=postgres LANG=C.UTF-8 LC_ALL=C.UTF-8 \
            PATH='"$PG_BIN"':/usr/bin:/bin "$@"' _ "$ROOT/$m" "$@"
}

# keeper MACHINE NAME COMMAND…: `on` in the background, its output in NAME.log.
keeper() {
    local m=$1 name=$2
    shift 2
    on "$m" "$@" >>"$ROOT/$name.log" 2>&1 &
    disown $!
}

# psql_on MACHINE ARGS…: psql as postgres on that machine over its socket, tried again for up to
# 60 s while the server is not there (pg_autoctl restarts PostgreSQL as it changes its settings).
psql_on() {
    local m=$1 tries=0 out
    shift
    until out=$(on "$m" psql -X -v ON_ERROR_STOP=1 "$@" 2>&1); do
        if [[ $out != *"No such file or directory"* && $out != *"the database system is"* && $out != *"Connection refused"* ]] \
            || ((tries++ >= 120)); then
            printf '%s\n' "$out" >&2
            return 1
        fi
        sleep 0.5
    done
    [[ -z $out ]] || printf '%s\n' "$out"
}

# state: the monitor's view, "db1:primary db2:secondary" (reported states).
state() {
    on mon psql -X -At -p 5000 -d pg_auto_failover -c \
        "SELECT string_agg(nodename || ':' || reportedstate, ' ' ORDER BY nodename) FROM pgautofailover.node" 2>/dev/null || true
}

# wait_state PATTERN SECONDS: until the monitor's view matches the glob PATTERN.
wait_state() {
    local wanted=$1 guard=$2 waited=0 now
    while :; do
        now=$(state)
        # shellcheck disable=SC2053  # a glob on purpose
        [[ $now == $wanted ]] && { say "    monitor: $now"; return 0; }
        ((waited++ < guard * 2)) || { fail "the monitor did not report '$wanted' within $guard s (it says '$now')"; return 1; }
        sleep 0.5
    done
}

# ---------------------------------------------------------------------------------------------
# The runbook, as scripts/chaos/RUNBOOK.md writes it ("Automatic failover with pg_auto_failover,
# step by step"). Each numbered step here is the runbook's.
# ---------------------------------------------------------------------------------------------
runbook() {
    say "1. the monitor on mon (scram-sha-256, self-signed TLS)"
    on mon pg_autoctl create monitor --pgdata /var/lib/postgresql/monitor --pgport 5000 --hostname mon \
        --auth scram-sha-256 --ssl-self-signed >>"$ROOT/commands.log" 2>&1
    keeper mon monitor pg_autoctl run --pgdata /var/lib/postgresql/monitor
    local tries=0
    until on mon psql -X -At -p 5000 -d pg_auto_failover -c "SELECT 1" >/dev/null 2>&1; do
        ((tries++ < 120)) || { fail "the monitor does not answer"; return 1; }
        sleep 0.5
    done
    psql_on mon -q -p 5000 -d pg_auto_failover -c "ALTER USER autoctl_node PASSWORD '$MONITOR_PASSWORD'"

    say "2. the passwords in each database machine's ~/.pgpass (the monitor's autoctl_node, replication)"
    local m
    for m in db1 db2; do
        on "$m" bash -c "umask 077; printf '%s\n' 'mon:5000:pg_auto_failover:autoctl_node:$MONITOR_PASSWORD' \
            '*:5432:*:pgautofailover_replicator:$REPLICATION_PASSWORD' >~/.pgpass"
    done

    for m in db1 db2; do
        say "3. the node on $m"
        on "$m" pg_autoctl create postgres --pgdata /var/lib/postgresql/node --pgport 5432 --hostname "$m" --name "$m" \
            --dbname scavenger --monitor 'postgres://autoctl_node@mon:5000/pg_auto_failover?sslmode=require' \
            --auth scram-sha-256 --ssl-self-signed >>"$ROOT/commands.log" 2>&1
        on "$m" pg_autoctl config set --pgdata /var/lib/postgresql/node replication.password "$REPLICATION_PASSWORD" \
            >>"$ROOT/commands.log" 2>&1
        keeper "$m" "$m" pg_autoctl run --pgdata /var/lib/postgresql/node
        if [[ $m == db1 ]]; then
            wait_state "db1:single" 120 || return 1
            # The replication user's password, on the primary (a standby's base backup logs in with it).
            psql_on db1 -q -p 5432 -d scavenger -c "ALTER USER pgautofailover_replicator PASSWORD '$REPLICATION_PASSWORD'"
            say "4. the daemons' role and database, and their rule in pg_hba.conf on each node"
            psql_on db1 -q -p 5432 -d scavenger -c "CREATE ROLE scavenger LOGIN PASSWORD '$APP_PASSWORD'" \
                -c "ALTER DATABASE scavenger OWNER TO scavenger" -c "ALTER SCHEMA public OWNER TO scavenger"
        fi
        # The daemons' rule, and the one pg_rewind needs when an old primary rejoins (pg_autoctl
        # 2.0 adds none for it: without it the old primary is copied again with pg_basebackup).
        on "$m" bash -c "printf '%s\n' 'hostssl scavenger scavenger $NET.0/24 scram-sha-256' \
            'hostssl postgres pgautofailover_replicator $NET.0/24 scram-sha-256' >>/var/lib/postgresql/node/pg_hba.conf"
        on "$m" pg_ctl reload -D /var/lib/postgresql/node >/dev/null 2>&1 || true
    done
    wait_state "db1:primary db2:secondary" 180 || return 1
    local sync
    sync=$(psql_on db1 -At -p 5432 -d scavenger -c "SHOW synchronous_standby_names")
    say "    db1's synchronous_standby_names: $sync"
    if [[ $sync == *pgautofailover_standby* ]]; then pass "db2 is db1's synchronous standby ($sync)"
    else fail "db1 has no synchronous standby ($sync)"; fi
    local ssl
    ssl=$(psql_on db1 -At -p 5432 -d scavenger -c "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_replication r USING (pid) WHERE s.ssl")
    if [[ $ssl == 1 ]]; then pass "replication to db2 runs over TLS"; else fail "replication to db2 is not over TLS ($ssl)"; fi
}

# ---------------------------------------------------------------------------------------------
# The daemon on app: the password in a password file, both nodes in its URL.
# ---------------------------------------------------------------------------------------------
URL="postgresql://scavenger@db1:5432,db2:5432/scavenger?sslmode=require&target_session_attrs=read-write"

daemon_start() {
    umask 077
    printf '%s\n' "db1:5432:scavenger:scavenger:$APP_PASSWORD" "db2:5432:scavenger:scavenger:$APP_PASSWORD" >"$ROOT/app/pgpass"
    umask 022
    say "5. scavengerd migrate, then serve, on app"
    ip netns exec rb-app env PGPASSFILE="$ROOT/app/pgpass" "$SCAVENGERD" migrate --database-url "$URL" >>"$ROOT/commands.log" 2>&1
    ip netns exec rb-app env PGPASSFILE="$ROOT/app/pgpass" "$SCAVENGERD" serve --database-url "$URL" \
        --host "$NET.10" --port 7467 --post-rate off --register-rate off >"$ROOT/scavengerd.log" 2>&1 &
    DAEMON_PID=$!
    disown "$DAEMON_PID"
    local tries=0
    until ip netns exec rb-app python3 -c "import socket; socket.create_connection(('$NET.10', 7467), 1)" 2>/dev/null; do
        ((tries++ < 240)) || { fail "the daemon did not start (see scavengerd.log)"; return 1; }
        sleep 0.5
    done
}

# The writers: a client on app that registers and then POSTs with REQUEST keys, sending each
# line again (on a new connection when it must) until it is answered OK; the keys and pins it
# was answered with go to acked.txt. It runs until the file `stop` appears.
WRITER=$(cat <<'EOF'
import json, os, socket, sys, time, uuid
host, root = sys.argv[1], sys.argv[2]
def connect():
    while True:
        try:
            s = socket.create_connection((host, 7467), 5)
            s.settimeout(15)
            return s, s.makefile("rb")
        except OSError:
            time.sleep(0.2)
def ask(line, auth):
    global conn
    while True:
        try:
            if conn is None:
                conn = connect()
                if auth:
                    ask_once(f"AUTH {auth}")
            reply = ask_once(line)
            if reply.startswith("ERR UNAVAILABLE") or reply.startswith("ERR TIMEOUT"):
                time.sleep(0.2)
                continue
            return reply
        except (OSError, ConnectionError):
            try:
                conn[0].close()
            except Exception:
                pass
            conn = None
            time.sleep(0.2)
def ask_once(line):
    conn[0].sendall((line + "\n").encode())
    reply = conn[1].readline().decode()
    if not reply:
        raise ConnectionError("closed")
    return reply.strip()
conn = None
name = "rb" + uuid.uuid4().hex[:10]
reply = ask(f"REGISTER {name} {name}@runbook.example correct-horse-battery-9", None)
if not reply.startswith("OK"):
    sys.exit(f"REGISTER: {reply}")
token = json.loads(reply[3:])["token"]
conn[0].close(); conn = None
with open(os.path.join(root, "acked.txt"), "a") as acked:
    n = 0
    while not os.path.exists(os.path.join(root, "stop")):
        n += 1
        key = str(uuid.uuid4())
        text = f"runbook {name} {n}"
        reply = ask(f"POST 52.52 13.405 {json.dumps(text)} REQUEST {key}", token)
        if not reply.startswith("OK"):
            sys.exit(f"POST: {reply}")
        pin = json.loads(reply[3:])["pin"]["id"]
        acked.write(f"{pin}\t{text}\n"); acked.flush()
EOF
)

writers_start() {
    rm -f "$ROOT/stop" "$ROOT/acked.txt"
    local _
    WRITER_PIDS=()
    for _ in 1 2 3 4; do
        ip netns exec rb-app python3 -c "$WRITER" "$NET.10" "$ROOT" >>"$ROOT/writers.log" 2>&1 &
        WRITER_PIDS+=($!)
    done
}

acked() { [[ -f $ROOT/acked.txt ]] && wc -l <"$ROOT/acked.txt" || echo 0; }

# ---------------------------------------------------------------------------------------------
# The run.
# ---------------------------------------------------------------------------------------------
make_machines
runbook || exit 1
daemon_start || exit 1
writers_start
waited=0
while (($(acked) < 200)); do
    ((waited++ < 240)) || { fail "fewer than 200 writes acknowledged in 120 s before the crash: $(tail -n 2 "$ROOT/writers.log")"; exit 1; }
    sleep 0.5
done
before=$(acked)
say "6. under load ($before writes acknowledged), db1's machine dies (SIGKILL to everything on it)"
ip netns pids rb-db1 | xargs -r kill -9
t0=$EPOCHREALTIME
wait_state "*db2:*primary*" 180 || true
promoted=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
now_state=$(state)
if [[ $now_state == *db2:wait_primary* || $now_state == *db2:primary* ]]; then
    pass "the monitor promoted db2 by itself after ${promoted} s ($now_state)"
else
    fail "db2 was not promoted ($now_state)"
fi
mid=$(acked)
sleep 10
after=$(acked)
if ((after > mid)); then pass "writes go on through the daemon after the promotion ($mid then $after acknowledged)"
else fail "no write acknowledged after the promotion ($mid then $after)"; fi

say "7. db1 comes back: pg_autoctl run on its machine (its PostgreSQL never started by hand)"
keeper db1 db1-again pg_autoctl run --pgdata /var/lib/postgresql/node
if wait_state "db1:secondary db2:primary" 300; then
    if grep -q "Failed to rewind" "$ROOT/db1-again.log"; then
        fail "db1 rejoined as secondary, but pg_rewind failed and it was copied again: $(grep -m1 -A0 'FATAL' "$ROOT/db1-again.log")"
    else
        pass "db1 was rewound (pg_rewind) and rejoined as secondary, db2 primary"
    fi
fi
touch "$ROOT/stop"
for pid in "${WRITER_PIDS[@]}"; do wait "$pid" || true; done
total=$(acked)
cut -f1 "$ROOT/acked.txt" | sort -u >"$ROOT/acked-ids.txt"
install -m 644 "$ROOT/acked-ids.txt" "$ROOT/db2/tmp/acked-ids.txt"
found=$(psql_on db2 -At -p 5432 -d scavenger -c "CREATE TEMP TABLE acked (id text PRIMARY KEY)" \
    -c "\\copy acked FROM '/tmp/acked-ids.txt'" -c "SELECT count(*) FROM pins JOIN acked USING (id)" | tail -n 1)
doubled=$(psql_on db2 -At -p 5432 -d scavenger -c \
    "SELECT count(*) FROM (SELECT body FROM pins WHERE body LIKE 'runbook %' GROUP BY body HAVING count(*) > 1) d")
if [[ $found == "$(wc -l <"$ROOT/acked-ids.txt")" && $found == "$total" && $doubled == 0 ]]; then
    pass "0 of $total acknowledged writes lost, 0 doubled (all on the new primary db2)"
else
    fail "acknowledged $total, on db2 $found, doubled texts $doubled"
fi
if kill -0 "$DAEMON_PID" 2>/dev/null; then pass "the daemon ran throughout (never restarted)"; else fail "the daemon died (see scavengerd.log)"; fi
[[ -s $ROOT/writers.log ]] && { fail "a writer stopped: $(tail -n 3 "$ROOT/writers.log")"; }
exit "$FAILED"
