# shellcheck shell=bash
# Shared helpers for scripts/run.sh, scripts/test.sh and scripts/db.sh.
# Source it after `cd`-ing to the project root; it does not change any shell option.
#
# Local PostgreSQL cluster (used when DATABASE_URL is not set):
#   .data/postgres/data     data directory (initdb -U postgres -E UTF8 --locale=C --auth=trust)
#   .data/postgres/socket   unix socket directory (-k)
#   .data/postgres/log      server log (pg_ctl -l)
#   .data/postgres/port     TCP port the cluster was last started on
# The cluster listens on 127.0.0.1 and its socket directory only, on a free port of its own
# (never assumed to be 5432). Superuser `postgres`, no password (trust, local connections only).
# As root, initdb/pg_ctl run as the `postgres` OS user, who owns .data/postgres; if that user
# cannot reach the project directory, the cluster lives in /tmp/scavenger-pg-<hash> instead.

PROJECT_ROOT=${PROJECT_ROOT:-$(pwd -P)}

# Debian packages the build, the daemon and the tests need. libjs-leaflet: the map library the
# hunt pages load from the daemon (/vendor/leaflet/, read from /usr/share/javascript/leaflet).
# libreadline-dev: the command-line client's prompt (Sources/CReadline).
SCAVENGER_PACKAGES="libpq-dev libgeos-dev libb64-dev libsodium-dev libqrencode-dev libjs-leaflet postgresql postgresql-contrib netcat-openbsd libreadline-dev libcurl4-openssl-dev libvips-dev pkg-config"

# Debian packages only the tests need (scripts/test.sh installs them): rsvg-convert renders the
# QR codes' SVG to PNG and zbarimg reads them back (Tests/QRCodeTests fail without them); tmux
# is the terminal the command-line client's prompt is tested in (Tests/ScavengerClientTests);
# systemd brings systemd-analyze, which checks scripts/scavengerd.service (SystemdUnitTests);
# haproxy balances two daemons in scripts/chaos.sh's rolling restart (scenario 9; the driver runs
# its own, in the foreground, not the system's service); nginx (with its stream module) runs
# scripts/proxies/nginx.conf in front of a daemon and caddy validates scripts/proxies/Caddyfile
# (ProxyConfigTests, again in the foreground, never the system's service).
# SCAVENGER_FAILOVER_PACKAGES: pg_auto_failover (the monitor's extension for bookworm's
# PostgreSQL 15, and pg_autoctl), which chaos scenarios 10 and 11 fail over with.
SCAVENGER_FAILOVER_PACKAGES="postgresql-15-auto-failover pg-auto-failover-cli"
SCAVENGER_TEST_PACKAGES="librsvg2-bin zbar-tools tmux systemd haproxy nginx libnginx-mod-stream caddy $SCAVENGER_FAILOVER_PACKAGES"

# The ports a new cluster's is picked from: below the kernel's ephemeral range (32768-60999 by
# default), where no client's outgoing connection (a test daemon's, say) can be holding it, and
# apart from scripts/bench.sh's (21000-24999) and scripts/chaos.sh's (25000-28999).
PG_FIRST_PORT=29000
PG_PORT_SEARCH=1000

