"""Scenarios 10 and 11 of scripts/chaos.sh (issue 41, "any one machine can die"): a failover that
pg_auto_failover decides and carries out by itself. Python 3 standard library only.

A formation of its own (Formation), beside chaos.sh's cluster, which it leaves alone: a
pg_auto_failover monitor and two data nodes, each created by `pg_autoctl create …` and run by
`pg_autoctl run` as the PostgreSQL owner, each in its own directory under
`<--pair-root>/autofailover/` and on its own free port; their sockets in chaos.sh's socket
directory. The monitor's defaults make the second node a synchronous standby of the first
(number_sync_standbys 0 and replication-quorum true give `synchronous_standby_names =
'ANY 1 (pgautofailover_standby_2)'`). Its health checks are made faster (MONITOR_SETTINGS, with
the nodes' network_partition_timeout kept below the monitor's primary_demote_timeout, as the
defaults keep 20 s below 30 s), so a failover takes seconds, not a minute.

10: two daemons on the URL of both data nodes; under the usual load (Load, RetryingClients,
    watchers with a third one away on each daemon) the primary's machine dies: its pg_autoctl
    processes and its PostgreSQL (the postmaster and every process it started) are killed with
    SIGKILL, and the monitor is left to promote the standby by itself. Then the checks of
    scenario 7 against the node the monitor now calls primary.
11: the node that died is brought back (`pg_autoctl run`, the daemons up, before the load):
    the monitor has it rewound (pg_rewind; pg_auto_failover copies it again with pg_basebackup
    when that fails) and it rejoins as a synchronous standby; once the monitor reports it
    secondary, under load, `pg_autoctl perform switchover` makes it primary again. The same
    checks. After 10 it goes on with 10's formation; alone (or after a 10 that did not see the
    promotion), it first builds a formation and has it fail over without load. Debian
    bookworm's pg_auto_failover 2.0 can lose acknowledged writes in that switchover (a race of
    its monitor, seen once in eight runs here on a busy machine): 11 then fails, as it must,
    and names the monitor event that did it (report_rejoin).

Every keeper runs in a process group of its own, whose id is in `<name>.pgid` beside the data
directories: chaos.sh's clean-up kills those groups (and stops any PostgreSQL left in a
data directory there) when the driver could not; Formation.stop and stop_all do it otherwise.

The other scenarios' tools come from driver.py (imported as `driver`: driver.py makes itself
that module before importing this one).
"""

import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import driver

# The monitor's settings (ALTER SYSTEM, then a reload; all are reloadable), and why: the
# defaults (health checks every 5 s, 5 s connect timeout, 2 retries 2 s apart, a node unhealthy
# after 20 s without a report, 30 s for a primary to drain before its standby is promoted) make
# a failover take close to a minute.
MONITOR_SETTINGS = {
    "pgautofailover.health_check_period": "1000",          # ms between health checks (5000)
    "pgautofailover.health_check_timeout": "1000",         # ms, the check's connect timeout (5000)
    "pgautofailover.health_check_max_retries": "1",        # (2)
    "pgautofailover.health_check_retry_delay": "500",      # ms (2000)
    "pgautofailover.node_considered_unhealthy_timeout": "4000",  # ms without a report (20000)
    "pgautofailover.primary_demote_timeout": "6000",       # ms for the primary to drain (30000)
}
# The data nodes' keeper setting: a primary that can reach neither the monitor nor a standby for
# this long stops its PostgreSQL (demotes itself). It must stay below primary_demote_timeout, so
# that a primary cut off by a partition has stopped before its standby is promoted (20 s < 30 s
# by default; here 3 s < 6 s).
NETWORK_PARTITION_TIMEOUT = "3"
# Guards, not measures: how long a step may take before the scenario fails.
CREATE_GUARD = 300.0
STATE_GUARD = 180.0
FORMATION_DIR = "autofailover"

# Every Formation started and not yet stopped (the driver stops them on its way out).
live = []
# How many formations this run made: each one's logs go to <run dir>/autofailover-<n>/.
made = []


def now():
    return time.monotonic()


