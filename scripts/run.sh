#!/usr/bin/env bash
# Build and run the scavengerd daemon: the line protocol on 127.0.0.1:7467 and the HTTP port (the
# /play, /host and demo pages, the console at /mod/, /metrics, /ws) on 127.0.0.1:7468. Extra
# arguments go to `scavengerd serve`. Once /healthz answers, the pages' URLs are printed.
#
# Database: DATABASE_URL when set (used as is, no cluster is started); otherwise this checkout's
# local PostgreSQL cluster (.data/postgres, see scripts/lib.sh) is started or reused and the
# database `scavenger` is created in it if missing. The cluster keeps running after the daemon
# stops; `scripts/db.sh stop` stops it.
#
# Environment: DATABASE_URL, SCAVENGER_HOST (default 127.0.0.1), SCAVENGER_PORT (default 7467),
# SCAVENGER_HTTP_PORT (default 7468; `off` serves no HTTP port). An `--http-port` among the extra
# arguments takes the place of SCAVENGER_HTTP_PORT.
#
# A hunt for a group on a LAN: every address, and the HTTP port over HTTPS (phones give a page
# their location only over HTTPS), e.g. with a self-signed certificate or mkcert's:
#   SCAVENGER_HOST=0.0.0.0 scripts/run.sh --http-tls-cert cert.pem --http-tls-key key.pem
# The URLs printed then start with https://, followed by the machine's LAN addresses.
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

host=${SCAVENGER_HOST:-127.0.0.1}
port=${SCAVENGER_PORT:-7467}
http_port=${SCAVENGER_HTTP_PORT:-7468}
# The extra arguments may name the addresses themselves: the last one given is the one served.
given_http_port=""
scheme=http
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
        --http-port) given_http_port=${args[i + 1]:-} ;;
        --http-port=*) given_http_port=${args[i]#--http-port=} ;;
        --host) host=${args[i + 1]:-$host} ;;
        --host=*) host=${args[i]#--host=} ;;
        --port) port=${args[i + 1]:-$port} ;;
        --port=*) port=${args[i]#--port=} ;;
        --http-tls-cert | --http-tls-cert=*) scheme=https ;;
    esac
done
http_args=()
if [[ -n $given_http_port ]]; then
    http_port=$given_http_port
elif [[ $http_port != off ]]; then
    [[ $http_port =~ ^[0-9]+$ ]] || die "SCAVENGER_HTTP_PORT must be a port number or off, not '$http_port'"
    http_args=(--http-port "$http_port")
fi

if [[ $http_port == off ]]; then
    log "scavengerd serve on $host:$port (no HTTP port: SCAVENGER_HTTP_PORT=off)"
else
    log "scavengerd serve on $host:$port, ${scheme^^} on $host:$http_port (its URLs follow once it is up)"
    # Printed by a process of its own, detached (its parent subshell ends at once), so that the
    # daemon keeps this script's process id (exec below) and gets Ctrl-C and SIGTERM itself;
    # it ends when the URLs are printed or the daemon is gone.
    daemon_pid=$$
    if [[ $http_port != 0 ]]; then
        (announce_http_urls "$host" "$http_port" "$port" "$daemon_pid" 600 "$scheme" &)
    fi
fi
# glibc gives each allocating thread its own arena; with the feed's large index in memory, two
# arenas keep the resident size down (the load's freed buffers are not spread over many). A
# fixed mmap threshold keeps large blocks (the index's arrays as they grow) out of the heap, so
# what is freed goes back to the system instead of staying resident.
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}
exec .build/release/scavengerd serve \
    --host "${SCAVENGER_HOST:-127.0.0.1}" --port "${SCAVENGER_PORT:-7467}" "${http_args[@]}" "$@"
