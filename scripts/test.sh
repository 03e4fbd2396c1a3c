#!/usr/bin/env bash
# Build and run the tests.
#
#   scripts/test.sh                 the whole chain, as CI runs it (.ci/run): every Swift test in
#                                   one pass, with the fuzzing run beside them, then the
#                                   fault-injection run and the browser tests described below
#   scripts/test.sh ARGS...         only `swift test ARGS...` (e.g. --filter Framing): the Swift
#                                   tests that match, and nothing after them
#
# The tests assert on what happened, not on how long it took (their waits only guard against
# hangs), so every suite runs in the one pass, beside all the others, whatever the machine's load.
#
# Installs the Debian packages of scripts/lib.sh that are missing: the build's and the tests'
# (SCAVENGER_TEST_PACKAGES: the QR code round trip's renderer and decoder).
#
# Database: when DATABASE_URL or SCAVENGER_TEST_DATABASE_URL is set, it is used as is
# (SCAVENGER_TEST_DATABASE_URL defaults to DATABASE_URL) and no cluster is started.
# Otherwise this checkout's local PostgreSQL cluster (.data/postgres, see scripts/lib.sh) is
# started, or reused if already running, and the database `scavenger_test` is dropped and
# created afresh. A cluster started here is stopped on exit; a pre-running one is left alone.
#
# Without ARGS only: beside the Swift tests, a short fuzzing run of the request-line parser
# (scripts/fuzz.sh, 20 s after a build of its own in .build-fuzz; SCAVENGER_SKIP_FUZZ=1 skips
# it); after them, the short fault-injection run (scripts/chaos.sh --short, on a PostgreSQL
# cluster of its own; SCAVENGER_SKIP_CHAOS=1 skips it); then the demo page, the moderators'
# console, the hunt pages and the client module (scavenger.js across a daemon restart and a lost
# reply), the pages staying live and /play over HTTPS in headless Chromium
# (scripts/browser/{demo,console,hunt,trial,team,client,recovery,live,https,class,map}_test.py,
# after installing chromium, chromium-driver and selenium into .data/venv;
# SCAVENGER_SKIP_BROWSER=1 skips them).
# Each phase is logged with `==>` and its wall time. The exit code is swift test's when it
# failed, else the first failure of the fault-injection run, the browser tests, the fuzzing run.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

# shellcheck disable=SC2317  # invoked by the EXIT trap
stop_cluster_if_started_here() {
    if [[ ${PG_STARTED_HERE:-0} == 1 ]]; then
        pg_cluster_stop || warn "could not stop the PostgreSQL cluster in $PG_DATA"
    fi
}

ensure_packages
ensure_test_packages
ensure_swift
# The mail tests' SMTP server (aiosmtpd); they fail without it.
ensure_smtp_server

if [[ -n ${DATABASE_URL:-} || -n ${SCAVENGER_TEST_DATABASE_URL:-} ]]; then
    export SCAVENGER_TEST_DATABASE_URL=${SCAVENGER_TEST_DATABASE_URL:-$DATABASE_URL}
    log "test database (given): $(redact_url "$SCAVENGER_TEST_DATABASE_URL")"
else
    trap stop_cluster_if_started_here EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    pg_cluster_start
    pg_recreate_database scavenger_test
    SCAVENGER_TEST_DATABASE_URL=$(pg_database_url scavenger_test)
    export SCAVENGER_TEST_DATABASE_URL
    LOCAL_CLUSTER=1
    log "test database (local cluster): $SCAVENGER_TEST_DATABASE_URL"
fi

# Every import must be of a declared dependency, so the module graph stays what Package.swift says.
build_flags=(--explicit-target-dependency-import-check error)

# Each phase is logged when it begins and, with its exit code and wall time, when it ends.
phase_started=0
begin_phase() { phase_started=$SECONDS; log "$*"; }
end_phase() { log "$1 exited with $2 after $((SECONDS - phase_started)) s"; }

begin_phase "swift build --build-tests ${build_flags[*]}"
build_status=0
swift build --build-tests "${build_flags[@]}" || build_status=$?
end_phase "the build" "$build_status"
if ((build_status != 0)); then exit "$build_status"; fi

# The build above made the test products: `swift test` need not plan and check the build again
# (which took it tens of seconds on a loaded machine).
test_flags=("${build_flags[@]}" --skip-build)