def free_ports(count, avoid):
    """`count` free loopback TCP ports outside the kernel's ephemeral range and `avoid` (chaos.sh
    picks its ports the same way: a client polling a closed port in that range can end up
    connected to itself)."""
    lo, hi = 32768, 60999
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as file:
            lo, hi = (int(word) for word in file.read().split())
    except (OSError, ValueError):
        pass
    base = 25000 + (os.getpid() * 7919) % 4000
    found = []
    for port in range(base, base + 4000):
        if lo <= port <= hi or port in avoid or port in found:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        found.append(port)
        if len(found) == count:
            return found
    raise RuntimeError(f"no {count} free TCP ports from {base} outside the ephemeral range {lo}-{hi}")


def alive(pid):
    """Whether the process runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def group_members(pgid):
    """The live processes of a process group."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


class Formation:
    """A pg_auto_failover monitor and two data nodes, node_a (created first: the primary) and
    node_b (its standby), under `<--pair-root>/autofailover/`: monitor/, node_a/, node_b/ (the
    data directories), xdg/ (pg_autoctl's configuration, state and pid files: XDG_CONFIG_HOME,
    XDG_DATA_HOME, XDG_RUNTIME_DIR), <name>.log (each pg_autoctl's output), <name>.pgid. Their
    logs and PostgreSQL's are copied to <run dir>/autofailover-<n>/ when it stops."""

    NODES = ("node_a", "node_b")

    def __init__(self, args):
        self.args = args
        self.root = os.path.join(args.pair_root, FORMATION_DIR)
        ports = free_ports(3, {args.pg_port, *args.failover_ports})
        self.ports = dict(zip(("monitor", *self.NODES), ports))
        self.monitor = driver.Cluster(args, data=os.path.join(self.root, "monitor"), port=self.ports["monitor"],
                                      socket=args.pg_socket, log=os.path.join(self.root, "monitor.log"),
                                      opts="-", database="pg_auto_failover")
        self.nodes = {name: driver.Cluster(args, data=os.path.join(self.root, name), port=self.ports[name],
                                           socket=args.pg_socket, log=os.path.join(self.root, f"{name}.log"), opts="-")
                      for name in self.NODES}
        self.monitor_uri = f"postgres://autoctl_node@127.0.0.1:{self.ports['monitor']}/pg_auto_failover?sslmode=disable"
        self.url = (f"postgresql://postgres@127.0.0.1:{self.ports['node_a']},127.0.0.1:{self.ports['node_b']}"
                    f"/{args.database}")
        self.keepers = {}     # name -> Popen of its `pg_autoctl create … --run` or `pg_autoctl run`
        self.pg_autoctl = shutil.which("pg_autoctl") or "/usr/bin/pg_autoctl"
        self.pg_ctl = os.path.join(args.pg_bin, "pg_ctl")
        xdg = os.path.join(self.root, "xdg")
        self.env = {
            "PATH": f"{args.pg_bin}:/usr/bin:/bin",
            "HOME": self.root,
            "XDG_CONFIG_HOME": os.path.join(xdg, "config"),
            "XDG_DATA_HOME": os.path.join(xdg, "share"),
            "XDG_RUNTIME_DIR": os.path.join(xdg, "run"),
            # pg_autoctl connects to its PostgreSQL there, and starts it with `-k` there.
            "PGHOST": args.pg_socket,
            "PG_REGRESS_SOCK_DIR": args.pg_socket,
            # initdb's encoding: UTF8, as chaos.sh's cluster (C collation).
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
        }
        made.append(self)
        self.serial = len(made)
        self.failed_over = None   # (dead node, promoted node) once the monitor promoted a standby
        self.stopped = False

    # processes ----------------------------------------------------------------------------
    def owner(self):
        user = self.args.pg_user or None
        return {"user": user, "group": user, "extra_groups": [] if user else None}

    def command(self, *words, timeout=CREATE_GUARD, check=True):
        """A pg_autoctl command that ends (create, config set, perform, show), as the owner; its
        output goes to commands.log too. Returns the CompletedProcess."""
        line = [self.pg_autoctl, *words]
        started = now()
        result = subprocess.run(line, cwd=self.root, env=self.env, stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=timeout, **self.owner())
        with open(os.path.join(self.root, "commands.log"), "a") as log:
            log.write(f"$ {' '.join(line)}  # exit {result.returncode} after {now() - started:.1f} s\n"
                      f"{result.stdout}{result.stderr}\n")
        if check and result.returncode != 0:
            tail = " | ".join((result.stderr or result.stdout).strip().splitlines()[-6:])
            raise RuntimeError(f"pg_autoctl {' '.join(words[:2])} failed (exit {result.returncode}): {tail}")
        return result

    def spawn(self, name, *words):
        """Starts a pg_autoctl that keeps running (`run`, or `create … --run`) for `name`, in a
        process group of its own, whose id goes to <name>.pgid for chaos.sh's clean-up."""
        log = open(os.path.join(self.root, f"{name}.log"), "ab")
        try:
            process = subprocess.Popen([self.pg_autoctl, *words], cwd=self.root, env=self.env,
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True, **self.owner())
        finally:
            log.close()
        with open(os.path.join(self.root, f"{name}.pgid"), "w") as file:
            file.write(f"{process.pid}\n")
        self.keepers[name] = process
        return process

    def kill_group(self, name, sig=signal.SIGKILL, within=10.0):
        """Sends `sig` to the keeper's whole process group (SIGKILL), or to the keeper alone (any
        other: SIGINT has it stop its services, PostgreSQL among them, fast), unless None; waits
        up to `within` seconds until no process of the group is left, and then removes its
        .pgid file."""
        process = self.keepers.get(name)
        if process is None:
            return
        try:
            if sig == signal.SIGKILL:
                os.killpg(process.pid, sig)
            elif sig is not None:
                os.kill(process.pid, sig)
        except ProcessLookupError:
            pass
        deadline = now() + within
        while group_members(process.pid) and now() < deadline:
            time.sleep(0.05)
        if group_members(process.pid):
            if sig == signal.SIGKILL:
                raise RuntimeError(f"{name}'s pg_autoctl processes {group_members(process.pid)} outlived SIGKILL")
            return
        process.wait()
        del self.keepers[name]
        try:
            os.remove(os.path.join(self.root, f"{name}.pgid"))
        except FileNotFoundError:
            pass

    # the monitor's view -----------------------------------------------------------------------
    def states(self):
        """{node name: (reported state, goal state, reported LSN, health)}; {} while the monitor
        does not answer."""
        try:
            rows = self.monitor.query("SELECT nodename, reportedstate, goalstate, reportedlsn, health "
                                      "FROM pgautofailover.node ORDER BY nodeid")
        except RuntimeError:
            return {}
        return {row[0]: tuple(row[1:]) for row in rows}

    def wait_states(self, wanted, what, guard=STATE_GUARD):
        """Waits until every node named in `wanted` reports (reported and goal state) one of the
        states given for it; returns the seconds waited. RuntimeError after `guard` seconds."""
        started = now()
        while True:
            states = self.states()
            if all(name in states and states[name][0] in choices and states[name][1] in choices
                   for name, choices in wanted.items()):
                return now() - started
            if now() - started > guard:
                raise RuntimeError(f"{what}: not reached after {guard:.0f} s; the monitor says {states}")
            time.sleep(0.1)

    def primary(self):
        """The Cluster of the node the monitor reports primary (or wait_primary: promoted, no
        standby yet), and its name."""
        for name, (reported, goal, _, _) in self.states().items():
            if reported in ("primary", "wait_primary") and goal == reported:
                return name, self.nodes[name]
        raise RuntimeError(f"the monitor reports no primary: {self.states()}")

    def events(self, since=None):
        """The monitor's events (time, node, reported → goal state, description) as lines."""
        where = f"WHERE eventtime >= {driver.quote(since)}::timestamptz" if since else ""
        try:
            rows = self.monitor.query(
                "SELECT to_char(eventtime, 'HH24:MI:SS.MS'), nodename, reportedstate, goalstate, description "
                f"FROM pgautofailover.event {where} ORDER BY eventid")
        except RuntimeError as error:
            return [f"(no events: {error})"]
        return [f"{t} {node}: {reported} -> {goal}: {description}" for t, node, reported, goal, description in rows]

    def monitor_clock(self):
        return self.monitor.query("SELECT now()::text")[0][0]

    # life ---------------------------------------------------------------------------------
    def start(self, result):
        """Creates and runs the monitor and both nodes, the `chaos` database migrated on node_a,
        and waits until node_a is primary and node_b its secondary. Returns the seconds taken."""
        started = now()
        args = self.args
        extension = os.path.join("/usr/share/postgresql", os.path.basename(os.path.dirname(args.pg_bin)),
                                 "extension", "pgautofailover.control")
        if not os.path.exists(self.pg_autoctl) or not os.path.exists(extension):
            raise RuntimeError(f"pg_auto_failover is not installed ({self.pg_autoctl}, {extension}): Debian packages "
                               "postgresql-15-auto-failover and pg-auto-failover-cli (scripts/lib.sh installs them)")
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        for directory in (self.root, self.env["XDG_CONFIG_HOME"], self.env["XDG_DATA_HOME"], self.env["XDG_RUNTIME_DIR"]):
            os.makedirs(directory, mode=0o700)
            if args.pg_user:
                shutil.chown(directory, args.pg_user, args.pg_user)
        live.append(self)
        common = ["--pgctl", self.pg_ctl, "--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--auth", "trust", "--no-ssl"]
        self.command("create", "monitor", "--pgdata", self.monitor.data, "--pgport", str(self.ports["monitor"]), *common)
        self.spawn("monitor", "run", "--pgdata", self.monitor.data)
        deadline = now() + CREATE_GUARD
        while True:
            try:
                self.monitor.query("SELECT count(*) FROM pgautofailover.formation")
                break
            except RuntimeError as error:
                if now() > deadline or self.keepers["monitor"].poll() is not None:
                    raise RuntimeError(f"the monitor does not answer: {error}") from error
                time.sleep(0.1)
        for name, value in MONITOR_SETTINGS.items():
            self.monitor.query(f"ALTER SYSTEM SET {name} = {value}")
        self.monitor.query("SELECT pg_reload_conf()")
        for name in self.NODES:
            node = self.nodes[name]
            self.command("create", "postgres", "--pgdata", node.data, "--pgport", str(node.port), "--name", name,
                         "--dbname", args.database, "--monitor", self.monitor_uri, *common)
            self.command("config", "set", "--pgdata", node.data, "timeout.network_partition_timeout",
                         NETWORK_PARTITION_TIMEOUT)
            self.spawn(name, "run", "--pgdata", node.data)
            if name == "node_a":
                self.wait_states({"node_a": ("single",)}, "node_a single")
                # Its keeper (re)starts its PostgreSQL once running: migrate once that answers.
                deadline = now() + CREATE_GUARD
                while True:
                    migrate = subprocess.run([args.scavengerd, "migrate", "--database-url", self.url],
                                             stdin=subprocess.DEVNULL, capture_output=True, text=True)
                    if migrate.returncode == 0:
                        break
                    if "unavailable" not in migrate.stderr or now() > deadline:
                        raise RuntimeError(f"scavengerd migrate on node_a failed: {migrate.stderr.strip()[-500:]}")
                    time.sleep(0.2)
        self.wait_states({"node_a": ("primary",), "node_b": ("secondary",)}, "node_a primary, node_b secondary")
        names = self.nodes["node_a"].query("SHOW synchronous_standby_names")[0][0]
        replication = self.nodes["node_a"].query("SELECT application_name, state, sync_state FROM pg_stat_replication",
                                                 database="postgres")
        result.figure(f"pg_auto_failover formation up in {now() - started:.1f} s: monitor :{self.ports['monitor']}, "
                      f"node_a :{self.ports['node_a']} primary, node_b :{self.ports['node_b']} secondary; node_a has "
                      f"synchronous_standby_names = {names!r}, replication {replication}")
        if not names or not any(row[1] == "streaming" and row[2] in ("sync", "quorum") for row in replication):
            raise RuntimeError("node_b is not a synchronous standby of node_a: this scenario would test nothing")
        return now() - started

    def crash(self, name):
        """The machine of node `name` dies: its pg_autoctl processes (their process group, which
        holds the postmaster too) are stopped (SIGSTOP) so that none restarts or reports
        anything, its PostgreSQL killed (driver.Cluster.kill9: SIGKILL to the postmaster and every
        process it started, each a process group of its own), then the pg_autoctl processes
        killed too. Returns the number of PostgreSQL processes killed."""
        process = self.keepers[name]
        os.killpg(process.pid, signal.SIGSTOP)
        killed = self.nodes[name].kill9()
        self.kill_group(name, signal.SIGKILL)
        return killed

    def stop(self):
        """Stops every pg_autoctl (SIGINT, all at once: each stops its PostgreSQL; SIGKILL to
        the groups left after 30 s) and any PostgreSQL left, copies the logs to the run
        directory and removes the directories (not with --keep)."""
        if self.stopped:
            return
        self.stopped = True
        for process in self.keepers.values():
            try:
                os.kill(process.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        deadline = now() + 30
        for name in list(self.keepers):
            try:
                self.kill_group(name, None, within=max(0.0, deadline - now()))
                self.kill_group(name, signal.SIGKILL)
            except Exception as error:  # noqa: BLE001 - go on with the others
                driver.say(f"    cannot stop {name}'s pg_autoctl: {error}")
        for name, cluster in [("monitor", self.monitor), *self.nodes.items()]:
            if cluster.postmaster_alive():
                try:
                    cluster.pg_ctl("stop", "-w", "-t", "30", "-m", "immediate")
                except RuntimeError as error:
                    driver.say(f"    cannot stop {name}'s PostgreSQL: {error}")
        self.copy_logs()
        if self in live:
            live.remove(self)
        if not self.args.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def copy_logs(self):
        target = os.path.join(self.args.run_dir, f"autofailover-{self.serial}")
        os.makedirs(target, exist_ok=True)
        for name in ("monitor", *self.NODES, "commands"):
            path = os.path.join(self.root, f"{name}.log")
            if os.path.exists(path):
                shutil.copyfile(path, os.path.join(target, f"{name}-pg_autoctl.log"))
        for name, cluster in [("monitor", self.monitor), *self.nodes.items()]:
            logs = os.path.join(cluster.data, "log")
            for file in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
                shutil.copyfile(os.path.join(logs, file), os.path.join(target, f"{name}-{file}"))
            startup = os.path.join(cluster.data, "startup.log")
            if os.path.exists(startup):
                shutil.copyfile(startup, os.path.join(target, f"{name}-startup.log"))


def stop_all():
    for formation in list(live):
        formation.stop()


# ---------------------------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------------------------

TITLES = {
    10: "kill -9 the primary's machine under load, pg_auto_failover promotes its synchronous standby",
    11: "the dead primary rewound and back as a standby (pg_auto_failover), then a switchover under load",
}


def runs_after(chaos, first, then):
    """Whether scenario `then` runs after `first` in this run."""
    numbers = [int(n) for n in chaos.args.scenarios.split(",") if n]
    return first in numbers and then in numbers[numbers.index(first) + 1:]


def fail_over(formation, result, crash):
    """Kills node_a's machine (Formation.crash) and waits until the monitor reports node_b
    promoted (wait_primary: a primary without a standby, which commits alone), recording when
    each step came in `crash` (monotonic times) and the monitor's events in the result."""
    crash["clock"] = formation.monitor_clock()
    crash["start"] = now()
    crash["killed"] = formation.crash("node_a")
    crash["dead"] = now()
    # Goal states the monitor assigns node_b on the way: prepare_promotion, stop_replication,
    # wait_primary (reported once done).
    first_move = None
    deadline = now() + STATE_GUARD
    while True:
        states = formation.states()
        b = states.get("node_b")
        if b and first_move is None and b[1] != "secondary":
            first_move = now()
        if b and b[0] == b[1] and b[0] in ("wait_primary", "primary"):
            break
        if now() > deadline:
            raise RuntimeError(f"the monitor did not promote node_b within {STATE_GUARD:.0f} s: {states}")
        time.sleep(0.05)
    crash["promoted"] = now()
    crash["noticed"] = first_move
    crash["in_recovery"] = formation.nodes["node_b"].query("SELECT pg_is_in_recovery()")[0][0]
    formation.failed_over = ("node_a", "node_b")


def report_failover(result, formation, crash):
    result.figure(f"killed node_a's machine (its pg_autoctl and {crash['killed']} PostgreSQL processes); the monitor "
                  f"moved node_b on {crash['noticed'] - crash['dead']:.1f} s later and reported it promoted "
                  f"(wait_primary) {crash['promoted'] - crash['dead']:.1f} s after the kill; node_b in recovery "
                  f"then: {crash['in_recovery']}")
    if crash["in_recovery"] != "f":
        result.fail("node_b reported wait_primary but is still in recovery")
    for line in formation.events(crash["clock"]):
        driver.say(f"    monitor event: {line}")


def under_load(chaos, result, number, formation, fault, what, before=None):
    """Scenario 7's frame on the formation: two daemons given both data nodes in one URL, the
    load through both (Load, retrying clients sending each key again through the other daemon),
    two watchers on each and a third on each away from the fault to the load's end; `fault(info)`
    at 40 % of the load (it puts monotonic times in `info`, "figures_from" where the fault
    figures count from, and "report", what reports it). `before(info)`, if given, runs once the
    daemons are up, before the load. Then, against the node the monitor reports primary: the
    feeds, the writes, the keyed writes, the watchers; the daemons still the same processes,
    none having found its change log rewritten."""
    args = chaos.args
    area = driver.Area(-10.0 * (number - 6), 10.0 * number)
    daemons, watchers = [], []
    info = {}
    try:
        for letter in "AB":
            daemons.append(driver.Daemon(args, f"s{number}-daemon-{letter}", database_url=formation.url, http=True))
        a, b = daemons
        for daemon in daemons:
            daemon.wait_loaded()
        pids = {daemon.name: daemon.process.pid for daemon in daemons}
        if before is not None:
            before(info)

        def ports(k):
            return daemons[k % 2].port

        def other_ports(k):
            return daemons[(k + 1) % 2].port

        users = driver.register(a.port, chaos.names(f"c{number}", chaos.connections))
        load = driver.Load(f"chaos-{number}", area, users, ports, args.seed)
        keyed = chaos.retrying(str(number), area, b.port, ports, other_ports)
        watchers = driver.start_watchers(area, [(f"s{number}-A", lambda: a.port), (f"s{number}-B", lambda: b.port)],
                                         args.seed, away=True)
        away = [watcher for watcher in watchers if watcher.name.endswith("-away")]

        def fault_with_watchers_away():
            # One watcher on each daemon goes away until the load is over (a phone in a
            # tunnel): it comes back with SINCE the seq it had before the fault.
            for watcher in away:
                watcher.away.set()
            fault(info)

        _, fault_end = chaos.run_load(load, fault_with_watchers_away, also=[keyed])
        primary_name, primary = formation.primary()
        info["report"]()
        driver.fault_figures(result, load, info["figures_from"], fault_end, what)
        for daemon in daemons:
            if daemon.process.poll() is not None:
                result.fail(f"{daemon.name} (pid {pids[daemon.name]}) exited with {daemon.process.returncode}")
        if all(daemon.process.poll() is None for daemon in daemons):
            result.figure(f"both daemons ran on, pids {' and '.join(str(pid) for pid in pids.values())}, never restarted")
        result.figure(f"checked against {primary_name}, the monitor's primary: {formation.states()}")
        chaos.bring_back(result, primary, area, a, users[0], away)
        driver.check_feeds(primary, result, daemons, area, keyed.ended,
                           since_what=f"the load stopped (on {primary_name})")
        driver.check_writes(primary, result, load)
        driver.check_keyed(primary, result, keyed)
        driver.check_watchers(primary, result, watchers, keyed.ended)
        rewrites = {daemon.name: daemon.metric("scavenger_change_log_rewrites_total") for daemon in daemons}
        result.figure("change log found rewritten (reloads): "
                      + ", ".join(f"{name} {value if value is None else int(value)}" for name, value in rewrites.items()))
        for name, value in rewrites.items():
            if value:
                result.fail(f"{name} found its change log rewritten after a failover to a synchronous standby")
    finally:
        driver.stop_watchers(watchers)
        for daemon in daemons:
            chaos.stop_daemon(result, daemon)
    for daemon in daemons:
        chaos.log_excerpt(result, daemon)


def scenario10(chaos, result):
    formation = Formation(chaos.args)
    keep = False
    try:
        formation.start(result)

        def fault(info):
            crash = {}
            info["crash"] = crash
            try:
                fail_over(formation, result, crash)
            finally:
                info["figures_from"] = crash.get("start", now())
                info["report"] = lambda: report_failover(result, formation, crash) if "promoted" in crash else None

        under_load(chaos, result, 10, formation, fault, "the failover (kill -9 of node_a's machine, the monitor's promotion)")
        keep = formation.failed_over is not None and runs_after(chaos, 10, 11)
    finally:
        if keep:
            chaos.autofailover = formation
            result.note("the formation stays for scenario 11 (node_a down, node_b primary)")
        else:
            formation.stop()


def scenario11(chaos, result):
    formation = getattr(chaos, "autofailover", None)
    chaos.autofailover = None
    try:
        if formation is None or formation.failed_over != ("node_a", "node_b") or formation.stopped:
            if formation is not None:
                formation.stop()
            formation = Formation(chaos.args)
            formation.start(result)
            crash = {}
            fail_over(formation, result, crash)
            result.figure(f"without load, node_a's machine killed and node_b promoted by the monitor "
                          f"{crash['promoted'] - crash['dead']:.1f} s later (scenario 10 did not leave its formation)")
        else:
            result.figure("scenario 10's formation: node_a down since its crash, node_b primary")

        steps = {}

        def rejoin(info):
            # The old primary's machine is back: its keeper is started again (the daemons are
            # up, the load not yet: pg_auto_failover may take a minute or more when its
            # pg_rewind fails and it copies the node again), and the monitor has it rewound and
            # following node_b. Meanwhile, what node_a answers when asked whether it is in
            # recovery (a primary would say f).
            info["report"] = lambda: report_rejoin(result, formation, steps)
            steps["clock"] = formation.monitor_clock()
            steps["run"] = now()
            watching = threading.Event()
            answers = steps["answers"] = {}
            watch = threading.Thread(target=ask_recovery, args=(formation.nodes["node_a"], watching, answers), daemon=True)
            watch.start()
            try:
                formation.spawn("node_a", "run", "--pgdata", formation.nodes["node_a"].data)
                formation.wait_states({"node_a": ("secondary",), "node_b": ("primary",)},
                                      "node_a back as node_b's secondary")
            finally:
                watching.set()
                watch.join()
            steps["secondary"] = now()
            steps["standby_names"] = formation.nodes["node_b"].query("SHOW synchronous_standby_names")[0][0]
            steps["replication"] = formation.nodes["node_b"].query(
                "SELECT application_name, state, sync_state FROM pg_stat_replication", database="postgres")
            steps["port_files"] = port_settings(formation.nodes["node_a"])

        def switchover(info):
            # Then, under load, the switchover back to node_a.
            info["figures_from"] = steps["switch"] = now()
            steps["switch_clock"] = formation.monitor_clock()
            perform = formation.command("perform", "switchover", "--pgdata", formation.monitor.data,
                                        "--formation", "default", "--group", "0", timeout=STATE_GUARD, check=False)
            steps["perform"] = (perform.returncode, now() - steps["switch"],
                                " | ".join((perform.stderr or perform.stdout).strip().splitlines()[-3:]))
            formation.wait_states({"node_a": ("primary",), "node_b": ("secondary",)},
                                  "node_a primary again, node_b its secondary")
            steps["switched"] = now()

        under_load(chaos, result, 11, formation, switchover, "the switchover (pg_autoctl perform switchover)",
                   before=rejoin)
    finally:
        formation.stop()


def ask_recovery(node, done, answers):
    """Until `done`, asks `node` every 0.2 s whether it is in recovery; counts the answers (t,
    f, or "no answer") in `answers`."""
    while not done.is_set():
        try:
            answer = node.query("SELECT pg_is_in_recovery()", database="postgres")[0][0]
        except RuntimeError:
            answer = "no answer"
        answers[answer] = answers.get(answer, 0) + 1
        done.wait(0.2)


def port_settings(node):
    """What the rewound node's configuration files say its port is, and the port it runs on:
    pg_rewind copies the source's configuration files (postgresql.conf's includes among them)."""
    found = []
    for file in ("postgresql.conf", "postgresql-auto-failover.conf", "postgresql.auto.conf"):
        path = os.path.join(node.data, file)
        try:
            with open(path) as text:
                for line in text:
                    if line.split("#", 1)[0].strip().replace(" ", "").startswith("port="):
                        found.append(f"{file}: {line.strip()}")
        except OSError:
            continue
    running = node.query("SHOW port")[0][0]
    return found, running


def report_rejoin(result, formation, steps):
    if "secondary" not in steps:
        return
    result.figure(f"node_a's pg_autoctl started again: the monitor reported it secondary (node_b primary) "
                  f"{steps['secondary'] - steps['run']:.1f} s later; node_b then had synchronous_standby_names = "
                  f"{steps['standby_names']!r}, replication {steps['replication']}")
    log_path = os.path.join(formation.root, "node_a.log")
    with open(log_path, errors="replace") as file:
        log = file.read()
    # pg_autoctl logs the commands it runs and pg_rewind's output (often a line "pg_rewind:",
    # then the message on a line of its own).
    phrases = ("servers diverged at WAL location", "rewinding from last common checkpoint", "no rewind required",
               "Done!", "single-user mode in target cluster failed", "Failed to run pg_rewind")
    rewind = [line[line.index(phrase):].strip() for line in log.splitlines() for phrase in phrases if phrase in line]
    rewind += [line.split("FATAL:", 1)[1].strip() for line in log.splitlines() if "FATAL:" in line][:1]
    rebuilt = any("/pg_basebackup " in line for line in log.splitlines())
    result.figure("node_a's keeper log: " + (f"pg_rewind said {'; '.join(rewind)}" if rewind else "no pg_rewind")
                  + ("; a pg_basebackup ran (the rewind failed)" if rebuilt else "")
                  + "; asked every 0.2 s meanwhile whether it was in recovery, node_a answered "
                  + ", ".join(f"{answer} {n}" for answer, n in sorted(steps["answers"].items())))
    if steps["answers"].get("f"):
        result.note("node_a ran as a primary (not in recovery) for a while during its rejoin")
    found, running = steps["port_files"]
    result.figure(f"node_a rewound runs on port {running} (its own: {formation.ports['node_a']}); its configuration "
                  f"files say {'; '.join(found) if found else 'no port'} (node_b's is {formation.ports['node_b']})")
    if running != str(formation.ports["node_a"]):
        result.fail(f"node_a came back on port {running}, not its own {formation.ports['node_a']}")
    if "switched" in steps:
        code, took, said = steps["perform"]
        result.figure(f"pg_autoctl perform switchover exited {code} after {took:.1f} s ({said}); node_a primary again "
                      f"{steps['switched'] - steps['switch']:.1f} s after it began")
    for line in formation.events(steps["clock"]):
        driver.say(f"    monitor event: {line}")
    # A race of pg_auto_failover 2.0's monitor seen here (under a busy machine): one second
    # after the switchover gave node_b the goal draining, a node_active call of node_b's keeper
    # overwrote it with wait_primary ("none of the standby nodes in the quorum are healthy", as
    # node_a was no longer a secondary). node_b then turned synchronous replication off and took
    # writes alone while node_a was promoted, until the demote timeout; what it acknowledged
    # meanwhile was rewound away. Upstream's fixes after 2.2 (the stale node in node_active,
    # wait_primary given draining) are not in Debian's 2.0.
    if "switch_clock" in steps:
        raced = [line for line in formation.events(steps["switch_clock"])
                 if "node_b: primary -> wait_primary" in line and "in the quorum are healthy" in line]
        if raced:
            result.note("pg_auto_failover's monitor gave node_b wait_primary during the switchover (its goal draining "
                        "overwritten): node_b took writes without a synchronous standby while node_a was promoted, "
                        f"and lost them when rewound (the monitor's event at {raced[0].split(' ', 1)[0]})")
