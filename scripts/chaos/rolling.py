"""Scenario 9 of scripts/chaos.sh (issue 41, item 5): a rolling restart of two daemons behind
HAProxy under load. Python 3 standard library only; driver.py imports it and calls scenario9.

Two daemons (A and B) on fixed ports, each with an HTTP port and `--drain-seconds`, and an
HAProxy of this run's own (`haproxy -f <run dir>/haproxy.cfg -db`, in the foreground, never the
system's service) in front of them: TCP mode for the line protocol, each server checked with
`GET /healthz` on its daemon's HTTP port. Every client connects through HAProxy only: the plain
load, the retrying clients (every write with `REQUEST <key>`, sent again until OK), four more that
abandon no write and so keep their connection until the daemon closes it, and a pair of
watchers. Under that load A is restarted (SIGTERM; its /healthz answers 503 while it drains, so
HAProxy marks it DOWN and sends new connections to B; it then stops, finishing what it was sent,
and must exit 0), a new A started on the same ports and, once HAProxy has it UP again, the same
for B.

Judged, as in the other scenarios: every acknowledged write stored once (check_writes,
check_keyed: lost and doubled 0), every keyed write ends OK, the new daemons' NEARBY equals the
database, every watcher's view equals the database's; and here each old daemon exited 0 and
HAProxy still runs at the end. Reported, not judged: when HAProxy saw each daemon go DOWN and
come back UP, how many requests met a closed connection (or no reply, or ERR UNAVAILABLE) and were
sent again, and for how long.

With --sabotage, A is killed with SIGKILL instead (no drain, so its exit status is not 0) and the
database is corrupted behind the daemons' back as in scenarios 1 and 2: the scenario must FAIL.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

# Seconds each daemon drains for on SIGTERM (/healthz 503 while it still serves): ten of
# HAProxy's check intervals.
DRAIN_SECONDS = 2
# HAProxy's health check: every 200 ms, one failure marks a server DOWN, two successes UP.
CHECK = "inter 200ms fall 1 rise 2"
# Guards against hangs, not measures: a daemon that has not exited this long after its SIGTERM
# is killed (a failure); a new daemon HAProxy has not marked UP within this long breaks the
# scenario.
EXIT_GUARD = 60.0
UP_GUARD = 60.0
# Where the stats socket goes when the run directory's path is too long for a unix socket.
SOCKET_PATH_MAX = 100


def now():
    return time.monotonic()


def scenario9(chaos, result):
    """Runs scenario 9 for driver.py's Chaos `chaos`, recording on `result`."""
    RollingRestart(chaos, sys.modules[type(chaos).__module__]).run(result)


def free_ports(count, avoid=()):
    """`count` free loopback TCP ports outside the kernel's ephemeral range (as chaos.sh picks
    them: a client polling a port there while nothing listens can end up connected to itself),
    none of `avoid`."""
    low, high = 32768, 60999
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as file:
            low, high = (int(word) for word in file.read().split())
    except (OSError, ValueError):
        pass
    base = 21000 + os.getpid() % 4000
    ports = []
    for port in range(base, base + 4000):
        if low <= port <= high or port in avoid:
            continue
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            probe.close()
        ports.append(port)
        if len(ports) == count:
            return ports
    raise RuntimeError(f"no {count} free TCP ports from {base} outside the ephemeral range {low}-{high}")


def haproxy_config(port, stats_socket, servers):
    """The configuration: a TCP front end on `port`, a backend of `servers` ((name, line port,
    HTTP port)), each checked with GET /healthz on its HTTP port."""
    lines = [
        "# scripts/chaos/rolling.py (chaos scenario 9): two scavengerd behind HAProxy, each",
        "# checked with GET /healthz on its HTTP port (503 while it drains after a SIGTERM).",
        "global",
        "    maxconn 2000",
        f"    stats socket {stats_socket} mode 600 level admin",
        "",
        "defaults",
        "    mode tcp",
        "    timeout connect 2s",
        "    # Idle connections (a watcher waiting for events) are not cut during the run.",
        "    timeout client 1h",
        "    timeout server 1h",
        "    timeout check 2s",
        "    # A connection refused is tried again, the last time on another server.",
        "    retries 3",
        "    option redispatch",
        "",
        "frontend scavenger",
        f"    bind 127.0.0.1:{port}",
        "    default_backend scavengerd",
        "",
        "backend scavengerd",
        "    balance leastconn",
        "    option httpchk",
        "    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host localhost",
        "    http-check expect status 200",
        f"    default-server {CHECK}",
        # No `on-marked-down shutdown-sessions`: a daemon marked DOWN keeps its connections,
        # which it finishes as it stops.
    ]
    for name, line_port, http_port in servers:
        lines.append(f"    server {name} 127.0.0.1:{line_port} check port {http_port}")
    return "\n".join(lines) + "\n"