log()  { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

is_root() { [[ $(id -u) -eq 0 ]]; }

# Run a command as root: directly when root, through sudo otherwise.
as_root() {
    if is_root; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root to run '$*': run this script as root or install sudo"
    fi
}

# ---------------------------------------------------------------------------------------------
# Packages and toolchain
# ---------------------------------------------------------------------------------------------

package_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

# Installs those of the named Debian packages that are missing.
install_missing_packages() {
    local pkg missing=()
    for pkg in "$@"; do
        package_installed "$pkg" || missing+=("$pkg")
    done
    if ((${#missing[@]} > 0)); then
        log "installing missing packages: ${missing[*]}"
        as_root apt-get update
        as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}"
    fi
}

ensure_packages() {
    # shellcheck disable=SC2086  # a list of package names
    install_missing_packages $SCAVENGER_PACKAGES
}

ensure_test_packages() {
    # shellcheck disable=SC2086  # a list of package names
    install_missing_packages $SCAVENGER_TEST_PACKAGES
}

# The Swift toolchain is not a Debian package: it must be installed by hand.
ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
        export PATH="$PATH:/opt/swift/usr/bin"
    fi
    command -v swift >/dev/null 2>&1 \
        || die "swift is not on PATH: install the Swift 6 toolchain by hand (e.g. under /opt/swift) and add its usr/bin to PATH"
}

# ---------------------------------------------------------------------------------------------
# Local PostgreSQL cluster
# ---------------------------------------------------------------------------------------------

# The newest installed server binaries, e.g. /usr/lib/postgresql/15/bin.
pg_find_bin() {
    local dir newest=""
    newest=$(for dir in /usr/lib/postgresql/*/bin; do
                 if [[ -x $dir/initdb ]]; then printf '%s\n' "$dir"; fi
             done | sort -V | tail -n 1)
    [[ -n $newest ]] || die "no PostgreSQL server found in /usr/lib/postgresql/*/bin (package postgresql)"
    printf '%s\n' "$newest"
}

short_hash() { printf '%s' "$1" | sha256sum | cut -c1-12; }

# Sets PG_BIN, PG_ROOT, PG_DATA, PG_SOCKET, PG_LOG and PG_PORT_FILE.
pg_init_paths() {
    PG_BIN=$(pg_find_bin)
    PG_ROOT="$PROJECT_ROOT/.data/postgres"
    if is_root && ! runuser -u postgres -- test -x "$PROJECT_ROOT" 2>/dev/null; then
        PG_ROOT="/tmp/scavenger-pg-$(short_hash "$PROJECT_ROOT")"
        log "the postgres user cannot reach $PROJECT_ROOT: keeping the cluster in $PG_ROOT"
    fi
    PG_DATA="$PG_ROOT/data"
    PG_SOCKET="$PG_ROOT/socket"
    PG_LOG="$PG_ROOT/log"
    PG_PORT_FILE="$PG_ROOT/port"
    # A unix socket path is limited to 107 bytes (".s.PGSQL.NNNNN" included).
    if ((${#PG_SOCKET} > 85)); then
        PG_SOCKET="/tmp/scavenger-pg-$(short_hash "$PROJECT_ROOT").socket"
    fi
    # pg_ctl passes -o through a shell: keep the quoting simple.
    [[ $PG_ROOT$PG_SOCKET != *"'"* ]] || die "the cluster path must not contain a single quote: $PG_ROOT"
}

# Run a PostgreSQL server tool as the cluster owner: `postgres` when root (initdb and pg_ctl
# refuse root), the current user otherwise. Runs from / so an unreachable cwd does not matter.
pg_run() {
    if is_root; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# Create the cluster directories, owned by whoever runs the server.
pg_prepare_dirs() {
    mkdir -p "$PG_ROOT" "$PG_SOCKET"
    if is_root; then
        id postgres >/dev/null 2>&1 || die "no 'postgres' OS user (is the postgresql package installed?)"
        if [[ $PG_ROOT == "$PROJECT_ROOT"/* ]]; then
            chmod go+x "$PROJECT_ROOT/.data"   # let postgres traverse .data/ to reach its files
        fi
        chown postgres: "$PG_ROOT" "$PG_SOCKET"
    fi
    chmod 700 "$PG_ROOT" "$PG_SOCKET"
}

pg_cluster_initdb() {
    [[ -f $PG_DATA/PG_VERSION ]] && return 0
    log "creating a PostgreSQL cluster in $PG_DATA"
    pg_run "$PG_BIN/initdb" -D "$PG_DATA" -U postgres -E UTF8 --locale=C \
        --auth=trust >"$PG_ROOT/initdb.log" 2>&1 \
        || { cat "$PG_ROOT/initdb.log" >&2; die "initdb failed"; }
}

pg_cluster_running() {
    [[ -f $PG_DATA/PG_VERSION ]] && pg_run "$PG_BIN/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1
}

# True when nothing listens on TCP port $1.
port_is_free() {
    local port=$1
    if command -v ss >/dev/null 2>&1; then
        [[ -z $(ss -Hltn "sport = :$port") ]]
    else
        ! nc -z 127.0.0.1 "$port" 2>/dev/null
    fi
}

# Print a free port: $1 if given and free, else the first free one from a starting point
# derived from the project path (so parallel checkouts rarely race for the same port).
pg_pick_port() {
    local preferred=${1:-} port i lo=32768 hi=60999
    read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    # The port a cluster had before, unless it is taken or lies in the ephemeral range (where
    # clusters were started before: a test daemon's outgoing connection once held it).
    if [[ -n $preferred ]] && ((preferred < lo || preferred > hi)) && port_is_free "$preferred"; then
        printf '%s\n' "$preferred"
        return 0
    fi
    local offset=$((16#$(short_hash "$PROJECT_ROOT" | cut -c1-4) % PG_PORT_SEARCH))
    for ((i = 0; i < PG_PORT_SEARCH; i++)); do
        port=$((PG_FIRST_PORT + (offset + i) % PG_PORT_SEARCH))
        ((port >= lo && port <= hi)) && continue
        if port_is_free "$port"; then
            printf '%s\n' "$port"
            return 0
        fi
    done
    die "no free TCP port in $PG_FIRST_PORT..$((PG_FIRST_PORT + PG_PORT_SEARCH - 1))"
}

# Port of the running cluster: 4th line of postmaster.pid.
pg_running_port() {
    sed -n 4p "$PG_DATA/postmaster.pid"
}

# Start (or reuse) this checkout's cluster. Sets PG_PORT, and PG_STARTED_HERE=1 when this
# call started the server (0 when it was already running).
pg_cluster_start() {
    pg_init_paths
    PG_STARTED_HERE=0
    if pg_cluster_running; then
        PG_PORT=$(pg_running_port)
        printf '%s\n' "$PG_PORT" >"$PG_PORT_FILE"
        log "reusing the running PostgreSQL cluster in $PG_DATA (port $PG_PORT)"
        return 0
    fi
    pg_prepare_dirs
    pg_cluster_initdb
    pg_check_version

    local recorded="" attempt
    [[ -f $PG_PORT_FILE ]] && recorded=$(<"$PG_PORT_FILE")
    for attempt in 1 2 3; do
        PG_PORT=$(pg_pick_port "$recorded")
        log "starting PostgreSQL $(<"$PG_DATA/PG_VERSION") in $PG_DATA on 127.0.0.1:$PG_PORT (log: $PG_LOG)"
        if pg_run "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DATA" -l "$PG_LOG" \
                -o "-p $PG_PORT -k '$PG_SOCKET' -h 127.0.0.1 -c max_connections=200" >/dev/null; then
            printf '%s\n' "$PG_PORT" >"$PG_PORT_FILE"
            # shellcheck disable=SC2034  # read by the calling script
            PG_STARTED_HERE=1
            return 0
        fi
        # Someone may have taken the port between the check and the bind: try another one.
        grep -qE 'could not bind|Address already in use' < <(tail -n 5 "$PG_LOG") || break
        warn "port $PG_PORT was taken meanwhile (attempt $attempt), picking another one"
        recorded=""
    done
    tail -n 20 "$PG_LOG" >&2 || true
    die "could not start PostgreSQL (see $PG_LOG)"
}

# The data directory must match the server binaries' major version.
pg_check_version() {
    local data_version bin_version
    data_version=$(<"$PG_DATA/PG_VERSION")
    bin_version=$(basename "$(dirname "$PG_BIN")")
    [[ $data_version == "$bin_version" ]] \
        || die "$PG_DATA was created by PostgreSQL $data_version but the newest server is $bin_version: remove $PG_ROOT to recreate it"
}

pg_cluster_stop() {
    pg_cluster_running || return 0
    log "stopping the PostgreSQL cluster in $PG_DATA"
    pg_run "$PG_BIN/pg_ctl" stop -w -t 60 -m fast -D "$PG_DATA" >/dev/null
}

# psql as the superuser through this cluster's unix socket.
pg_psql() {
    PGOPTIONS="-c client_min_messages=warning" \
        "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET" -p "$PG_PORT" -U postgres "$@"
}

pg_database_exists() {
    [[ $(pg_psql -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$1'") == 1 ]]
}

pg_create_database() {
    pg_database_exists "$1" && return 0
    log "creating database $1"
    pg_psql -d postgres -c "CREATE DATABASE \"$1\""
}

pg_recreate_database() {
    log "recreating database $1"
    pg_psql -d postgres -c "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)"
    pg_psql -d postgres -c "CREATE DATABASE \"$1\""
}

pg_database_url() {
    printf 'postgresql://postgres@127.0.0.1:%s/%s\n' "$PG_PORT" "$1"
}

# Hide the password of a connection URI before printing it.
redact_url() {
    sed -E 's#(://[^:/@]*):[^@/]*@#\1:***@#' <<<"$1"
}

# ---------------------------------------------------------------------------------------------
# A headless browser for the web page tests: Debian's chromium and chromium-driver, and selenium
# from PyPI in a virtual environment of this checkout's own (.data/venv, gitignored).
# ---------------------------------------------------------------------------------------------

SCAVENGER_BROWSER_PACKAGES="chromium chromium-driver python3-venv"

# Installs what the browser tests need; sets BROWSER_PYTHON to the venv's python.
ensure_browser() {
    # shellcheck disable=SC2086  # a list of package names
    install_missing_packages $SCAVENGER_BROWSER_PACKAGES
    local venv="$PROJECT_ROOT/.data/venv"
    if [[ ! -x $venv/bin/python ]]; then
        log "creating a Python virtual environment in $venv"
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c 'import selenium' >/dev/null 2>&1; then
        log "installing selenium from PyPI into $venv"
        "$venv/bin/pip" install --quiet 'selenium>=4.15,<5'
    fi
    BROWSER_PYTHON="$venv/bin/python"
}

# ---------------------------------------------------------------------------------------------
# A real SMTP server for the mail tests: aiosmtpd from PyPI in the same virtual environment,
# run by scripts/smtp_capture.py (each mail it accepts saved as a file).
# ---------------------------------------------------------------------------------------------

# Installs aiosmtpd into .data/venv; exports SCAVENGER_TEST_SMTP_PYTHON (the venv's python) and
# SCAVENGER_TEST_SMTP_SERVER (the capture script), which the mail tests start servers with.
ensure_smtp_server() {
    install_missing_packages python3-venv
    local venv="$PROJECT_ROOT/.data/venv"
    if [[ ! -x $venv/bin/python ]]; then
        log "creating a Python virtual environment in $venv"
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c 'import aiosmtpd' >/dev/null 2>&1; then
        log "installing aiosmtpd from PyPI into $venv"
        "$venv/bin/pip" install --quiet 'aiosmtpd>=1.4,<2'
    fi
    export SCAVENGER_TEST_SMTP_PYTHON="$venv/bin/python"
    export SCAVENGER_TEST_SMTP_SERVER="$PROJECT_ROOT/scripts/smtp_capture.py"
}

# ---------------------------------------------------------------------------------------------
# The daemon's HTTP port, as scripts/run.sh serves it
# ---------------------------------------------------------------------------------------------

# The status code of `GET PATH` on http://HOST:PORT (bash's /dev/tcp: no curl needed), or
# nothing when no answer comes within 5 s (nothing listens, or it does not speak HTTP). Succeeds
# either way, so that it may run under `set -e`.
http_status() {
    local host=${1#[} port=$2 path=$3 line=""
    host=${host%]}
    # The subshell closes the connection however it ends.
    line=$( (exec 3<>"/dev/tcp/$host/$port" || exit 1
             printf 'GET %s HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$path" >&3
             IFS= read -r -t 5 reply <&3 && printf '%s' "$reply") 2>/dev/null) || true
    if [[ $line =~ ^HTTP/1\.[01]\ ([0-9]{3}) ]]; then printf '%s\n' "${BASH_REMATCH[1]}"; fi
}

# The address to reach a daemon listening on HOST from this machine: a wildcard address (0.0.0.0,
# ::) is reached on loopback; an IPv6 address goes in brackets, as URLs write it.
http_url_host() {
    case $1 in
        0.0.0.0 | "") printf '127.0.0.1\n' ;;
        :: | "[::]") printf '[::1]\n' ;;
        \[*) printf '%s\n' "$1" ;;
        *:*) printf '[%s]\n' "$1" ;;
        *) printf '%s\n' "$1" ;;
    esac
}

# The status code of `GET PATH` on https://HOST:PORT, whatever its certificate (a self-signed
# one is what a LAN hunt often has), or nothing when it does not answer. Needs curl.
https_status() {
    local code
    code=$(curl -ks --max-time 5 -o /dev/null -w '%{http_code}' "https://$1:$2$3" 2>/dev/null) || true
    if [[ $code =~ ^[1-5][0-9]{2}$ ]]; then printf '%s\n' "$code"; fi
}

# announce_http_urls HOST HTTP_PORT LINE_PORT PID [WAIT] [SCHEME]: waits until the daemon's
# /healthz on HOST:HTTP_PORT answers 200 (the database answers and the feed is loaded), then
# prints the URLs of its pages on stdout (SCHEME https when the HTTP port has --http-tls-cert),
# and how to serve a group on the LAN. Gives up silently when process PID (the daemon) ends
# first; after WAIT seconds (default 600) without a 200, prints them anyway with what /healthz
# said, so a daemon still waiting for its database says where it is.
announce_http_urls() {
    local host port=$2 line_port=$3 pid=$4 wait=${5:-600} scheme=${6:-http} status="" started=$SECONDS
    host=$(http_url_host "$1")
    while kill -0 "$pid" 2>/dev/null; do
        if [[ $scheme == https ]]; then
            status=$(https_status "$host" "$port" /healthz)
        else
            status=$(http_status "$host" "$port" /healthz)
        fi
        if [[ $status == 200 ]]; then break; fi
        if ((SECONDS - started >= wait)); then break; fi
        sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null || return 0
    local base="$scheme://$host:$port"
    printf '\n'
    if [[ $status == 200 ]]; then
        printf 'scavengerd is up. Open in a browser:\n'
    else
        printf 'scavengerd listens, but /healthz answers %s (see the log). Its pages:\n' "${status:-nothing}"
    fi
    local width=$((${#base} + 10))
    printf "  %-${width}s %s\n" \
        "$base/play" "play a hunt (join with its code)" \
        "$base/host" "create and run hunts, print QR codes" \
        "$base/" "the demo page: nearby pins, live" \
        "$base/mod/" "the moderators' console" \
        "$base/metrics" "Prometheus metrics" \
        "$base/healthz" "health check"
    local nc_host=${host#[}
    printf '  The line protocol: nc %s %s (or the scavenger CLI)\n' "${nc_host%]}" "$line_port"
    announce_lan "$1" "$port" "$scheme"
    printf '\n'
}

# announce_lan HOST HTTP_PORT SCHEME: how players on the LAN reach the pages. Phones give a page
# their location only over HTTPS, so a LAN hunt needs --http-tls-cert and --http-tls-key (or a
# reverse proxy in front: README, "Running a hunt for a group").
announce_lan() {
    local host=$1 port=$2 scheme=$3 address
    case $host in
        127.* | localhost | ::1 | "[::1]")
            printf '  For a group on a LAN: SCAVENGER_HOST=0.0.0.0 scripts/run.sh --http-tls-cert CERT.pem --http-tls-key KEY.pem\n'
            printf '  (phones share their location with https:// pages only; README: "Running a hunt for a group")\n'
            return ;;
    esac
    if [[ $scheme != https ]]; then
        printf '  Plain http:// on the LAN: phones will not share their location. Add --http-tls-cert and --http-tls-key.\n'
    fi
    if [[ $host == 0.0.0.0 || $host == :: || $host == "[::]" ]]; then
        for address in $(hostname -I 2>/dev/null); do
            [[ $address == *:* ]] && continue
            printf '  Players on the LAN: %s://%s:%s/play\n' "$scheme" "$address" "$port"
        done
    fi
}
