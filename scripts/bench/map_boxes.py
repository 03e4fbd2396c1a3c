#!/usr/bin/env python3
"""Map boxes for the MAP benchmark (scripts/bench/steps/map.sh, issue 55), and a check that
scavengerd's MAP and PostGIS's grid query count the same pins in them.

`map_boxes.py boxes --centres FILE --seed X --zoom Z --count N --out PREFIX` writes N boxes the size
of a phone's screen (1280 x 800 px of 256-px Web Mercator tiles at zoom Z) around centres drawn
from FILE (lat,lon a line: the data's query centres, placed where people are) by a generator
seeded with X and Z, so both servers get the same boxes in the same order:
  PREFIX.scav   `MAP south west north east ZOOM z` a line (LIMIT: MAP's default, 500)
  PREFIX.pg     `x0,y0,x1,y1,origin,size` a line, EPSG:3857 metres: the envelope of the cells MAP
                counts (the tiles of level z + 2 the box touches, whole: MAP counts every pin of
                a cell it touches), and the grid ST_SnapToGrid snaps to the cells' centres with
                (origin −E + size/2 in both axes, size 2E / 2^(z+2))
A box is moved, not wrapped, to stay inside the map (no box crosses the antimeridian).

`map_boxes.py check --lines PREFIX --boxes K --port P --psql CMD…` sends the first K boxes' MAP
to the daemon on port P and the same boxes' grid query (without LIMIT) to PostGIS through the
psql command line CMD (the rest of the arguments, which must read SQL on stdin and print rows
unaligned), and compares the total, the number of non-empty cells and the fullest cells' counts.
Prints `checked=K total_pins=… cells=… mismatches=…` and exits 1 on a mismatch.
"""

import argparse
import json
import math
import random
import socket
import subprocess
import sys

E = 20037508.342789244  # half the Web Mercator world's width, metres
MAX_LAT = 85.05112877980659
SCREEN = (1280, 800)

GRID_SQL = ("SELECT count(*) AS n, avg(lat) AS lat, avg(lon) AS lon FROM map_pins "
            "WHERE geom && ST_MakeEnvelope($1, $2, $3, $4, 3857) "
            "GROUP BY ST_SnapToGrid(geom, $5, $5, $6, $6) ORDER BY n DESC LIMIT 500")


def merc_y(lat):
    """Web Mercator y of a latitude, 0 at the north edge to 1 at the south edge (MapGrid.y)."""
    r = math.radians(min(MAX_LAT, max(-MAX_LAT, lat)))
    return (1 - math.log(math.tan(r) + 1 / math.cos(r)) / math.pi) / 2


def lat_of(y):
    return math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y))))


def column(lon, level):
    side = 1 << level
    return int(min(side - 1, max(0, math.floor((lon + 180) / 360 * side))))


def row(lat, level):
    side = 1 << level
    return int(min(side - 1, max(0, math.floor(merc_y(lat) * side))))


def boxes(args):
    with open(args.centres, encoding="utf-8") as f:
        centres = [tuple(map(float, line.split(","))) for line in f if line.strip()]
    rng = random.Random(args.seed * 100 + args.zoom)
    world = 256 * (1 << args.zoom)
    half_w, half_h = SCREEN[0] / 2, SCREEN[1] / 2
    level = args.zoom + 2
    size = 2 * E / (1 << level)
    with open(args.out + ".scav", "w", encoding="utf-8") as scav, open(args.out + ".pg", "w", encoding="utf-8") as pg:
        for _ in range(args.count):
            lat, lon = rng.choice(centres)
            cx = min(world - half_w, max(half_w, (lon + 180) / 360 * world))
            cy = min(world - half_h, max(half_h, merc_y(lat) * world))
            south, north = lat_of((cy + half_h) / world), lat_of((cy - half_h) / world)
            west, east = (cx - half_w) / world * 360 - 180, (cx + half_w) / world * 360 - 180
            # As the daemon reads them: six decimals.
            south, west, north, east = (float(f"{v:.6f}") for v in (south, west, north, east))
            scav.write(f"MAP {south:.6f} {west:.6f} {north:.6f} {east:.6f} ZOOM {args.zoom}\n")
            c0, c1 = column(west, level), column(east, level)
            r0, r1 = row(north, level), row(south, level)
            x0, x1 = -E + c0 * size, -E + (c1 + 1) * size
            y1, y0 = E - r0 * size, E - (r1 + 1) * size
            pg.write(f"{x0!r},{y0!r},{x1!r},{y1!r},{-E + size / 2!r},{size!r}\n")


def check(args, psql):
    with open(args.lines + ".scav", encoding="utf-8") as f:
        maps = [line.strip() for line in f][: args.boxes]
    with open(args.lines + ".pg", encoding="utf-8") as f:
        grids = [line.strip().split(",") for line in f][: args.boxes]
    sock = socket.create_connection(("127.0.0.1", args.port))
    reader = sock.makefile("rb")
    sql = []
    for k, g in enumerate(grids):
        unlimited = GRID_SQL.replace(" LIMIT 500", "")
        for n in range(6, 0, -1):
            unlimited = unlimited.replace(f"${n}", f"{float(g[n - 1])!r}")
        sql.append(f"SELECT {k}, string_agg(n::text, ' ' ORDER BY n DESC) FROM ({unlimited}) c;")
    out = subprocess.run(psql, input="\n".join(sql) + "\n", capture_output=True, text=True, check=True).stdout
    pg_counts = {}
    for line in out.splitlines():
        k, _, counts = line.partition("|")
        if k.strip().isdigit():
            pg_counts[int(k)] = [int(c) for c in counts.split()] if counts.strip() else []
    mismatches = []
    total_pins = cells = 0
    for k, line in enumerate(maps):
        sock.sendall(line.encode() + b"\n")
        reply = reader.readline().decode()
        if not reply.startswith("OK "):
            sys.exit(f"map_boxes.py: {line}: {reply[:200]}")
        answer = json.loads(reply[3:])
        counts = [c["count"] for c in answer["cells"]]
        theirs = pg_counts.get(k, [])
        total_pins += answer["total"]
        cells += len(theirs)
        # MAP lists at most 500 cells (the fullest): compare those and the total.
        if answer["total"] != sum(theirs) or counts != theirs[: len(counts)] or (len(theirs) <= 500 and len(counts) != len(theirs)):
            mismatches.append(f"box {k} ({line}): MAP total {answer['total']} in {len(counts)} cells, "
                              f"PostGIS {sum(theirs)} in {len(theirs)} cells")
    sock.close()
    print(f"checked={len(maps)} total_pins={total_pins} cells={cells} mismatches={len(mismatches)}")
    for m in mismatches[:5]:
        print("  " + m, file=sys.stderr)
    # A pin exactly on a cell's edge may fall on either side in PostGIS's arithmetic: a few are
    # allowed, not a systematic difference.
    return 1 if len(mismatches) > max(1, len(maps) // 20) else 0


def main():
    argv = sys.argv[1:]
    psql = []
    if "--psql" in argv:
        at = argv.index("--psql")
        argv, psql = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("boxes")
    b.add_argument("--centres", required=True)
    b.add_argument("--seed", type=int, required=True)
    b.add_argument("--zoom", type=int, required=True)
    b.add_argument("--count", type=int, default=1000)
    b.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("--lines", required=True)
    c.add_argument("--boxes", type=int, default=20)
    c.add_argument("--port", type=int, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "boxes":
        boxes(args)
        return 0
    if not psql:
        sys.exit("map_boxes.py check: --psql CMD… is needed")
    return check(args, psql)


if __name__ == "__main__":
    sys.exit(main())
