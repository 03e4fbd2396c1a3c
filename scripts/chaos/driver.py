#!/usr/bin/env python3
"""The fault-injection scenarios of scripts/chaos.sh (issue 15). Python 3 standard library only.

scripts/chaos.sh starts a PostgreSQL cluster of its own, migrates a database on it and runs this
with the paths it needs; this starts and stops the daemons, drives the load, breaks things
(restarts PostgreSQL, kills the daemon, starts a daemon while PostgreSQL is down; in 7 and 8, on
a primary and streaming standby of their own, kills the primary and promotes the standby) and
checks:

  - every POST answered OK is in `pins` exactly once, under the id it was answered with, with
    its text, and no text was stored twice (each POST's text is unique, so a second row with the
    same author and text would be a duplicate written under a new id);
  - writes succeed again after the fault;
  - each daemon's NEARBY (every page) equals the database's live, visible pins in the test area
    within 2 s once the load has stopped and the database is reachable;
  - the retrying clients (RetryingClients: every write sent with `REQUEST <key>` and sent again,
    the same line, until OK) lost no write and doubled none, every OK line for one key is the
    same line, a used key with another text is ERR CONFLICT, and every write ended OK;
  - the watchers (Watcher: SNAPSHOT, then SINCE the last seq after every lost connection) saw
    each pin's appearance and disappearance in their circle once, and their view equals the
    database's once they have caught up (waiting at most WATCH_GUARD).

After a failover to a standby that lacked the last changes (8), lost writes are reported, not
judged (see check_keyed's `lost_since`); what must hold is that every daemon notices and reloads
and that every feed and watcher ends equal to the new primary's database.

Durations (how long clients saw ERR UNAVAILABLE, how long no POST succeeded) are reported, not
judged. Exit code 0 when every scenario passed, 1 otherwise.
"""

import argparse
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid

import rolling  # scenario 9: a rolling restart behind HAProxy (scripts/chaos/rolling.py)
import standby_load  # scenario 12: a new daemon loading from a standby (scripts/chaos/standby_load.py)
import log_order  # scenario 14: the change log's order under a standby that waits (scripts/chaos/log_order.py)
# Scenarios 10 and 11 (pg_auto_failover) live in autofailover.py, which imports this module as
# `driver`: when this file runs as the script, that is this very module, not a second copy.
sys.modules.setdefault("driver", sys.modules[__name__])
import autofailover  # noqa: E402

# Flags every daemon gets: no per-user or per-address limits in the way of the load (the
# retrying clients REPLY too), and one report by anyone hides a pin (scenario 5 hides pins that
# way).
DAEMON_FLAGS = [
    "--post-rate", "off", "--register-rate", "off", "--report-rate", "off", "--reply-rate", "off",
    "--report-min-account-age", "0", "--report-threshold", "1",
]
PASSWORD = "chaos-password-1"
# How long a client waits for one reply before it counts the request as lost and reconnects.
REPLY_TIMEOUT = 30.0
# The time the daemons' NEARBY may lag behind the database once the load has stopped.
FEED_WINDOW = 2.0
# Retrying clients per scenario (scenario 5: per phase), each as its own user.
RETRYING_CLIENTS = 4
# How long a retrying client waits for one reply before it counts the request as unanswered,
# reconnects and sends it again: short, so that some retries meet a first attempt still running.
RETRY_REPLY_TIMEOUT = 3.0
# One write in this many is abandoned at its first send (see RetryingClients).
ABANDON_ONE_IN = 8
# One retrying client's login in this many is a LOGIN (a password hash: CPU the daemon then
# lacks for the load), the others AUTH.
LOGIN_ONE_IN = 10
# Replies a retrying client answers by sending the same line again (the request did not run, or
# its outcome is remembered under its key), and a watcher by sending its WATCH again; any other
# ERR is definitive, and a failure here.
TRANSIENT = {"UNAVAILABLE", "INTERNAL", "TIMEOUT"}
# A guard against hangs, not a measure: a retrying client's last write not answered OK (or a
# definitive ERR) this long after the load stopped, with the database up, counts as unresolved.
SETTLE_GUARD = 30.0
# A guard, not a measure: how long the check waits for the watchers' view to come level
# with the database (the time it took is reported, not judged; what differs then is judged).
WATCH_GUARD = 10.0


def now():
    return time.monotonic()


def say(text):
    print(text, flush=True)


# ---------------------------------------------------------------------------------------------
# The wire protocol
# ---------------------------------------------------------------------------------------------

class Lost(Exception):
    """The connection broke or a reply did not come in time: the request's outcome is unknown."""


class Client:
    """One connection: a request line out, a reply line back."""

    def __init__(self, port, timeout=REPLY_TIMEOUT):
        try:
            self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except OSError as error:
            raise Lost(f"connect: {error}") from error
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def request(self, line):
        try:
            self.sock.sendall(line.encode() + b"\n")
            while b"\n" not in self.buffer:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise Lost("closed by the server")
                self.buffer += chunk
        except OSError as error:
            raise Lost(str(error) or type(error).__name__) from error
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def send_only(self, line):
        """Sends a request line without waiting for its reply."""
        try:
            self.sock.sendall(line.encode() + b"\n")
        except OSError as error:
            raise Lost(str(error) or type(error).__name__) from error

    def read_line(self, timeout):
        """The next line the server sends (an EVENT, say), or None when none comes within
        `timeout` seconds; Lost when the connection breaks."""
        deadline = now() + timeout
        while b"\n" not in self.buffer:
            left = deadline - now()
            if left <= 0:
                return None
            try:
                self.sock.settimeout(left)
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                return None
            except OSError as error:
                raise Lost(str(error) or type(error).__name__) from error
            if not chunk:
                raise Lost("closed by the server")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def error_code(reply):
    """'OK' for OK replies, else the error code (UNAVAILABLE, NOT_FOUND, …)."""
    if reply.startswith("OK"):
        return "OK"
    parts = reply.split(" ", 2)
    return parts[1] if len(parts) > 1 and parts[0] == "ERR" else "MALFORMED"


def ok_json(reply):
    return json.loads(reply[3:])


def until_ok(client, line, retry_on, pause, going, what):
    """Sends `line` on `client` until it is answered OK, and returns that reply. A reply whose
    code is in `retry_on` is sent again after `pause` seconds, as long as `going()` is true
    (checked before each send; None when it turns false first); any other reply raises
    RuntimeError("<what>: <reply>"). Lost (the connection broke) goes to the caller."""
    while going():
        reply = client.request(line)
        code = error_code(reply)
        if code == "OK":
            return reply
        if code not in retry_on:
            raise RuntimeError(f"{what}: {reply}")
        time.sleep(pause)
    return None


# ---------------------------------------------------------------------------------------------
# PostgreSQL and the daemons
# ---------------------------------------------------------------------------------------------

