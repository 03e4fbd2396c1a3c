#!/usr/bin/env bash
# Build and run the test suite (extra arguments go to `swift test`, e.g. --filter X).
# Installs the Debian packages of scripts/lib.sh that are missing: the build's and the tests'
# (SCAVENGER_TEST_PACKAGES: the QR code round trip's renderer and decoder).
#
# Database: when DATABASE_URL or SCAVENGER_TEST_DATABASE_URL is set, it is used as is
# (SCAVENGER_TEST_DATABASE_URL defaults to DATABASE_URL) and no cluster is started.
# Otherwise this checkout's local PostgreSQL cluster (.data/postgres, see scripts/lib.sh) is
# started, or reused if already running, and the database `scavenger_test` is dropped and
# created afresh. A cluster started here is stopped on exit; a pre-running one is left alone.
#
# After the tests: the short fault-injection run (scripts/chaos.sh --short, on a PostgreSQL
# cluster of its own; SCAVENGER_SKIP_CHAOS=1 skips it); the demo page and the moderators' console
# in headless Chromium (scripts/browser/{demo,console}_test.py, after installing chromium,
# chromium-driver and selenium into .data/venv; SCAVENGER_SKIP_BROWSER=1 skips them); then a short fuzzing run of the request-line
# parser (scripts/fuzz.sh, 20 s after a build of its own in .build-fuzz; SCAVENGER_SKIP_FUZZ=1
# skips it). The exit code is swift test's when it failed, else the first failure after it.
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

log "swift build --build-tests ${build_flags[*]}"
swift build --build-tests "${build_flags[@]}"

status=0
if (($# > 0)); then
    log "swift test $*"
    swift test "${build_flags[@]}" "$@" || status=$?
else
    # Suites that measure time (bounded waits, back-off, a storm against a deadline, expiry
    # within seconds) run in a second pass of their own: in the first, hundreds of other tests
    # load both cores and would decide them instead of the code.
    timed='DatabaseFaultTests|AbuseControlTests|WatchTests|FailureRecoveryTests|HTTPShutdownTests'
    log "swift test --skip '$timed'"
    swift test "${build_flags[@]}" --skip "$timed" || status=$?
    log "swift test --filter '$timed' (the suites that measure time)"
    timed_status=0
    swift test "${build_flags[@]}" --filter "$timed" || timed_status=$?
    if ((status == 0)); then status=$timed_status; fi
fi
log "swift test exited with $status"

if [[ ${SCAVENGER_SKIP_CHAOS:-0} == 1 ]]; then
    log "skipping the fault-injection run (SCAVENGER_SKIP_CHAOS=1)"
else
    chaos_status=0
    scripts/chaos.sh --short --scavengerd "$(swift build --show-bin-path)/scavengerd" || chaos_status=$?
    log "the fault-injection run exited with $chaos_status"
    if ((status == 0)); then status=$chaos_status; fi
fi

# The demo page and the moderators' console in headless Chromium, each against a daemon of its
# own on a database of its own.
if [[ ${SCAVENGER_SKIP_BROWSER:-0} == 1 ]]; then
    log "skipping the browser tests (SCAVENGER_SKIP_BROWSER=1)"
elif [[ ${LOCAL_CLUSTER:-0} != 1 ]]; then
    log "skipping the browser tests: they need the local cluster (databases of their own), not DATABASE_URL"
else
    ensure_browser
    daemon="$(swift build --show-bin-path)/scavengerd"
    for browser_test in demo console; do
        browser_status=0
        pg_recreate_database "scavenger_browser_$browser_test"
        browser_url=$(pg_database_url "scavenger_browser_$browser_test")
        DATABASE_URL=$browser_url "$daemon" migrate --migrations db >/dev/null
        "$BROWSER_PYTHON" "scripts/browser/${browser_test}_test.py" "$daemon" "$browser_url" .data/browser || browser_status=$?
        log "the $browser_test browser test exited with $browser_status (screenshots in .data/browser)"
        if ((status == 0)); then status=$browser_status; fi
    done
fi

if [[ ${SCAVENGER_SKIP_FUZZ:-0} == 1 ]]; then
    log "skipping the fuzzing run (SCAVENGER_SKIP_FUZZ=1)"
else
    fuzz_status=0
    scripts/fuzz.sh 20 || fuzz_status=$?
    log "the fuzzing run exited with $fuzz_status"
    if ((status == 0)); then status=$fuzz_status; fi
fi
exit "$status"
