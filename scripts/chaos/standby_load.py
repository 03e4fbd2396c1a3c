"""Scenario 12 of scripts/chaos.sh (issue 41, item 4): a new daemon loads its pins and rankings
from a standby (`serve --read-database-url`) while the primary takes writes. Python 3 standard
library only; driver.py imports it and calls scenario12 with itself.

A primary and an asynchronous streaming standby of their own (driver.StandbyPair); --standby-pins
pins (200,000 by default; the issue's million with --standby-pins 1000000) written straight into
the primary, far from the scenario's area; daemon A on the primary (its start fills the pins' grid
cells), then the usual load (POSTs, DELETEs, REPORTs) through A, and while it runs daemon B starts
with `--read-database-url` naming the standby alone, the standby's replay held for 2 s as it does.
B must read its place in the log on the primary, wait until the standby has replayed that far, read
the pages of pins and the users' totals there, and follow the primary's log from that place, so
that nothing written meanwhile is missed or doubled. With --sabotage the replay is held for 15 s,
past B's wait (10 s): B loads from the primary, and the scenario must FAIL.

Judged: B's log says it loaded the pins and the rankings from the standby; the standby served
those reads (its rows returned grew by at least the pins); B's feed holds every live pin (its
`scavenger_feed_pins` gauge equals the database's live pins once the load has stopped) and both
daemons' NEARBY equal the database in the load's area; every acknowledged write is stored once.
Reported: how long B took to load and how far the standby trailed.
"""

import threading
import time

# The bulk pins: around (40°, 5°), well away from every scenario's area (driver.Area), spread
# over a few degrees so that no NEARBY of the checks reads them.
BULK_CENTRE = (40.0, 5.0)
# Seconds the standby's replay is held as B starts: within B's wait for it (10 s).
PAUSE = 2
# With --sabotage: past it.
SABOTAGE_PAUSE = 15


def write_bulk_pins(cluster, count, author_id):
    """`count` live text pins written by SQL into the primary, grid cells left to the daemon.
    Ids are 'p' and 24 characters of the ids' alphabet (md5 hex, 0 1 8 9 mapped to w x y z)."""
    lat, lon = BULK_CENTRE
    cluster.query(
        "INSERT INTO pins (id, author_id, lat, lon, kind, body, expires_at) "
        "SELECT 'p' || substr(translate(md5(g::text) || md5((g + 7)::text), '0189', 'wxyz'), 1, 24), "
        f"{author_id}, {lat} + (g % 1000) * 0.002, {lon} + (g / 1000 % 1000) * 0.002, 'text', "
        "'bulk ' || g, now() + interval '2 days' "
        f"FROM generate_series(1, {count}) AS g")


def rows_returned(cluster):
    """The standby's rows returned for the chaos database so far (pg_stat_database)."""
    rows = cluster.query(
        "SELECT tup_returned FROM pg_stat_database WHERE datname = current_database()")
    return int(rows[0][0])


def scenario12(chaos, result, driver):
    """Runs scenario 12 for driver.py's Chaos `chaos`, recording on `result`."""
    args = chaos.args
    area = driver.Area(-75.0, 150.0)
    pair = driver.StandbyPair(args, "standby12", args.failover_ports[0:2], synchronous=False)
    daemons = []
    try:
        result.figure(f"a primary and its asynchronous streaming standby set up in {pair.start():.1f} s")
        primary_url = f"postgresql://postgres@127.0.0.1:{pair.primary.port}/{args.database}"
        standby_url = f"postgresql://postgres@127.0.0.1:{pair.standby.port}/{args.database}"
        author = driver.new_pin_id()[:12]
        pair.primary.query(
            "INSERT INTO users (name, email, password_hash) "
            f"VALUES ('{author}', '{author}@example.org', '$argon2id$bulk')")
        author_id = int(pair.primary.query(f"SELECT id FROM users WHERE name = '{author}'")[0][0])
        started = driver.now()
        write_bulk_pins(pair.primary, args.standby_pins, author_id)
        result.figure(f"{args.standby_pins} pins written into the primary in {driver.now() - started:.1f} s")

        a = driver.Daemon(args, "s12-daemon-A", database_url=primary_url, http=True)
        daemons.append(a)
        result.figure(f"daemon A (on the primary) loaded and filled the cells in {a.wait_loaded(within=900):.1f} s")
        users = driver.register(a.port, chaos.names("c12", chaos.connections))
        load = driver.Load("chaos-12", area, users, lambda k: a.port, args.seed)
        before = rows_returned(pair.standby)
        loading = {}

        def start_b():
            # The standby's replay is held for PAUSE seconds as B starts, so B's load finds it
            # behind the place it read on the primary and must wait for it (with --sabotage, held
            # past B's wait: B must then load from the primary, and the scenario FAIL).
            pause = SABOTAGE_PAUSE if args.sabotage else PAUSE
            pair.standby.query("SELECT pg_wal_replay_pause()")
            threading.Timer(pause, lambda: pair.standby.query("SELECT pg_wal_replay_resume()")).start()
            loading["paused"] = pause
            b = driver.Daemon(args, "s12-daemon-B", database_url=primary_url, http=True,
                              extra=["--read-database-url", standby_url])
            daemons.append(b)
            loading["seconds"] = b.wait_loaded(within=900)

        chaos.run_load(load, start_b, fault_at=chaos.seconds * 0.2)
        b = daemons[1]
        result.figure(f"daemon B started with the standby's replay held for {loading['paused']} s and loaded in "
                      f"{loading['seconds']:.1f} s while A took writes")
        if args.sabotage:
            result.note("sabotage: the standby's replay held past B's wait; this scenario must FAIL")
        lines = b.stderr().splitlines()
        for what in ("pins", "rankings"):
            if not any("loading from the standby" in line and f"load={what}" in line for line in lines):
                result.fail(f"B's log does not say it loaded the {what} from the standby")
        if any("loading from the primary" in line for line in lines):
            result.fail("B passed the standby over and loaded from the primary")
        served = rows_returned(pair.standby) - before
        result.figure(f"the standby returned {served} rows meanwhile")
        if served < args.standby_pins:
            result.fail(f"the standby returned {served} rows, fewer than the {args.standby_pins} pins B loaded")
        # Once the load has stopped, B's feed holds every live pin of the database (hidden ones
        # included, as the index does), the million loaded from the standby and what came since.
        deadline = driver.now() + 10
        while True:
            live = int(pair.primary.query("SELECT count(*) FROM pins WHERE expires_at > now()")[0][0])
            held = b.metric("scavenger_feed_pins")
            if (held is not None and int(held) == live) or driver.now() > deadline:
                break
            time.sleep(0.2)
        result.figure(f"B's feed holds {held} pins, the database {live} live ones")
        if held is None or int(held) != live:
            result.fail(f"B's feed holds {held} pins but the database has {live} live ones")
        driver.check_feeds(pair.primary, result, daemons, area, load.ended)
        driver.check_writes(pair.primary, result, load)
    finally:
        for daemon in daemons:
            chaos.stop_daemon(result, daemon)
        pair.stop()
