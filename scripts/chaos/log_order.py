"""Scenario 14 of scripts/chaos.sh (issue 54): writes that commit side by side under a standby that
waits, and the change log's order and completeness. Python 3 standard library only; driver.py
imports it and calls scenario14 with itself.

A primary and a synchronous streaming standby of their own (driver.StandbyPair) that applies each
commit 2 ms late (`recovery_min_apply_delay = 2ms`, the primary's `synchronous_commit =
remote_apply`: every commit waits for it, as a standby a zone away makes it). Two daemons take the
usual load (POSTs, REPLYs, DELETEs, REPORTs, keyed retrying clients, watchers on each). Beside
them a reader of the driver's own follows the feed log as the daemons do, with no lock: each read
is `seq > last ORDER BY seq`, and each must go on exactly from the last position (positions are
dense: a numbering gives out max(seq) + 1 onwards, and only an epoch, a failover, jumps).

At 40 % of the load daemon B is frozen (SIGSTOP): what it has sent the database still commits, but
it can number none of it (writers number nothing themselves; a daemon numbers after its commits).
The rows then committed and not numbered are counted, B is killed (SIGKILL, never numbering them)
and a new B started; A must number them by itself (its listener catches up every second while
idle), which is timed.

Judged, after the load: every row of both logs numbered (none with a null position), positions
dense apart from epoch starts, no position twice; each pin's changes numbered in the order they
were written (ids, given at insert, follow the pin's row lock, so a pin's later change has the
higher id: its position must be higher too); the driver's reader never saw a hole, a repeat or a
position out of order, and read what the log holds; the usual checks (feeds, writes, keyed writes,
watchers) against the primary.
"""

import os
import signal
import threading
import time


class LogReader(threading.Thread):
    """Follows feed_changes as a daemon does (no lock), every `interval` seconds: each page must
    start right after the last position read (or at an epoch's first position)."""

    def __init__(self, cluster, interval=0.02):
        super().__init__(daemon=True)
        self.cluster, self.interval = cluster, interval
        self.last = 0
        self.read = 0
        self.reads = 0
        self.problems = []
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            try:
                rows = self.cluster.query(
                    f"SELECT seq, (SELECT count(*) FROM feed_changes_epochs e WHERE e.first_seq = f.seq) "
                    f"FROM feed_changes f WHERE seq > {self.last} ORDER BY seq LIMIT 5000")
            except Exception as error:  # noqa: BLE001 (a failed read is retried; the checks judge)
                self.problems.append(f"read failed: {error}")
                time.sleep(0.2)
                continue
            self.reads += 1
            for seq, epoch_start in rows:
                seq = int(seq)
                if seq != self.last + 1 and not (int(epoch_start) and seq > self.last) and self.last > 0:
                    self.problems.append(f"after position {self.last} the next read was {seq}")
                self.last = seq
                self.read += 1
            self.stopped.wait(self.interval)

    def stop(self):
        self.stopped.set()
        self.join(10)


def unnumbered_ids(cluster):
    """The rows of the two logs committed and not yet numbered, as (log, id) pairs."""
    rows = cluster.query("SELECT 'feed', id FROM feed_changes WHERE seq IS NULL "
                         "UNION ALL SELECT 'hunts', id FROM hunt_changes WHERE seq IS NULL")
    return {(log, int(id)) for log, id in rows}


def check_log(cluster, result, table, subject=None):
    """Numbered, dense, unique, and (with `subject`: rows of one subject are changes of one row,
    written under its row lock) each subject's changes in their written order."""
    rows = cluster.query(f"""
        SELECT (SELECT count(*) FROM {table} WHERE seq IS NULL),
               (SELECT count(*) FROM {table}),
               (SELECT count(*) FROM (SELECT seq, lag(seq) OVER (ORDER BY seq) AS before FROM {table}
                                      WHERE seq IS NOT NULL) x
                WHERE x.before IS NOT NULL AND x.seq <> x.before + 1
                  AND NOT EXISTS (SELECT 1 FROM {table}_epochs e WHERE e.first_seq = x.seq)),
               (SELECT count(*) - count(DISTINCT seq) FROM {table} WHERE seq IS NOT NULL),
               {f"(SELECT count(*) FROM (SELECT seq, lag(seq) OVER (PARTITION BY {subject} ORDER BY id) AS before "
                f"FROM {table}) x WHERE x.before > x.seq)" if subject else "0"}""")
    missing, total, holes, twice, reordered = (int(value) for value in rows[0])
    result.figure(f"{table}: {total} rows; not numbered {missing}, holes {holes}, positions twice {twice}"
                  + (f", changes of one {subject} out of their written order {reordered}" if subject else ""))
    if missing or holes or twice or reordered:
        result.fail(f"{table} is not numbered in order and complete (not numbered {missing}, holes {holes}, "
                    f"twice {twice}, reordered {reordered})")


