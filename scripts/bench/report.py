#!/usr/bin/env python3
"""Turns a bench run's raw measurements into the Markdown results table (scripts/bench.sh).

Usage: report.py RUN_DIR             (reads RUN_DIR/raw.txt and RUN_DIR/meta.txt, prints Markdown)
       report.py --summary RUN_DIR   (issue 31's targets, and issue 38's and issue 51's crowd targets
                                      when the run has a crowd, issue 55's when it has maps, one line
                                      each, for the console)

raw.txt: one loadgen line per run (key=value ...), label=r<round> (dense data), rsparse<round>
(the sparse data), rhunts<round> (the hunts: POST and CHECKIN, LEADERBOARD) or rranking<round> (the
rankings: RANKING, RANKING AROUND and PROFILE against Redis) or rcrowd<what>1 (the crowd's POSTs, each labelled as
the crowd.py run beside it); crowd.txt (if there): one line per crowd run of scripts/bench/crowd.py (phase=mixed,
teams, checkin and teamcheckin per connection count, keyed=1|0; phase=join); meta.txt: key=value lines
(machine, versions, start-up times, RSS, the expiry sweep's figures, ...); map.txt (if there, `--only map`,
issue 55): one line per MAP run (map_zoom=Z and its loadgen line) and per thumbnail run (thumbs=1, wrk's figures
with the server's CPU); sweep.txt (if there):
the two NEARBY runs of the expiry sweep, label=baseline and label=during; ranking-checkins.txt (if
there): the background CHECKIN of each ranking run, label=ranking<round>-<server>-<op>. Every figure quoted for a set of rounds is the
median of that figure over the rounds (each metric on its own); the per-round throughputs are
listed too so the spread is visible.

The report opens with issue 31's targets, each met, MISSED or not measured (and why); the sections
below it mark the same verdicts, computed once (issue31_targets).
"""

import statistics
import sys
from collections import Counter, defaultdict

TARGET_NAMES = {"redis": "Redis GEOSEARCH", "scav": "scavengerd NEARBY", "pg": "PostGIS ST_DWithin"}
PING_NAMES = {"redis": "Redis", "scav": "scavengerd (one I/O thread per core, its default)",
              "scav1": "scavengerd `--io-threads 1`"}
# The SwiftNIO floor servers (scripts/bench/nio-floor) are targets floor<threads> in raw.txt.
FLOOR = "floor"


def floor_threads(target):
    """The thread count of a floor target ("floor2" → 2), or None for any other target."""
    return int(target[len(FLOOR):]) if target.startswith(FLOOR) and target[len(FLOOR):].isdigit() else None


def threads_text(threads):
    return f"{threads} thread{'' if threads == 1 else 's'}"


