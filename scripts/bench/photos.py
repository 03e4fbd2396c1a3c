#!/usr/bin/env python3
"""Photo pins for the thumbnails' benchmark (scripts/bench/steps/map.sh, issue 55).

Makes a few real JPEGs with libvips's command-line tool (`vips`, Debian's libvips-tools: the
library the daemon makes its sizes with): 1600x1200 photos of soft stripes under noise, each of
its own pattern and noise seed, so every run posts the same bytes. Then, on one connection to
the daemon's line port, REGISTERs a user of its own and POSTPHOTOs --count photos (the variants
in turn, at the first --count lines of --centres), and waits until the daemon has made each
one's thumbnail: `GET /photos/ID?size=thumb` on the HTTP port answers the original with
`Cache-Control: no-cache` until then, and the thumbnail with `immutable` after. Each thumbnail
is saved once, as the daemon served it, to OUT/photos/ID (so a static server with root OUT
answers the same path, /photos/ID?size=thumb, with the same bytes), and the paths are written
to OUT/paths.txt, one a line.

Prints one line of key=value pairs: photos, original_bytes (mean), thumb_bytes (mean),
post_s (the POSTPHOTOs), sizes_s (from the last POSTPHOTO until every thumbnail was made).
Standard library only.
"""

import argparse
import base64
import http.client
import json
import os
import socket
import subprocess
import sys
import time


def make_photos(workdir, variants):
    """The variants' JPEG bytes, made once into workdir (reused when there)."""
    photos = []
    for k in range(variants):
        path = os.path.join(workdir, f"photo-{k}.jpg")
        if not os.path.exists(path):
            v = lambda name: os.path.join(workdir, f"{name}-{k}.v")  # noqa: E731
            steps = [
                ["sines", v("s"), "1600", "1200", "--hfreq", str(1 + k % 4), "--vfreq", str(1 + k // 4)],
                ["linear", v("s"), v("l"), "90", str(100 + 8 * k), "--uchar"],
                ["gaussnoise", v("n"), "1600", "1200", "--sigma", "25", "--mean", "0", "--seed", str(42 + k)],
                ["add", v("l"), v("n"), v("a")],
                ["cast", v("a"), v("c"), "uchar"],
                ["bandjoin", f"{v('c')} {v('l')} {v('c')}", v("rgb")],
                ["copy", v("rgb"), path + "[Q=85,strip]"],
            ]
            for args in steps:
                subprocess.run(["vips", *args], check=True)
            for name in ("s", "l", "n", "a", "c", "rgb"):
                os.remove(v(name))
        with open(path, "rb") as f:
            photos.append(f.read())
    return photos


def line_roundtrip(sock, reader, line):
    sock.sendall(line.encode() + b"\n")
    reply = reader.readline()
    if not reply:
        sys.exit("photos.py: the daemon closed the connection")
    return reply.decode().rstrip("\n")


def fetch(conn, path):
    """GET path on a kept-alive connection: (status, headers, body)."""
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True, help="the daemon's line port")
    ap.add_argument("--http-port", type=int, required=True, help="the daemon's HTTP port")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--variants", type=int, default=8)
    ap.add_argument("--centres", required=True)
    ap.add_argument("--workdir", required=True, help="where the JPEGs are made")
    ap.add_argument("--out", required=True, help="OUT/photos/ID and OUT/paths.txt are written")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    os.makedirs(os.path.join(args.out, "photos"), exist_ok=True)
    photos = make_photos(args.workdir, args.variants)
    encoded = [base64.b64encode(p).decode() for p in photos]
    with open(args.centres, encoding="utf-8") as f:
        centres = [line.strip().split(",") for line in f if line.strip()][: args.count]
    if len(centres) < args.count:
        sys.exit(f"photos.py: {args.centres} has fewer than {args.count} places")

    sock = socket.create_connection(("127.0.0.1", args.port))
    reader = sock.makefile("rb")
    name = f"mapbench{os.getpid()}x{int(time.time())}"
    reply = line_roundtrip(sock, reader, f"REGISTER {name} {name}@bench.invalid bench-pass-{os.getpid()}")
    if not reply.startswith("OK "):
        sys.exit(f"photos.py: REGISTER: {reply}")
    t0 = time.monotonic()
    paths = []
    for i, (lat, lon) in enumerate(centres):
        reply = line_roundtrip(sock, reader, f'POSTPHOTO {lat} {lon} {encoded[i % len(encoded)]} CAPTION "map bench photo {i}"')
        if not reply.startswith("OK "):
            sys.exit(f"photos.py: POSTPHOTO: {reply[:200]}")
        pin = json.loads(reply[3:])["pin"]
        paths.append(pin.get("thumb") or f"/photos/{pin['id']}?size=thumb")
    post_s = time.monotonic() - t0
    sock.close()

    # Each thumbnail once it is made: the original (no-cache) stands in until then.
    t1 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", args.http_port, timeout=30)
    pending = list(paths)
    thumb_bytes = 0
    while pending:
        if time.monotonic() - t1 > args.timeout:
            sys.exit(f"photos.py: {len(pending)} thumbnails still not made after {args.timeout:.0f} s")
        waiting = []
        for path in pending:
            status, headers, body = fetch(conn, path)
            if status != 200:
                sys.exit(f"photos.py: GET {path}: {status}")
            if "immutable" not in headers.get("cache-control", ""):
                waiting.append(path)
                continue
            if body[:2] != b"\xff\xd8" or len(body) >= min(len(p) for p in photos):
                sys.exit(f"photos.py: GET {path}: not a JPEG thumbnail ({len(body)} bytes)")
            photo_id = path.split("?")[0].rsplit("/", 1)[1]
            with open(os.path.join(args.out, "photos", photo_id), "wb") as f:
                f.write(body)
            thumb_bytes += len(body)
        pending = waiting
        if pending:
            time.sleep(0.2)
    sizes_s = time.monotonic() - t1
    conn.close()
    with open(os.path.join(args.out, "paths.txt"), "w", encoding="utf-8") as f:
        f.writelines(p + "\n" for p in paths)
    print(f"photos={len(paths)} original_bytes={sum(len(photos[i % len(photos)]) for i in range(len(paths))) // len(paths)} "
          f"thumb_bytes={thumb_bytes // len(paths)} post_s={post_s:.2f} sizes_s={sizes_s:.2f}")


if __name__ == "__main__":
    main()
