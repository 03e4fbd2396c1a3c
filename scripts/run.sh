#!/usr/bin/env bash
# Build and run the scavengerd daemon on 127.0.0.1:7467 (extra arguments go to `scavengerd serve`).
#
# Database: DATABASE_URL when set (used as is, no cluster is started); otherwise this checkout's
# local PostgreSQL cluster (.data/postgres, see scripts/lib.sh) is started or reused and the
# database `scavenger` is created in it if missing. The cluster keeps running after the daemon
# stops; `scripts/db.sh stop` stops it.
#
# Environment: DATABASE_URL, SCAVENGER_HOST (default 127.0.0.1), SCAVENGER_PORT (default 7467).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

ensure_packages
ensure_swift

if [[ -n ${DATABASE_URL:-} ]]; then
    log "using DATABASE_URL as given: $(redact_url "$DATABASE_URL")"
else
    pg_cluster_start
    pg_create_database scavenger
    DATABASE_URL=$(pg_database_url scavenger)
    export DATABASE_URL
    log "using the local cluster: $DATABASE_URL (it stays running; scripts/db.sh stop stops it)"
fi

log "swift build -c release --product scavengerd"
swift build -c release --product scavengerd

log "scavengerd migrate"
.build/release/scavengerd migrate

log "scavengerd serve on ${SCAVENGER_HOST:-127.0.0.1}:${SCAVENGER_PORT:-7467}"
# glibc gives each allocating thread its own arena; with the feed's large index in memory, two
# arenas keep the resident size down (the load's freed buffers are not spread over many). A
# fixed mmap threshold keeps large blocks (the index's arrays as they grow) out of the heap, so
# what is freed goes back to the system instead of staying resident.
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}
exec .build/release/scavengerd serve \
    --host "${SCAVENGER_HOST:-127.0.0.1}" --port "${SCAVENGER_PORT:-7467}" "$@"