status=0
if (($# > 0)); then
    begin_phase "swift test $* (only the Swift tests that match)"
    swift test "${test_flags[@]}" "$@" || status=$?
    end_phase "swift test" "$status"
    exit "$status"
fi

# The fuzzing run starts now, beside the Swift tests: its build (a second one, with sanitizers, in
# .build-fuzz) keeps both cores busy for minutes, while the Swift tests mostly wait (on PostgreSQL,
# on sockets) and no longer care how loaded the machine is; the build is the longer, so its 20 s
# of fuzzing mostly come after the tests. The fault-injection run and the browser tests, which
# judge timings of their own, start only once it is over. Its output goes to .data/fuzz-phase.log.
fuzz_pid=""
# shellcheck disable=SC2317  # invoked by the EXIT trap
stop_fuzz() {
    if [[ -n $fuzz_pid ]] && kill -0 "$fuzz_pid" 2>/dev/null; then kill -- "-$fuzz_pid" 2>/dev/null || true; fi
}
if [[ ${SCAVENGER_SKIP_FUZZ:-0} == 1 ]]; then
    log "skipping the fuzzing run (SCAVENGER_SKIP_FUZZ=1)"
else
    mkdir -p .data
    fuzz_log=.data/fuzz-phase.log
    fuzz_started=$SECONDS
    log "the fuzzing run (scripts/fuzz.sh 20, its build included) starts beside the Swift tests (log: $fuzz_log)"
    # A process group of its own, so that an interrupted run stops all of it.
    setsid scripts/fuzz.sh 20 >"$fuzz_log" 2>&1 &
    fuzz_pid=$!
    trap 'stop_fuzz; stop_cluster_if_started_here' EXIT
fi

begin_phase "swift test (every Swift test, in one pass)"
swift test "${test_flags[@]}" || status=$?
end_phase "swift test" "$status"

fuzz_status=0
if [[ -n $fuzz_pid ]]; then
    log "waiting for the fuzzing run"
    wait "$fuzz_pid" || fuzz_status=$?
    fuzz_pid=""
    grep -E '^(==>|warning:|error:)' "$fuzz_log" >&2 || true
    if ((fuzz_status != 0)); then tail -n 30 "$fuzz_log" >&2; fi
    log "the fuzzing run exited with $fuzz_status after $((SECONDS - fuzz_started)) s (beside the Swift tests)"
fi

if [[ ${SCAVENGER_SKIP_CHAOS:-0} == 1 ]]; then
    log "skipping the fault-injection run (SCAVENGER_SKIP_CHAOS=1)"
else
    chaos_status=0
    begin_phase "the fault-injection run (scripts/chaos.sh --short)"
    scripts/chaos.sh --short --scavengerd "$(swift build --show-bin-path)/scavengerd" || chaos_status=$?
    end_phase "the fault-injection run" "$chaos_status"
    if ((status == 0)); then status=$chaos_status; fi
fi

# The demo page, the moderators' console, the hunt pages and the client module in headless
# Chromium, each against a daemon of its own on a database of its own.
if [[ ${SCAVENGER_SKIP_BROWSER:-0} == 1 ]]; then
    log "skipping the browser tests (SCAVENGER_SKIP_BROWSER=1)"
elif [[ ${LOCAL_CLUSTER:-0} != 1 ]]; then
    log "skipping the browser tests: they need the local cluster (databases of their own), not DATABASE_URL"
else
    begin_phase "the browser tests (installing what they need first)"
    browser_phase_status=0
    ensure_browser
    daemon="$(swift build --show-bin-path)/scavengerd"
    for browser_test in demo console hunt trial team client recovery live https class map; do
        browser_status=0
        pg_recreate_database "scavenger_browser_$browser_test"
        browser_url=$(pg_database_url "scavenger_browser_$browser_test")
        DATABASE_URL=$browser_url "$daemon" migrate --migrations db >/dev/null
        "$BROWSER_PYTHON" "scripts/browser/${browser_test}_test.py" "$daemon" "$browser_url" .data/browser || browser_status=$?
        log "the $browser_test browser test exited with $browser_status (screenshots in .data/browser)"
        if ((browser_phase_status == 0)); then browser_phase_status=$browser_status; fi
    done
    end_phase "the browser tests" "$browser_phase_status"
    if ((status == 0)); then status=$browser_phase_status; fi
fi

# The fuzzing run's status counts last, as the run came last before it was moved up.
if ((status == 0)); then status=$fuzz_status; fi
exit "$status"