class Cluster:
    """A throwaway cluster: chaos.sh's (by default, from `args`), or one of a standby pair's
    nodes (StandbyPair: its own data directory, port and log); pg_ctl (as its owner) and psql."""

    def __init__(self, args, data=None, port=None, socket=None, log=None, opts=None, database=None):
        self.args = args
        self.owner = ["runuser", "-u", args.pg_user, "--"] if args.pg_user else []
        self.data = data or args.pg_data
        self.port = port or args.pg_port
        self.socket = socket or args.pg_socket
        self.log = log or args.pg_log
        self.opts = opts or args.pg_opts
        self.database = database or args.database

    def run_as_owner(self, tool, *words, check=True):
        """Runs a server tool (initdb, pg_ctl, pg_basebackup) as the cluster's owner; its output."""
        command = self.owner + [os.path.join(self.args.pg_bin, tool), *words]
        result = subprocess.run(command, cwd="/", capture_output=True, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(words)} failed: {result.stderr.strip() or result.stdout.strip()}")
        return result

    def pg_ctl(self, *words):
        started = now()
        self.run_as_owner("pg_ctl", *words, "-D", self.data)
        return now() - started

    def restart(self, mode):
        # restart reuses the options of the last start (postmaster.opts): same port and socket.
        return self.pg_ctl("restart", "-w", "-t", "60", "-m", mode, "-l", self.log)

    def stop(self):
        return self.pg_ctl("stop", "-w", "-t", "60", "-m", "fast")

    def start(self):
        return self.pg_ctl("start", "-w", "-t", "60", "-l", self.log, "-o", self.opts)

    def running(self):
        return self.run_as_owner("pg_ctl", "status", "-D", self.data, check=False).returncode == 0

    def postmaster_alive(self):
        """Whether this data directory's postmaster runs: its postmaster.pid names a live process
        started on this directory (a killed one's file stays behind, and its pid may be reused)."""
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as file:
                pid = int(file.readline())
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                return self.data.encode() in file.read().split(b"\0")
        except (OSError, ValueError):
            return False

    def query(self, sql, database=None):
        """Rows of a query, as lists of strings (tab-separated, unaligned)."""
        command = [
            os.path.join(self.args.pg_bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
            "-h", self.socket, "-p", str(self.port), "-U", "postgres", "-d", database or self.database,
            "-c", sql,
        ]
        env = dict(os.environ, PGOPTIONS="-c client_min_messages=warning")
        result = subprocess.run(command, cwd="/", capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr.strip()}")
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def kill9(self):
        """A crash of the whole server, as a machine's death: every process at once. SIGKILL
        to the postmaster and every process it started (each of which is a process group of its
        own, so the postmaster's group is not enough). The postmaster is stopped first
        (SIGSTOP), so that it forks no process while its children are listed, then every child,
        and only then are they killed. Killed one after the other while running, a backend
        waiting for the synchronous standby to confirm its commit sees the postmaster die first
        and gives up the wait (PostgreSQL's SyncRepWaitForLSN bails out on postmaster death,
        "we'll probably never get an acknowledgment"), so its commit, already in the local WAL,
        becomes visible here; a backend still alive a moment later can hand that row to a
        daemon: a change the standby never got, which scenario 7 then found as its change log
        rewritten (issue 54). Returns the number of processes killed."""
        with open(os.path.join(self.data, "postmaster.pid")) as file:
            postmaster = int(file.readline())
        os.kill(postmaster, signal.SIGSTOP)
        children = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status") as file:
                    for line in file:
                        if line.startswith("PPid:"):
                            if int(line.split()[1]) == postmaster:
                                children.append(int(entry))
                            break
            except OSError:
                continue
        victims = [postmaster, *children]
        for pid in children:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Dead once gone or a zombie (the postmaster's parent is not this process).
        deadline = now() + 10
        while now() < deadline:
            alive = []
            for pid in victims:
                try:
                    with open(f"/proc/{pid}/stat") as file:
                        if file.read().rsplit(")", 1)[1].split()[0] != "Z":
                            alive.append(pid)
                except OSError:
                    pass
            if not alive:
                return len(victims)
            time.sleep(0.01)
        raise RuntimeError(f"processes {alive} of the killed server are still alive")


def read_until_closed(client):
    """Every byte a socket sends until its peer closes it."""
    answer = b""
    while True:
        chunk = client.recv(1 << 16)
        if not chunk:
            return answer
        answer += chunk


class StandbyPair:
    """A primary and a streaming standby of their own (scenarios 7 and 8), beside chaos.sh's
    cluster, which they leave alone: both in `<--pair-root>/<name>/` (primary/, standby/, their
    logs), their sockets in chaos.sh's socket directory, on two ports chaos.sh picked. The
    primary gets the database `chaos`, migrated; the standby is `pg_basebackup -R` of it, whose
    `primary_conninfo` carries `application_name=<name>`. Synchronous: the primary requires it
    (`synchronous_standby_names = 'FIRST 1 (<name>)'`, `synchronous_commit = on`, set before the
    base backup, so the standby has the setting too, as a copied configuration would). The
    daemons' URL names both nodes. stop() stops both (whatever state they are in), copies their
    logs to the run directory and removes their directories (chaos.sh's clean-up also stops any
    left running)."""

    def __init__(self, args, name, ports, synchronous):
        self.args, self.name, self.synchronous = args, name, synchronous
        self.root = os.path.join(args.pair_root, name)
        self.nodes = {}
        for role, port in zip(("primary", "standby"), ports):
            self.nodes[role] = Cluster(
                args, data=os.path.join(self.root, role), port=port, socket=args.pg_socket,
                log=os.path.join(self.root, f"{role}.log"),
                opts=f"-p {port} -k '{args.pg_socket}' -h 127.0.0.1 -c max_connections=200")
        self.primary, self.standby = self.nodes["primary"], self.nodes["standby"]
        self.url = f"postgresql://postgres@127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}/{args.database}"

    def replication(self):
        """The primary's view of its standby: (state, sync_state), or None when not connected."""
        rows = self.primary.query(
            f"SELECT state, sync_state FROM pg_stat_replication WHERE application_name = {quote(self.name)}",
            database="postgres")
        return tuple(rows[0]) if rows else None

    def start(self):
        """Creates, starts and connects both; returns the seconds it took."""
        started = now()
        if os.path.exists(self.root):
            self.stop()
        os.makedirs(self.root)
        if self.args.pg_user:
            shutil.chown(self.root, self.args.pg_user, self.args.pg_user)
        os.chmod(self.root, 0o700)
        primary, standby = self.primary, self.standby
        primary.run_as_owner("initdb", "-D", primary.data, "-U", "postgres", "-E", "UTF8", "--locale=C", "--auth=trust")
        primary.start()
        primary.query(f"CREATE DATABASE {self.args.database}", database="postgres")
        migrate = subprocess.run([self.args.scavengerd, "migrate", "--database-url", self.url],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if migrate.returncode != 0:
            raise RuntimeError(f"scavengerd migrate on {self.name}'s primary failed: {migrate.stderr.strip()[-500:]}")
        if self.synchronous:
            # No commit on the primary until the standby is connected: each would wait for it.
            primary.query(f"ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 ({self.name})'")
            primary.query("ALTER SYSTEM SET synchronous_commit = on")
            primary.query("SELECT pg_reload_conf()")
        primary.run_as_owner(
            "pg_basebackup", "-D", standby.data, "-R", "-X", "stream", "-c", "fast",
            "-d", f"host=127.0.0.1 port={primary.port} user=postgres application_name={self.name}")
        standby.start()
        wanted = ("streaming", "sync" if self.synchronous else "async")
        deadline = now() + 60
        while self.replication() != wanted:
            if now() > deadline:
                raise RuntimeError(f"{self.name}'s standby is not {wanted} after 60 s: {self.replication()}")
            time.sleep(0.05)
        return now() - started

    def detach(self):
        """Cuts the standby off its primary (its walreceiver stops, `primary_conninfo` emptied), as a
        network partition would: from now on it receives no WAL, so a promotion ends it where
        it is. (Pausing its replay, or delaying it, would not do: a promotion first replays all
        the WAL received.) Returns once the primary no longer lists it."""
        self.standby.query("ALTER SYSTEM SET primary_conninfo = ''")
        self.standby.query("SELECT pg_reload_conf()")
        deadline = now() + 30
        while self.replication() is not None:
            if now() > deadline:
                raise RuntimeError(f"{self.name}'s standby is still connected 30 s after its primary_conninfo was emptied")
            time.sleep(0.02)

    def stop(self):
        """Stops both nodes, copies their logs to the run directory, removes their directories."""
        for role, node in self.nodes.items():
            if node.postmaster_alive():
                try:
                    node.pg_ctl("stop", "-w", "-t", "30", "-m", "immediate")
                except RuntimeError as error:
                    say(f"    cannot stop {self.name}'s {role}: {error}")
            if os.path.exists(node.log):
                shutil.copyfile(node.log, os.path.join(self.args.run_dir, f"{self.name}-{role}-postgres.log"))
        if not self.args.keep:
            shutil.rmtree(self.root, ignore_errors=True)


class Daemon:
    """A `scavengerd serve --port 0` process; its standard error goes to RUN_DIR/NAME.log."""

    all = []

    def __init__(self, args, name, database_url=None, http=False, extra=()):
        """`database_url` instead of chaos.sh's; with `http`, an HTTP port too (`--http-port 0`:
        /metrics); `extra`, more options for `serve`."""
        self.name = name
        self.log_path = os.path.join(args.run_dir, f"{name}.log")
        self.log = open(self.log_path, "wb")
        command = [args.scavengerd, "serve", "--port", "0", "--database-url", database_url or args.database_url,
                   *DAEMON_FLAGS, *(["--http-port", "0"] if http else []), *extra]
        self.started = now()
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        Daemon.all.append(self)
        self.port = None
        self.http_port = None
        deadline = self.started + 60
        while self.port is None or (http and self.http_port is None):
            self.port = self.listening_port()
            self.http_port = self.listening_port("HTTP port listening") if http else None
            if self.port is not None and (not http or self.http_port is not None):
                break
            if self.process.poll() is not None or now() > deadline:
                raise RuntimeError(f"{name} did not start listening; its log ends: {self.tail(5)}")
            time.sleep(0.02)
        self.listening_after = now() - self.started

    def stderr(self):
        with open(self.log_path, "rb") as file:
            return file.read().decode(errors="replace")

    def tail(self, lines=10):
        return " | ".join(self.stderr().splitlines()[-lines:])

    def listening_port(self, what="listening"):
        """The port of the log's first line ending in `what`: the line port's by default."""
        for line in self.stderr().splitlines():
            if line.endswith("] " + what):
                digits = ""
                for character in line[line.rindex(":") + 1:]:
                    if not character.isdigit():
                        break
                    digits += character
                if digits:
                    return int(digits)
        return None

    def wait_loaded(self, within=30.0):
        """Waits until NEARBY answers OK: the feed is loaded (until then POST and NEARBY answer
        UNAVAILABLE); returns the seconds waited."""
        started = now()
        while True:
            try:
                client = Client(self.port)
                try:
                    reply = client.request("NEARBY 0 0 1 LIMIT 1")
                finally:
                    client.close()
            except Lost as error:
                reply = str(error)
            if reply.startswith("OK"):
                return now() - started
            if now() > started + within:
                raise RuntimeError(f"{self.name}'s feed is not loaded after {within} s: {reply}")
            time.sleep(0.05)

    def metric(self, name):
        """The value of a counter or gauge on /metrics (the sum over its labels), or None when
        the daemon has no HTTP port or does not list it."""
        if self.http_port is None:
            return None
        client = socket.create_connection(("127.0.0.1", self.http_port), timeout=10)
        try:
            client.sendall(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            answer = read_until_closed(client)
        finally:
            client.close()
        head, _, body = answer.decode(errors="replace").partition("\r\n\r\n")
        if not head.startswith("HTTP/1.") or head.split(" ", 2)[1] != "200":
            raise RuntimeError(f"{self.name}'s /metrics answered {head.splitlines()[0] if head else 'nothing'}")
        values = [float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
                  if line.startswith(name) and line[len(name):len(name) + 1] in (" ", "{")]
        return sum(values) if values else None

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.log.close()

    def terminate(self, within=15.0):
        """SIGTERM; True when it exited by itself within `within` seconds (else it is killed)."""
        if self.process.poll() is not None:
            self.log.close()
            return True
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(within)
            stopped = True
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            stopped = False
        self.log.close()
        return stopped

    @classmethod
    def kill_all(cls):
        for daemon in cls.all:
            if daemon.process.poll() is None:
                daemon.process.kill()
                daemon.process.wait()


# ---------------------------------------------------------------------------------------------
# Areas, users, load
# ---------------------------------------------------------------------------------------------

class Area:
    """Where a scenario's pins go: four places about 22 km apart around a centre, far from every
    other scenario's, each pin at a random point (all distinct) within ~1.5 km of its place.
    NEARBY over 5 km from each place covers its pins and none of the others'; the union of the
    four is compared with the database's bounding box around the centre. Four small NEARBYs read
    the feed several times faster than one over everything (a page's cost grows with the pins
    within the radius)."""

    def __init__(self, lat, lon):
        self.lat, self.lon = lat, lon
        self.radius_m = 5000
        self.spread = 0.0135  # degrees of latitude, ~1.5 km
        step = 0.1 / math.cos(math.radians(lat))
        self.places = [(lat + dlat, lon + dlon) for dlat in (-0.1, 0.1) for dlon in (-step, step)]

    def point(self, rng, place=None):
        """A random point near a random place, or near places[place]."""
        lat, lon = rng.choice(self.places) if place is None else self.places[place]
        dlat = rng.uniform(-self.spread, self.spread)
        dlon = rng.uniform(-self.spread, self.spread) / math.cos(math.radians(lat))
        return round(lat + dlat, 6), round(lon + dlon, 6)

    def box_sql(self):
        dlon = 0.2 / math.cos(math.radians(self.lat))
        return (f"lat BETWEEN {self.lat - 0.2} AND {self.lat + 0.2} "
                f"AND lon BETWEEN {self.lon - dlon} AND {self.lon + dlon}")


class User:
    def __init__(self, name, token):
        self.name, self.token = name, token


def register(port, names):
    """Registers the users at once (password hashing runs on the daemon's threads)."""
    users = [None] * len(names)
    failures = []

    def one(index, name):
        try:
            client = Client(port)
            sends = iter(range(100))  # at most 100 sends
            reply = until_ok(client, f"REGISTER {name} {name}@chaos.example {PASSWORD}", retry_on={"UNAVAILABLE"},
                             pause=0.1, going=lambda: next(sends, None) is not None, what=f"REGISTER {name}")
            if reply is not None:
                users[index] = User(name, ok_json(reply)["token"])
            client.close()
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=one, args=(i, n)) for i, n in enumerate(names)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures or None in users:
        raise RuntimeError(f"registering failed: {failures}")
    return users


def authed_client(port, user, stop=None, deadline=None):
    """A connection logged in as `user`; retries while the daemon is away or UNAVAILABLE. None
    when `stop` is set or `deadline` passes first."""
    def going():
        return (stop is None or not stop.is_set()) and (deadline is None or now() < deadline)

    while going():
        try:
            client = Client(port() if callable(port) else port)
        except Lost:
            time.sleep(0.1)
            continue
        try:
            if until_ok(client, f"AUTH {user.token}", retry_on={"UNAVAILABLE"}, pause=0.1, going=going,
                        what=f"AUTH {user.name}") is not None:
                return client
        except Lost:
            pass
        client.close()
        time.sleep(0.1)
    return None


class Load:
    """Connections POSTing unique texts in a loop, each as its own user, recording every reply.

    `ports(k)` gives the port worker k talks to now (it changes when a daemon is replaced; a
    broken connection reconnects there). With `deletes`, every tenth iteration a worker DELETEs
    its own pin from seven iterations before (numbers ending in 3); pins numbered ending in 7 are
    the ones a Reporter may report, so the two never meet.
    """

    def __init__(self, tag, area, users, ports, seed, deletes=False):
        self.tag, self.area, self.users, self.ports = tag, area, users, ports
        self.deletes = deletes
        self.seed = seed
        self.stop = threading.Event()
        self.events = []          # (sent, answered, kind, outcome): every request's fate
        self.texts = {}           # text -> outcome of its POST: "OK", an error code, or "LOST"
        self.acked = {}           # text -> pin id, for POSTs answered OK
        self.reportable = []      # (pin id, worker) of acked pins numbered ending in 7
        self.deleted = set()      # pin ids whose DELETE was answered OK
        self.delete_unknown = {}  # pin id -> outcome of a DELETE not answered OK (error code or LOST)
        self.unexpected = []      # replies nobody should see
        self.threads = []
        self.started = None
        self.ended = None

    def start(self):
        self.started = now()
        for k, user in enumerate(self.users):
            thread = threading.Thread(target=self.worker, args=(k, user), daemon=True)
            thread.start()
            self.threads.append(thread)

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()
        self.ended = now()

    def record(self, sent, kind, outcome):
        self.events.append((sent, now(), kind, outcome))

    def exchange(self, client, kind, line):
        """Sends one request `line` of `kind` (POST, DELETE, REPORT) on `client` and records its
        fate in `events`, which fault_figures counts: the reply's code (OK, UNAVAILABLE, …), or
        LOST when the connection broke or no reply came (the request may or may not have run).
        Returns (code, reply), the reply None when LOST; the caller drops a LOST connection."""
        sent = now()
        try:
            reply = client.request(line)
        except Lost:
            self.record(sent, kind, "LOST")
            return "LOST", None
        code = error_code(reply)
        self.record(sent, kind, code)
        return code, reply

    def act_on_pin(self, client, kind, pin, line, took_effect, unknown):
        """A DELETE or REPORT of `pin` through exchange. Answered OK, the pin goes into the set
        `took_effect`; otherwise into the dict `unknown` with the code it got (LOST, or an ERR:
        whether it changed anything is checked later), and an ERR other than UNAVAILABLE is an
        unexpected reply. Returns the code (LOST: the caller drops the connection)."""
        code, reply = self.exchange(client, kind, line)
        if code == "OK":
            took_effect.add(pin)
            return code
        unknown[pin] = code
        if code not in ("LOST", "UNAVAILABLE"):
            self.unexpected.append(f"{kind} {pin}: {reply}")
        return code

    def worker(self, k, user):
        rng = random.Random(f"{self.seed}-{self.tag}-{k}")
        client = None
        mine = {}  # iteration -> pin id
        i = 0
        try:
            while not self.stop.is_set():
                if client is None:
                    client = authed_client(lambda: self.ports(k), user, self.stop)
                    if client is None:
                        break
                i += 1
                text = f"{self.tag} {user.name} #{i}"
                lat, lon = self.area.point(rng)
                code, reply = self.exchange(client, "POST", f"POST {lat} {lon} {json.dumps(text)}")
                self.texts[text] = code
                if code == "LOST":
                    client.close()
                    client = None
                    continue
                if code == "OK":
                    pin = ok_json(reply)["pin"]["id"]
                    self.acked[text] = pin
                    mine[i] = pin
                    if i % 10 == 7:
                        self.reportable.append((pin, k))
                elif code == "UNAVAILABLE":
                    time.sleep(0.05)
                    continue
                else:
                    self.unexpected.append(f"POST: {reply}")
                    time.sleep(0.05)
                    continue
                if self.deletes and i % 10 == 0 and (i - 7) in mine:
                    target = mine.pop(i - 7)
                    if self.act_on_pin(client, "DELETE", target, f"DELETE {target}",
                                       self.deleted, self.delete_unknown) == "LOST":
                        client.close()
                        client = None
                        continue
        except Exception as error:  # noqa: BLE001 - a worker must not die silently
            self.unexpected.append(f"worker {k} crashed: {error!r}")
        finally:
            if client is not None:
                client.close()


class Reporter:
    """A user reporting pins of `load` (numbered ending in 7) written by workers for which
    `pick(worker)` is true; with --report-threshold 1 each report hides its pin at once."""

    def __init__(self, load, user, port, pick, interval=0.1):
        self.load, self.user, self.port, self.pick, self.interval = load, user, port, pick, interval
        self.hidden = set()   # reported, answered OK
        self.unknown = {}     # reported, no OK (pin id -> error code or LOST): hidden or not
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.done = set()

    def start(self):
        self.thread.start()

    def join(self):
        self.thread.join()

    def run(self):
        client = None
        load = self.load
        try:
            while not load.stop.is_set():
                if client is None:
                    client = authed_client(self.port, self.user, load.stop)
                    if client is None:
                        break
                candidates = [pin for pin, k in list(load.reportable) if self.pick(k) and pin not in self.done]
                if not candidates:
                    time.sleep(self.interval)
                    continue
                pin = candidates[0]
                self.done.add(pin)
                if load.act_on_pin(client, "REPORT", pin, f"REPORT {pin} spam", self.hidden, self.unknown) == "LOST":
                    client.close()
                    client = None
                    continue
                time.sleep(self.interval)
        except Exception as error:  # noqa: BLE001
            load.unexpected.append(f"reporter crashed: {error!r}")
        finally:
            if client is not None:
                client.close()


class KeyedWrite:
    """One write sent with `REQUEST key` until it is answered OK or a definitive ERR."""

    def __init__(self, kind, key, line, text=None, target=None):
        self.kind, self.key, self.line, self.text, self.target = kind, key, line, text, target
        self.sends = 0
        self.sent_at = []    # the wall-clock time of each send
        self.causes = []     # why each send after the first: "no reply", "dropped", "abandoned", "UNAVAILABLE", …
        self.oks = []        # the OK line (a replay of the key adds its own to its write's)
        self.outcome = None  # "OK", the definitive ERR's code, or "UNRESOLVED"
        self.reply = None    # the last reply line
        self.result_id = None  # the pin's or reply's id an OK answered
        self.owner = None    # (k, user) of the client that sent it


class RetrySession:
    """A retrying client's connection, logged in again whenever it has to be replaced: with
    AUTH and its token, or one time in LOGIN_ONE_IN (counted over all the clients) with LOGIN
    and its password, a new session (keys are the user's, not the session's)."""

    def __init__(self, clients, k, user, port):
        self.clients, self.k, self.user, self.port = clients, k, user, port
        self.client = None
        self.login = None    # (verb, when) of the connection's login

    def get(self):
        """A logged-in connection, or None once the clients give up."""
        while self.client is None:
            if self.clients.give_up.is_set():
                return None
            try:
                client = Client(self.port(), timeout=RETRY_REPLY_TIMEOUT)
            except Lost:
                time.sleep(0.05)
                continue
            with self.clients.lock:
                self.clients.connects += 1
                login = self.clients.connects % LOGIN_ONE_IN == 0
            line = f"LOGIN {self.user.name} {PASSWORD}" if login else f"AUTH {self.user.token}"
            verb = line.split()[0]
            try:
                if until_ok(client, line, retry_on=TRANSIENT, pause=0.05, going=lambda: not self.clients.give_up.is_set(),
                            what=f"{verb} {self.user.name}") is not None:
                    self.client = client
                    self.login = (verb, now())
                    self.clients.logins[verb] += 1
            except Lost:
                pass
            if self.client is None:
                client.close()
                time.sleep(0.05)
        return self.client

    def drop(self):
        if self.client is not None:
            self.client.close()
            self.client = None


class RetryingClients:
    """Clients that send every write with `REQUEST <key>` (a fresh uuid each) and, when it goes
    unanswered (the connection broke, or no reply came within RETRY_REPLY_TIMEOUT) or is answered
    ERR UNAVAILABLE, INTERNAL or TIMEOUT, reconnect when they must (AUTH, or now and then
    LOGIN) and send the very same line again, until it is answered OK or a definitive ERR (a
    failure here).

    Each one, in a loop: POSTs a unique text near the area's first place (the watchers' circle);
    every third time also POSTs a side pin near the second place (outside the circle) and either
    REPLYs to it or DELETEs it, both keyed; every fifth time sends its last POST's line (same
    key) again on a new connection, through the other daemon when there are two, and so every
    REPLY's and DELETE's once answered OK: the reply must be the very same line (for a DELETE
    whose pin is gone by then, `OK true` again, not NOT_FOUND); every eleventh time sends that key with another text: ERR CONFLICT,
    and nothing stored. One write in ABANDON_ONE_IN is abandoned at its first send (the
    connection closed 0-5 ms after it, the reply unread), so that retries meet first attempts
    that committed unanswered, or still run, under every fault and not only when the daemon dies.
    `ports(k)` gives the port client k talks to now, `other_ports(k)` the one its repeats go to.
    """

    def __init__(self, tag, area, users, ports, other_ports=None):
        self.tag, self.area, self.users, self.ports = tag, area, users, ports
        self.other_ports = other_ports or ports
        self.stop = threading.Event()      # start no new write
        self.give_up = threading.Event()   # stop retrying (SETTLE_GUARD passed)
        self.writes = []      # KeyedWrite: POST, REPLY, DELETE
        self.repeats = []     # KeyedWrite: an answered write's line sent again
        self.conflicts = []   # KeyedWrite: a used key with another text
        self.unexpected = []
        self.logins = {"AUTH": 0, "LOGIN": 0}
        self.connects = 0
        # With `relogin` (scenario 8, where a failover may lose a LOGIN's session), a write
        # answered ERR UNAUTHORIZED is sent again after logging in again; each such answer's
        # (verb, when) of the lost login goes into `relogins`.
        self.relogin = False
        self.relogins = []
        self.lock = threading.Lock()
        self.threads = []
        self.ended = None

    def start(self):
        for k, user in enumerate(self.users):
            thread = threading.Thread(target=self.worker, args=(k, user), daemon=True)
            thread.start()
            self.threads.append(thread)

    def finish(self):
        """Lets each client finish the write it is on (retrying it as long as it takes, up to
        SETTLE_GUARD), then stops them."""
        self.stop.set()
        deadline = now() + SETTLE_GUARD
        for thread in self.threads:
            thread.join(max(0.0, deadline - now()))
        if any(thread.is_alive() for thread in self.threads):
            self.give_up.set()
            for thread in self.threads:
                thread.join()
        self.ended = now()

    def send(self, session, write, abandon=None):
        """Sends write.line through `session` until it is answered OK or a definitive ERR, or the
        clients give up, and records it all on `write`: each send (sends, sent_at), why each one
        after the first was needed (causes), the last reply; then its outcome ("OK", the ERR's
        code, or "UNRESOLVED" once given up) and, when OK, the OK line in write.oks (which
        check_keyed compares across sends of one key). Returns the last reply, or None once given
        up. With `abandon` (seconds), the first send's connection is closed that long after it,
        its reply unread, as if it had broken: the write is then unanswered, sent or not, run or
        not."""
        cause = None
        while True:
            client = session.get()
            if client is None:
                write.outcome = "UNRESOLVED"
                return None
            if cause is not None:
                write.causes.append(cause)
            write.sends += 1
            write.sent_at.append(time.time())
            if abandon is not None and write.sends == 1:
                try:
                    client.send_only(write.line)
                    time.sleep(abandon)
                except Lost:
                    pass
                cause = "abandoned"
                session.drop()
                continue
            try:
                reply = client.request(write.line)
            except Lost as error:
                cause = "no reply" if "timed out" in str(error) else "dropped"
                session.drop()
                time.sleep(0.02)
                continue
            write.reply = reply
            code = error_code(reply)
            if code in TRANSIENT:
                cause = code
                time.sleep(0.05)
                continue
            if code == "UNAUTHORIZED" and self.relogin:
                with self.lock:
                    self.relogins.append(session.login)
                cause = code
                session.drop()
                continue
            write.outcome = code
            if code == "OK":
                write.oks.append(reply)
            return reply

    def write(self, session, kind, request, text=None, target=None, abandon=None):
        key = uuid.uuid4().hex
        write = KeyedWrite(kind, key, f"{request} REQUEST {key}", text, target)
        write.owner = (session.k, session.user)
        self.writes.append(write)
        reply = self.send(session, write, abandon)
        if write.outcome == "UNRESOLVED":
            return write
        if write.outcome != "OK":
            self.unexpected.append(f"{write.line}: {reply}")
            return write
        answer = ok_json(reply)
        if kind == "POST":
            write.result_id = answer["pin"]["id"]
        elif kind == "REPLY":
            write.result_id = answer["reply"]["id"]
        elif answer is not True:
            self.unexpected.append(f"{write.line}: {reply}")
        return write

    def repeat(self, k, user, write):
        """The answered write's line again, on a new connection (to the other daemon if any)."""
        again = KeyedWrite(write.kind, write.key, write.line, write.text, write.target)
        self.repeats.append(again)
        session = RetrySession(self, k, user, lambda: self.other_ports(k))
        try:
            reply = self.send(session, again)
        finally:
            session.drop()
        if again.outcome not in ("OK", "UNRESOLVED"):
            self.unexpected.append(f"{again.line} (sent again): {reply}")

    def conflict(self, session, rng, write, i):
        lat, lon = self.area.point(rng, 0)
        text = f"{self.tag} {write.text.split(' ')[1]} conflict #{i}"
        probe = KeyedWrite("CONFLICT", write.key, f"POST {lat} {lon} {json.dumps(text)} REQUEST {write.key}", text)
        self.conflicts.append(probe)
        self.send(session, probe)

    def worker(self, k, user):
        rng = random.Random(f"{self.tag}-{k}")
        session = RetrySession(self, k, user, lambda: self.ports(k))

        def abandon():
            return rng.uniform(0, 0.005) if rng.randrange(ABANDON_ONE_IN) == 0 else None

        i = 0
        try:
            while not self.stop.is_set() and not self.give_up.is_set():
                i += 1
                lat, lon = self.area.point(rng, 0)
                text = f"{self.tag} {user.name} #{i}"
                post = self.write(session, "POST", f"POST {lat} {lon} {json.dumps(text)}", text=text, abandon=abandon())
                if post.outcome != "OK":
                    time.sleep(0.05)
                    continue
                if i % 3 == 0:
                    lat, lon = self.area.point(rng, 1)
                    side_text = f"{self.tag} {user.name} side #{i}"
                    side = self.write(session, "POST", f"POST {lat} {lon} {json.dumps(side_text)}", text=side_text,
                                      abandon=abandon())
                    if side.outcome == "OK":
                        if i % 2 == 0:
                            reply_text = f"{self.tag} {user.name} reply #{i}"
                            done = self.write(session, "REPLY", f"REPLY {side.result_id} {json.dumps(reply_text)}",
                                              text=reply_text, target=side.result_id, abandon=abandon())
                        else:
                            done = self.write(session, "DELETE", f"DELETE {side.result_id}", target=side.result_id,
                                              abandon=abandon())
                        if done.outcome == "OK":
                            self.repeat(k, user, done)
                if i % 5 == 0:
                    self.repeat(k, user, post)
                if i % 11 == 0:
                    self.conflict(session, rng, post, i)
        except Exception as error:  # noqa: BLE001 - a client must not die silently
            self.unexpected.append(f"retrying client {k} crashed: {error!r}")
        finally:
            session.drop()


class Watcher:
    """A client watching a circle: `WATCH … SNAPSHOT` first; whenever its connection goes (and,
    when `restless`, every 0.3–1 s by its own choice) it connects again (to `port()`, which may
    be a new daemon by then) and resumes with `WATCH … SINCE <the last seq it saw>`. A
    connection lost before the snapshot's `ready` takes the SNAPSHOT again (what it had of it is
    dropped). It keeps every pin id's `pin` and `gone` events and the pins visible to it; a
    second `pin` or `gone` event for one id is doubled (in this test no pin in the circle
    changes but by being written, deleted or hidden), a `pin` after a `gone` reappeared, a seq
    below one already seen out of order, `resumed: false` a re-snapshot. With `after_failover`
    (scenario 8, a promoted standby that lacks the last changes), a `WATCH … SINCE` answered
    `ERR BAD_ARGUMENT … past the end of the change log` is read again from a SNAPSHOT too (its
    seq belongs to the lost history; what else could a client do?), counted in `past_end`."""

    def __init__(self, name, port, lat, lon, radius_m, restless, seed, after_failover=False):
        self.name, self.port = name, port
        self.after_failover = after_failover
        self.lat, self.lon, self.radius_m = lat, lon, radius_m
        self.restless = restless
        self.rng = random.Random(f"{seed}-{name}")
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.visible = set()
        self.seen_pin = set()
        self.seen_gone = set()
        self.doubled = []         # (type, id, seq)
        self.reappeared = []
        self.out_of_order = []
        self.last_seq = None
        self.events = 0
        self.connections = 0
        self.resumed = 0          # WATCH … SINCE answered resumed true
        self.not_resumed = 0      # … answered resumed false: it had to SNAPSHOT again
        self.past_end = 0         # … answered BAD_ARGUMENT, past the log's end (after_failover): SNAPSHOT again
        self.resumes = []         # (sent, since, resumed) of every WATCH … SINCE answered OK
        # While set, it stays disconnected (a phone in a tunnel); cleared, it resumes (SINCE).
        self.away = threading.Event()
        self.readies = []         # when each SNAPSHOT came to its `ready`
        self.snapshot_retries = 0  # connection gone before the snapshot's ready
        self.drops = 0            # connections it closed itself
        self.broken = 0           # connections that broke or went silent
        self.overflows = 0
        self.transient = {}       # WATCH answered UNAVAILABLE etc.
        self.errors = []
        self.in_snapshot = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.thread.start()

    def view(self):
        with self.lock:
            return set(self.visible)

    def run(self):
        try:
            while not self.stop.is_set():
                if self.away.is_set():
                    time.sleep(0.05)
                    continue
                try:
                    client = Client(self.port())
                except Lost:
                    time.sleep(0.05)
                    continue
                try:
                    self.session(client)
                except Lost:
                    if not self.stop.is_set():
                        self.broken += 1
                        if self.in_snapshot:
                            self.snapshot_retries += 1
                finally:
                    client.close()
                    self.in_snapshot = False
        except Exception as error:  # noqa: BLE001 - a watcher must not die silently
            self.errors.append(f"crashed: {error!r}")

    def session(self, client):
        self.connections += 1
        since = self.last_seq
        line = f"WATCH {self.lat} {self.lon} {self.radius_m} " + ("SNAPSHOT" if since is None else f"SINCE {since}")
        sent = now()
        reply = client.request(line)
        code = error_code(reply)
        if code == "BAD_ARGUMENT" and since is not None and self.after_failover and "past the end" in reply:
            self.past_end += 1
            self.forget()
            return
        if code != "OK":
            if code in TRANSIENT:
                self.transient[code] = self.transient.get(code, 0) + 1
                time.sleep(0.1)
            else:
                self.errors.append(f"{line}: {reply[:200]}")
                time.sleep(0.5)
            return
        answer = ok_json(reply)
        if since is not None:
            self.resumes.append((sent, since, answer.get("resumed") is True))
            if answer.get("resumed") is True:
                self.resumed += 1
            else:
                # The log did not reach back: start again from a snapshot (a failure here, but
                # after a lossy failover).
                self.not_resumed += 1
                self.forget()
                return
        self.in_snapshot = since is None
        snapshot = []
        drop_at = now() + self.rng.uniform(0.3, 1.0) if self.restless else None
        while not self.stop.is_set():
            if drop_at is not None and not self.in_snapshot and now() >= drop_at:
                self.drops += 1
                return
            if self.away.is_set():
                return
            line = client.read_line(0.1)
            if line is None:
                continue
            if not line.startswith("EVENT "):
                self.errors.append(f"a line that is not an event: {line[:200]}")
                continue
            event = json.loads(line[6:])
            self.events += 1
            kind = event.get("type")
            if kind == "overflow":
                self.overflows += 1
                return
            if self.in_snapshot:
                if kind == "ready":
                    with self.lock:
                        for item in snapshot:
                            self.apply(item)
                        self.last_seq = max(self.last_seq or 0, event.get("seq", answer["seq"]))
                    self.in_snapshot = False
                    self.readies.append(now())
                    self.ready.set()
                else:
                    snapshot.append(event)
                continue
            with self.lock:
                self.apply(event)

    def forget(self):
        """Drops all it has seen: the next connection takes a SNAPSHOT."""
        with self.lock:
            self.visible.clear()
            self.seen_pin.clear()
            self.seen_gone.clear()
            self.last_seq = None

    def apply(self, event):
        kind, seq = event.get("type"), event.get("seq")
        if seq is not None:
            if self.last_seq is not None and seq < self.last_seq:
                self.out_of_order.append((kind, seq, self.last_seq))
            self.last_seq = max(self.last_seq or 0, seq)
        if kind == "pin":
            pin = event["pin"]["id"]
            if pin in self.seen_pin:
                self.doubled.append(("pin", pin, seq))
            elif pin in self.seen_gone:
                self.reappeared.append(pin)
            self.seen_pin.add(pin)
            self.visible.add(pin)
        elif kind == "gone":
            pin = event["id"]
            if pin in self.seen_gone:
                self.doubled.append(("gone", pin, seq))
            self.seen_gone.add(pin)
            self.visible.discard(pin)
        else:
            self.errors.append(f"an event of an unexpected type: {json.dumps(event)[:200]}")


def start_watchers(area, daemons, seed, after_failover=False, away=False):
    """Two watchers of the area's first place on each (name, port) of `daemons`: one keeps its
    connection as long as it lasts, one drops it every 0.3–1 s; with `away`, a third that keeps
    it too, until the scenario sends it away (Watcher.away) and back. Returns them once each has
    its snapshot."""
    lat, lon = area.places[0]
    watchers = []
    kinds = [("steady", False), ("restless", True)] + ([("away", False)] if away else [])
    for name, port in daemons:
        for kind, restless in kinds:
            watcher = Watcher(f"{name}-{kind}", port, lat, lon, area.radius_m, restless, seed, after_failover)
            watcher.start()
            watchers.append(watcher)
    for watcher in watchers:
        if not watcher.ready.wait(30):
            raise RuntimeError(f"watcher {watcher.name} has no snapshot after 30 s: {watcher.errors[:3]}")
    return watchers


def stop_watchers(watchers):
    for watcher in watchers:
        watcher.stop.set()
    for watcher in watchers:
        watcher.thread.join()



# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

class Result:
    def __init__(self, number, title):
        self.number, self.title = number, title
        self.failures = []
        self.figures = []
        self.notes = []
        self.counts = []

    def fail(self, text):
        self.failures.append(text)
        say(f"    FAILURE: {text}")

    def figure(self, text):
        self.figures.append(text)
        say(f"    {text}")

    def note(self, text):
        self.notes.append(text)
        say(f"    note: {text}")

    def count(self, text):
        """A figure that also goes into the run's closing summary of counts."""
        self.counts.append(text)
        self.figure(text)

    @property
    def passed(self):
        return not self.failures

    def line(self):
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} {self.number} {self.title}: " + "; ".join(self.figures + self.failures)


def quote(text):
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


# The columns of a pin row the sabotage copies (all but its id, photo and reply count).
PIN_COLUMNS = "author_id, lat, lon, kind, body, created_at, expires_at, cell, region"


def new_pin_id():
    return "p" + "".join(random.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(24))


def sample(ids, count=10):
    ids = sorted(ids)
    return ", ".join(ids[:count]) + (f" … ({len(ids)} in all)" if len(ids) > count else "")


def check_writes(cluster, result, load, label="", lossy=False):
    """Every acknowledged POST is stored once, under its id, with its text; nothing is stored
    twice; DELETEs answered OK took effect. With `lossy` (a failover to a standby that lacked the
    last changes), acknowledged writes missing are reported, not failed. Returns how many
    acknowledged writes are missing."""
    rows = cluster.query(
        "SELECT p.id, u.name, p.body, p.hidden FROM pins p JOIN users u ON u.id = p.author_id "
        f"WHERE starts_with(p.body, '{load.tag} ')")
    by_id = {row[0]: row for row in rows}
    by_text = {}
    for row in rows:
        by_text.setdefault((row[1], row[2]), []).append(row[0])
    expected_absent = load.deleted
    missing = [pin for text, pin in load.acked.items() if pin not in by_id and pin not in expected_absent and pin not in load.delete_unknown]
    wrong = [pin for text, pin in load.acked.items() if pin in by_id and by_id[pin][2] != text]
    present = sum(1 for pin in load.acked.values() if pin in by_id)
    duplicates = {key: ids for key, ids in by_text.items() if len(ids) > 1}
    extra_rows = sum(len(ids) - 1 for ids in duplicates.values())
    undeleted = [pin for pin in load.deleted if pin in by_id]
    # Stored although the POST got no OK (an error, or no answer at all): the client cannot know.
    stored_unacked = {}
    for row in rows:
        outcome = load.texts.get(row[2])
        if outcome is None:
            continue
        if outcome != "OK":
            stored_unacked.setdefault(outcome, []).append(row[0])
    acked_not_as_stored = [pin for text, pin in load.acked.items()
                           if pin not in by_id and by_text.get((text.split(" ")[1], text))]
    deleted_note = f", {len(load.deleted)} deleted by DELETE OK" if load.deleted else ""
    result.figure(
        f"{label}acknowledged {len(load.acked)}, present {present}{deleted_note}, missing {len(missing)}, "
        f"duplicates {extra_rows}, rows {len(rows)}")
    if missing and lossy:
        result.figure(f"{label}{len(missing)} acknowledged pins were lost in the failover: {sample(missing, 3)}")
    elif missing:
        result.fail(f"{label}{len(missing)} acknowledged pins are not in the database: {sample(missing)}")
    if acked_not_as_stored:
        result.fail(f"{label}{len(acked_not_as_stored)} acknowledged texts are stored under another id: {sample(acked_not_as_stored)}")
    if wrong:
        result.fail(f"{label}{len(wrong)} acknowledged pins hold another text: {sample(wrong)}")
    if duplicates:
        shown = "; ".join(f"{author} {text!r}: {ids}" for (author, text), ids in list(duplicates.items())[:5])
        result.fail(f"{label}{len(duplicates)} texts stored more than once ({extra_rows} extra rows): {shown}")
    if undeleted and lossy:
        result.figure(f"{label}{len(undeleted)} DELETEs answered OK were lost in the failover: {sample(undeleted, 3)}")
    elif undeleted:
        result.fail(f"{label}{len(undeleted)} pins whose DELETE was answered OK are still stored: {sample(undeleted)}")
    for outcome, ids in sorted(stored_unacked.items()):
        if outcome == "LOST":
            result.note(f"{label}{len(ids)} POSTs whose answer was lost (connection broken) were stored: {sample(ids, 5)}")
        else:
            result.note(f"{label}{len(ids)} POSTs answered ERR {outcome} were stored anyway "
                        f"(the README says a failed command changes nothing): {sample(ids, 5)}")
    if load.unexpected:
        result.fail(f"{label}{len(load.unexpected)} unexpected replies, e.g. {load.unexpected[:3]}")
    return len(missing) + len(undeleted)


def fault_figures(result, load, fault_start, fault_end, what):
    """How the clients lived through a fault: UNAVAILABLE replies, the time without any OK, the
    slowest request, OKs after the fault."""
    events = sorted(load.events)
    counts = {}
    for _, _, kind, outcome in events:
        counts[outcome] = counts.get(outcome, 0) + 1
    unavailable = [answered for _, answered, _, outcome in events if outcome == "UNAVAILABLE"]
    oks = sorted(answered for _, answered, _, outcome in events if outcome == "OK")
    # The longest time no request succeeded, around the fault.
    around = [t for t in oks if t >= fault_start - 5]
    stall, stall_from = 0.0, fault_start
    previous = max((t for t in oks if t < fault_start), default=fault_start)
    for t in around:
        if t >= previous and t - previous > stall:
            stall, stall_from = t - previous, previous
        previous = max(previous, t)
    after = [t for t in oks if t > fault_end]
    slowest = max((answered - sent for sent, answered, _, _ in events), default=0.0)
    first_ok_after = (after[0] - fault_start) if after else None
    others = ", ".join(f"{code} {n}" for code, n in sorted(counts.items()) if code not in ("OK", "UNAVAILABLE"))
    result.figure(f"{what} took {fault_end - fault_start:.2f} s")
    if unavailable:
        result.figure(
            f"UNAVAILABLE {len(unavailable)} replies over {unavailable[-1] - unavailable[0]:.2f} s "
            f"(from +{unavailable[0] - fault_start:.2f} s to +{unavailable[-1] - fault_start:.2f} s after it began)")
    else:
        result.figure("UNAVAILABLE 0 replies")
    result.figure(
        f"no OK for {stall:.2f} s (from {stall_from - fault_start:+.2f} s); slowest request {slowest:.2f} s; "
        f"first OK after it at +{first_ok_after:.2f} s" if first_ok_after is not None else
        f"no OK for {stall:.2f} s; slowest request {slowest:.2f} s; no OK after it")
    result.figure(f"replies: OK {counts.get('OK', 0)}" + (f", {others}" if others else "") + f"; OKs after it {len(after)}")
    if not after:
        result.fail(f"no write succeeded after the {what}")


def nearby(port, area):
    """Every pin of NEARBY around each of the area's places, following `next`:
    ({id: text}, pages), or the first error reply (a string)."""
    client = Client(port)
    try:
        pins = {}
        pages = 0
        for lat, lon in area.places:
            cursor = None
            while True:
                line = f"NEARBY {lat} {lon} {area.radius_m} LIMIT 200"
                if cursor is not None:
                    line += f" CURSOR {json.dumps(cursor)}"
                reply = client.request(line)
                if not reply.startswith("OK "):
                    return reply
                page = ok_json(reply)
                for pin in page["pins"]:
                    if pin["id"] in pins:
                        return f"pin {pin['id']} listed twice by NEARBY"
                    pins[pin["id"]] = pin["text"]
                pages += 1
                cursor = page["next"]
                if cursor is None or pages > 10_000:
                    break
        return pins, pages
    finally:
        client.close()


def database_visible(cluster, area):
    rows = cluster.query(f"SELECT id, body FROM pins WHERE {area.box_sql()} AND expires_at > now() AND NOT hidden")
    return {row[0]: row[1] for row in rows}


def check_feeds(cluster, result, daemons, area, since, label="", window=FEED_WINDOW, expected=None,
                since_what="the load stopped"):
    """Each daemon's NEARBY equals the database's live, visible pins in the area within `window`
    seconds of `since` (when the load stopped and the database was reachable). `expected`, when
    given, is what the clients' own record says should be visible (a subset check)."""
    deadline = since + window
    pending = {daemon.name: daemon for daemon in daemons}
    last = {}
    while True:
        stored = database_visible(cluster, area)
        for name, daemon in list(pending.items()):
            began = now()
            try:
                seen = nearby(daemon.port, area)
            except Lost as error:
                seen = f"connection lost: {error}"
            if not isinstance(seen, str):
                seen, pages = seen
            last[name] = seen
            if seen == stored:
                # The feed matched at some moment of the scan: report when the scan ended.
                result.figure(f"{label}{name}'s NEARBY = database ({len(stored)} pins, {pages} pages read in "
                              f"{now() - began:.2f} s) {now() - since:.2f} s after {since_what}")
                del pending[name]
        if not pending or now() > deadline:
            break
        time.sleep(0.1)
    for name in pending:
        seen = last[name]
        if isinstance(seen, str):
            result.fail(f"{label}{name}'s NEARBY does not answer after {window} s: {seen[:200]}")
            continue
        only_db = set(stored) - set(seen)
        only_daemon = set(seen) - set(stored)
        texts = [pin for pin in set(seen) & set(stored) if seen[pin] != stored[pin]]
        result.fail(
            f"{label}{name}'s NEARBY differs from the database after {window} s: {len(seen)} pins vs {len(stored)}; "
            f"missing from NEARBY {len(only_db)} ({sample(only_db, 5)}); not in the database's visible pins "
            f"{len(only_daemon)} ({sample(only_daemon, 5)}); other text {len(texts)}")
        if only_daemon:
            states = cluster.query(
                "SELECT id, hidden, expires_at > now() FROM pins WHERE id IN ("
                + ",".join(f"'{pin}'" for pin in sorted(only_daemon)[:20]) + ")")
            gone = len(only_daemon) - len(states) if len(only_daemon) <= 20 else None
            result.note(f"{label}rows behind the extra NEARBY pins (id, hidden, live): {states[:10]}"
                        + (f"; {gone} of them have no row (deleted)" if gone else ""))
    if expected is not None:
        absent = set(expected) - set(stored)
        if absent:
            result.fail(f"{label}{len(absent)} pins the clients expect visible are not visible in the database: {sample(absent)}")
        extra = set(stored) - set(expected)
        if extra:
            result.figure(f"{label}{len(extra)} visible pins the clients did not count on (stored POSTs, DELETEs or "
                          "REPORTs that got no OK)")


def check_keyed(cluster, result, clients, label="", lost_since=None):
    """The retrying clients' writes: every POST answered OK is stored once, under the id it was
    answered with (unless a DELETE answered OK removed it), every REPLY answered OK once under its
    id, and a DELETE answered OK took effect; no text is stored twice (lost and doubled must be
    0); all the OK lines got for one key are the same line; a used key with another text is
    ERR CONFLICT and stores nothing; every write ends OK (no definitive ERR, none unresolved).

    With `lost_since` (a failover to a standby cut off at that moment, which lost what was
    committed since, keys with their writes), lost writes are reported, not failed, and so is
    what follows from a loss alone: a key whose first OK's write is lost answered again with
    another line (sent again after the failover, it ran again: `elsewhere`), or stored under
    another text (its CONFLICT probe ran), ERR NOT_FOUND for a REPLY or DELETE whose pin is lost,
    and ERR UNAUTHORIZED on a connection logged in with LOGIN since then (its session is lost;
    the client logs in again, see RetryingClients.relogin). Doubled must still be 0 (a key is
    stored by its write's own transaction, so both stand or fall together), and every write must
    still end. Returns how many acknowledged writes are missing."""
    lossy = lost_since is not None
    tag = clients.tag
    pins = {}
    for pin, body in cluster.query(f"SELECT id, body FROM pins WHERE starts_with(body, '{tag} ')"):
        pins.setdefault(body, []).append(pin)
    stored_ids = {pin for ids in pins.values() for pin in ids}
    replies = {}
    for reply, body in cluster.query(f"SELECT id, body FROM replies WHERE starts_with(body, '{tag} ')"):
        replies.setdefault(body, []).append(reply)
    writes = list(clients.writes)
    deleted = {write.target for write in writes if write.kind == "DELETE" and write.outcome == "OK"}
    lost, doubled, elsewhere = [], [], []
    kinds, outcomes, causes = {}, {}, {}
    for write in writes:
        kinds[write.kind] = kinds.get(write.kind, 0) + 1
        outcomes[write.outcome] = outcomes.get(write.outcome, 0) + 1
        for cause in write.causes:
            causes[cause] = causes.get(cause, 0) + 1
        if write.kind in ("POST", "REPLY"):
            ids = (pins if write.kind == "POST" else replies).get(write.text, [])
            if len(ids) > 1:
                doubled.append(f"{write.kind} {write.text!r} stored as {', '.join(ids)}")
            if write.outcome != "OK" or write.result_id in deleted:
                continue
            if not ids:
                lost.append(f"{write.kind} {write.text!r} answered {write.result_id}, not stored")
            elif write.result_id not in ids:
                elsewhere.append(f"{write.kind} {write.text!r} answered {write.result_id}, stored as {', '.join(ids)}")
        elif write.kind == "DELETE" and write.outcome == "OK" and write.target in stored_ids:
            lost.append(f"DELETE {write.target} answered OK, the pin is still stored")
    # Every OK line got for one key, whichever daemon or connection answered: one line.
    lines = {}
    for write in writes + clients.repeats:
        for line in write.oks:
            lines.setdefault(write.key, set()).add(line)
    differing = {key: sorted(got) for key, got in lines.items() if len(got) > 1}
    definitive = [write for write in writes + clients.repeats if write.outcome not in ("OK", "UNRESOLVED")]
    if lossy:
        # What a lost write explains: its key answered again with another line, or with
        # another text stored; a REPLY or DELETE of a lost pin not found.
        stored_results = stored_ids | {reply for ids in replies.values() for reply in ids}
        gone_keys = {write.key for write in writes if write.outcome == "OK" and write.kind in ("POST", "REPLY")
                     and write.result_id not in stored_results}
        explained = {
            "keys answered again with another line": [key for key in differing if key in gone_keys],
            "CONFLICT probes of a lost key stored": [probe for probe in clients.conflicts if probe.key in gone_keys
                                                     and probe.outcome not in ("CONFLICT", "UNRESOLVED")],
            "NOT_FOUND for a lost pin": [write for write in definitive if write.outcome == "NOT_FOUND"
                                         and write.target is not None and write.target not in stored_ids],
            "UNAUTHORIZED after a lost LOGIN": [login for login in clients.relogins
                                                if login is not None and login[0] == "LOGIN" and login[1] >= lost_since],
        }
        unexplained_logins = [login for login in clients.relogins if login not in explained["UNAUTHORIZED after a lost LOGIN"]]
        differing = {key: got for key, got in differing.items() if key not in gone_keys}
        definitive = [write for write in definitive if write not in explained["NOT_FOUND for a lost pin"]]
        # Definitive ERRs are judged just above (`definitive`); anything else still fails.
        clients_unexpected = [text for text in clients.unexpected if ": ERR " not in text]
        conflicts_checked = [probe for probe in clients.conflicts if probe.key not in gone_keys]
        lost_figure = f"{label}retrying clients: {len(lost) + len(elsewhere)} acknowledged writes lost in the failover"
        if elsewhere:
            lost_figure += f" ({len(elsewhere)} of them written again, under a new id, when their key was sent again)"
        lost_figure += "; explained by the loss: " + ", ".join(f"{what} {len(items)}" for what, items in explained.items())
        result.figure(lost_figure)
        lost_count = len(lost) + len(elsewhere)
        lost, elsewhere = [], []
    else:
        clients_unexpected = list(clients.unexpected)
        conflicts_checked = list(clients.conflicts)
        lost_count = len(lost)
        definitive = []
        unexplained_logins = list(clients.relogins)
    repeats = list(clients.repeats)
    repeated_same = sum(1 for again in repeats if again.outcome == "OK" and len(lines.get(again.key, ())) == 1)
    conflicts = conflicts_checked
    conflict_errs = sum(1 for probe in conflicts if probe.outcome == "CONFLICT")
    conflict_other = [f"{probe.line}: {probe.reply}" for probe in conflicts if probe.outcome not in ("CONFLICT", "UNRESOLVED")]
    conflict_stored = [probe.text for probe in conflicts if probe.text in pins]
    unresolved = [write for write in writes + repeats + list(clients.conflicts) if write.outcome == "UNRESOLVED"]
    retries = sum(len(write.causes) for write in writes)
    retried = [write for write in writes if write.causes and write.outcome == "OK"]
    # A retried write whose key row was written (by its transaction, which began after its
    # send) before its last send: an earlier send had committed, and the last was answered from
    # the key. Reported, not judged, by what the first send met (abandoned, dropped, no reply,
    # or an ERR UNAVAILABLE that had committed all the same).
    from_key = {}
    for first in range(0, len(retried), 500):
        batch = {write.key: write for write in retried[first:first + 500]}
        rows = cluster.query("SELECT key, extract(epoch FROM created_at) FROM request_keys WHERE key IN ("
                             + ",".join(quote(key) for key in batch) + ")")
        for key, created in rows:
            if float(created) < batch[key].sent_at[-1]:
                cause = f"after {batch[key].causes[0]}"
                from_key[cause] = from_key.get(cause, 0) + 1
    repeat_retries = sum(len(write.causes) for write in repeats + conflicts)
    summary = (f"{label}retrying clients: writes {len(writes)} ("
               + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
               + f"), OK {outcomes.get('OK', 0)}; retries {retries} for {len(retried)} writes"
               + (f" ({', '.join(f'{cause} {n}' for cause, n in sorted(causes.items()))})" if causes else "")
               + f", {sum(from_key.values())} of them answered from their key"
               + (f" ({', '.join(f'{cause} {n}' for cause, n in sorted(from_key.items()))})" if from_key else "")
               + f"; logins AUTH {clients.logins['AUTH']}, LOGIN {clients.logins['LOGIN']}"
               + f"; a key sent again after its OK {len(repeats)} (same line {repeated_same}"
               + (f"; retries {repeat_retries}" if repeat_retries else "") + ")"
               + f", a key with another text {len(conflicts)} (ERR CONFLICT {conflict_errs})"
               + f"; lost {lost_count}" + (" (a lossy failover: reported, not judged)" if lossy else "")
               + f", doubled {len(doubled)}")
    result.count(summary)
    if lost:
        result.fail(f"{label}{len(lost)} writes answered OK are lost: {'; '.join(lost[:5])}")
    if doubled:
        result.fail(f"{label}{len(doubled)} keyed writes are stored more than once: {'; '.join(doubled[:5])}")
    if elsewhere:
        result.fail(f"{label}{len(elsewhere)} keyed writes are stored under another id than their OK's: {'; '.join(elsewhere[:5])}")
    if differing:
        shown = "; ".join(f"{key}: {' ≠ '.join(repr(line[:120]) for line in got)}" for key, got in list(differing.items())[:3])
        result.fail(f"{label}{len(differing)} keys were answered OK with different lines: {shown}")
    if conflict_other:
        result.fail(f"{label}{len(conflict_other)} used keys sent with another text were not answered ERR CONFLICT: {conflict_other[:3]}")
    if conflict_stored:
        result.fail(f"{label}{len(conflict_stored)} texts sent under a used key were stored: {conflict_stored[:3]}")
    if unresolved:
        result.fail(f"{label}{len(unresolved)} keyed requests got neither OK nor a definitive ERR within "
                    f"{SETTLE_GUARD:.0f} s of the load's end: {[(w.line[:100], w.reply) for w in unresolved[:3]]}")
    if clients_unexpected:
        result.fail(f"{label}{len(clients_unexpected)} unexpected replies to retrying clients, e.g. {clients_unexpected[:3]}")
    if definitive:
        result.fail(f"{label}{len(definitive)} keyed writes got a definitive ERR the failover's loss does not explain: "
                    f"{[(write.line[:100], write.reply) for write in definitive[:3]]}")
    if unexplained_logins:
        result.fail(f"{label}{len(unexplained_logins)} writes were answered ERR UNAUTHORIZED on a session no lost "
                    f"LOGIN explains (logged in with AUTH, or before the loss): {unexplained_logins[:3]}")
    return lost_count


def distance_m(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6_371_008.8 * math.asin(math.sqrt(a))


def circle_visible(cluster, lat, lon, radius_m):
    """The ids of the live, visible pins in the database within the circle."""
    dlat = radius_m / 100_000
    dlon = dlat / math.cos(math.radians(lat))
    rows = cluster.query(
        f"SELECT id, lat, lon FROM pins WHERE lat BETWEEN {lat - dlat} AND {lat + dlat} "
        f"AND lon BETWEEN {lon - dlon} AND {lon + dlon} AND expires_at > now() AND NOT hidden")
    return {row[0] for row in rows if distance_m(lat, lon, float(row[1]), float(row[2])) <= radius_m}


def check_watchers(cluster, result, watchers, since, label="", rereads_ok=False):
    """Each watcher's view (the pins its events left visible) equals the database's live, visible
    pins in its circle (waiting up to WATCH_GUARD for it to come level; how long after `since`,
    when the load stopped, is reported), and it saw each pin's `pin` and `gone` at most once,
    nothing out of order, and never had to SNAPSHOT again. With `rereads_ok` (after a failover
    that lost changes), being told to read again (`resumed: false`, or a SINCE past the log's
    end) is the right answer and no failure; the view must still end equal to the database's."""
    if not watchers:
        return
    first = watchers[0]
    deadline = now() + WATCH_GUARD
    while True:
        stored = circle_visible(cluster, first.lat, first.lon, first.radius_m)
        behind = [watcher for watcher in watchers if watcher.view() != stored]
        if not behind or now() > deadline:
            break
        time.sleep(0.1)
    if not behind:
        result.figure(f"{label}every watcher's view = database ({len(stored)} pins in the circle) "
                      f"{now() - since:.2f} s after the load stopped")
    totals = {"events": 0, "resumed": 0, "missing": 0, "doubled": 0, "not_resumed": 0}
    for watcher in watchers:
        with watcher.lock:
            view = set(watcher.visible)
            seen = len(watcher.seen_pin)
            doubled = list(watcher.doubled)
            reappeared = list(watcher.reappeared)
            out_of_order = list(watcher.out_of_order)
        missing = stored - view
        stale = view - stored
        totals["events"] += watcher.events
        totals["resumed"] += watcher.resumed
        totals["missing"] += len(missing)
        totals["doubled"] += len(doubled)
        totals["not_resumed"] += watcher.not_resumed
        totals["past_end"] = totals.get("past_end", 0) + watcher.past_end
        extra = [f"{what} {n}" for what, n in (("dropped by itself", watcher.drops), ("broken", watcher.broken),
                                              ("snapshot taken again", watcher.snapshot_retries),
                                              ("overflow", watcher.overflows),
                                              ("SINCE past the log's end", watcher.past_end)) if n]
        extra += [f"WATCH answered {code} {n}" for code, n in sorted(watcher.transient.items())]
        result.figure(
            f"{label}watcher {watcher.name}: {watcher.events} events over {watcher.connections} connections "
            f"(resumed with SINCE {watcher.resumed}{', ' + ', '.join(extra) if extra else ''}), pins seen {seen}; "
            f"missing {len(missing)}, doubled {len(doubled)}, not gone {len(stale)}, re-snapshots {watcher.not_resumed}")
        name = f"{label}watcher {watcher.name}"
        if missing:
            result.fail(f"{name} lacks {len(missing)} visible pins of its circle: {sample(missing, 5)}")
        if stale:
            result.fail(f"{name} still shows {len(stale)} pins the database does not: {sample(stale, 5)}")
        if doubled:
            result.fail(f"{name} got {len(doubled)} events twice: {doubled[:5]}")
        if reappeared:
            result.fail(f"{name} got a pin again after its gone for {len(reappeared)} pins: {sample(reappeared, 5)}")
        if out_of_order:
            result.fail(f"{name} got {len(out_of_order)} events with a seq below one it had seen: {out_of_order[:5]}")
        if watcher.not_resumed and not rereads_ok:
            result.fail(f"{name} got resumed false {watcher.not_resumed} times (the log should reach back)")
        if watcher.errors:
            result.fail(f"{name}: {len(watcher.errors)} unexpected replies or events, e.g. {watcher.errors[:3]}")
    result.count(f"{label}resumed watchers: {len(watchers)}, events {totals['events']}, resumed with SINCE "
                 f"{totals['resumed']}, re-snapshots {totals['not_resumed']}"
                 + (f", SINCE past the log's end {totals['past_end']}" if totals.get("past_end") else "")
                 + f"; missing {totals['missing']}, "
                 f"doubled {totals['doubled']}")


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------

class Chaos:
    def __init__(self, args):
        self.args = args
        self.cluster = Cluster(args)
        self.seconds = args.seconds
        self.connections = args.connections
        self.after = max(3.0, self.seconds * 0.3)  # load kept up after a fault ends

    def names(self, prefix, count):
        return [f"{prefix}w{k}" for k in range(count)]

    def run_load(self, load, fault, fault_at=None, also=()):
        """Runs `load` (and the retrying clients `also`) for the scenario's seconds with `fault()`
        at 40 % of them (or `fault_at`), and at least self.after seconds past the fault's end.
        Returns (fault_start, fault_end)."""
        load.start()
        for other in also:
            other.start()
        time.sleep(self.seconds * 0.4 if fault_at is None else fault_at)
        fault_start = now()
        try:
            fault()
        finally:
            fault_end = now()
            remaining = max(load.started + self.seconds, fault_end + self.after) - now()
            if remaining > 0:
                time.sleep(remaining)
            load.stop.set()
            for other in also:
                other.stop.set()
            load.finish()
            for other in also:
                other.finish()
        return fault_start, fault_end

    def retrying(self, prefix, area, port, ports, other_ports=None):
        """RETRYING_CLIENTS retrying clients, users `<prefix>k0`… registered through `port`,
        whose texts begin `chaos-<prefix>k `."""
        users = register(port, [f"c{prefix}k{k}" for k in range(RETRYING_CLIENTS)])
        return RetryingClients(f"chaos-{prefix}k", area, users, ports, other_ports)

    # 1 and 2 -------------------------------------------------------------------------------
    def restart_under_load(self, result, number, mode):
        area = Area(10.0 * number, 10.0 * number)
        daemon = Daemon(self.args, f"s{number}-daemon")
        watchers = []
        try:
            daemon.wait_loaded()
            users = register(daemon.port, self.names(f"c{number}", self.connections))
            load = Load(f"chaos-{number}", area, users, lambda k: daemon.port, self.args.seed)
            keyed = self.retrying(str(number), area, daemon.port, lambda k: daemon.port)
            watchers = start_watchers(area, [(f"s{number}", lambda: daemon.port)], self.args.seed)
            fault_start, fault_end = self.run_load(load, lambda: self.cluster.restart(mode), also=[keyed])
            fault_figures(result, load, fault_start, fault_end, f"pg_ctl restart -m {mode}")
            if self.args.sabotage:
                self.sabotage(result, load)
                self.sabotage_keyed(result, keyed)
                self.sabotage_watchers(result, watchers)
            check_feeds(self.cluster, result, [daemon], area, keyed.ended)
            check_writes(self.cluster, result, load)
            check_keyed(self.cluster, result, keyed)
            check_watchers(self.cluster, result, watchers, keyed.ended)
        finally:
            stop_watchers(watchers)
            self.stop_daemon(result, daemon)
        self.log_excerpt(result, daemon)

    def scenario1(self, result):
        self.restart_under_load(result, 1, "fast")

    def scenario2(self, result):
        self.restart_under_load(result, 2, "immediate")

    # 3 ------------------------------------------------------------------------------------
    def scenario3(self, result):
        area = Area(30.0, 30.0)
        first = Daemon(self.args, "s3-daemon-1")
        current = {"daemon": first}
        replacement = None
        watchers = []
        try:
            first.wait_loaded()
            users = register(first.port, self.names("c3", self.connections))
            load = Load("chaos-3", area, users, lambda k: current["daemon"].port, self.args.seed)
            keyed = self.retrying("3", area, first.port, lambda k: current["daemon"].port)
            # The watchers follow the daemon: to the new one once the first is killed.
            watchers = start_watchers(area, [("s3", lambda: current["daemon"].port)], self.args.seed)

            def kill_and_replace():
                nonlocal replacement
                first.kill9()
                replacement = Daemon(self.args, "s3-daemon-2")
                current["daemon"] = replacement
                result.figure(f"the new daemon listened {replacement.listening_after:.2f} s after its start")

            fault_start, fault_end = self.run_load(load, kill_and_replace, also=[keyed])
            fault_figures(result, load, fault_start, fault_end, "kill -9 and a new daemon")
            check_feeds(self.cluster, result, [replacement], area, keyed.ended)
            check_writes(self.cluster, result, load)
            check_keyed(self.cluster, result, keyed)
            check_watchers(self.cluster, result, watchers, keyed.ended)
            if "listening" not in first.stderr():
                result.fail("the first daemon never listened")
        finally:
            stop_watchers(watchers)
            if replacement is not None:
                self.stop_daemon(result, replacement)
            if first.process.poll() is None:
                first.kill9()
        if replacement is not None:
            self.log_excerpt(result, replacement)

    # 4 ------------------------------------------------------------------------------------
    def scenario4(self, result):
        area = Area(40.0, 40.0)
        # Some state first: pins at distinct places, a few deleted, one hidden by a report.
        seeder = Daemon(self.args, "s4-seeder")
        try:
            seeder.wait_loaded()
            author, reporter = register(seeder.port, ["c4author", "c4reporter"])
            client = authed_client(seeder.port, author, deadline=now() + 30)
            rng = random.Random(f"{self.args.seed}-4")
            ids = []
            for i in range(60):
                lat, lon = area.point(rng)
                ids.append(ok_json(self.expect_ok(client, f"POST {lat} {lon} {json.dumps(f'chaos-4 seeded #{i}')}"))["pin"]["id"])
            for pin in ids[:5]:
                self.expect_ok(client, f"DELETE {pin}")
            client.close()
            client = authed_client(seeder.port, reporter, deadline=now() + 30)
            self.expect_ok(client, f"REPORT {ids[10]} spam")
            client.close()
        finally:
            self.stop_daemon(result, seeder)

        result.figure(f"stopping PostgreSQL took {self.cluster.stop():.2f} s")
        daemon = None
        try:
            daemon = Daemon(self.args, "s4-daemon")
            result.figure(f"the daemon listened {daemon.listening_after:.2f} s after its start, PostgreSQL down")
            probes = [("PING", lambda r: r == 'OK "PONG"'),
                      ("HELLO", lambda r: r.startswith('OK {"server":"scavengerd"')),
                      (f"NEARBY {area.places[0][0]} {area.places[0][1]} {area.radius_m} LIMIT 200", lambda r: error_code(r) == "UNAVAILABLE"),
                      ("REGIONS", lambda r: error_code(r) == "UNAVAILABLE"),
                      (f"AUTH {author.token}", lambda r: error_code(r) == "UNAVAILABLE")]

            def probe(when):
                client = Client(daemon.port)
                timings = []
                try:
                    for line, good in probes:
                        sent = now()
                        try:
                            reply = client.request(line)
                        except Lost as error:
                            reply = f"(no reply: {error})"
                        took = now() - sent
                        word = line.split()[0]
                        timings.append(f"{word} {took * 1000:.0f} ms")
                        if not good(reply):
                            result.fail(f"{when}, {word} answered {reply[:160]!r}")
                        elif took > 1.0:
                            result.note(f"{when}, {word} took {took:.2f} s")
                finally:
                    client.close()
                result.figure(f"{when}: PING, HELLO OK; NEARBY, REGIONS, AUTH UNAVAILABLE ({', '.join(timings)})")

            probe("at once")
            time.sleep(3)
            probe("3 s later")

            up_took = self.cluster.start()
            up = now()
            result.figure(f"starting PostgreSQL took {up_took:.2f} s")
            first_ok = None
            while now() < up + 30:
                reply = nearby(daemon.port, area)
                if not isinstance(reply, str):
                    first_ok = now()
                    break
                time.sleep(0.05)
            if first_ok is None:
                result.fail(f"NEARBY still not OK 30 s after PostgreSQL was up: {reply[:160]}")
                return
            result.figure(f"first NEARBY OK {first_ok - up:.2f} s after PostgreSQL was up")
            if first_ok - up > 10:
                result.fail(f"NEARBY took {first_ok - up:.2f} s (over 10 s) to answer OK once PostgreSQL was up")
            check_feeds(self.cluster, result, [daemon], area, first_ok, since_what="its first OK")
            stored = database_visible(self.cluster, area)
            if len(stored) != 54:
                result.fail(f"the database holds {len(stored)} visible pins in the area, not 60 - 5 deleted - 1 hidden = 54")
            # And it writes again: a POST is in its NEARBY when OK comes.
            client = authed_client(daemon.port, author, deadline=now() + 10)
            if client is None:
                result.fail("AUTH does not succeed 10 s after PostgreSQL was up")
                return
            pin = ok_json(self.expect_ok(client, f"POST {area.places[0][0]} {area.places[0][1]} \"chaos-4 after\""))["pin"]["id"]
            client.close()
            seen = nearby(daemon.port, area)
            if isinstance(seen, str) or pin not in seen[0]:
                result.fail("a POST answered OK after recovery is not in the daemon's NEARBY")
            else:
                result.figure("a POST after recovery is in NEARBY at once")
        finally:
            if not self.cluster.running():
                self.cluster.start()
            if daemon is not None:
                self.stop_daemon(result, daemon)
        self.log_excerpt(result, daemon)

    # 6 ------------------------------------------------------------------------------------
    def scenario6(self, result):
        """A synchronous standby that does not answer (issue 41): a keyed POST's commit waits for
        it; an operator cancels the wait (the commit then stands on the primary alone, and
        PostgreSQL says so only with a WARNING). The POST must not be answered OK; once the
        standby requirement is lifted, the same line again is answered OK from its key, with the
        same pin, stored once."""
        area = Area(60.0, 60.0)
        daemon = Daemon(self.args, "s6-daemon")
        lifted = False
        try:
            daemon.wait_loaded()
            (author,) = register(daemon.port, ["c6author"])
            client = authed_client(daemon.port, author, deadline=now() + 30)
            lat, lon = area.places[0]
            # A keyed write first, so that the daemon's request-key secret is stored before the
            # standby is required (its first keyed write stores it).
            self.expect_ok(client, f"POST {lat} {lon} \"chaos-6 before\" REQUEST {uuid.uuid4().hex}")
            line = f"POST {lat} {lon} \"chaos-6 waited for a standby\" REQUEST {uuid.uuid4().hex}"
            self.cluster.query("ALTER SYSTEM SET synchronous_standby_names = 'chaos_standby_that_never_answers'")
            self.cluster.query("SELECT pg_reload_conf()")
            client.send_only(line)
            # The commit waits for the standby (SyncRep); cancel that wait, as a failover tool or
            # an operator would.
            waited = None
            deadline = now() + 10
            while now() < deadline:
                pids = self.cluster.query(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = current_database()")
                if pids:
                    waited = pids[0][0]
                    break
                time.sleep(0.02)
            if waited is None:
                result.fail("the keyed POST's commit never waited for the synchronous standby")
                return
            self.cluster.query(f"SELECT pg_cancel_backend({int(waited)})")
            reply = client.read_line(10)
            result.figure(f"the POST whose wait was cancelled answered {reply!r}")
            if reply is None or error_code(reply) != "UNAVAILABLE":
                result.fail(f"a commit not confirmed by the synchronous standby was answered {reply!r}, not ERR UNAVAILABLE")
            self.cluster.query("ALTER SYSTEM RESET synchronous_standby_names")
            self.cluster.query("SELECT pg_reload_conf()")
            lifted = True
            again = self.expect_ok(client, line)
            pin = ok_json(again)["pin"]["id"]
            stored = self.cluster.query("SELECT count(*) FROM pins WHERE body = 'chaos-6 waited for a standby'")[0][0]
            result.figure(f"the same line again: {again[:60]}…; stored {stored} time(s)")
            if stored != "1":
                result.fail(f"the keyed POST is stored {stored} times, not once")
            if self.cluster.query(f"SELECT count(*) FROM pins WHERE id = '{pin}'")[0][0] != "1":
                result.fail("the retry's pin id is not the stored pin's")
            client.close()
        finally:
            if not lifted:
                self.cluster.query("ALTER SYSTEM RESET synchronous_standby_names")
                self.cluster.query("SELECT pg_reload_conf()")
            self.stop_daemon(result, daemon)
        self.log_excerpt(result, daemon)

    # 5 ------------------------------------------------------------------------------------
    def scenario5(self, result):
        area = Area(50.0, 50.0)
        a = Daemon(self.args, "s5-daemon-A")
        b = Daemon(self.args, "s5-daemon-B")
        daemons = [a, b]
        watchers = []
        try:
            for daemon in daemons:
                daemon.wait_loaded()
            half = max(1, self.connections // 2)
            # Workers alternate: even ones on A, odd ones on B; the reporter on A reports pins
            # written through B and the one on B pins written through A. A retrying client sends
            # a key again through the daemon it does not write through.
            def ports(k):
                return daemons[k % 2].port

            def other_ports(k):
                return daemons[(k + 1) % 2].port

            # Watchers on each daemon, through both phases: they see the writes of both.
            watchers = start_watchers(area, [("s5-A", lambda: a.port), ("s5-B", lambda: b.port)], self.args.seed)

            phases = [("first", None), ("second", "fast")]
            hidden, hidden_unknown = set(), set()
            expected_all = set()
            for phase, (label, mode) in enumerate(phases):
                letter = "ab"[phase]
                users = register(a.port, self.names(f"c5{letter}", 2 * half))
                reporters = register(b.port, [f"c5{letter}ra", f"c5{letter}rb"])
                load = Load(f"chaos-5{letter}", area, users, ports, self.args.seed, deletes=True)
                keyed = self.retrying(f"5{letter}", area, b.port, ports, other_ports)
                reporter_a = Reporter(load, reporters[0], lambda: a.port, pick=lambda k: k % 2 == 1)
                reporter_b = Reporter(load, reporters[1], lambda: b.port, pick=lambda k: k % 2 == 0)
                seconds = self.seconds / 2
                reporter_a.start()
                reporter_b.start()
                if mode is None:
                    load.start()
                    keyed.start()
                    time.sleep(seconds)
                    load.stop.set()
                    keyed.stop.set()
                    load.finish()
                    keyed.finish()
                else:
                    saved, self.seconds = self.seconds, seconds
                    try:
                        fault_start, fault_end = self.run_load(load, lambda: self.cluster.restart(mode), also=[keyed])
                    finally:
                        self.seconds = saved
                reporter_a.join()
                reporter_b.join()
                hidden |= reporter_a.hidden | reporter_b.hidden
                reports_unknown = {**reporter_a.unknown, **reporter_b.unknown}
                hidden_unknown |= set(reports_unknown)
                expected_all |= set(load.acked.values()) - load.deleted - set(load.delete_unknown)
                keyed_deleted = {w.target for w in keyed.writes if w.kind == "DELETE" and w.outcome == "OK"}
                expected_all |= {w.result_id for w in keyed.writes if w.kind == "POST" and w.outcome == "OK"} - keyed_deleted
                expected = expected_all - hidden - hidden_unknown
                say(f"    {label} phase ({seconds:.0f} s on A and B" + (f", PostgreSQL restarted -m {mode}" if mode else "") + "):")
                check_feeds(self.cluster, result, daemons, area, keyed.ended, label=f"{label} phase: ", expected=expected)
                if mode is not None:
                    fault_figures(result, load, fault_start, fault_end, f"pg_ctl restart -m {mode}")
                check_writes(self.cluster, result, load, label=f"{label} phase: ")
                check_keyed(self.cluster, result, keyed, label=f"{label} phase: ")
                check_watchers(self.cluster, result, watchers, keyed.ended, label=f"{label} phase: ")
                rows = self.cluster.query("SELECT id, hidden FROM pins WHERE " + area.box_sql())
                stored = {row[0] for row in rows}
                stored_hidden = {row[0] for row in rows if row[1] == "t"}
                result.figure(f"{label} phase: DELETE OK {len(load.deleted)}, REPORT OK {len(reporter_a.hidden | reporter_b.hidden)} "
                              f"(hidden in the database: {len(stored_hidden)} in all)")
                not_hidden = hidden - stored_hidden - load.deleted
                if not_hidden:
                    result.fail(f"{label} phase: {len(not_hidden)} pins reported with OK are not hidden: {sample(not_hidden)}")
                # Requests that got no OK: did they change anything? (A failed command should not.)
                for what, outcomes, effect in (("DELETE", load.delete_unknown, lambda pin: pin not in stored),
                                               ("REPORT", reports_unknown, lambda pin: pin in stored_hidden)):
                    if not outcomes:
                        continue
                    took = sorted(pin for pin in outcomes if effect(pin))
                    codes = {}
                    for code in outcomes.values():
                        codes[code] = codes.get(code, 0) + 1
                    result.figure(f"{label} phase: {what}s without OK {len(outcomes)} "
                                  f"({', '.join(f'{c} {n}' for c, n in sorted(codes.items()))}), took effect {len(took)}")
                    errs = [pin for pin in took if outcomes[pin] != "LOST"]
                    if errs:
                        result.note(f"{label} phase: {len(errs)} {what}s answered ERR took effect anyway "
                                    f"(the README says a failed command changes nothing): {sample(errs, 5)}")
        finally:
            stop_watchers(watchers)
            for daemon in daemons:
                self.stop_daemon(result, daemon)
        for daemon in daemons:
            self.log_excerpt(result, daemon)

    # 7 and 8 ------------------------------------------------------------------------------
    def failover_under_load(self, result, number, synchronous):
        """A primary and a streaming standby of their own (StandbyPair), two daemons given both
        nodes in one URL, and under the usual load (Load and retrying clients through both
        daemons, watchers on each) the primary killed outright: SIGKILL to the postmaster and
        every process it started. A failover tool's second later the standby is promoted
        (`pg_ctl promote`). The daemons are not restarted: they must find the new primary.

        7, synchronous (issue 41): nothing acknowledged may be lost. The promoted node inherited
        `synchronous_standby_names` (its own standby is gone), so it is cleared there (ALTER
        SYSTEM RESET, reload) right after the promotion, as the README tells operators. Checks as
        in 1 (against the new primary), both daemons still the same processes, and no daemon
        found its change log rewritten (everything they had read was on the standby).

        8, asynchronous and lagging: at a quarter of the load the standby is cut off (detach),
        so at the crash it lacks the last writes, which the promotion loses. Reported: how far
        behind it was and how many acknowledged writes were lost (not judged). Passes when every
        daemon noticed its change log rewritten (scavenger_change_log_rewrites_total > 0 on its
        /metrics) and reloaded, so that its NEARBY equals the new primary's database; when
        every watcher ends with the database's view (told to read again, with `resumed: false`
        or a SINCE past the log's end, it takes a SNAPSHOT); when writes succeed after the
        failover and no write is doubled or left unanswered (see check_keyed's `lossy`)."""
        area = Area(-10.0 * (number - 6), 10.0 * number)
        first = 2 * (number - 7)
        pair = StandbyPair(self.args, f"standby{number}", self.args.failover_ports[first:first + 2], synchronous)
        lossy = not synchronous
        daemons, watchers = [], []
        try:
            kind = "synchronous" if synchronous else "asynchronous"
            result.figure(f"a primary and its {kind} streaming standby set up in {pair.start():.1f} s")
            for letter in "AB":
                daemons.append(Daemon(self.args, f"s{number}-daemon-{letter}", database_url=pair.url, http=True))
            a, b = daemons
            for daemon in daemons:
                daemon.wait_loaded()
            pids = {daemon.name: daemon.process.pid for daemon in daemons}

            def ports(k):
                return daemons[k % 2].port

            def other_ports(k):
                return daemons[(k + 1) % 2].port

            users = register(a.port, self.names(f"c{number}", self.connections))
            load = Load(f"chaos-{number}", area, users, ports, self.args.seed)
            keyed = self.retrying(str(number), area, b.port, ports, other_ports)
            keyed.relogin = lossy
            watchers = start_watchers(area, [(f"s{number}-A", lambda: a.port), (f"s{number}-B", lambda: b.port)],
                                      self.args.seed, after_failover=lossy, away=True)
            away = [watcher for watcher in watchers if watcher.name.endswith("-away")]
            crash = {}

            def fail_over():
                if lossy:
                    # Since then (or a moment before: the standby streamed asynchronously) the
                    # standby may lack what commits.
                    crash["detached"] = now()
                    pair.detach()
                    time.sleep(max(1.5, self.seconds * 0.15))
                    crash["primary_seq"] = int(pair.primary.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
                # One watcher on each daemon goes away until the load is over (a phone in a
                # tunnel): it comes back with SINCE the seq it had before the crash.
                for watcher in away:
                    watcher.away.set()
                crash["start"] = now()
                crash["killed"] = pair.primary.kill9()
                crash["dead"] = now()
                # As a failover tool would, after noticing: meanwhile the daemons find only a
                # standby (read-only), which target_session_attrs=read-write refuses.
                time.sleep(1.0)
                if lossy:
                    crash["standby_seq"] = int(pair.standby.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
                crash["promote"] = pair.standby.pg_ctl("promote", "-w", "-t", "60")
                if synchronous:
                    crash["inherited"] = pair.standby.query("SHOW synchronous_standby_names")[0][0]
                    pair.standby.query("ALTER SYSTEM RESET synchronous_standby_names")
                    pair.standby.query("SELECT pg_reload_conf()")

            _, fault_end = self.run_load(load, fail_over, fault_at=self.seconds * (0.25 if lossy else 0.4), also=[keyed])
            new = pair.standby
            result.figure(f"killed the primary's {crash['killed']} processes; promoted the standby 1 s later "
                          f"(pg_ctl promote took {crash['promote']:.2f} s)")
            if synchronous:
                result.figure(f"the promoted node had synchronous_standby_names = {crash['inherited']!r}; cleared")
            else:
                behind = crash["primary_seq"] - crash["standby_seq"]
                result.figure(f"the standby was cut off {crash['start'] - crash['detached']:.1f} s before the crash; "
                              f"its change log then ended at {crash['standby_seq']}, the primary's at "
                              f"{crash['primary_seq']} or later ({behind}+ entries behind)")
                if behind <= 0:
                    result.fail("the standby was not behind its primary at the crash: this scenario tested nothing")
            fault_figures(result, load, crash["start"], fault_end, "the failover (kill -9 of the primary, promotion)")
            for daemon in daemons:
                if daemon.process.poll() is not None:
                    result.fail(f"{daemon.name} (pid {pids[daemon.name]}) exited with {daemon.process.returncode}")
            if all(daemon.process.poll() is None for daemon in daemons):
                result.figure(f"both daemons ran on, pids {' and '.join(str(pid) for pid in pids.values())}, never restarted")
            self.bring_back(result, new, area, a, users[0], away, crash.get("standby_seq"))
            check_feeds(new, result, daemons, area, keyed.ended, since_what="the load stopped (on the promoted standby)")
            lost = check_writes(new, result, load, lossy=lossy)
            lost += check_keyed(new, result, keyed, lost_since=crash["detached"] if lossy else None)
            check_watchers(new, result, watchers, keyed.ended, rereads_ok=lossy)
            if lossy:
                # Positions after the standby's log end belong to the lost history (the new
                # primary numbers its changes past them). A `resumed: true` to a watcher's
                # first SINCE answered after the failover (a seq it had before, unless it read
                # everything again first) from there claims a replay the daemon cannot have
                # made: the diagnosis of a watcher that does not end with the database's view
                # (which fails above).
                past = []
                for watcher in watchers:
                    reread = min((t for t in watcher.readies if t > crash["dead"]), default=math.inf)
                    first = next(((sent, since, resumed) for sent, since, resumed in watcher.resumes
                                  if sent > crash["dead"]), None)
                    if first is not None and first[0] < reread and first[1] > crash["standby_seq"] and first[2]:
                        past.append(f"{watcher.name} (SINCE {first[1]})")
                result.figure(f"watchers whose first WATCH … SINCE after the failover, from past the promoted standby's "
                              f"log end ({crash['standby_seq']}), was answered resumed true: {len(past)}"
                              + (f": {', '.join(past)}" if past else ""))
            rewrites = {daemon.name: daemon.metric("scavenger_change_log_rewrites_total") for daemon in daemons}
            result.figure("change log found rewritten (reloads): "
                          + ", ".join(f"{name} {value if value is None else int(value)}" for name, value in rewrites.items()))
            if synchronous:
                for name, value in rewrites.items():
                    if value:
                        result.fail(f"{name} found its change log rewritten after a failover to a synchronous standby")
            else:
                for name, value in rewrites.items():
                    if not value:
                        result.fail(f"{name} did not notice that the promoted standby's change log was rewritten "
                                    f"(scavenger_change_log_rewrites_total {value})")
                acknowledged = len(load.acked) + sum(1 for w in keyed.writes if w.outcome == "OK")
                result.count(f"acknowledged writes lost in the failover: {lost} of {acknowledged} (reported, not judged); "
                             "reloads " + ", ".join(f"{name} {value if value is None else int(value)}"
                                                    for name, value in rewrites.items()))
                if not lost:
                    result.note("no acknowledged write was lost: the standby's lag fell between writes")
                self.started_after_failover(result, number, pair, area, daemons, crash)
        finally:
            stop_watchers(watchers)
            for daemon in daemons:
                self.stop_daemon(result, daemon)
            pair.stop()
        for daemon in daemons:
            self.log_excerpt(result, daemon)

    def started_after_failover(self, result, number, pair, area, daemons, crash):
        """8, once its checks are done (issue 52). A and B are stopped (their URL names the old
        primary's port too), and the old primary, never fenced, is started again: crash recovery
        makes it a primary of its own history (its timeline, the writes the failover lost). A new
        daemon C on the new primary, given the old one as `--read-database-url`, must not load
        from it (same system identifier, another timeline: its log says it loaded from the
        primary, and why) and must hold what the new primary holds; and C, which never saw the
        lost history, must answer `resumed: false` to `WATCH … SINCE` the old primary's log end
        at the cut-off (a position of the lost history), `resumed: true` to SINCE the new log's end."""
        for daemon in daemons:
            self.stop_daemon(result, daemon)
        old, new = pair.primary, pair.standby
        started = now()
        old.start()
        timeline = "('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint"
        old_tli, new_tli = (int(node.query(f"SELECT {timeline}")[0][0]) for node in (old, new))
        old_end = int(old.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
        result.figure(f"the old primary started again in {now() - started:.1f} s, unfenced: timeline {old_tli} "
                      f"(the new primary's {new_tli}), its change log to {old_end}")
        url = f"postgresql://postgres@127.0.0.1:{{}}/{self.args.database}"
        c = Daemon(self.args, f"s{number}-daemon-C", database_url=url.format(new.port), http=True,
                   extra=["--read-database-url", url.format(old.port)])
        daemons.append(c)
        c.wait_loaded()
        c_loaded = now()
        lines = c.stderr().splitlines()
        from_old = [line for line in lines if "loading from the standby" in line]
        passed = [line for line in lines if "loading from the primary" in line and "load=pins" in line]
        if from_old:
            result.fail(f"C loaded from the diverged old primary: {from_old[0][-200:]}")
        if not passed or "timeline" not in passed[0]:
            result.fail("C's log does not say it passed the old primary over for its timeline")
        else:
            reason = passed[0].split("reason=", 1)[-1].split(" [", 1)[0]
            result.figure(f"C passed the old primary over: {reason}")
        check_feeds(new, result, [c], area, c_loaded, since_what="C loaded")
        lost_seq = crash["primary_seq"]
        end = int(new.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
        answers = {}
        for since in (lost_seq, end):
            client = Client(c.port)
            try:
                reply = client.request(f"WATCH {area.lat} {area.lon} 1000 SINCE {since}")
            finally:
                client.close()
            answers[since] = ok_json(reply).get("resumed") if reply.startswith("OK") else reply[:200]
        result.figure(f"C, started after the failover: WATCH … SINCE {lost_seq} (the lost history, past the promoted "
                      f"standby's log end {crash['standby_seq']}) resumed {answers[lost_seq]}; SINCE {end} (the new "
                      f"log's end) resumed {answers[end]}")
        if answers[lost_seq] is not False:
            result.fail(f"C answered WATCH … SINCE {lost_seq}, a position of the lost history, with {answers[lost_seq]!r}, "
                        "not resumed false")
        if answers[end] is not True:
            result.fail(f"C answered WATCH … SINCE {end}, the new log's end, with {answers[end]!r}, not resumed true")

    def bring_back(self, result, cluster, area, daemon, user, away, lost_from=None):
        """Brings the watchers sent away at the crash back (they resume with SINCE the seq they
        had). With `lost_from` (the promoted standby's log end), their seqs lie in the lost
        history: first, POSTs (through `daemon`, outside the watched circle) until the new log
        reaches past them (since db/0033 its first change already does: a new timeline numbers
        its changes past every position the lost one can have used), so that a SINCE from there
        must not be mistaken for a place in the new log."""
        seqs = [watcher.last_seq for watcher in away]
        end = int(cluster.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
        fillers = 0
        if lost_from is not None and seqs and max(seqs) > end:
            client = authed_client(daemon.port, user, deadline=now() + 30)
            if client is None:
                raise RuntimeError("cannot log in to write past the away watchers' seqs")
            try:
                rng = random.Random(f"{self.args.seed}-fillers")
                while end < max(seqs):
                    lat, lon = area.point(rng, 3)
                    fillers += 1
                    self.expect_ok(client, f"POST {lat} {lon} {json.dumps(f'chaos filler #{fillers}')}")
                    if fillers % 20 == 0:
                        end = int(cluster.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
            finally:
                client.close()
        where = (f"past the promoted standby's log end ({lost_from}), positions of the lost history (the new log, "
                 f"numbered past them, ends at {end}{f' after {fillers} more POSTs' if fillers else ''})" if lost_from is not None
                 else f"(the log now ends at {end})")
        result.figure(f"watchers away since the crash come back with SINCE {', '.join(map(str, seqs))} {where}")
        for watcher in away:
            watcher.away.clear()

    def scenario7(self, result):
        self.failover_under_load(result, 7, synchronous=True)

    def scenario8(self, result):
        self.failover_under_load(result, 8, synchronous=False)

    def scenario9(self, result):
        rolling.scenario9(self, result)

    def scenario12(self, result):
        standby_load.scenario12(self, result, sys.modules[__name__])

    def scenario14(self, result):
        log_order.scenario14(self, result, sys.modules[__name__])

    # helpers ------------------------------------------------------------------------------
    def sabotage(self, result, load):
        """Checks the checks (--sabotage): behind the daemon's back, deletes one acknowledged
        pin, stores another one's text again under a new id, and hides a third without a change
        log entry (so no daemon hears of it); the scenario must then FAIL on all three."""
        acked = sorted(load.acked.values())
        lost, copied, hidden = acked[0], acked[1], acked[2]
        fresh = "p" + "".join(random.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(24))
        self.cluster.query(f"DELETE FROM pins WHERE id = '{lost}'")
        self.cluster.query(
            "INSERT INTO pins (id, author_id, lat, lon, kind, body, created_at, expires_at, cell, region) "
            f"SELECT '{fresh}', author_id, lat, lon, kind, body, created_at, expires_at, cell, region FROM pins WHERE id = '{copied}'")
        self.cluster.query(
            f"SET session_replication_role = replica; UPDATE pins SET hidden = true WHERE id = '{hidden}'")
        result.note(f"sabotage: deleted {lost}, copied {copied} as {fresh}, hid {hidden} silently; this scenario must FAIL")

    def sabotage_keyed(self, result, clients):
        """Checks the retrying clients' checks (--sabotage): behind the daemon's back, deletes
        one keyed POST answered OK, stores another one's text again under a new id, and changes
        the reply stored under a third one's key, then sends that POST again: lost and doubled
        must be 1, and that key answered with two different lines."""
        posts = sorted((w for w in clients.writes if w.kind == "POST" and w.outcome == "OK" and " side " not in w.text),
                       key=lambda w: w.result_id)
        lost, copied, changed = posts[0].result_id, posts[1].result_id, posts[2]
        fresh = new_pin_id()
        self.cluster.query(f"DELETE FROM pins WHERE id = '{lost}'")
        self.cluster.query(f"INSERT INTO pins (id, {PIN_COLUMNS}) SELECT '{fresh}', {PIN_COLUMNS} FROM pins WHERE id = '{copied}'")
        self.cluster.query(f"UPDATE request_keys SET result = replace(result, 'chaos-', 'CHAOS-') WHERE key = '{changed.key}'")
        clients.repeat(*changed.owner, changed)
        result.note(f"sabotage: deleted keyed {lost}, copied keyed {copied} as {fresh}, changed the reply stored "
                    f"under {changed.key}; this scenario must FAIL")

    def sabotage_watchers(self, result, watchers):
        """Checks the watchers' checks (--sabotage): writes a pin into their circle without a
        change-log entry (a copy of one there, under a new id and text), so no daemon hears of
        it; every watcher must then miss it."""
        first = watchers[0]
        inside = sorted(circle_visible(self.cluster, first.lat, first.lon, first.radius_m))
        silent = new_pin_id()
        self.cluster.query(
            "SET session_replication_role = replica; "
            f"INSERT INTO pins (id, {PIN_COLUMNS}) SELECT '{silent}', "
            f"{PIN_COLUMNS.replace('body', quote('chaos sabotage: unannounced'))} FROM pins WHERE id = '{inside[0]}'")
        result.note(f"sabotage: wrote {silent} into the watched circle silently; this scenario must FAIL")

    def expect_ok(self, client, line):
        reply = client.request(line)
        if not reply.startswith("OK"):
            raise RuntimeError(f"{line.split()[0]} answered {reply}")
        return reply

    def stop_daemon(self, result, daemon):
        if daemon.process.poll() is not None:
            return
        started = now()
        if not daemon.terminate(15):
            result.note(f"{daemon.name} did not stop within 15 s of SIGTERM; killed")
        elif now() - started > 5:
            result.note(f"{daemon.name} took {now() - started:.1f} s to stop on SIGTERM")

    def log_excerpt(self, result, daemon):
        """Warnings and errors from the daemon's log, counted, the first of each kind shown."""
        if daemon is None:
            return
        kinds = {}
        for line in daemon.stderr().splitlines():
            for level in ("warning", "error", "critical"):
                if f" {level} " in line:
                    message = line.split(" : ", 1)[-1]
                    key = (level, " ".join(word for word in message.split() if "=" not in word)[:80])
                    kinds.setdefault(key, [0, line])[0] += 1
        for (level, _), (count, line) in sorted(kinds.items()):
            say(f"    {daemon.name} log: {count} × {line[:300]}")

    def run(self, numbers):
        titles = {
            1: "restart PostgreSQL (-m fast) under POST load",
            2: "restart PostgreSQL (-m immediate) under POST load",
            3: "kill -9 the daemon under POST load, start a new one",
            4: "start a daemon while PostgreSQL is down",
            5: "two daemons on one database (POST, DELETE, REPORT; a PostgreSQL restart)",
            6: "a synchronous standby that does not answer: a commit whose wait is cancelled is not OK",
            7: "kill -9 the primary under load, promote its synchronous standby: nothing acknowledged lost",
            8: "kill -9 the primary under load, promote its lagging asynchronous standby: daemons reload",
            9: "a rolling restart of two daemons behind HAProxy under load: nothing failed, lost or doubled",
            12: "a new daemon loads its pins and rankings from a standby while the primary takes writes",
            14: "writes on two daemons under a standby that waits, one killed before numbering: the log in order, complete",
        }
        results = []
        titles.update(autofailover.TITLES)
        for number in numbers:
            result = Result(number, titles[number])
            say(f"==> scenario {number}: {titles[number]}")
            started = now()
            try:
                getattr(self, f"scenario{number}")(result)
            except Exception as error:  # noqa: BLE001 - a scenario that breaks is a failure
                result.fail(f"the scenario broke: {error}")
                traceback.print_exc(file=sys.stdout)
                if not self.cluster.running():
                    try:
                        self.cluster.start()
                    except Exception as again:  # noqa: BLE001
                        say(f"    cannot start PostgreSQL again: {again}")
            result.figure(f"{now() - started:.0f} s")
            results.append(result)
            say(result.line())
        return results

    def scenario10(self, result):
        autofailover.scenario10(self, result)

    def scenario11(self, result):
        autofailover.scenario11(self, result)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scavengerd", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--pg-bin", required=True)
    parser.add_argument("--pg-data", required=True)
    parser.add_argument("--pg-log", required=True)
    parser.add_argument("--pg-socket", required=True)
    parser.add_argument("--pg-port", required=True, type=int)
    parser.add_argument("--pg-opts", required=True, help="the -o options pg_ctl start needs")
    parser.add_argument("--pg-user", default="", help="run pg_ctl as this OS user (when root)")
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of load per scenario")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--scenarios", default="1,2,3,4,5,6,7,8")
    parser.add_argument("--pair-root", help="where scenarios 7 and 8 put their primary and standby (a directory "
                        "the --pg-user can reach; chaos.sh stops what runs there on exit)")
    parser.add_argument("--failover-ports", default="",
                        help="four free TCP ports, comma-separated: scenario 7's primary and standby, then 8's")
    parser.add_argument("--standby-pins", type=int, default=200_000,
                        help="pins scenario 12's new daemon loads from the standby (the issue's million: 1000000)")
    parser.add_argument("--keep", action="store_true", help="leave scenarios 7 and 8's data directories")
    parser.add_argument("--seed", default="42")
    parser.add_argument("--sabotage", action="store_true",
                        help="corrupt the database behind the daemons' back in scenarios 1 and 2: they must FAIL")
    args = parser.parse_args()
    numbers = [int(n) for n in args.scenarios.split(",") if n]
    if any(n not in (*range(1, 13), 14) for n in numbers):
        parser.error("--scenarios takes numbers 1 to 12 and 14")
    args.failover_ports = [int(port) for port in args.failover_ports.split(",") if port]
    if any(n in (7, 8, 12, 14) for n in numbers) and (len(args.failover_ports) != 4 or not args.pair_root):
        parser.error("scenarios 7, 8, 12 and 14 need --pair-root and four --failover-ports")

    def terminated(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminated)
    try:
        results = Chaos(args).run(numbers)
    finally:
        Daemon.kill_all()
        autofailover.stop_all()
    say("")
    say("==> chaos summary")
    for result in results:
        say(result.line())
    counted = [(result, text) for result in results for text in result.counts]
    if counted:
        say("")
        say("==> retrying clients and resumed watchers (lost, doubled, missing must be 0)")
        for result, text in counted:
            say(f"{'PASS' if result.passed else 'FAIL'} {result.number}: {text}")
    with open(os.path.join(args.run_dir, "results.txt"), "w") as file:
        for result in results:
            file.write(result.line() + "\n")
    return 0 if all(result.passed for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