class HAProxy:
    """`haproxy -f <run dir>/haproxy.cfg -db` (foreground), its output in <run dir>/haproxy.log,
    its state read from its stats socket (`show stat`). Put in driver.Daemon.all, whose kill_all
    (driver.py's last word) kills whatever of it still runs; started under `setpriv --pdeathsig
    TERM`, it also stops should the driver be killed outright."""

    def __init__(self, binary, run_dir, port, servers):
        self.binary = binary
        self.port = port
        self.config_path = os.path.join(run_dir, "haproxy.cfg")
        self.log_path = os.path.join(run_dir, "haproxy.log")
        self.stats_socket = os.path.join(run_dir, "haproxy.sock")
        if len(self.stats_socket) > SOCKET_PATH_MAX:
            self.stats_socket = f"/tmp/scavenger-chaos-haproxy-{os.getpid()}.sock"
        if os.path.exists(self.stats_socket):
            os.unlink(self.stats_socket)
        with open(self.config_path, "w") as file:
            file.write(haproxy_config(port, self.stats_socket, servers))
        check = subprocess.run([binary, "-c", "-f", self.config_path], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c refuses {self.config_path}: {(check.stderr or check.stdout).strip()[-500:]}")
        self.log = open(self.log_path, "wb")
        command = [binary, "-f", self.config_path, "-db"]
        if shutil.which("setpriv"):
            command = ["setpriv", "--pdeathsig", "TERM", *command]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.started = now()
        deadline = self.started + 30
        while True:
            try:
                self.stats()
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    pass
                break
            except OSError:
                if self.process.poll() is not None or now() > deadline:
                    self.stop()
                    raise RuntimeError(f"haproxy did not start; its log ends: {self.tail(5)}")
                time.sleep(0.02)

    def version(self):
        answer = subprocess.run([self.binary, "-v"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        return (answer.stdout.splitlines() or ["?"])[0]

    def tail(self, lines=10):
        try:
            with open(self.log_path, "rb") as file:
                return " | ".join(file.read().decode(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def command(self, line):
        """One command on the stats socket; its answer."""
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(5)
        try:
            client.connect(self.stats_socket)
            client.sendall(line.encode() + b"\n")
            answer = sys.modules["driver"].read_until_closed(client)
        finally:
            client.close()
        return answer.decode(errors="replace")

    def stats(self):
        """`show stat` as {(proxy, server): {field: value}}."""
        lines = self.command("show stat").splitlines()
        if not lines or not lines[0].startswith("# "):
            raise OSError(f"show stat answered {lines[:1]}")
        fields = lines[0][2:].split(",")
        table = {}
        for line in lines[1:]:
            if line:
                row = dict(zip(fields, line.split(",")))
                table[(row["pxname"], row["svname"])] = row
        return table

    def server(self, name):
        return self.stats()[("scavengerd", name)]

    def status(self, name):
        """The server's state as HAProxy sees it: UP, DOWN, "UP 1/2" (going down), "DOWN 1/2"
        (coming up), …"""
        return self.server(name)["status"]

    def wait_up(self, name, within=UP_GUARD):
        """Waits until HAProxy has the server UP (its last check passed); the time that took."""
        started = now()
        while True:
            row = self.server(name)
            # check_status is "* L7OK" while the next check runs.
            if row["status"] == "UP" and row.get("check_status", "").endswith("L7OK"):
                return now() - started
            if self.process.poll() is not None:
                raise RuntimeError(f"haproxy exited with {self.process.returncode}: {self.tail(5)}")
            if now() - started > within:
                raise RuntimeError(f"HAProxy has server {name} {row['status']} ({row.get('check_status')}) after {within:.0f} s")
            time.sleep(0.02)

    def stop(self):
        """SIGTERM (HAProxy's hard stop: it closes every connection at once); killed after 10 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        if os.path.exists(self.stats_socket):
            os.unlink(self.stats_socket)

    def state_changes(self):
        """HAProxy's own lines saying a server went DOWN or UP, or that none was left."""
        try:
            with open(self.log_path, "rb") as file:
                text = file.read().decode(errors="replace")
        except OSError:
            return []
        return [line.strip() for line in text.splitlines()
                if " is DOWN" in line or " is UP" in line or "no server available" in line]


class RollingRestart:
    def __init__(self, chaos, driver):
        self.chaos, self.d = chaos, driver
        self.args = chaos.args
        self.cluster = chaos.cluster
        self.proxy = None

    def daemon(self, name, port, http_port):
        """A driver.Daemon of this scenario on fixed ports (so that its successor gets the same
        and HAProxy finds it), with its HTTP port and --drain-seconds."""
        return ported_daemon(self.d)(self.args, name, port, http_port, DRAIN_SECONDS)

    def run(self, result):
        d = self.d
        binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK) else None)
        if binary is None:
            raise RuntimeError("no haproxy: install the Debian package haproxy (scripts/lib.sh's SCAVENGER_TEST_PACKAGES; "
                               "scripts/chaos.sh installs it when it runs scenario 9)")
        area = d.Area(-30.0, 90.0)
        avoid = {self.args.pg_port, *self.args.failover_ports}
        proxy_port, a_port, a_http, b_port, b_http = free_ports(5, avoid)
        ports = {"a": (a_port, a_http), "b": (b_port, b_http)}
        current = {}
        old = []
        watchers = []
        try:
            for letter in "ab":
                current[letter] = self.daemon(f"s9-daemon-{letter.upper()}1", *ports[letter])
            for daemon in current.values():
                daemon.wait_loaded()
            self.proxy = HAProxy(binary, self.args.run_dir, proxy_port,
                                 [(letter, *ports[letter]) for letter in "ab"])
            d.Daemon.all.append(self.proxy)  # kill_all stops it too, whatever happens
            for letter in "ab":
                self.proxy.wait_up(letter)
            result.figure(f"{self.proxy.version()} on 127.0.0.1:{proxy_port} (config: {self.proxy.config_path}) in front of "
                          f"A on {a_port} (HTTP {a_http}) and B on {b_port} (HTTP {b_http}), --drain-seconds "
                          f"{DRAIN_SECONDS}, checks {CHECK}; every client connects through HAProxy")

            def through_proxy(k=None):
                return proxy_port

            users = d.register(proxy_port, self.chaos.names("c9", self.chaos.connections))
            load = d.Load("chaos-9", area, users, through_proxy, self.args.seed)
            keyed = self.chaos.retrying("9", area, proxy_port, through_proxy)
            # The retrying clients above replace their connection every few writes (one write in
            # eight is abandoned), so that during a drain they all move to the other daemon
            # before it closes: these keep theirs as long as it lasts, and meet the close.
            steady_users = d.register(proxy_port, [f"c9sk{k}" for k in range(d.RETRYING_CLIENTS)])
            steady = driver_classes(d)["SteadyRetryingClients"]("chaos-9sk", area, steady_users, through_proxy)
            watchers = d.start_watchers(area, [("s9-proxy", through_proxy)], self.args.seed)
            restarts = []

            def rolling_restart():
                for letter in "ab":
                    kill = self.args.sabotage and letter == "a"
                    restarts.append(self.restart(current, old, letter, ports[letter], kill))

            fault_start, fault_end = self.chaos.run_load(load, rolling_restart, also=[keyed, steady])
            for line in restarts:
                result.figure(line)
            d.fault_figures(result, load, fault_start, fault_end, "the rolling restart (A, then B)")
            self.lost_figures(result, load)
            self.retry_figures(result, keyed, "retrying clients")
            self.retry_figures(result, steady, "steady retrying clients")
            if self.args.sabotage:
                result.note("sabotage: A was killed with SIGKILL, not drained; this scenario must FAIL")
                self.chaos.sabotage(result, load)
                self.chaos.sabotage_keyed(result, keyed)
                self.chaos.sabotage_watchers(result, watchers)
            ended = max(keyed.ended, steady.ended)
            d.check_feeds(self.cluster, result, list(current.values()), area, ended)
            d.check_writes(self.cluster, result, load)
            d.check_keyed(self.cluster, result, keyed)
            d.check_keyed(self.cluster, result, steady, label="steady: ")
            d.check_watchers(self.cluster, result, watchers, ended)
            codes = ", ".join(f"{daemon.name} {daemon.process.returncode}" for daemon in old)
            result.count(f"rolling restart: old daemons' exit statuses {codes}; "
                         f"HAProxy {'still running' if self.proxy.process.poll() is None else 'gone'}")
            for daemon in old:
                if daemon.process.returncode != 0:
                    result.fail(f"{daemon.name} exited with {daemon.process.returncode}, not 0")
            if len(old) != 2:
                result.fail(f"{len(old)} daemons were restarted, not 2")
            if self.proxy.process.poll() is not None:
                result.fail(f"HAProxy exited with {self.proxy.process.returncode} during the run: {self.proxy.tail(5)}")
            else:
                self.proxy_figures(result)
        finally:
            d.stop_watchers(watchers)
            if self.proxy is not None:
                self.proxy.stop()
            for daemon in current.values():
                self.chaos.stop_daemon(result, daemon)
            for daemon in old:
                if daemon.process.poll() is None:
                    daemon.kill9()
        if self.proxy is not None:
            for line in self.proxy.state_changes():
                d.say(f"    haproxy log: {line[:300]}")
        for daemon in old + list(current.values()):
            self.chaos.log_excerpt(result, daemon)

    def restart(self, current, old, letter, ports, kill=False):
        """Restarts daemon `letter`: SIGTERM (with `kill`, SIGKILL), watching HAProxy until it
        has exited; a new one on the same ports; back once HAProxy has it UP. Returns a line of
        figures (reported, not judged)."""
        daemon = current[letter]
        old.append(daemon)
        before = self.proxy.server(letter)
        sessions_then = before.get("scur", "?")
        started = now()
        daemon.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        down_after = None
        while daemon.process.poll() is None:
            if down_after is None and self.proxy.status(letter).startswith("DOWN"):
                down_after = now() - started
            if now() - started > EXIT_GUARD:
                daemon.process.kill()
                daemon.process.wait()
                break
            time.sleep(0.02)
        exited_after = now() - started
        daemon.log.close()
        if down_after is None:
            # Not seen DOWN while it ran: HAProxy notices only now (or did between two looks).
            while not self.proxy.status(letter).startswith("DOWN"):
                if now() - started > EXIT_GUARD + UP_GUARD:
                    raise RuntimeError(f"HAProxy does not mark {daemon.name} DOWN after it exited")
                time.sleep(0.02)
            down_seen = f"HAProxy marked it DOWN {now() - started:.2f} s after, once it had exited"
        else:
            down_seen = f"HAProxy marked it DOWN {down_after:.2f} s after, while it drained"
        generation = int(daemon.name[-1]) + 1
        fresh = self.daemon(f"s9-daemon-{letter.upper()}{generation}", *ports)
        current[letter] = fresh
        loaded = fresh.wait_loaded()
        up = self.proxy.wait_up(letter)
        how = "SIGKILL" if kill else "SIGTERM"
        return (f"{letter.upper()}: {how} with {sessions_then} sessions on it; {down_seen}; it exited with "
                f"{daemon.process.returncode} {exited_after:.2f} s after the {how}; the new {letter.upper()} listened "
                f"{fresh.listening_after:.2f} s after its start, loaded its feed {loaded:.2f} s later, and HAProxy "
                f"had it UP {up:.2f} s after that")

    def lost_figures(self, result, load):
        """The plain load's requests that met a closed connection (LOST: it does not send them
        again) and how many of those POSTs were stored all the same (run, their answer lost):
        reported, not judged."""
        lost = {text for text, outcome in load.texts.items() if outcome == "LOST"}
        stored = {row[0] for row in self.cluster.query("SELECT body FROM pins WHERE starts_with(body, 'chaos-9 ')")}
        kinds = {}
        for _, _, kind, outcome in load.events:
            if outcome == "LOST":
                kinds[kind] = kinds.get(kind, 0) + 1
        result.count(f"plain load (no retries): {sum(kinds.values())} requests met a closed connection "
                     f"({', '.join(f'{kind} {n}' for kind, n in sorted(kinds.items())) or 'none'}); "
                     f"of those POSTs stored all the same {len(lost & stored)}")

    def retry_figures(self, result, keyed, who):
        """How many keyed writes met the restart (a closed connection, no reply, ERR UNAVAILABLE
        …, not the writes abandoned on purpose) and were sent again, and how long they took:
        reported, not judged."""
        met = {}
        spans = []
        for write in keyed.writes + keyed.repeats + keyed.conflicts:
            causes = [cause for cause in write.causes if cause != "abandoned"]
            if not causes:
                continue
            for cause in causes:
                met[cause] = met.get(cause, 0) + 1
            spans.append(write.sent_at[-1] - write.sent_at[0])
        if not spans:
            result.count(f"{who}: no request met a closed connection, no reply or an ERR")
            return
        spans.sort()
        result.count(f"{who}: {len(spans)} requests met a closed connection, no reply or an ERR and were sent "
                     f"again ({', '.join(f'{cause} {n}' for cause, n in sorted(met.items()))}); from first to last send "
                     f"at most {spans[-1]:.2f} s, median {spans[len(spans) // 2]:.2f} s")

    def proxy_figures(self, result):
        """HAProxy's counters: sessions per server, checks that failed, connection errors,
        retries and redispatches."""
        stats = self.proxy.stats()
        parts = []
        for letter in "ab":
            row = stats[("scavengerd", letter)]
            parts.append(f"{letter.upper()}: sessions {row.get('stot')}, marked DOWN {row.get('chkdown')} times, "
                         f"failed checks {row.get('chkfail')}")
        backend = stats[("scavengerd", "BACKEND")]
        front = stats[("scavenger", "FRONTEND")]
        result.figure(f"HAProxy: {front.get('stot')} client connections; " + "; ".join(parts)
                      + f"; connection errors {backend.get('econ')}, retries {backend.get('wretr')}, "
                      f"redispatches {backend.get('wredis')}")


_classes = {}


def ported_daemon(driver):
    return driver_classes(driver)["PortedDaemon"]


def driver_classes(driver):
    """Subclasses of the driver's classes, made once the driver has loaded (this module is
    imported while driver.py is still being read, before its classes exist):

    PortedDaemon: driver.Daemon, but on given ports with an HTTP port and --drain-seconds
    (driver.Daemon always asks for free ones).

    SteadyRetryingClients: driver.RetryingClients that abandon no write, so that each keeps its
    connection until it breaks."""
    if driver in _classes:
        return _classes[driver]

    class PortedDaemon(driver.Daemon):
        def __init__(self, args, name, port, http_port, drain_seconds):
            self.name = name
            self.log_path = os.path.join(args.run_dir, f"{name}.log")
            self.log = open(self.log_path, "wb")
            command = [args.scavengerd, "serve", "--port", str(port), "--http-port", str(http_port),
                       "--drain-seconds", str(drain_seconds), "--database-url", args.database_url, *driver.DAEMON_FLAGS]
            self.started = now()
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
            driver.Daemon.all.append(self)
            self.port, self.http_port = port, http_port
            deadline = self.started + 60
            while self.listening_port() is None or self.listening_port("HTTP port listening") is None:
                if self.process.poll() is not None or now() > deadline:
                    raise RuntimeError(f"{name} did not start listening on {port} and {http_port}; its log ends: {self.tail(5)}")
                time.sleep(0.02)
            self.listening_after = now() - self.started

    class SteadyRetryingClients(driver.RetryingClients):
        def write(self, session, kind, request, text=None, target=None, abandon=None):
            return super().write(session, kind, request, text, target)

    _classes[driver] = {"PortedDaemon": PortedDaemon, "SteadyRetryingClients": SteadyRetryingClients}
    return _classes[driver]
