#!/usr/bin/env bash
# Manage this checkout's local PostgreSQL cluster (.data/postgres, see scripts/lib.sh).
#   scripts/db.sh start      start it (or report it running), create database `scavenger`
#   scripts/db.sh stop       stop it (fast shutdown)
#   scripts/db.sh status     say whether it runs, and where
#   scripts/db.sh url        print the URL of database `scavenger`
#   scripts/db.sh psql ...   psql into it as postgres (default database: scavenger)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

usage() { sed -n '2,7s/^# \{0,1\}//p' "$0" >&2; exit 2; }

require_running() {
    pg_init_paths
    pg_cluster_running || die "the cluster in $PG_DATA is not running (scripts/db.sh start)"
    PG_PORT=$(pg_running_port)
}

case ${1:-} in
    start)
        pg_cluster_start
        pg_create_database scavenger
        pg_database_url scavenger
        ;;
    stop)
        pg_init_paths
        pg_cluster_stop
        ;;
    status)
        pg_init_paths
        if pg_cluster_running; then
            echo "running: $PG_DATA on 127.0.0.1:$(pg_running_port), socket $PG_SOCKET, log $PG_LOG"
        else
            echo "stopped: $PG_DATA"
            exit 3
        fi
        ;;
    url)
        require_running
        pg_database_url scavenger
        ;;
    psql)
        shift
        require_running
        PGDATABASE=${PGDATABASE:-scavenger} exec "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -U postgres "$@"
        ;;
    *)
        usage
        ;;
esac