def parse_kv(line):
    out = {}
    for part in line.split():
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def load(run_dir):
    runs = []
    with open(f"{run_dir}/raw.txt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                runs.append(parse_kv(line))
    meta = {}
    with open(f"{run_dir}/meta.txt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    sweep = {}
    try:
        with open(f"{run_dir}/sweep.txt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    r = parse_kv(line)
                    sweep[r.get("label", "?")] = r
    except FileNotFoundError:
        pass
    crowd = []
    try:
        with open(f"{run_dir}/crowd.txt", encoding="utf-8") as f:
            crowd = [parse_kv(line) for line in f if line.strip()]
    except FileNotFoundError:
        pass
    return runs, meta, sweep, crowd


def load_maps(run_dir):
    """map.txt's lines (`--only map`), or none."""
    try:
        with open(f"{run_dir}/map.txt", encoding="utf-8") as f:
            return [parse_kv(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def med(values):
    return statistics.median(values) if values else float("nan")


def fnum(x, digits=0):
    if x != x:  # nan
        return "–"
    return f"{x:,.{digits}f}"


def ratio(a, b):
    return a / b if b and b == b and a == a else float("nan")


MET, MISSED = "met", "MISSED"
# Issue 31's NEARBY connection counts: throughput at each (≥ 0.9× Redis's at 1, ≥ 1.0× at the
# others), server CPU per request at each, p99 at 8 and 32.
NEARBY_LEVELS = (1, 8, 32)
P99_LEVELS = (8, 32)
FULL_PINS = 1_000_000


def at_most(x, limit):
    """x ≤ limit as the report prints them (two decimals), so a figure never reads 1.15× MISSED."""
    return round(x, 2) <= round(limit, 2) + 1e-9


def conns_text(c):
    return f"{c} conn{'' if c == 1 else 's'}"


def short_label(key, nproc):
    """A target's name in a few words, for the console summary."""
    if key in ("ping-1", "ping-n"):
        return f"PING CPU/req ÷ the floor's, {threads_text(1 if key == 'ping-1' else nproc)}: ≤ 1.15×"
    if isinstance(key, tuple):
        what, dataset, c = key
        if what == "tput":
            return f"NEARBY req/s ÷ Redis, {dataset}, {conns_text(c)}: ≥ {0.9 if c == 1 else 1.0:.1f}×"
        if what == "cpu":
            return f"NEARBY CPU/req ÷ Redis, {dataset}, {conns_text(c)}: ≤ " + (
                "1.15×" if dataset == "dense" else "floor's + 0.15")
        return f"NEARBY p99 ÷ Redis, {dataset}, {conns_text(c)}: ≤ 1.0×"
    return {"post": "POST ÷ INSERT, 8 conns: ≥ 0.75×", "fanout-p99": "fan-out delivery p99: < 50 ms",
            "fanout-mem": "fan-out memory per idle watching conn: ≤ 16 KB",
            "fanout-cpu": "fan-out CPU per delivered event: stated", "start": "start-up with 1M pins: ≤ 5 s",
            "rss": "RSS after start: ≤ 250 MB per million pins"}.get(key, str(key))


def issue31_targets(meta, agg, groups):
    """Issue 31's targets, in the report's order: a list of dicts with key, target, figure and
    verdict (met, MISSED, or why there is none). Every section that marks one of them takes its
    verdict from here, so the report never gives two verdicts for one thing."""
    only = meta.get("only", "")
    nproc = int(fmeta(meta, "nproc")) if fmeta(meta, "nproc") == fmeta(meta, "nproc") else 0
    rows = []

    def add(key, target, figure, verdict, brief=None):
        rows.append({"key": key, "target": target, "figure": figure, "verdict": verdict,
                     "short": short_label(key, nproc), "brief": brief or figure.split(" (")[0]})

    def none(reason):
        return f"not measured ({reason})"

    def why_not(step, what=""):
        """Why a step's figure is missing: an --only run, or the step did not run."""
        if only and only != step:
            return none(f"`--only {only}`")
        return none(what or "not in this run")

    # PING: scavengerd's server CPU per request against the floor's with as many threads.
    floor_n = agg(f"{FLOOR}{nproc}", "ping", 8)
    redis_ping = agg("redis", "ping", 8)
    for key, scav, threads, label in (("ping-1", "scav1", 1, "with one thread (`--io-threads 1`)"),
                                      ("ping-n", "scav", nproc, f"with one per core ({nproc})")):
        target = f"`PING`: server CPU per request ≤ 1.15× the SwiftNIO floor's, {label}, 8 conns"
        s_, f_ = agg(scav, "ping", 8), agg(f"{FLOOR}{threads}", "ping", 8)
        if s_["n"] and f_["n"]:
            r = ratio(s_["cpu_us"], f_["cpu_us"])
            add(key, target, f"{fnum(r, 2)}× ({fnum(s_['cpu_us'], 1)} ÷ {fnum(f_['cpu_us'], 1)} µs; "
                f"{min(s_['n'], f_['n'])} round(s))", MET if at_most(r, 1.15) else MISSED)
        elif s_["n"] or f_["n"] or any(o == "ping" and d == "dense" for (d, t, o, c) in groups):
            add(key, target, "–", none("no `--io-threads 1` run: an older bench.sh" if scav == "scav1"
                                       else "no floor or scavengerd `PING` with these threads in this run"))
        else:
            add(key, target, "–", why_not("", "no `PING` step in this run"))

    # NEARBY against Redis, both data sets.
    floor_share = ratio(floor_n["cpu_us"], redis_ping["cpu_us"]) if floor_n["n"] and redis_ping["n"] else float("nan")
    kinds = []
    for dataset in ("dense", "sparse"):
        measured = any(d == dataset and o == "nearby" for (d, t, o, c) in groups)
        if measured:
            missing = None
        elif only:
            missing = none(f"`--only {only}`")
        elif dataset == "sparse":
            missing = none("no sparse set in this run" + (": `--sparse-pins 0`" if meta.get("sparse_pins") == "0" else ""))
        else:
            missing = none("no `NEARBY` runs in this run")
        kinds.append((dataset, measured, missing))
    for what in ("tput", "cpu", "p99"):
        for dataset, measured, missing in kinds:
            for c in (P99_LEVELS if what == "p99" else NEARBY_LEVELS):
                key = (what, dataset, c)
                if what == "tput":
                    need = 0.9 if c == 1 else 1.0
                    target = f"`NEARBY` throughput ≥ {need:.1f}× Redis's, {dataset}, {conns_text(c)}"
                elif what == "cpu" and dataset == "dense":
                    target = f"`NEARBY` server CPU per request ≤ 1.15× Redis's, dense, {conns_text(c)}"
                elif what == "cpu":
                    target = (f"`NEARBY` server CPU per request ÷ Redis's ≤ the floor's ÷ Redis's (`PING`, {nproc} "
                              f"threads) + 0.15, sparse, {conns_text(c)}")
                else:
                    target = f"`NEARBY` p99 ≤ Redis's, {dataset}, {conns_text(c)}"
                s_, r_ = agg("scav", "nearby", c, dataset), agg("redis", "nearby", c, dataset)
                if missing:
                    add(key, target, "–", missing)
                    continue
                if not s_["n"] or not r_["n"]:
                    add(key, target, "–", none(f"no run at {conns_text(c)}: `--conns {meta.get('conns', '?')}`"))
                    continue
                if what == "tput":
                    r = ratio(s_["rps"], r_["rps"])
                    add(key, target, f"{fnum(r, 2)}× ({fnum(s_['rps'])} against {fnum(r_['rps'])}/s)",
                        MET if round(r, 2) >= need else MISSED)
                elif what == "cpu":
                    r = ratio(s_["cpu_us"], r_["cpu_us"])
                    figure = f"{fnum(r, 2)}× ({fnum(s_['cpu_us'], 1)} against {fnum(r_['cpu_us'], 1)} µs)"
                    if dataset == "dense":
                        add(key, target, figure, MET if at_most(r, 1.15) else MISSED)
                    elif floor_share == floor_share:
                        limit = floor_share + 0.15
                        add(key, target, f"{figure}; limit {fnum(limit, 2)}× (the floor {fnum(floor_share, 2)}× + 0.15)",
                            MET if at_most(r, limit) else MISSED, brief=f"{fnum(r, 2)}× (limit {fnum(limit, 2)}×)")
                    else:
                        add(key, target, figure, none("no floor or Redis `PING` in this run"))
                else:
                    r = ratio(s_["p99"], r_["p99"])
                    add(key, target, f"{fnum(r, 2)}× ({fnum(s_['p99'], 1)} against {fnum(r_['p99'], 1)} µs)",
                        MET if at_most(r, 1.0) else MISSED)

    # Durable POST against PostgreSQL's own INSERT.
    target = "durable `POST` ≥ 0.75× single-row `INSERT`, 8 conns"
    post, insert = agg("scav", "post", 8), agg("pg", "insert", 8)
    if post["n"] and insert["n"]:
        r = ratio(post["rps"], insert["rps"])
        add("post", target, f"{fnum(r, 2)}× ({fnum(post['rps'])} against {fnum(insert['rps'])}/s; "
            f"{min(post['n'], insert['n'])} round(s))", MET if round(r, 2) >= 0.75 else MISSED)
    else:
        add("post", target, "–", why_not("", "no write rounds in this run"))

    # Live fan-out.
    fo_targets = (("fanout-p99", "live fan-out: delivery p99 < 50 ms"),
                  ("fanout-mem", "live fan-out: memory per idle watching connection ≤ 16 KB"),
                  ("fanout-cpu", "live fan-out: CPU per delivered event, stated"))
    if "fanout_line" in meta:
        r = parse_kv(meta["fanout_line"])
        g = lambda k: float(r.get(k, "nan"))  # noqa: E731
        watchers, rate = int(g("watchers")), g("rate")
        at = f"{watchers:,} watchers, {fnum(rate)} pins/s" + ("" if watchers == 10000 and rate == 200 else
                                                            "; the issue's: 10,000 at 200")
        lost = g("missing") + g("stray") + g("duplicates") + g("overflows")
        bad = (f"; **{fnum(g('missing'))} missing, {fnum(g('stray'))} stray, {fnum(g('duplicates'))} twice, "
               f"{fnum(g('overflows'))} overflows**" if lost else "")
        p99, kb = g("p99_ms"), g("watch_conn_bytes") / 1024
        few = "" if watchers == 10000 else f" ({watchers:,} watchers)"
        add("fanout-p99", fo_targets[0][1], f"{fnum(p99, 2)} ms ({at}){bad}", MET if p99 < 50 else MISSED,
            brief=f"{fnum(p99, 2)} ms{few}" + (" (events lost: see the report)" if lost else ""))
        add("fanout-mem", fo_targets[1][1], f"{fnum(kb, 1)} KB ({at})", MET if round(kb, 1) <= 16 else MISSED,
            brief=f"{fnum(kb, 1)} KB{few}")
        add("fanout-cpu", fo_targets[2][1], f"{fnum(g('cpu_us_per_event'), 1)} µs of the daemon's CPU per event, "
            f"the POSTs' own included ({at})", "stated (no target)", brief=f"{fnum(g('cpu_us_per_event'), 1)} µs{few}")
    else:
        for key, target in fo_targets:
            add(key, target, "–", why_not("fanout", "no fan-out step in this run"))

    # Start-up and memory with a million pins.
    pins = int(fmeta(meta, "pins")) if "pins" in meta else 0
    for key, meta_key, target in (("start", "start_s", "start-up with 1,000,000 pins ≤ 5 s (exec → `PING` and `NEARBY` answered)"),
                                  ("rss", "rss_start_mb", "RSS after start ≤ 250 MB per million pins")):
        v = fmeta(meta, meta_key)
        if only or not pins or v != v:
            add(key, target, "–", why_not("", "no pins loaded in this run") if only else none("not in this run"))
        elif key == "start":
            if pins >= FULL_PINS:
                add(key, target, f"{v:.2f} s with {pins:,} pins", MET if v <= 5 else MISSED)
            else:
                add(key, target, f"{v:.2f} s with {pins:,} pins",
                    f"n/a at {pins:,} pins (the target is for 1,000,000; start-up grows with the pins)")
        else:
            per = v / (pins / 1e6)
            if pins >= FULL_PINS:
                add(key, target, f"{fnum(per, 1)} MB per million ({fnum(v, 1)} MB with {pins:,} pins)",
                    MET if round(per, 1) <= 250 else MISSED)
            else:
                add(key, target, f"{fnum(v, 1)} MB with {pins:,} pins ({fnum(per)} MB per million if all of it grew "
                    "with the pins)", (MET + " (even counting all of it as the pins')") if per <= 250 else
                    f"n/a at {pins:,} pins (the daemon's fixed memory dominates; the target is for 1,000,000)")
    return rows


def targets_section(w, meta, rows):
    """The report's first section: issue 31's targets as one table."""
    w("## Targets (issue 31)")
    w("")
    w("| target | figure | verdict |")
    w("| --- | --- | --- |")
    for r in rows:
        v = r["verdict"]
        w(f"| {r['target']} | {r['figure']} | {'**' + v + '**' if v == MISSED else v} |")
    w("")
    notes = []
    if not meta.get("only"):
        pins, secs, rounds = fmeta(meta, "pins"), fmeta(meta, "seconds"), fmeta(meta, "rounds")
        if pins != FULL_PINS or secs < 10 or rounds < 3:
            notes.append(f"This run: {fnum(pins)} pins, {fnum(rounds)} round(s) of {secs:g} s"
                         + (" (`--quick`)" if meta.get("quick") == "1" else "")
                         + "; the issue's figures are for a full run (1,000,000 pins and the sparse 200,000, "
                           "3 rounds of 10 s), so these are indicative.")
    notes.append("Medians of the rounds; each ratio is scavengerd's ÷ the peer's in the same run. Server CPU per "
                 "request: the server's CPU time over the window ÷ the requests answered (scavengerd's includes its "
                 "PostgreSQL backends).")
    w(" ".join(notes))
    w("")


def summary(meta, rows):
    """Issue 31's targets one line each, for the end of bench.sh's console output."""
    count = defaultdict(int)
    lines = []
    skipped = defaultdict(int)
    width = max(len(r["short"]) for r in rows)
    for r in rows:
        v = r["verdict"]
        if v in (MET, MISSED):
            tag, note = v, ""
        elif v.startswith(MET):
            tag, note = MET, v[len(MET):].strip(" ()")
        elif v.startswith("stated"):
            tag, note = "stated", ""
        else:
            tag, note = "–", v.split(" (")[0] if v.startswith("n/a") else v
        count[tag] += 1
        if tag == "–" and "`--only" in v:
            skipped[v] += 1
            continue
        line = f"  {tag:<7} {r['short']:<{width}}  {r['brief']}"
        lines.append(line + (f"  [{note.replace('`', '')}]" if note else ""))
    for v, n in skipped.items():
        lines.append(f"  –       {n} {'more ' if lines else ''}targets: {v.replace('`', '')}")
    head = (f"Targets (issue 31): {count[MET]} met, {count[MISSED]} MISSED, {count['stated']} stated, "
            f"{count['–']} not measured or not comparable"
            + (" (a quick run: indicative figures)" if meta.get("quick") == "1" else ""))
    return "\n".join([head] + lines)


def main():
    args = sys.argv[1:]
    want_summary = bool(args) and args[0] == "--summary"
    if want_summary:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: report.py [--summary] RUN_DIR")
    run_dir = args[0]
    runs, meta, sweep, crowd = load(run_dir)
    groups = defaultdict(list)
    for r in runs:
        label = r.get("label", "")
        dataset = ("sparse" if label.startswith("rsparse") else "hunts" if label.startswith("rhunts")
                   else "ranking" if label.startswith("rranking") else "crowd" if label.startswith("rcrowd")
                   else "standby" if label.startswith("rstandby") else "map" if label.startswith("rmap") else "dense")
        groups[(dataset, r["target"], r["op"], int(r["conns"]))].append(r)

    def agg(target, op, conns, dataset="dense"):
        rs = groups.get((dataset, target, op, conns), [])
        get = lambda k: [float(r[k]) for r in rs]  # noqa: E731
        # The server's CPU per request, in µs: CPU seconds over the window ÷ requests, per run.
        per_request = [float(r["server_cpu_pct"]) / 100 * 1e6 / float(r["rps"]) for r in rs if float(r["rps"]) > 0]
        return {
            "cpu_us": med(per_request),
            "n": len(rs),
            "rps": med(get("rps")),
            "rps_all": [float(r["rps"]) for r in rs],
            "p50": med(get("p50_us")),
            "p99": med(get("p99_us")),
            "p999": med(get("p999_us")),
            "results": med(get("mean_results")),
            "ccpu": med(get("client_cpu_pct")),
            "scpu": med(get("server_cpu_pct")),
            "mib": med(get("mib_s")),
            "errors": sum(int(r["errors"]) for r in rs),
            "seconds": med(get("seconds")),
            "bytes": med([float(r["bytes_in"]) / float(r["requests"]) for r in rs if float(r["requests"]) > 0]),
        }

    def short(a):
        """A note for runs shorter than the main ones."""
        try:
            main = float(meta.get("seconds", "nan"))
        except ValueError:
            return ""
        return f" ({a['seconds']:g} s run)" if a["n"] and abs(a["seconds"] - main) > 1e-6 else ""

    conns_levels = sorted({c for (d, t, o, c) in groups if o == "nearby" and d == "dense"})
    only = meta.get("only", "")
    targets = issue31_targets(meta, agg, groups)
    verdicts = {r["key"]: r["verdict"] for r in targets}
    crowd_rows = crowd_targets(meta, crowd, agg)
    keyed_rows = issue51_targets(meta, crowd, runs)
    maps = load_maps(run_dir)
    map_rows = map_targets(meta, maps)
    if want_summary:
        print(summary(meta, targets))
        if crowd_rows:
            print(crowd_summary(meta, crowd_rows))
        if keyed_rows:
            print(issue51_summary(meta, keyed_rows))
        if map_rows:
            print(map_summary(meta, map_rows))
        return
    out = []
    w = out.append
    w(f"# Scavenger benchmark{' — ' + only + ' only' if only else ''} — {meta.get('date', '?')}")
    w("")
    w(f"Machine: {meta.get('nproc', '?')} cores, {meta.get('cpu', '?')}, {meta.get('mem', '?')} RAM; "
      f"{meta.get('kernel', '')}.  ")
    if only:
        redis = f"{meta['redis_version']}, " if "redis_version" in meta else ""
        w(f"Versions: scavengerd {meta.get('scav_version', '?')} (release build, commit {meta.get('commit', '?')}), "
          f"{redis}{meta.get('pg_version', '?')}.  ")
        if only == "hunts":
            w(f"Data: no pins (`--only {only}`); POST writes at {int(meta.get('centres', 0)):,} places within about 5 km of the hunts.  ")
        elif only == "map":
            w(f"Data: {int(meta.get('pins', 0)):,} pins (seed {meta.get('seed', '?')}; cities by population, gaussian "
              f"0.7–8 km) in scavengerd's database and PostGIS {meta.get('postgis_version', '?')}'s; the boxes around "
              f"{meta.get('centres', '?')} query centres drawn the same way.  ")
        else:
            w(f"Data: no pins (`--only {only}`).  ")
    else:
        w(f"Versions: scavengerd {meta.get('scav_version', '?')} (release build, commit {meta.get('commit', '?')}), "
          f"{meta.get('redis_version', '?')}, {meta.get('pg_version', '?')} with PostGIS {meta.get('postgis_version', '?')}.  ")
        w(f"Data: {int(meta.get('pins', 0)):,} pins (seed {meta.get('seed', '?')}; cities by population, gaussian "
          f"0.7–8 km), {meta.get('centres', '?')} query centres drawn the same way; radius 1000 m, LIMIT 50.  ")
    loadavg = f"Load average (1/5/15 min) before the run: {meta.get('loadavg_start', '?')}; after: {meta.get('loadavg_end', '?')}."
    try:
        busy = max(float(meta["loadavg_start"].split()[0]), float(meta["loadavg_end"].split()[0])) > 1.0
    except (KeyError, ValueError, IndexError):
        busy = False
    w(loadavg + (" **The machine was busy with other work: treat the figures with care.**" if busy else "") + "  ")
    if only == "fanout":
        w("Runs: one fan-out run (below); server and client on 127.0.0.1 (scripts/bench/fanout.c, 1 thread, epoll).")
    elif only == "crowd":
        w(f"Runs: {meta.get('seconds', '?')} s each after a {meta.get('warmup', '?')} s warm-up, closed loop, one request "
          f"in flight per connection: `POST` from scripts/bench/loadgen.c (C, 1 thread), the crowd from "
          f"scripts/bench/crowd.py (Python asyncio, 1 thread); server and clients on 127.0.0.1.")
    elif only:
        w(f"Runs: {meta.get('seconds', '?')} s each after a {meta.get('warmup', '?')} s warm-up, closed loop, one request "
          f"in flight per connection; medians of the rounds quoted. Server and client on 127.0.0.1 "
          f"(scripts/bench/loadgen.c, 1 thread).")
    else:
        w(f"Runs: {meta.get('seconds', '?')} s each after a {meta.get('warmup', '?')} s warm-up, closed loop, one request "
          f"in flight per connection; {meta.get('rounds', '?')} rounds alternating redis → scavengerd → PostGIS; "
          f"medians quoted. All servers on 127.0.0.1, same client (scripts/bench/loadgen.c, 1 thread).")
    w("")
    targets_section(w, meta, targets)
    if crowd_rows:
        crowd_targets_section(w, meta, crowd_rows)
    if keyed_rows:
        issue51_section(w, meta, keyed_rows)

    def nearby_table(dataset, targets):
        w("| conns | server | req/s | p50 µs | p99 µs | pins/reply | client CPU | server CPU | server CPU per request | req/s per round |")
        w("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for c in conns_levels:
            for t in targets:
                a = agg(t, "nearby", c, dataset)
                if not a["n"]:
                    continue
                err = f" ({a['errors']} errors)" if a["errors"] else ""
                w(f"| {c} | {TARGET_NAMES[t]}{err} | {fnum(a['rps'])} | {fnum(a['p50'], 1)} | {fnum(a['p99'], 1)} | "
                  f"{fnum(a['results'], 1)} | {fnum(a['ccpu'])} % | {fnum(a['scpu'])} % | {fnum(a['cpu_us'], 1)} µs | "
                  f"{' / '.join(fnum(x) for x in a['rps_all'])} |")
        w("")

    def verdict(key):
        """Issue 31's verdict on one of its targets (issue31_targets), or "–" where it sets none."""
        return verdicts.get(key, "–")

    def redis_ratios(dataset):
        cpu_target = ("≤ 1.15×" if dataset == "dense" else "≤ the floor's `PING` ÷ Redis's + 0.15")
        w(f"| conns | NEARBY ÷ Redis | target ≥ 1.0× (0.9× at 1) | p99 scav / Redis | p99 ≤ Redis (8, 32) | "
          f"CPU per request scav / Redis | target {cpu_target} |")
        w("| ---: | ---: | --- | ---: | --- | ---: | --- |")
        for c in conns_levels:
            s_, r_ = agg("scav", "nearby", c, dataset), agg("redis", "nearby", c, dataset)
            if not s_["n"] or not r_["n"]:
                continue
            rr, lat, cpu = ratio(s_["rps"], r_["rps"]), ratio(s_["p99"], r_["p99"]), ratio(s_["cpu_us"], r_["cpu_us"])
            stretch = (" (issue 7's stretch 2×: " + ("met" if rr >= 2 else "missed") + ")"
                       if c == 32 and dataset == "dense" else "")
            w(f"| {c} | {fnum(rr, 2)}× | {verdict(('tput', dataset, c))}{stretch} | {fnum(lat, 2)}× | "
              f"{verdict(('p99', dataset, c))} | {fnum(cpu, 2)}× | {verdict(('cpu', dataset, c))} |")
        w("")
        w("Verdicts: issue 31's targets, as in the table at the top; \"–\": no target at that level.")
        w("")

    if conns_levels:
        w("## NEARBY (1000 m, 50 nearest)")
        w("")
        nearby_table("dense", ("redis", "scav", "pg"))
        w("CPU is a share of one core over the measured window (2 cores = 200 %); the server CPU of "
          "scavengerd includes its PostgreSQL backends, PostGIS's is every backend of the cluster. "
          "Server CPU per request is that CPU time over the window divided by the requests answered (median of the rounds).")
        w("")
        w("### Ratios (scavengerd ÷ peer, medians)")
        w("")
        redis_ratios("dense")
        w("| conns | NEARBY ÷ PostGIS | target ≥ 5× |")
        w("| ---: | ---: | --- |")
        for c in conns_levels:
            rp = ratio(agg("scav", "nearby", c)["rps"], agg("pg", "nearby", c)["rps"])
            w(f"| {c} | {fnum(rp, 2)}× | {'met' if rp >= 5 else 'MISSED'} |")
        w("")

    def ping_name(target):
        threads = floor_threads(target)
        return f"SwiftNIO floor, {threads_text(threads)}" if threads else PING_NAMES.get(target, target)

    ping_order = {"redis": 0, "scav": 1, "scav1": 2}
    ping = sorted(((t, agg(t, "ping", c), c) for (d, t, o, c) in groups if o == "ping" and d == "dense"),
                  key=lambda p: (ping_order.get(p[0], 3), floor_threads(p[0]) or 0, p[2]))
    if ping:
        nproc = meta.get("nproc", "")
        rp = agg("redis", "ping", 8)
        w("## PING at 8 connections: against the SwiftNIO floor")
        w("")
        order = " → ".join(dict.fromkeys(
            ping_name(t).replace(" (one I/O thread per core, its default)", "") for t, a, c in ping))
        rounds = max(a["n"] for t, a, c in ping)
        w(f"The floor is scripts/bench/nio-floor, the least a SwiftNIO line server can do: a fixed reply per line, "
          f"nothing else. Runs of {med([a['seconds'] for t, a, c in ping]):g} s, alternating {order}, in each of "
          f"{rounds} round(s); medians."
          + (" The `--io-threads 1` daemon runs on a database of its own, no pins, started for this step only."
             if any(t == "scav1" for t, a, c in ping) else "")
          + " Every server's CPU is its own process's: `PING` never reaches scavengerd's database, so its cluster's "
            "processes (which NEARBY's and the writes' figures include) are left out here.")
        w("")
        w("| server | conns | PING/s | p99 µs | server CPU per request | ÷ Redis's | ÷ the floor's with as many threads | req/s per round |")
        w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        same_floor = {"redis": None, "scav": f"{FLOOR}{nproc}", "scav1": f"{FLOOR}1"}
        for t, a, c in ping:
            floor_t = same_floor.get(t)
            f_ = agg(floor_t, "ping", c) if floor_t else {"n": 0}
            vs_floor = f"{fnum(ratio(a['cpu_us'], f_['cpu_us']), 2)}×" if f_["n"] else "–"
            vs_redis = f"{fnum(ratio(a['cpu_us'], rp['cpu_us']), 2)}×" if rp["n"] and t != "redis" else "–"
            err = f" ({a['errors']} errors)" if a["errors"] else ""
            w(f"| {ping_name(t)}{err} | {c} | {fnum(a['rps'])} | {fnum(a['p99'], 1)} | {fnum(a['cpu_us'], 1)} µs | "
              f"{vs_redis} | {vs_floor} | {' / '.join(fnum(x) for x in a['rps_all'])} |")
        w("")
        parts = [f"with one thread {verdict('ping-1')}", f"with one per core {verdict('ping-n')}"]
        line = ("Issue 31: scavengerd's server CPU per PING at most 1.15× the floor's with as many threads: "
                + "; ".join(parts) + ".")
        fn = agg(f"{FLOOR}{nproc}", "ping", 8)
        if fn["n"] and rp["n"]:
            share = ratio(fn["cpu_us"], rp["cpu_us"])
            line += (f" The floor with one thread per core costs {fnum(share, 2)}× Redis's CPU per PING: the sparse "
                     f"NEARBY CPU target allows scavengerd {fnum(share + 0.15, 2)}× Redis's there.")
        w(line)
        w("")

    if any(d == "sparse" for (d, t, o, c) in groups):
        w(f"## NEARBY on sparse data ({int(meta.get('sparse_pins', 0)):,} pins, seed {meta.get('sparse_seed', '?')}, "
          f"{meta.get('sparse_rounds', '?')} round(s))")
        w("")
        w("The same query (1000 m, 50 nearest) where a query finds only a few pins, as on most of the map: "
          "the fixed cost per request weighs most. Redis is reloaded with the same pins.")
        w("")
        nearby_table("sparse", ("redis", "scav"))
        redis_ratios("sparse")

    order = {("scav", "post"): 0, ("pg", "insert"): 1, ("pg", "insert-notify"): 2, ("scav", "photo"): 3}
    names = {"post": "scavengerd POST (durable)", "insert": "PostgreSQL single-row INSERT (autocommit)",
             "insert-notify": "PostgreSQL INSERT + pg_notify in one statement (POST's shape; reference)",
             "photo": f"scavengerd POSTPHOTO ({int(meta.get('photo_bytes', 0)) // 1024} KiB photos)"}
    writes = sorted((k for k in groups if k[0] == "dense" and (k[1], k[2]) in order),
                    key=lambda k: (order[(k[1], k[2])], k[3]))
    if writes:
        w("## Writes")
        w("")
        w("| what | conns | req/s | MiB/s | p50 µs | p99 µs | client CPU | server CPU | req/s per round |")
        w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for (d, t, o, c) in writes:
        a = agg(t, o, c)
        err = f" ({a['errors']} errors)" if a["errors"] else ""
        mib = fnum(a["mib"], 1) if o == "photo" else "–"
        w(f"| {names[o]}{short(a)}{err} | {c} | {fnum(a['rps'])} | {mib} | {fnum(a['p50'], 1)} | {fnum(a['p99'], 1)} | "
          f"{fnum(a['ccpu'])} % | {fnum(a['scpu'])} % | {' / '.join(fnum(x) for x in a['rps_all'])} |")
    if writes:
        w("")
    post, insert, notify = agg("scav", "post", 8), agg("pg", "insert", 8), agg("pg", "insert-notify", 8)
    if post["n"] and insert["n"]:
        rr = ratio(post["rps"], insert["rps"])
        w(f"POST ÷ INSERT at 8 connections ({meta.get('write_rounds', '?')} rounds, alternating): **{fnum(rr, 2)}×** "
          f"(issue 31's target ≥ 0.75×: {verdict('post')}). "
          "Both durable: fsync on, synchronous_commit on, same cluster.")
        if notify["n"]:
            w(f"INSERT + pg_notify ÷ INSERT: {fnum(ratio(notify['rps'], insert['rps']), 2)}×: PostgreSQL serializes the "
              "commits of transactions that NOTIFY (a lock held until the commit is flushed), so they get no group commit.")
        w("")

    if any(d == "hunts" for (d, t, o, c) in groups):
        hunts_section(w, meta, agg)

    if any(d == "ranking" for (d, t, o, c) in groups):
        ranking_section(w, meta, agg, run_dir)

    if "fanout_line" in meta:
        fanout_section(w, meta, verdict)

    pins = int(meta.get("pins", 0))
    starts = [
        ("first_start_s", f"first start, cell backfill of {pins:,} pins (exec → PING and NEARBY answer)"),
        ("start_s", f"start to serving with {pins:,} pins (exec → PING and NEARBY answer)"),
        ("start_ping_s", "  of which: exec → first PING answered"),
    ]
    memories = [
        ("rss_start_mb", "scavengerd RSS after start (idle)"),
        ("rss_after_nearby_mb", "scavengerd RSS after the NEARBY runs"),
        ("rss_end_mb", "scavengerd RSS at the end (after the writes)"),
        ("hwm_end_mb", "scavengerd peak RSS (VmHWM)"),
        ("rss_after_hunts_mb", "scavengerd RSS after the hunts' runs"),
        ("rss_after_sweep_mb", "scavengerd RSS after the expiry sweep"),
        ("redis_mem_mb", "Redis used_memory (for comparison)"),
        ("postgis_table_mb", "PostGIS table + indexes (for comparison)"),
    ]
    # (`--only ranking` has figures of its own, in its section, and none of these.)
    if any(key in meta for key, _ in starts + memories):
        w("## Start-up and memory")
        w("")
        w("| what | figure |")
        w("| --- | ---: |")
        for key, name in starts:
            if key in meta:
                w(f"| {name} | {float(meta[key]):.2f} s |")
        for key, name in memories:
            if key in meta:
                w(f"| {name} | {float(meta[key]):,.1f} MB |")
        w("")
    if "start_s" in meta or ("rss_start_mb" in meta and not only):
        w(f"Issue 31: start-up with 1,000,000 pins ≤ 5 s: {verdict('start')}; RSS ≤ 250 MB per million pins: "
          f"{verdict('rss')} (see the table at the top).")
        w("")
    if crowd:
        crowd_section(w, meta, crowd, agg, runs)
    if "standby_local_post_rps" in meta:
        standby_section(w, meta)
    if maps:
        map_section(w, meta, maps, map_rows)
    if "sweep_line" in meta:
        expiry_section(w, meta, sweep)
    w(f"Whole run: {meta.get('wall_s', '?')} s wall clock (set-up and loading included).")
    print("\n".join(out))


def map_agg(maps):
    """map.txt's runs by (kind, zoom, target, conns) → medians over the rounds (each figure on its own)."""
    groups = defaultdict(list)
    for r in maps:
        kind = "thumbs" if r.get("thumbs") == "1" else "ping" if r.get("op") == "ping" else "map"
        groups[(kind, int(r["map_zoom"]) if kind == "map" else -1, r["target"], int(r["conns"]))].append(r)
    out = {}
    for key, rs in groups.items():
        get = lambda k: [float(r[k]) for r in rs if k in r]  # noqa: E731
        cpu_us = [float(r["server_cpu_pct"]) / 100 * 1e6 / float(r["rps"]) for r in rs if float(r["rps"]) > 0]
        # The thumbnails' runs: the daemon's own share, without its PostgreSQL backends.
        own_us = [float(r["own_cpu_s"]) * 1e6 / float(r["requests"]) for r in rs
                  if "own_cpu_s" in r and float(r["requests"]) > 0]
        out[key] = {"n": len(rs), "rps": med(get("rps")), "rps_all": get("rps"), "p50": med(get("p50_us")),
                    "p99": med(get("p99_us")), "cpu_us": med(cpu_us), "scpu": med(get("server_cpu_pct")),
                    "ccpu": med(get("client_cpu_pct")), "cells": med(get("mean_results")),
                    "errors": sum(int(float(r.get("errors", 0))) for r in rs),
                    "bytes": med(get("bytes_per_request")), "own_us": med(own_us)}
    return out


MAP_RATIO, MAP_P99_MS, MAP_P99_ZOOM, MAP_P99_CONNS, MAP_MEMORY, THUMB_RATIO = 20, 5, 12, 32, 0.20, 0.5


def map_targets(meta, maps):
    """Issue 55's targets (`--only map`): rows of target, figure, verdict and a short form."""
    if not maps:
        return []
    a = map_agg(maps)
    zooms = sorted({z for (k, z, t, c) in a if k == "map"})
    conns = sorted({c for (k, z, t, c) in a})
    rows = []

    def add(target, figure, verdict, short):
        rows.append({"target": target, "figure": figure, "verdict": verdict, "short": short})

    for z in zooms:
        parts, ok = [], True
        for c in conns:
            s_, p_ = a.get(("map", z, "scav", c)), a.get(("map", z, "pg", c))
            if not s_ or not p_:
                continue
            r = ratio(s_["rps"], p_["rps"])
            ok = ok and r == r and r >= MAP_RATIO
            parts.append(f"{fnum(r, 1)}× at {c} ({fnum(s_['rps'])} against {fnum(p_['rps'], 1)}/s)")
        add(f"`MAP` throughput ≥ {MAP_RATIO}× PostGIS's grid query, zoom {z}", "; ".join(parts) or "–",
            (MET if ok else MISSED) if parts else "not measured",
            f"MAP ÷ PostGIS req/s, zoom {z}: ≥ {MAP_RATIO}×  " + ", ".join(p.split(" (")[0] for p in parts))
    s_ = a.get(("map", MAP_P99_ZOOM, "scav", MAP_P99_CONNS))
    if s_:
        ms = s_["p99"] / 1000
        add(f"`MAP` p99 < {MAP_P99_MS} ms at {MAP_P99_CONNS} connections, zoom {MAP_P99_ZOOM}",
            f"{fnum(ms, 2)} ms (p50 {fnum(s_['p50'] / 1000, 2)} ms)", MET if ms < MAP_P99_MS else MISSED,
            f"MAP p99, zoom {MAP_P99_ZOOM}, {MAP_P99_CONNS} conns: < {MAP_P99_MS} ms  {fnum(ms, 2)} ms")
    sets, index = fmeta(meta, "map_sets_mb"), fmeta(meta, "map_index_mb")
    if sets == sets and index == index and index > sets:
        share = sets / (index - sets)
        how = ("the daemon's log" if meta.get("map_sets_from") == "log" else
               f"32 B × {int(fmeta(meta, 'map_pins_counted')):,} pins counted")
        add(f"memory of MAP's sets ≤ {MAP_MEMORY:.0%} of the rest of the pin index",
            f"{fnum(100 * share, 1)} % ({fnum(sets, 1)} MB ({how}) against {fnum(index - sets, 1)} MB: the index's "
            f"{fnum(index)} MB in the daemon's log, MAP's sets included, with {int(fmeta(meta, 'pins')):,} pins)",
            MET if round(share, 3) <= MAP_MEMORY else MISSED,
            f"MAP's sets ÷ the rest of the index: ≤ {MAP_MEMORY:.0%}  {fnum(100 * share, 1)} %")
    else:
        add(f"memory of MAP's sets ≤ {MAP_MEMORY:.0%} of the rest of the pin index", "–",
            "not measured (no index size in the daemon's log)", "MAP's sets ÷ the index: not measured")
    for c in conns:
        s_, n_ = a.get(("thumbs", -1, "scav", c)), a.get(("thumbs", -1, "nginx", c))
        if not s_ or not n_:
            continue
        r = ratio(s_["rps"], n_["rps"])
        add(f"cached thumbnails (`GET /photos/ID?size=thumb`) ≥ {THUMB_RATIO}× nginx's rate, {conns_text(c)}",
            f"{fnum(r, 2)}× ({fnum(s_['rps'])} against {fnum(n_['rps'])}/s)", MET if round(r, 2) >= THUMB_RATIO else MISSED,
            f"thumbnails ÷ nginx req/s, {conns_text(c)}: ≥ {THUMB_RATIO}×  {fnum(r, 2)}×")
    return rows


def map_summary(meta, rows):
    """Issue 55's targets one line each, for the console."""
    met = sum(r["verdict"] == MET for r in rows)
    missed = sum(r["verdict"] == MISSED for r in rows)
    lines = [f"Targets (issue 55, maps and photos): {met} met, {missed} MISSED"
             + (" (a quick run: indicative figures)" if fmeta(meta, "pins") < FULL_PINS else "")]
    for r in rows:
        tag = r["verdict"] if r["verdict"] in (MET, MISSED) else "–"
        lines.append(f"  {tag:<7} {r['short']}")
    return "\n".join(lines)


def map_section(w, meta, maps, rows):
    """`--only map` (issue 55): MAP against PostGIS's grid query, memory, thumbnails against nginx."""
    a = map_agg(maps)
    zooms = sorted({z for (k, z, t, c) in a if k == "map"})
    conns = sorted({c for (k, z, t, c) in a})
    w("## Maps and photos (issue 55)")
    w("")
    w("| target | figure | verdict |")
    w("| --- | --- | --- |")
    for r in rows:
        v = r["verdict"]
        w(f"| {r['target']} | {r['figure']} | {'**' + v + '**' if v == MISSED else v} |")
    w("")
    w(f"`MAP south west north east ZOOM z` (LIMIT 500) against PostGIS's `{meta.get('map_pg_sql', '?')}` on the pins in "
      "EPSG:3857 (GiST, clustered; parallel query and JIT off), the same boxes for both: 1280 x 800 px of 256-px tiles "
      "at the zoom, around the data's query centres; PostGIS's box is the cells' envelope (MAP counts every pin of a "
      "cell it touches), and the first 20 boxes of each zoom were checked to count alike. Closed loop, alternating "
      "scavengerd → PostGIS; medians of the rounds. Server CPU: the daemon's with its PostgreSQL backends, PostGIS's "
      "backends.")
    w("")
    w("| zoom | conns | MAP req/s | PostGIS req/s | ÷ | MAP p50 / p99 | PostGIS p50 / p99 | cells | server CPU per request: MAP / PostGIS | MAP req/s per round |")
    w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for z in zooms:
        for c in conns:
            s_, p_ = a.get(("map", z, "scav", c)), a.get(("map", z, "pg", c))
            if not s_ or not p_:
                continue
            w(f"| {z} | {c} | {fnum(s_['rps'])} | {fnum(p_['rps'], 1)} | {fnum(ratio(s_['rps'], p_['rps']), 1)}× | "
              f"{fnum(s_['p50'] / 1000, 2)} / {fnum(s_['p99'] / 1000, 2)} ms | {fnum(p_['p50'] / 1000, 1)} / "
              f"{fnum(p_['p99'] / 1000, 1)} ms | {fnum(s_['cells'])} | {fnum(s_['cpu_us'], 1)} µs / "
              f"{fnum(p_['cpu_us'])} µs | {', '.join(fnum(x) for x in s_['rps_all'])} |")
    for c in conns:
        g = a.get(("ping", -1, "scav", c))
        if g:
            w(f"| `PING` | {c} | {fnum(g['rps'])} | | | {fnum(g['p50'] / 1000, 2)} / {fnum(g['p99'] / 1000, 2)} ms | | | "
              f"{fnum(g['cpu_us'], 1)} µs / | {', '.join(fnum(x) for x in g['rps_all'])} |")
    w("")
    if any(k == "ping" for (k, z, t, c) in a):
        w("`PING` (same daemon, same rounds) is the least any request costs it on this machine: no `MAP` can pass its "
          "rate, so a ratio to PostGIS that needs more than `PING`'s rate is out of reach here whatever `MAP` does.")
        w("")
    for z in zooms:
        if f"map_check_z{z}" in meta:
            w(f"- zoom {z}, check of the first boxes: {meta[f'map_check_z{z}']}")
    w("")
    thumbs = parse_kv(meta.get("thumbs_line", ""))
    if any(k == "thumbs" for (k, z, t, c) in a):
        w(f"`GET /photos/ID?size=thumb` of {thumbs.get('photos', '?')} photo pins (real JPEGs of "
          f"{fnum(fmeta(thumbs, 'original_bytes') / 1024)} KiB, their thumbnails {fnum(fmeta(thumbs, 'thumb_bytes') / 1024, 1)} KiB "
          f"made by the daemon in {thumbs.get('sizes_s', '?')} s) at random, against {meta.get('nginx_version', 'nginx')} "
          f"serving the same thumbnails from files (scripts/bench/nginx.conf); {meta.get('wrk_version', 'wrk')}, one "
          "thread, keep-alive, alternating scavengerd → nginx. Server CPU: the daemon's with its PostgreSQL backends "
          "(every request asks the database whether the pin is still visible), nginx's master and workers.")
        w("")
        w("| conns | server | req/s | p50 / p99 | server CPU | server CPU per request | of which the daemon's own | client CPU | bytes per reply | req/s per round |")
        w("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for c in conns:
            for t, name in (("scav", "scavengerd"), ("nginx", "nginx")):
                r = a.get(("thumbs", -1, t, c))
                if not r:
                    continue
                w(f"| {c} | {name} | {fnum(r['rps'])} | {fnum(r['p50'] / 1000, 2)} / {fnum(r['p99'] / 1000, 2)} ms | "
                  f"{fnum(r['scpu'])} % | {fnum(r['cpu_us'], 1)} µs | "
                  f"{fnum(r['own_us'], 1) + ' µs' if t == 'scav' else ''} | {fnum(r['ccpu'])} % | {fnum(r['bytes'])} | "
                  f"{', '.join(fnum(x) for x in r['rps_all'])} |")
        w("")
    if "rss_map_mb" in meta:
        w(f"The daemon's resident memory with the pins loaded (and its HTTP port): {fnum(fmeta(meta, 'rss_map_mb'), 1)} MB.")
        w("")


def standby_section(w, meta):
    """Step 4f: POST and accepted CHECKIN with a synchronous standby against local commits."""
    w("## A synchronous standby: what OK on two machines costs")
    w("")
    w("The crowd's database and daemon, and a streaming standby of the bench cluster on the same host, named in "
      "`synchronous_standby_names`; `synchronous_commit` set for the whole cluster and reloaded between runs, "
      "`local` and `on` alternating (medians of the rounds).")
    w("")
    w("| | POST/s | accepted CHECKIN/s |")
    w("| --- | ---: | ---: |")
    for mode in ("local", "on"):
        w(f"| `synchronous_commit = {mode}` | {fnum(fmeta(meta, f'standby_{mode}_post_rps'))} | "
          f"{fnum(fmeta(meta, f'standby_{mode}_checkin_rps'))} |")
    local_post, on_post = fmeta(meta, "standby_local_post_rps"), fmeta(meta, "standby_on_post_rps")
    local_checkin, on_checkin = fmeta(meta, "standby_local_checkin_rps"), fmeta(meta, "standby_on_checkin_rps")
    w("")
    w(f"With the standby confirming every commit: POST {fnum(ratio(on_post, local_post), 2)}×, "
      f"CHECKIN {fnum(ratio(on_checkin, local_checkin), 2)}× the local-commit throughput.")
    w("")


def fmeta(meta, key):
    try:
        return float(meta[key])
    except (KeyError, ValueError):
        return float("nan")


def hunts_section(w, meta, agg):
    """Issue 27: CHECKIN against POST in the same rounds, and LEADERBOARD of a big hunt."""
    conns = int(meta.get("hunt_conns", 8))
    players = int(meta.get("hunt_players", 0))
    w("## Hunts")
    w("")
    w(f"Hunts written straight into the database before the daemon started (scripts/bench/hunts.sql). "
      f"CHECKIN: {int(meta.get('hunt_walk_hunts', 0)):,} running hunts of 100 stops at one place; each connection is a "
      f"player of its own (`AUTH`), a player of every one of them, and checks in at a stop it has not checked in at "
      f"before, from 3 m away. Only an accepted check-in counts: any other reply is an error. `POST` in the same "
      f"rounds, alternating ({meta.get('write_rounds', '?')} rounds). LEADERBOARD: one public hunt of {players:,} "
      f"players (20 stops; 0 to 2,100 points, reached over three hours), `LIMIT 50` with no login and `AROUND` "
      f"(50 entries, the caller's in the middle) logged in as players spread over the board, alternating "
      f"({meta.get('rounds', '?')} rounds).")
    w("")
    w("| what | conns | req/s | p50 µs | p99 µs | entries/reply | client CPU | server CPU | server CPU per request | req/s per round |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    rows = [("post", "scavengerd POST (durable), same rounds"),
            ("checkin", "CHECKIN (accepted check-ins; durable)"),
            ("leaderboard", f"LEADERBOARD LIMIT 50, {players:,} players"),
            ("leaderboard-around", f"LEADERBOARD AROUND, {players:,} players")]
    for op, name in rows:
        a = agg("scav", op, conns, "hunts")
        if not a["n"]:
            continue
        err = f" (**{a['errors']} errors**)" if a["errors"] else ""
        entries = fnum(a["results"], 1) if op.startswith("leaderboard") else "–"
        w(f"| {name}{err} | {conns} | {fnum(a['rps'])} | {fnum(a['p50'], 1)} | {fnum(a['p99'], 1)} | {entries} | "
          f"{fnum(a['ccpu'])} % | {fnum(a['scpu'])} % | {fnum(a['cpu_us'], 1)} µs | "
          f"{' / '.join(fnum(x) for x in a['rps_all'])} |")
    w("")
    post, checkin = agg("scav", "post", conns, "hunts"), agg("scav", "checkin", conns, "hunts")
    if post["n"] and checkin["n"]:
        w(f"CHECKIN ÷ POST at {conns} connections ({meta.get('write_rounds', '?')} rounds, alternating): "
          f"**{fnum(ratio(checkin['rps'], post['rps']), 2)}×** the throughput, p99 {fnum(ratio(checkin['p99'], post['p99']), 2)}× "
          f"POST's, server CPU per request {fnum(ratio(checkin['cpu_us'], post['cpu_us']), 2)}× POST's. "
          + (f"**{checkin['errors']} replies were not accepted check-ins** (see loadgen.err)." if checkin["errors"]
             else "Every reply in the measured windows was an accepted check-in."))
    if "hunt_checkins_written" in meta:
        written, accepted = fmeta(meta, "hunt_checkins_written"), fmeta(meta, "hunt_checkins_accepted")
        cp, pp = fmeta(meta, "hunt_checkin_points"), fmeta(meta, "hunt_player_points")
        w(f"In the database afterwards: {fnum(written)} check-ins (warm-ups included), "
          f"{'all accepted' if written == accepted else f'**only {fnum(accepted)} accepted**'}; the players' points "
          f"{'are' if cp == pp else '**are not**'} their check-ins' sum ({fnum(pp)} and {fnum(cp)}).")
    lb, around = agg("scav", "leaderboard", conns, "hunts"), agg("scav", "leaderboard-around", conns, "hunts")
    if "hunt_board_load_ms" in meta:
        w(f"The first LEADERBOARD loads the board of {players:,} players from the database: "
          f"{fnum(fmeta(meta, 'hunt_board_load_ms'), 1)} ms (one request, before the runs).")
    if lb["n"] and around["n"]:
        w(f"AROUND ÷ LIMIT 50: {fnum(ratio(around['rps'], lb['rps']), 2)}× the throughput. The board, and who may "
          f"read it, are in memory: neither reads the database once the board is kept.")
    w("")


def ranking_section(w, meta, agg, run_dir):
    """Issue 28: RANKING and PROFILE among a million ranked users against Redis, with check-ins running."""
    conns = int(meta.get("ranking_conns", 8))
    users = int(fmeta(meta, "ranking_users")) if "ranking_users" in meta else 0
    checkin_conns = meta.get("ranking_checkin_conns", "?")
    w(f"## Rankings across hunts ({users:,} ranked users)")
    w("")
    w(f"{users:,} users with points written straight into a database of its own before the daemon started "
      f"(scripts/bench/ranking.sql: a log-normal skew, multiples of 5, median {fnum(fmeta(meta, 'ranking_median_points'))} "
      f"points, top {fnum(fmeta(meta, 'ranking_top_points'))}, {fnum(fmeta(meta, 'ranking_distinct_points'))} distinct scores; "
      f"{fnum(fmeta(meta, 'ranking_week_users'))} with points this week, {fnum(fmeta(meta, 'ranking_lastweek_users'))} last week). "
      f"Redis holds the same scores in one sorted set (points and the second they were reached in one score, so ties "
      f"order alike) and each user's profile fields in a hash. {conns} connections, alternating Redis → scavengerd, "
      f"{meta.get('rounds', '?')} rounds, medians. "
      + ("**No check-ins ran** (`--ranking-checkin-conns 0`)." if checkin_conns == "0" else
         f"During every run, Redis's too, CHECKIN runs against scavengerd at {checkin_conns} connection(s), walkers of "
         f"its own, every reply an accepted check-in."))
    w("")
    w("| read | server | req/s | p50 µs | p99 µs | p99.9 µs | entries/reply | bytes/reply | server CPU per request | client CPU | req/s per round |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    reads = [("ranking", "`RANKING LIMIT 50`", "`ZREVRANGE ranking 0 49 WITHSCORES`"),
             ("ranking-around", "`RANKING AROUND LIMIT 50` (logged in)", "`ZREVRANK` then `ZREVRANGE` of the page (2 round trips)"),
             ("profile", "`PROFILE <random user>`", "`HGETALL` + `ZREVRANK`, pipelined (1 round trip)")]
    for op, scav_name, redis_name in reads:
        for target, name in (("redis", "Redis " + redis_name), ("scav", "scavengerd " + scav_name)):
            a = agg(target, op, conns, "ranking")
            if not a["n"]:
                continue
            err = f" (**{a['errors']} errors**)" if a["errors"] else ""
            entries = fnum(a["results"], 1) if op != "profile" else "–"
            w(f"| {op} | {name}{err} | {fnum(a['rps'])} | {fnum(a['p50'], 1)} | {fnum(a['p99'], 1)} | {fnum(a['p999'], 1)} | "
              f"{entries} | {fnum(a['bytes'])} | {fnum(a['cpu_us'], 1)} µs | {fnum(a['ccpu'])} % | {' / '.join(fnum(x) for x in a['rps_all'])} |")
    w("")
    w("Server CPU per request: the server's CPU time over the window ÷ the requests answered. scavengerd's includes its "
      "PostgreSQL backends (the check-ins' statements) "
      + ("and the work of the check-ins running meanwhile, so it is above what the reads alone cost."
         if checkin_conns != "0" else "(no check-ins ran)."))
    w("")
    w("| read | scavengerd ÷ Redis, req/s | p50 scavengerd / Redis | p99 scavengerd / Redis | scavengerd p99 under 2 ms |")
    w("| --- | ---: | ---: | ---: | --- |")
    for op, scav_name, _ in reads:
        s_, r_ = agg("scav", op, conns, "ranking"), agg("redis", op, conns, "ranking")
        if not s_["n"] or not r_["n"]:
            continue
        w(f"| {scav_name} | {fnum(ratio(s_['rps'], r_['rps']), 2)}× | {fnum(ratio(s_['p50'], r_['p50']), 2)}× | "
          f"{fnum(ratio(s_['p99'], r_['p99']), 2)}× | {'met' if s_['p99'] < 2000 else 'MISSED'} ({fnum(s_['p99'] / 1000, 2)} ms) |")
    w("")
    checkins = []
    try:
        with open(f"{run_dir}/ranking-checkins.txt", encoding="utf-8") as f:
            checkins = [parse_kv(line) for line in f if line.strip()]
    except FileNotFoundError:
        pass
    if checkins:
        rate = lambda rs: med([float(r["rps"]) for r in rs])  # noqa: E731
        during = {t: [r for r in checkins if f"-{t}-" in r.get("label", "")] for t in ("scav", "redis")}
        errors = sum(int(r.get("errors", 0)) for r in checkins)
        w(f"Check-ins meanwhile ({checkin_conns} connection(s), durable): median {fnum(rate(checkins))} accepted/s over the "
          f"{len(checkins)} runs ({fnum(rate(during['scav']))}/s during scavengerd's reads, {fnum(rate(during['redis']))}/s "
          f"during Redis's; p99 {fnum(med([float(r['p99_us']) for r in checkins]) / 1000, 1)} ms); "
          + (f"**{errors} replies were not accepted check-ins**." if errors else "every reply was an accepted check-in."))
    if "ranking_checkins_written" in meta:
        written, accepted = fmeta(meta, "ranking_checkins_written"), fmeta(meta, "ranking_checkins_accepted")
        cp, wp = fmeta(meta, "ranking_checkin_points"), fmeta(meta, "ranking_walker_points")
        w(f"In the database afterwards: {fnum(written)} check-ins, "
          f"{'all accepted' if written == accepted else f'**only {fnum(accepted)} accepted**'}; the walkers' totals "
          f"{'are' if cp == wp else '**are not**'} their check-ins' points ({fnum(wp)} and {fnum(cp)}); the daemon's top 50 "
          f"after the runs {'is' if meta.get('ranking_top_after_same') == '1' else '**is not**'} the database's (the walkers "
          f"climb it during the runs; Redis's set does not change).")
    if "ranking_same_board" in meta:
        w(f"Before the runs, both held the same board: top 50 and the ranks of the {conns} AROUND users "
          f"(scavengerd/Redis: {meta.get('ranking_around_ranks', '?')}) "
          + ("alike." if meta["ranking_same_board"] == "1" else "**not alike** (see the log)."))
    w("")
    w("| start-up and memory | figure |")
    w("| --- | ---: |")
    loaded = fmeta(meta, "ranking_loaded_users")
    rows = [("ranking_load_s", f"the rankings' load ({fnum(loaded)} users all-time and both weeks; the daemon's log, `rankings loaded`)", "s", 2),
            ("ranking_ready_s", "exec → the first `RANKING` answered OK (polled from 0.3 s after the first `NEARBY` answered)", "s", 2),
            ("ranking_ping_s", "  of which: exec → the first `PING` answered", "s", 2),
            ("ranking_nearby_s", "exec → the first `NEARBY` answered (no pins; serving while the rankings load)", "s", 2),
            ("ranking_rss_base_mb", "scavengerd RSS with no ranked users (same database, before they were written)", "MB", 1),
            ("ranking_rss_mb", "scavengerd RSS with them, after the load", "MB", 1),
            ("ranking_hwm_base_mb", "  peak RSS (VmHWM) with no ranked users", "MB", 1),
            ("ranking_hwm_mb", "  peak RSS (VmHWM) with them, the load included", "MB", 1),
            ("ranking_bytes_per_user", "**memory per ranked user** (RSS difference ÷ users ranked)", "bytes", 0),
            ("redis_ranking_bytes_per_user", "Redis `used_memory` per user: the sorted set", "bytes", 0),
            ("redis_profile_bytes_per_user", "Redis `used_memory` per user: the profile hashes on top", "bytes", 0),
            ("rss_after_ranking_mb", "scavengerd RSS after the runs", "MB", 1)]
    for key, name, unit, digits in rows:
        if key in meta and meta[key]:
            w(f"| {name} | {fnum(fmeta(meta, key), digits)} {unit} |")
    w("")
    if "ranking_loadavg_start" in meta:
        w(f"Load average (1/5/15 min) at the start of this step: {meta['ranking_loadavg_start']}; at its end: "
          f"{meta.get('ranking_loadavg_end', '?')}.")
        w("")


def expiry_section(w, meta, sweep):
    """Issue 5: `scavengerd expire` over --pins expired pins, and NEARBY while it runs."""
    pins, replies, pbytes = fmeta(meta, "sweep_pins"), fmeta(meta, "sweep_replies"), fmeta(meta, "sweep_photo_bytes")
    epins, ereplies, ebytes = (fmeta(meta, "sweep_expected_pins"), fmeta(meta, "sweep_expected_replies"),
                               fmeta(meta, "sweep_expected_photo_bytes"))
    secs, wall = fmeta(meta, "sweep_s"), fmeta(meta, "sweep_wall_s")
    conns = meta.get("sweep_conns", "8")

    def expect(got, want):
        return "" if got == want else f" (**expected {fnum(want)}**)"

    w("## Expiry sweep")
    w("")
    w(f"`scavengerd expire` (one pass, default batch size) over {fnum(epins)} pins that expired a day earlier "
      "(copies of the loaded pins under new ids; every tenth with two replies; the photo pins' photos copied), "
      f"beside {fnum(fmeta(meta, 'sweep_live_before'))} live pins, while NEARBY runs at {conns} connections.")
    w("")
    w("| what | figure |")
    w("| --- | ---: |")
    w(f"| pins swept | {fnum(pins)}{expect(pins, epins)} |")
    w(f"| replies swept | {fnum(replies)}{expect(replies, ereplies)} |")
    w(f"| photo bytes swept | {fnum(pbytes)}{expect(pbytes, ebytes)} |")
    w(f"| sweep time (its own summary) | {fnum(secs, 2)} s |")
    w(f"| sweep wall time (exec → exit) | {fnum(wall, 2)} s |")
    w(f"| pins swept per second | {fnum(ratio(pins, secs))} |")
    w("")
    w(f"Summary line: `{meta['sweep_line']}`")
    w("")
    base, during = sweep.get("baseline"), sweep.get("during")
    if base and during:
        g = lambda r, k: float(r.get(k, "nan"))  # noqa: E731
        w(f"| NEARBY, {conns} conns | window | requests | req/s | p50 µs | p99 µs | p99.9 µs | max µs | server CPU |")
        w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, r in (("without a sweep", base), ("during the sweep", during)):
            err = f" ({r['errors']} errors)" if r.get("errors", "0") != "0" else ""
            w(f"| {name}{err} | {fnum(g(r, 'seconds'), 2)} s | {fnum(g(r, 'requests'))} | {fnum(g(r, 'rps'))} | "
              f"{fnum(g(r, 'p50_us'), 1)} | {fnum(g(r, 'p99_us'), 1)} | {fnum(g(r, 'p999_us'), 1)} | "
              f"{fnum(g(r, 'max_us'), 1)} | {fnum(g(r, 'server_cpu_pct'))} % |")
        w(f"| during ÷ without | | | {fnum(ratio(g(during, 'rps'), g(base, 'rps')), 2)}× | "
          f"{fnum(ratio(g(during, 'p50_us'), g(base, 'p50_us')), 2)}× | "
          f"**{fnum(ratio(g(during, 'p99_us'), g(base, 'p99_us')), 2)}×** | "
          f"{fnum(ratio(g(during, 'p999_us'), g(base, 'p999_us')), 2)}× | | |")
        w("")
        note = ("The load was started first and stopped when the sweep exited, so its measured window is the "
                "sweep's wall time (from just before the sweep started). Server CPU is scavengerd's and its PostgreSQL "
                "backends'; the sweep process and its backend (gone by the end of the window) are not in it. Both runs "
                "come after the write runs, so the feed also holds the pins POSTed there (at the query centres).")
        if g(during, "requests") < 10_000:
            note += (f" Only {fnum(g(during, 'requests'))} requests fell in the sweep's window: the p99 rests on few "
                     "samples, and the p99.9 and max on a handful.")
        w(note)
        w("")
    live_b, live_a = fmeta(meta, "sweep_live_before"), fmeta(meta, "sweep_live_after")
    exp_a = fmeta(meta, "sweep_expired_after")
    left = fmeta(meta, "sweep_left_replies") + fmeta(meta, "sweep_left_photos")
    ok = live_a == live_b and exp_a == 0 and left == 0
    w(f"After the sweep: {fnum(live_a)} pins (live before: {fnum(live_b)}, the {int(meta.get('pins', 0)):,} loaded "
      f"and those POSTed in the write runs), {fnum(exp_a)} expired, {fnum(left)} replies or photos of swept pins left "
      f"({'only the expired rows went' if ok else '**NOT as expected**'}).")
    w("")


def codes(text):
    """"OK:12,ERR_CONFLICT:3" → {"OK": 12, "ERR CONFLICT": 3}."""
    out = {}
    for part in (text or "").split(","):
        if ":" in part:
            code, n = part.rsplit(":", 1)
            out[code.replace("_", " ")] = out.get(code.replace("_", " "), 0) + int(n)
    return out


def codes_md(text):
    c = codes(text)
    return ", ".join(f"{k} {v:,}" for k, v in sorted(c.items(), key=lambda kv: (not kv[0].startswith("OK"), kv[0]))) or "none"


CROWD_RATIO, CROWD_TAIL = 0.5, 3.0


def crowd_targets(meta, crowd, agg):
    """Issue 38's targets for the crowd (scripts/bench.sh step 4e), as issue31_targets' rows: no
    INTERNAL, no UNAVAILABLE, every simultaneous JOIN OK, accepted CHECKIN ≥ 0.5× POST at each
    connection count, p99 CHECKIN ≤ 3× its p50; server CPU per accepted check-in stated."""
    if not crowd:
        return []
    rows = []

    def add(key, target, figure, verdict, short):
        rows.append({"key": key, "target": target, "figure": figure, "verdict": verdict, "short": short,
                     "brief": figure.split(" (")[0]})

    mixed = sorted((r for r in crowd if r.get("phase") == "mixed"), key=lambda r: int(r["conns"]))
    joins = [r for r in crowd if r.get("phase") == "join"]
    every, where = every_reply(crowd)
    for code in ("ERR INTERNAL", "ERR UNAVAILABLE"):
        n = every.get(code, 0)
        add(f"crowd-{code.split()[1].lower()}", f"crowd: 0 `{code}`", f"{n:,} ({where})", MET if n == 0 else MISSED,
            f"crowd: {code} replies = 0")
    for r in joins:
        n, ok = int(r["joiners"]), int(r["ok"])
        add("crowd-join", f"crowd: {n:,} simultaneous `JOIN`s of one hunt by its code all `OK`"
            + ("" if n == 300 else " (the issue's: 300)"),
            f"{ok:,} of {n:,} OK ({codes_md(r.get('replies'))}; last reply {r.get('last_ms', '?')} ms after the first write)",
            MET if ok == n else MISSED, f"crowd: {n} simultaneous JOINs all OK")
    for r in mixed:
        c = int(r["conns"])
        post = agg("scav", "post", c, "crowd")
        acc = float(r["accepted_per_s"])
        if post["n"]:
            x = ratio(acc, post["rps"])
            add(f"crowd-checkin-{c}", f"crowd: accepted `CHECKIN`/s (spread over {r.get('hunts', '?')} hunts) ≥ "
                f"{CROWD_RATIO}× `POST` at {conns_text(c)}",
                f"{fnum(x, 2)}× ({fnum(acc)} accepted/s in the mix against {fnum(post['rps'])} POST/s)",
                MET if round(x, 2) >= CROWD_RATIO else MISSED, f"crowd: CHECKIN ÷ POST, {conns_text(c)}: ≥ {CROWD_RATIO}×")
        p50, p99 = float(r["checkin_p50_us"]), float(r["checkin_p99_us"])
        x = ratio(p99, p50)
        add(f"crowd-tail-{c}", f"crowd: p99 `CHECKIN` ≤ {CROWD_TAIL:g}× its p50 at {conns_text(c)}",
            f"{fnum(x, 2)}× (p50 {fnum(p50 / 1000, 1)} ms, p99 {fnum(p99 / 1000, 1)} ms)",
            MET if at_most(x, CROWD_TAIL) else MISSED, f"crowd: CHECKIN p99 ÷ p50, {conns_text(c)}: ≤ {CROWD_TAIL:g}×")
        if post["n"] and r.get("server_cpu_ms_per_accepted", "nan") != "nan":
            per = float(r["server_cpu_ms_per_accepted"]) * 1000
            add(f"crowd-cpu-{c}", f"crowd: server CPU per accepted check-in ÷ a `POST`'s, {conns_text(c)} (issue: ≤ 4×)",
                f"{fnum(ratio(per, post['cpu_us']), 1)}× ({fnum(per)} µs, every request of the mix charged to the "
                f"check-ins, against {fnum(post['cpu_us'])} µs)", "stated (an upper bound: the mix's other requests "
                "are in it)", f"crowd: server CPU per accepted CHECKIN ÷ POST's, {conns_text(c)}")
    return rows


def every_reply(crowd):
    """Every crowd run's replies by code, and where they came from (for the 0 INTERNAL targets)."""
    every, runs = {}, Counter()
    for r in crowd:
        runs[r.get("phase", "?")] += 1
        for code, n in codes(r.get("replies")).items():
            every[code] = every.get(code, 0) + n
    names = {"mixed": "mixed", "teams": "team mixed", "checkin": "check-ins-alone", "teamcheckin": "team check-ins-alone",
             "join": "join burst"}
    where = f"{sum(every.values()):,} replies in " + ", ".join(
        f"{n} {names.get(phase, phase)} run{'' if n == 1 else 's'}" for phase, n in runs.items())
    return every, where


CHECKIN_RATIO, CHECKIN_CPU, TEAM_RATIO, CHECKIN_TAIL = 0.5, 3.0, 0.8, 3.0
ISSUE51_LEVELS = (8, 32)


def issue51_targets(meta, crowd, runs):
    """Issue 51's targets for the keyed path (scripts/bench.sh step 4e's check-ins alone, each beside a
    POST run of the same label): rows as crowd_targets', verdict met, MISSED or "not measured (why)"."""
    if not crowd:
        return []
    rows = []

    def add(key, target, figure, verdict, short):
        rows.append({"key": key, "target": target, "figure": figure, "verdict": verdict, "short": short,
                     "brief": figure.split(" (")[0]})

    posts = {(r.get("label"), int(r["conns"])): r for r in runs
             if r.get("target") == "scav" and r.get("op") == "post" and r.get("label", "").startswith("rcrowd")}
    alone = defaultdict(dict)  # (phase, keyed) → conns → crowd line
    for r in crowd:
        if r.get("phase") in ("checkin", "teamcheckin"):
            alone[(r["phase"], r.get("keyed", "1"))][int(r["conns"])] = r
    levels = sorted(set(ISSUE51_LEVELS) | {c for runs_at in alone.values() for c in runs_at})
    none = ("not measured (no check-ins-alone runs: a bench.sh before issue 51)" if not alone else None)
    hunts = meta.get("crowd_hunts", "?")
    hunts_note = "" if hunts == "100" else f" (this run: {hunts} hunts; the issue's: 100)"

    def post_of(r):
        return posts.get((r.get("label"), int(r["conns"])))

    def post_cpu_us(p):
        return float(p["server_cpu_pct"]) / 100 * 1e6 / float(p["rps"]) if float(p["rps"]) > 0 else float("nan")

    def cpu_us(r):
        v = r.get("server_cpu_ms_per_accepted", "nan")
        return float(v) * 1000 if v != "nan" else float("nan")

    def others(r):
        n = sum(int(r.get(f"n_{k}", 0)) for k in ("leave", "join", "leaderboard", "reply"))
        return f"; {n:,} of its {int(r.get('requests', 0)):,} requests not check-ins, charged to them" if n else ""

    def missing_at(c, what):
        if none:
            return none
        return f"not measured (no {what} at {conns_text(c)}: `--crowd-conns {meta.get('crowd_conns', '?')}`)"

    for c in levels:
        k, u = alone[("checkin", "1")].get(c), alone[("checkin", "0")].get(c)
        target = f"accepted keyed `CHECKIN`/s (check-ins alone, across the hunts) ≥ {CHECKIN_RATIO}× `POST`, {conns_text(c)}{hunts_note}"
        short = f"keyed CHECKIN ÷ POST, {conns_text(c)}: ≥ {CHECKIN_RATIO}×"
        kp = post_of(k) if k else None
        if k and kp:
            x = ratio(float(k["accepted_per_s"]), float(kp["rps"]))
            unk = ""
            if u and post_of(u):
                up = post_of(u)
                unk = (f"; unkeyed {fnum(ratio(float(u['accepted_per_s']), float(up['rps'])), 2)}×, "
                       f"{fnum(float(u['accepted_per_s']))} against {fnum(float(up['rps']))}")
            add(f"k-checkin-{c}", target, f"{fnum(x, 2)}× ({fnum(float(k['accepted_per_s']))} accepted/s against "
                f"{fnum(float(kp['rps']))} POST/s in the run beside it{unk})",
                MET if round(x, 2) >= CHECKIN_RATIO else MISSED, short)
        elif c in ISSUE51_LEVELS:
            add(f"k-checkin-{c}", target, "–", missing_at(c, "keyed check-ins-alone run beside a POST"), short)
        target = f"server CPU per accepted keyed check-in ≤ {CHECKIN_CPU:g}× a `POST`'s, {conns_text(c)}"
        short = f"keyed CHECKIN CPU ÷ POST's, {conns_text(c)}: ≤ {CHECKIN_CPU:g}×"
        if k and kp and cpu_us(k) == cpu_us(k):
            x = ratio(cpu_us(k), post_cpu_us(kp))
            unk = ""
            if u and post_of(u) and cpu_us(u) == cpu_us(u):
                unk = f"; unkeyed {fnum(ratio(cpu_us(u), post_cpu_us(post_of(u))), 1)}×, {fnum(cpu_us(u))} µs"
            add(f"k-cpu-{c}", target, f"{fnum(x, 1)}× ({fnum(cpu_us(k))} µs against the POST's {fnum(post_cpu_us(kp))} µs, "
                f"daemon and PostgreSQL{others(k)}{unk})", MET if at_most(x, CHECKIN_CPU) else MISSED, short)
        elif c in ISSUE51_LEVELS:
            add(f"k-cpu-{c}", target, "–", missing_at(c, "keyed check-ins-alone run beside a POST"), short)
    for c in levels:
        k, t = alone[("checkin", "1")].get(c), alone[("teamcheckin", "1")].get(c)
        target = f"team check-ins (keyed, alone) ≥ {TEAM_RATIO}× single players', {conns_text(c)}"
        short = f"keyed team ÷ single check-ins, {conns_text(c)}: ≥ {TEAM_RATIO}×"
        if k and t:
            x = ratio(float(t["accepted_per_s"]), float(k["accepted_per_s"]))
            done = int(t.get("teams_done", 0))
            add(f"k-teams-{c}", target, f"{fnum(x, 2)}× ({fnum(float(t['accepted_per_s']))} against "
                f"{fnum(float(k['accepted_per_s']))} accepted/s; {t.get('teams', '?')} teams, "
                + (f"**{done} ran out of stops**" if done else "none out of stops") + ")",
                MET if round(x, 2) >= TEAM_RATIO else MISSED, short)
        elif c in ISSUE51_LEVELS:
            add(f"k-teams-{c}", target, "–", "not measured (no team crowd: `--crowd-teams 0`)"
                if meta.get("crowd_teams") == "0" else missing_at(c, "keyed check-ins-alone runs"), short)
    for c in levels:
        for phase, who in (("checkin", "single players"), ("teamcheckin", "teams")):
            r = alone[(phase, "1")].get(c)
            target = f"`CHECKIN` p99 ≤ {CHECKIN_TAIL:g}× p50 (keyed, alone, {who}), {conns_text(c)}"
            short = f"keyed CHECKIN p99 ÷ p50, {who}, {conns_text(c)}: ≤ {CHECKIN_TAIL:g}×"
            if r:
                p50, p99 = float(r["checkin_p50_us"]), float(r["checkin_p99_us"])
                x = ratio(p99, p50)
                add(f"k-tail-{phase}-{c}", target, f"{fnum(x, 2)}× (p50 {fnum(p50 / 1000, 1)} ms, p99 {fnum(p99 / 1000, 1)} ms)",
                    MET if at_most(x, CHECKIN_TAIL) else MISSED, short)
            elif c in ISSUE51_LEVELS and not (phase == "teamcheckin" and meta.get("crowd_teams") == "0"):
                add(f"k-tail-{phase}-{c}", target, "–", missing_at(c, "keyed check-ins-alone run"), short)
    every, where = every_reply(crowd)
    for code in ("ERR INTERNAL", "ERR UNAVAILABLE"):
        n = every.get(code, 0)
        add(f"k-{code.split()[1].lower()}", f"crowd: 0 `{code}`", f"{n:,} ({where})", MET if n == 0 else MISSED,
            f"crowd: {code} replies = 0")
    joins = [r for r in crowd if r.get("phase") == "join"]
    for r in joins:
        n, ok = int(r["joiners"]), int(r["ok"])
        keyed = "keyed" if r.get("keyed", "0") == "1" else "unkeyed"
        add("k-join", f"phase B: {n:,} simultaneous `JOIN`s ({keyed}) all `OK`" + ("" if n == 300 else " (the issue's: 300)"),
            f"{ok:,} of {n:,} OK ({codes_md(r.get('replies'))})", MET if ok == n else MISSED,
            f"phase B: {n} simultaneous JOINs ({keyed}) all OK")
    if not joins:
        add("k-join", "phase B: 300 simultaneous `JOIN`s all `OK`", "–", "not measured (no join burst in this run)",
            "phase B: 300 simultaneous JOINs all OK")
    return rows


def issue51_section(w, meta, rows):
    w("## Targets (issue 51: the path clients take, keyed writes)")
    w("")
    w("| target | figure | verdict |")
    w("| --- | --- | --- |")
    for r in rows:
        v = r["verdict"]
        w(f"| {r['target']} | {r['figure']} | {'**' + v + '**' if v == MISSED else v} |")
    w("")
    w("Check-ins alone: `crowd.py --mix checkin=100`, every write with a `REQUEST` key of its own (as the Swift client, "
      "/client.js and /play send them), each run right after a `POST` run at as many connections (its ratio is to that "
      "run); unkeyed: the same without keys, the path clients took before they sent keys. A single player with no stop left leaves and "
      "joins again (10 stops to a hunt), and those requests' CPU is charged to the check-ins; the team hunts draw no "
      "`LEAVE`/`JOIN` (final in a running team hunt since protocol 1.5): a team that found every stop stops checking in."
      + (" A quick run: indicative figures." if meta.get("quick") == "1" else ""))
    w("")


def issue51_summary(meta, rows):
    count = defaultdict(int)
    lines = []
    width = max(len(r["short"]) for r in rows)
    for r in rows:
        v = r["verdict"]
        tag = v if v in (MET, MISSED) else "–"
        count[tag] += 1
        note = "" if tag != "–" else "  [" + v.replace("`", "") + "]"
        lines.append(f"  {tag:<7} {r['short']:<{width}}  {r['brief']}{note}")
    head = (f"Targets (issue 51, the keyed path): {count[MET]} met, {count[MISSED]} MISSED, {count['–']} not measured"
            + (" (a quick run: indicative figures)" if meta.get("quick") == "1" else ""))
    return "\n".join([head] + lines)


def crowd_targets_section(w, meta, rows):
    w("## Targets (issue 38: the crowd)")
    w("")
    w("| target | figure | verdict |")
    w("| --- | --- | --- |")
    for r in rows:
        v = r["verdict"]
        w(f"| {r['target']} | {r['figure']} | {'**' + v + '**' if v == MISSED else v} |")
    w("")
    if meta.get("quick") == "1":
        w(f"A quick run ({fmeta(meta, 'seconds'):g} s runs, {fnum(fmeta(meta, 'crowd_players'))} players): indicative figures.")
        w("")


def crowd_summary(meta, rows):
    count = defaultdict(int)
    lines = []
    width = max(len(r["short"]) for r in rows)
    for r in rows:
        tag = r["verdict"] if r["verdict"] in (MET, MISSED) else "stated"
        count[tag] += 1
        lines.append(f"  {tag:<7} {r['short']:<{width}}  {r['brief']}")
    head = (f"Targets (issue 38, the crowd): {count[MET]} met, {count[MISSED]} MISSED, {count['stated']} stated"
            + (" (a quick run: indicative figures)" if meta.get("quick") == "1" else ""))
    return "\n".join([head] + lines)


def split_text(r):
    """" (daemon 60 %, PostgreSQL 90 %)" from cpu_pct_by_pid (the daemon's PID first, the postmaster's second)."""
    parts = [p.split(":")[1] for p in r.get("cpu_pct_by_pid", "").split(",") if ":" in p]
    return f" (daemon {parts[0]} %, PostgreSQL {parts[1]} %)" if len(parts) == 2 else ""


def crowd_section(w, meta, crowd, agg, runs=()):
    """Issue 38: the mixed crowd against POST at each connection count, and the JOIN burst; issue 51:
    check-ins alone, keyed and unkeyed, each beside a POST run of its label."""
    posts = {(r.get("label"), int(r["conns"])): r for r in runs
             if r.get("target") == "scav" and r.get("op") == "post" and r.get("label", "").startswith("rcrowd")}
    team_text = (f", {fnum(fmeta(meta, 'crowd_teams'))} teams of 5 in team hunts"
                 if float(meta.get("crowd_teams", "0") or 0) > 0 else "")
    w(f"## The crowd ({fnum(fmeta(meta, 'crowd_players'))} players in {fnum(fmeta(meta, 'crowd_hunts'))} hunts{team_text})")
    w("")
    w(f"A database of its own, written before the daemon started (scripts/bench/crowd.sql): "
      f"{fnum(fmeta(meta, 'crowd_players'))} players, each joined to one of {fnum(fmeta(meta, 'crowd_hunts'))} running "
      f"private hunts of 10 stops (radius 50 m, within ~400 m of each other), logged in by `AUTH` tokens; the daemon "
      f"with `--join-rate off --reply-rate off --join-failure-rate off` (one address, players as fast as they can). Phase A at each connection "
      f"count: `POST` (loadgen) then the mixed crowd (scripts/bench/crowd.py, Python asyncio, one request in flight per "
      f"connection, each connection playing its share of the players in turn, `AUTH` when it moves to the next), "
      f"mix `{meta.get('crowd_mix', '?')}`: every check-in at a stop of the player's hunt they have not checked in at, "
      f"from 3.3 m north of it; a player who left joins again by the code before anything else. "
      + (f"Then the same mix in the team hunts (protocol 1.4, TEAMS SIZE 5, 10 teams to a hunt, every player joined to a "
         f"team): a check-in at a stop the player's team has not found (a stop counts once per team), `JOIN code TEAM "
         f"\"name\"` for a player who left. " if team_text and "crowd_team_stops" not in meta else "")
      + (f"Then the same mix in the team hunts (protocol 1.4, TEAMS SIZE 5, 10 teams to a hunt of "
         f"{fnum(fmeta(meta, 'crowd_team_stops'))} stops, every player joined to a team) without `LEAVE` and `JOIN` (a "
         f"`LEAVE` of a running team hunt is final since protocol 1.5): a check-in at a stop the player's team has not found "
         f"(a stop counts once per team); a member whose team found every stop reads the leaderboard or chats instead. "
         if team_text and "crowd_team_stops" in meta else "")
      + ("Every write carries a `REQUEST` key of its own, as clients send them (but in the unkeyed check-ins-alone runs). "
         if meta.get("crowd_keyed") == "1" else "")
      + f"Load average before: "
      f"{meta.get('crowd_loadavg_start', '?')}; after: {meta.get('crowd_loadavg_end', '?')}.")
    w("")
    w("| conns | what | req/s | accepted CHECKIN/s | CHECKIN p50 / p99 ms | client CPU | server CPU | server CPU per accepted check-in (per POST) |")
    w("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    mixed = sorted((r for r in crowd if r.get("phase") == "mixed"), key=lambda r: int(r["conns"]))
    for r in mixed:
        c = int(r["conns"])
        post = agg("scav", "post", c, "crowd")
        if post["n"]:
            runs_text = f", median of {post['n']} runs" if post["n"] > 1 else ""
            w(f"| {c} | `POST` (loadgen{runs_text}) | {fnum(post['rps'])} | – | {fnum(post['p50'] / 1000, 2)} / {fnum(post['p99'] / 1000, 2)} "
              f"(POST) | {fnum(post['ccpu'])} % | {fnum(post['scpu'])} % | {fnum(post['cpu_us'])} µs |")
        w(f"| {c} | the mixed crowd (crowd.py) | {fnum(float(r['rps']))} | **{fnum(float(r['accepted_per_s']))}** | "
          f"{fnum(float(r['checkin_p50_us']) / 1000, 2)} / {fnum(float(r['checkin_p99_us']) / 1000, 2)} | "
          f"{fnum(float(r['client_cpu_pct']))} % | {fnum(float(r['server_cpu_pct']))} %{split_text(r)} | "
          f"{fnum(float(r['server_cpu_ms_per_accepted']) * 1000)} µs |")
        for t in (t for t in crowd if t.get("phase") == "teams" and int(t["conns"]) == c):
            w(f"| {c} | the team crowd ({fnum(float(t['teams']))} teams of 5; team check-ins) | {fnum(float(t['rps']))} | "
              f"**{fnum(float(t['accepted_per_s']))}** | "
              f"{fnum(float(t['checkin_p50_us']) / 1000, 2)} / {fnum(float(t['checkin_p99_us']) / 1000, 2)} | "
              f"{fnum(float(t['client_cpu_pct']))} % | {fnum(float(t['server_cpu_pct']))} %{split_text(t)} | "
              f"{fnum(float(t['server_cpu_ms_per_accepted']) * 1000) if t.get('server_cpu_ms_per_accepted', 'nan') != 'nan' else '–'} µs |")
        for t in sorted((t for t in crowd if t.get("phase") in ("checkin", "teamcheckin") and int(t["conns"]) == c),
                        key=lambda t: (t["phase"], t.get("keyed") != "1")):
            p = posts.get((t.get("label"), c))
            beside = (f"; `POST` beside it {fnum(float(p['rps']))}/s, {fnum(float(p['server_cpu_pct']) / 100 * 1e6 / float(p['rps']))} µs each"
                      if p and float(p["rps"]) > 0 else "")
            who = "team" if t["phase"] == "teamcheckin" else "single-player"
            w(f"| {c} | {who} check-ins alone, {'keyed' if t.get('keyed', '1') == '1' else 'unkeyed'}{beside} | "
              f"{fnum(float(t['rps']))} | **{fnum(float(t['accepted_per_s']))}** | "
              f"{fnum(float(t['checkin_p50_us']) / 1000, 2)} / {fnum(float(t['checkin_p99_us']) / 1000, 2)} | "
              f"{fnum(float(t['client_cpu_pct']))} % | {fnum(float(t['server_cpu_pct']))} %{split_text(t)} | "
              f"{fnum(float(t['server_cpu_ms_per_accepted']) * 1000) if t.get('server_cpu_ms_per_accepted', 'nan') != 'nan' else '–'} µs |")
    w("")
    w("| conns | command | sent | p50 / p99 ms | replies by code |")
    w("| ---: | --- | ---: | ---: | --- |")
    others = sorted((r for r in crowd if r.get("phase") in ("teams", "checkin", "teamcheckin")),
                    key=lambda r: (int(r["conns"]), r["phase"], r.get("keyed") != "1"))
    marks = {"teams": " (teams)", "checkin": " (check-ins alone)", "teamcheckin": " (teams, check-ins alone)"}
    for r in mixed + others:
        for kind in ("checkin", "leaderboard", "reply", "leave", "join", "auth"):
            n = int(r.get(f"n_{kind}", 0))
            if not n:
                continue
            mark = marks.get(r.get("phase"), "")
            if r.get("phase") in ("checkin", "teamcheckin"):
                mark = mark[:-1] + (", unkeyed)" if r.get("keyed") == "0" else ", keyed)")
            w(f"| {r['conns']}{mark} | `{kind.upper()}` | {n:,} | {fnum(float(r[f'p50_{kind}_us']) / 1000, 2)} / "
              f"{fnum(float(r[f'p99_{kind}_us']) / 1000, 2)} | {codes_md(r.get(f'replies_{kind}'))} |")
    w("")
    for r in (r for r in crowd if r.get("phase") == "join"):
        sent = "`JOIN code REQUEST key` (each its own key)" if r.get("keyed") == "1" else "`JOIN code`"
        w(f"Phase B: {int(r['joiners']):,} players, each on a connection of its own and logged in, sent {sent} of "
          f"one hunt at one instant (every line written in {r.get('written_ms', '?')} ms, one pass of the event loop): "
          f"**{int(r['ok']):,} OK**; replies {codes_md(r.get('replies'))}; median reply {r.get('p50_ms', '?')} ms, the last "
          f"{r.get('last_ms', '?')} ms after the first write. The hunt then holds "
          f"{fnum(fmeta(meta, 'crowd_join_players'))} players (its count says {fnum(fmeta(meta, 'crowd_join_player_count'))}).")
        w("")
    if "crowd_checkin_points" in meta:
        cp, pp = fmeta(meta, "crowd_checkin_points"), fmeta(meta, "crowd_player_points")
        bad = fmeta(meta, "crowd_stops_miscounted")
        w(f"In the database afterwards: the players' points {'are' if cp == pp else '**are not**'} their accepted "
          f"check-ins' sum ({fnum(pp)} and {fnum(cp)}); {fnum(bad)} stops have a `found_by` other than their accepted "
          f"check-ins.")
        if "crowd_team_points" in meta:
            tc, tp = fmeta(meta, "crowd_team_checkin_points"), fmeta(meta, "crowd_team_points")
            w(f"In the team hunts the teams' points {'are' if tc == tp else '**are not**'} their members' accepted "
              f"check-ins' sum ({fnum(tp)} and {fnum(tc)}).")
        w("")


def fanout_section(w, meta, verdict):
    """Issue 31: WATCHers of one city while pins are POSTed into it; delay, memory, CPU per event."""
    r = parse_kv(meta["fanout_line"])
    g = lambda k: float(r.get(k, "nan"))  # noqa: E731
    watchers = int(g("watchers"))
    kb = g("watch_conn_bytes") / 1024
    w(f"## Live fan-out ({watchers:,} watchers, {fnum(g('rate'))} pins/s)")
    w("")
    w(f"A database of its own, no pins. {watchers:,} connections, each with one `WATCH` of a {fnum(g('radius_m'))} m circle "
      f"centred uniformly in a {fnum(g('box_km'))} km square around Berlin; then {int(g('posters'))} posters (users of their "
      f"own) POST {fnum(g('rate'))} pins/s in all for {g('seconds'):g} s, open loop, uniform in the same square. Each "
      f"EVENT is timed from the moment its POST's OK was read to the moment the EVENT was read, in one process "
      f"(scripts/bench/fanout.c) on one monotonic clock. Load average before: {meta.get('fanout_loadavg_start', '?')}; "
      f"after: {meta.get('fanout_loadavg_end', '?')}.")
    w("")
    w("| what | figure |")
    w("| --- | ---: |")
    w(f"| pins posted (OK) / errors | {fnum(g('posts_ok'))} / {fnum(g('post_errors'))} ({fnum(g('achieved_rate'), 1)}/s) |")
    w(f"| events delivered / expected (± within 1 m of an edge) | {fnum(g('events'))} / {fnum(g('expected'))} (+ up to "
      f"{fnum(g('edge'))}); missing {fnum(g('missing'))}, stray {fnum(g('stray'))}, twice {fnum(g('duplicates'))}, "
      f"overflows {fnum(g('overflows'))} |")
    w(f"| events read before their POST's OK (counted as 0 ms) | {fnum(g('events_before_ok'))} |")
    w(f"| delivery p50 / p90 / p99 / p99.9 / max | {fnum(g('p50_ms'), 1)} / {fnum(g('p90_ms'), 1)} / **{fnum(g('p99_ms'), 1)}** / "
      f"{fnum(g('p999_ms'), 1)} / {fnum(g('max_ms'), 1)} ms |")
    w(f"| POST latency (send → OK) p50 / p99 / max | {fnum(g('post_p50_ms'), 1)} / {fnum(g('post_p99_ms'), 1)} / "
      f"{fnum(g('post_max_ms'), 1)} ms |")
    w(f"| daemon CPU per delivered event (the POSTs' included) | {fnum(g('cpu_us_per_event'), 1)} µs ({fnum(g('daemon_cpu_pct'))} % of a core "
      f"over {fnum(g('window_s'), 1)} s) |")
    w(f"| RSS before the connections / idle / watching | {g('rss_before_kb') / 1024:,.1f} / {g('rss_idle_kb') / 1024:,.1f} / "
      f"{g('rss_watch_kb') / 1024:,.1f} MB |")
    w(f"| memory per idle connection / idle watching connection | {g('idle_conn_bytes') / 1024:,.1f} / **{kb:,.1f} KB** |")
    w(f"| time to connect all / to WATCH on all | {fnum(g('connect_s'), 2)} / {fnum(g('watch_s'), 2)} s |")
    w(f"| client: CPU, POSTs sent late by p99 / max | {fnum(g('client_cpu_pct'))} %, {fnum(g('send_lag_p99_ms'), 2)} / "
      f"{fnum(g('send_lag_max_ms'), 2)} ms |")
    w("")
    w(f"Issue 31: delivery p99 {fnum(g('p99_ms'), 1)} ms (target < 50 ms: {verdict('fanout-p99')}); memory per idle "
      f"watching connection {kb:,.1f} KB (target ≤ 16 KB: {verdict('fanout-mem')})."
      + (" (The issue's targets are for 10,000 watchers at 200 pins/s.)" if watchers != 10000 or g("rate") != 200 else ""))
    w("")


if __name__ == "__main__":
    main()
