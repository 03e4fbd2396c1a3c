# shellcheck shell=bash
# The report (step 6): the run's circumstances into meta.txt, then scripts/bench/report.py.

# Inputs: FULL, PINS_LOADED, RUN_RANKING, ONLY, QUICK, PINS, CONNS_LEVELS, SPARSE_PINS, SEED, CENTRES,
# RUN_SECONDS, WARMUP, ROUNDS, WRITE_ROUNDS, PHOTO_BYTES, SCAV_PORT, PROJECT_ROOT, BENCH_DIR, RUN_ID, RUN_DIR.
report_step() {
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
    if ((PINS_LOADED)); then
        meta postgis_version "$(pg_psql -d bench_postgis -Atc 'SELECT extversion FROM pg_extension WHERE extname = $$postgis$$')"
        meta pins "$PINS"
    fi
    if ((!FULL)); then
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
}