def scenario14(chaos, result, driver):
    """Runs scenario 14 for driver.py's Chaos `chaos`, recording on `result`."""
    args = chaos.args
    area = driver.Area(-60.0, -120.0)
    pair = driver.StandbyPair(args, "standby14", args.failover_ports[0:2], synchronous=True)
    daemons = []
    watchers = []
    reader = None
    try:
        result.figure(f"a primary and its synchronous streaming standby set up in {pair.start():.1f} s")
        pair.standby.query("ALTER SYSTEM SET recovery_min_apply_delay = '2ms'")
        pair.standby.query("SELECT pg_reload_conf()")
        pair.primary.query("ALTER SYSTEM SET synchronous_commit = remote_apply")
        pair.primary.query("SELECT pg_reload_conf()")
        result.figure("the standby applies each commit 2 ms late; the primary's commits wait for it (remote_apply)")
        for letter in "AB":
            daemons.append(driver.Daemon(args, f"s14-daemon-{letter}", database_url=pair.url, http=True))
        for daemon in daemons:
            daemon.wait_loaded()
        a = daemons[0]
        current = {"B": daemons[1]}

        def ports(k):
            return a.port if k % 2 == 0 else current["B"].port

        def other_ports(k):
            return current["B"].port if k % 2 == 0 else a.port

        users = driver.register(a.port, chaos.names("c14", chaos.connections))
        load = driver.Load("chaos-14", area, users, ports, args.seed)
        keyed = chaos.retrying("14", area, a.port, ports, other_ports)
        watchers = driver.start_watchers(area, [("s14-A", lambda: a.port), ("s14-B", lambda: current["B"].port)],
                                         args.seed)
        reader = LogReader(pair.primary)
        reader.start()
        fault = {}

        def freeze_and_kill_b():
            b = current["B"]
            os.kill(b.process.pid, signal.SIGSTOP)
            # What B sent commits meanwhile; B, frozen, numbers none of it. (A goes on writing:
            # the rows followed are those not numbered once B is dead, by their ids.)
            time.sleep(0.3)
            fault["killed"] = driver.now()
            b.kill9()
            left = unnumbered_ids(pair.primary)
            fault["left"] = len(left)
            deadline = driver.now() + 15
            while left and driver.now() < deadline:
                time.sleep(0.05)
                left &= unnumbered_ids(pair.primary)
            fault["numbered_after"] = driver.now() - fault["killed"]
            fault["still"] = len(left)
            replacement = driver.Daemon(args, "s14-daemon-B2", database_url=pair.url, http=True)
            replacement.wait_loaded()
            daemons.append(replacement)
            current["B"] = replacement

        fault_start, fault_end = chaos.run_load(load, freeze_and_kill_b, fault_at=chaos.seconds * 0.4, also=[keyed])
        driver.fault_figures(result, load, fault_start, fault_end, "daemon B frozen, killed with its commits not numbered")
        result.figure(f"rows committed and not numbered when B was killed: {fault['left']}; "
                      f"numbered by the others {fault['numbered_after']:.2f} s later")
        if fault["still"]:
            result.fail(f"{fault['still']} rows were still not numbered 15 s after B was killed")
        if not fault["left"]:
            result.note("no row was left unnumbered at the kill this time (the load fell between numberings)")
        live = [daemon for daemon in daemons if daemon.process.poll() is None]
        driver.check_feeds(pair.primary, result, live, area, keyed.ended)
        driver.check_writes(pair.primary, result, load)
        driver.check_keyed(pair.primary, result, keyed)
        driver.check_watchers(pair.primary, result, watchers, keyed.ended)
        reader.stop()
        # The reader read everything the log holds, and never a hole, a repeat or a reversal.
        final = int(pair.primary.query("SELECT coalesce(max(seq), 0) FROM feed_changes")[0][0])
        while reader.last < final:
            rows = pair.primary.query(f"SELECT seq FROM feed_changes WHERE seq > {reader.last} ORDER BY seq LIMIT 5000")
            for (seq,) in rows:
                if int(seq) != reader.last + 1:
                    reader.problems.append(f"after position {reader.last} the next read was {seq}")
                reader.last = int(seq)
                reader.read += 1
        result.figure(f"the log's reader read {reader.read} positions in {reader.reads} reads without a lock, "
                      f"problems {len(reader.problems)}")
        for problem in reader.problems[:5]:
            result.fail(f"the log's reader: {problem}")
        check_log(pair.primary, result, "feed_changes", "subject")
        # A hunt's rows are changes of several rows (players, teams): only numbered, dense, unique.
        check_log(pair.primary, result, "hunt_changes")
        rewrites = {daemon.name: daemon.metric("scavenger_change_log_rewrites_total") for daemon in live}
        for name, value in rewrites.items():
            if value:
                result.fail(f"{name} found its change log rewritten, with no failover")
    finally:
        if reader is not None:
            reader.stop()
        driver.stop_watchers(watchers)
        for daemon in daemons:
            if daemon.process.poll() is None:
                chaos.stop_daemon(result, daemon)
        pair.stop()
    for daemon in daemons:
        chaos.log_excerpt(result, daemon)
