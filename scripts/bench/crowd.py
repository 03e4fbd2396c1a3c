#!/usr/bin/env python3
"""The crowd driver of scripts/bench.sh --only crowd (issue 38). Python 3, standard library only.

Two phases, each a function with its inputs named, each printing one line of key=value figures:

  crowd.py mixed --port P --tag T --state FILE --conns C --seconds S [--warmup W]
                 [--mix checkin=70,leaderboard=12,reply=8,leave=5,join=5] [--cpu-pids P,P] [--seed X]
                 [--unkeyed] [--phase NAME]
      Phase A: C connections, closed loop (one request in flight each), for S seconds after an
      unrecorded warm-up of W seconds. Connection i plays the players of FILE whose number is i
      modulo C, one at a time from one drawn at random (AUTH with the player's token when it moves
      to another: after about seven requests, or when the player has nothing left to do for the
      command drawn), so the crowd's check-ins are spread over every hunt. Each request draws its
      command from the mix:
        CHECKIN stop lat lon ACCURACY 5   at a stop of the player's hunt they have not checked in at,
                                          from 3.3 m north of it (inside its 50 m): it is accepted
        LEADERBOARD hunt LIMIT 10         the player's hunt
        REPLY hunt "text"                 the hunt's chat
        LEAVE hunt                        the player leaves (their check-ins go with them)
        JOIN code                         a player who left joins again (or one who has not left
                                          joins again, which changes nothing and answers the same)
      A player who has left joins first, whatever was drawn; a player with no stop left gives the
      draw to another of the connection's players, or leaves when none has one.
      When FILE lists team players (`member` lines, the team crowd of team hunts, protocol 1.4), the
      run plays them the same way and prints phase=teams: a stop counts once per team, so a member's
      CHECKIN goes to a stop no member of their team has a check-in at or is checking in at on
      another connection (teammates share out the stops). The mix draws no LEAVE and no JOIN there:
      since protocol 1.5 a LEAVE of a running team hunt is final (a later JOIN is ERR CONFLICT), so
      the printed mix leaves them out (mix_dropped=leave,join), members who are not joined (FILE says
      0) are not played (members_out=), and a member whose team has found every stop draws
      LEADERBOARD or REPLY instead (by their weights; LEADERBOARD when both are 0); teams_done= and
      team_stops_left= say at the end how many teams found every stop and how many stops are left.
      Every write (CHECKIN, REPLY, LEAVE, JOIN) carries `REQUEST <key>`, a key of its own (a prefix
      drawn for the run, then a counter), as the Swift client, /client.js and /play send them;
      --unkeyed sends them without, the path before keys (keyed=1 or 0 in the figures). --phase
      sets the phase= printed (default mixed, or teams for a team FILE).
  crowd.py join --port P --tag T --code CODE --joiners N [--unkeyed]
      Phase B: N connections, each logged in with AUTH as players 1 … N, then one barrier: every
      connection's `JOIN CODE REQUEST <key>` (each its own key; without one with --unkeyed) written
      in one pass of the event loop, then every reply read.

FILE (written by bench.sh from the database before each phase A run): lines
  hunt <id> <code> <stop>,<lat>,<lon> …        every crowd hunt and its stops (the fix: 3.3 m north)
  player <name> <hunt id> <joined 0|1> <stop id>,…   the stops the player already checked in at
  member <name> <hunt id> <joined 0|1> <team> <stop id>,…   the same for a team hunt's player: the
                                               team's name with '_' for each space

Every reply is counted by its code (OK, or ERR and its code word) per command; CHECKIN's OK also by
its status (accepted, flagged, pending). Latency: from writing the line to reading the reply.
The driver's own CPU (user + system, this process) and the servers' (--cpu-pids: /proc of each PID
and its direct children, as loadgen.c reads them) over the recorded window are printed with the
figures, so it shows whether the driver is the bottleneck. Traffic only to 127.0.0.1.
"""

import argparse
import asyncio
import itertools
import os
import random
import secrets
import sys
import time
from collections import Counter, defaultdict

HOST = "127.0.0.1"
REPLY_TIMEOUT_S = 60.0       # a reply not read within this ends the run with an error
SWITCH_CHANCE = 0.15          # after each request, the chance the connection moves to its next player
DEFAULT_MIX = "checkin=70,leaderboard=12,reply=8,leave=5,join=5"
KINDS = ("checkin", "leaderboard", "reply", "leave", "join")
# Not drawn in team hunts: since protocol 1.5 a LEAVE of a running team hunt is final.
TEAM_DROPPED = ("leave", "join")


class Keys:
    """REQUEST keys: a prefix drawn for the run (so no two runs share a key) and a counter, in the
    keys' alphabet (A-Z a-z 0-9 _ -, 8–64 long); none when unkeyed."""

    def __init__(self, keyed):
        self.keyed, self.prefix, self.count = keyed, "b" + secrets.token_hex(6), itertools.count(1)

    def line(self, text):
        """The write as sent: with ` REQUEST <key>` at its end unless unkeyed."""
        return f"{text} REQUEST {self.prefix}-{next(self.count):x}" if self.keyed else text


class Player:
    def __init__(self, name, token, hunt, joined, done, team=None):
        self.name, self.token, self.hunt, self.joined = name, token, hunt, joined
        self.done = set(done)             # stop ids checked in at (live), forgotten on LEAVE
        self.team = team                  # in a team hunt: the Team, shared with the teammates

    def stops_left(self, hunts):
        # In a team hunt a stop counts once per team: what any member still in the team found,
        # or is checking in at now (on another connection), is not another member's to find.
        done = self.team.done() | self.team.going if self.team else self.done
        return [s for s in hunts[self.hunt]["stops"] if s[0] not in done]

    def join_line(self, hunts):
        line = f"JOIN {hunts[self.hunt]['code']}"
        return line + f' TEAM "{self.team.name}"' if self.team else line


class Team:
    def __init__(self, name):
        self.name, self.members = name, []
        self.going = set()                # stop ids a member's CHECKIN is in flight to

    def done(self):
        return set().union(*(m.done for m in self.members if m.joined))

    def stops_left(self, hunts):
        done = self.done()
        return sum(1 for s in hunts[self.members[0].hunt]["stops"] if s[0] not in done)


def read_state(path, tag):
    hunts, players, teams = {}, [], {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "hunt":
                hunts[w[1]] = {"code": w[2], "stops": [tuple(s.split(",")) for s in w[3:]]}
            elif w[0] == "player":
                done = w[4].split(",") if len(w) > 4 and w[4] else []
                players.append(Player(w[1], f"hct_{tag}_{w[1]}", w[2], w[3] == "1", done))
            elif w[0] == "member":
                done = w[5].split(",") if len(w) > 5 and w[5] else []
                team = teams.setdefault((w[2], w[4]), Team(w[4].replace("_", " ")))
                player = Player(w[1], f"hct_{tag}_{w[1]}", w[2], w[3] == "1", done, team)
                team.members.append(player)
                players.append(player)
    return hunts, players, teams


def reply_code(line):
    """"OK …" → OK; "ERR CODE …" → ERR CODE; anything else (a closed connection) as it is."""
    if line.startswith("OK"):
        return "OK"
    if line.startswith("ERR "):
        return "ERR " + line.split()[1]
    return "NO_REPLY" if not line else "OTHER"


def cpu_ticks(pids):
    """utime + stime, in clock ticks, of each PID and its direct children: {pid: ticks}."""
    want, total = set(pids), {p: 0 for p in pids}
    if not pids:
        return total
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        owner = int(entry) if int(entry) in want else int(rest[1]) if int(rest[1]) in want else None
        if owner is not None:
            total[owner] += int(rest[11]) + int(rest[12])
    return total


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


class Line:
    """One connection: write a line, read its reply, time it."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port):
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 22)
        return cls(reader, writer)

    async def ask(self, text):
        t0 = time.perf_counter()
        self.writer.write(text.encode() + b"\n")
        raw = await asyncio.wait_for(self.reader.readline(), REPLY_TIMEOUT_S)
        return time.perf_counter() - t0, raw.decode(errors="replace").rstrip("\r\n")

    def close(self):
        self.writer.close()


class Tally:
    """What a phase saw: replies by command and code, latencies by command, once recording."""

    def __init__(self):
        self.recording = False
        self.replies = defaultdict(Counter)     # command → code → count
        self.latency = defaultdict(list)        # command → seconds
        self.accepted = 0

    def add(self, command, seconds, reply):
        if not self.recording:
            return
        code = reply_code(reply)
        if command == "checkin" and code == "OK":
            status = reply.split('"status":"', 1)[1].split('"', 1)[0] if '"status":"' in reply else "?"
            code = "OK " + status
            self.accepted += status == "accepted"
        self.replies[command][code] += 1
        self.latency[command].append(seconds)


async def play_connection(port, players, hunts, mix, rng, tally, deadline, keys):
    """One connection of phase A: plays its players until the deadline (perf_counter seconds)."""
    line = await Line.open(port)
    kinds, weights = zip(*mix.items())
    at, current = 0, None
    team_mode = any(p.team for p in players)
    # In a team hunt, what a member whose team found every stop draws instead (no LEAVE there).
    idle = {k: mix.get(k, 0) for k in ("leaderboard", "reply")}
    if not any(idle.values()):
        idle["leaderboard"] = 1
    idle_kinds, idle_weights = zip(*idle.items())

    async def become(i):
        nonlocal at, current
        at, current = i % len(players), players[i % len(players)]
        seconds, reply = await line.ask(f"AUTH {current.token}")
        tally.add("auth", seconds, reply)
        if not reply.startswith("OK"):
            raise RuntimeError(f"AUTH {current.name}: {reply}")

    def find(ok):
        """The index of the connection's next player (from the current one on) that satisfies ok."""
        for step in range(len(players)):
            i = (at + step) % len(players)
            if ok(players[i]):
                return i
        return None

    try:
        # Each run starts at a player of its own draw, so runs one after another spread over the
        # players (and their hunts and teams) rather than start with the same few every time.
        await become(rng.randrange(len(players)))
        while time.perf_counter() < deadline:
            kind = rng.choices(kinds, weights)[0]
            if kind == "join" and current.joined:
                i = find(lambda p: not p.joined)
                if i is not None and i != at:
                    await become(i)
            elif kind == "checkin" and current.joined and not current.stops_left(hunts):
                i = find(lambda p: p.joined and p.stops_left(hunts))
                if i is None:
                    kind = rng.choices(idle_kinds, idle_weights)[0] if team_mode else "leave"
                elif i != at:
                    await become(i)
            if not current.joined:
                kind = "join"
            # A teammate on another connection may have taken the last stops meanwhile (AUTH awaited).
            if kind == "checkin" and not current.stops_left(hunts):
                kind = rng.choices(idle_kinds, idle_weights)[0] if team_mode else "leave"
            hunt = current.hunt
            if kind == "checkin":
                stop, lat, lon = rng.choice(current.stops_left(hunts))
                team = current.team
                if team:
                    team.going.add(stop)
                try:
                    seconds, reply = await line.ask(keys.line(f"CHECKIN {stop} {lat} {lon} ACCURACY 5"))
                finally:
                    if team:
                        team.going.discard(stop)
                if reply.startswith("OK") or reply.startswith("ERR CONFLICT"):
                    current.done.add(stop)
            elif kind == "leaderboard":
                seconds, reply = await line.ask(f"LEADERBOARD {hunt} LIMIT 10")
            elif kind == "reply":
                seconds, reply = await line.ask(keys.line(f'REPLY {hunt} "{current.name} is on the way, stop {len(current.done) + 1} next"'))
            elif kind == "leave":
                seconds, reply = await line.ask(keys.line(f"LEAVE {hunt}"))
                if reply.startswith("OK"):
                    current.joined, current.done = False, set()
            else:
                seconds, reply = await line.ask(keys.line(current.join_line(hunts)))
                if reply.startswith("OK"):
                    current.joined = True
            tally.add(kind, seconds, reply)
            if rng.random() < SWITCH_CHANCE and len(players) > 1:
                await become(at + 1)
    finally:
        line.close()


def mixed_crowd(port, tag, state_path, conns, seconds, warmup, mix, cpu_pids, seed, keyed=True, phase=None):
    """Phase A: the mixed crowd. Returns the figures as a dict."""
    hunts, players, teams = read_state(state_path, tag)
    dropped, members_out = [], 0
    if teams:
        # A LEAVE of a running team hunt is final (protocol 1.5): no LEAVE, no JOIN, and a member
        # who is not joined stays out.
        dropped = [k for k in TEAM_DROPPED if mix.get(k)]
        mix = {k: v for k, v in mix.items() if k not in TEAM_DROPPED}
        if not any(mix.values()):
            raise SystemExit("--mix: a team run draws no LEAVE or JOIN, and nothing else has a weight")
        members_out = sum(1 for p in players if not p.joined)
        players = [p for p in players if p.joined]
    if len(players) < conns:
        raise SystemExit(f"{len(players)} players cannot fill {conns} connections")
    tally = Tally()
    keys = Keys(keyed)
    # Each connection's draws: from the seed, the phase, keyed or not and the connection, so runs one
    # after another (a mixed run, check-ins alone keyed, unkeyed) do not replay one another's draws.
    out_phase = phase or ("teams" if teams else "mixed")

    async def run():
        start = time.perf_counter()
        deadline = start + warmup + seconds
        tasks = [asyncio.ensure_future(play_connection(port, players[c::conns], hunts, mix,
                                                       random.Random(f"{seed}:{out_phase}:{int(keyed)}:{c}"), tally,
                                                       deadline, keys))
                 for c in range(conns)]
        await asyncio.sleep(max(0.0, start + warmup - time.perf_counter()))
        tally.recording = True
        t0, cpu0, server0 = time.perf_counter(), os.times(), cpu_ticks(cpu_pids)
        await asyncio.sleep(max(0.0, deadline - time.perf_counter()))
        tally.recording = False
        t1, cpu1, server1 = time.perf_counter(), os.times(), cpu_ticks(cpu_pids)
        await asyncio.gather(*tasks)       # each ends after its reply in flight at the deadline
        by_pid = {p: (server1[p] - server0[p]) / os.sysconf("SC_CLK_TCK") for p in cpu_pids}
        return t1 - t0, (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system), by_pid

    window, client_cpu, by_pid = asyncio.run(run())
    server_cpu = sum(by_pid.values())
    checkin_lat = sorted(tally.latency["checkin"])
    requests = sum(sum(c.values()) for k, c in tally.replies.items() if k != "auth")
    out = {
        "phase": out_phase, "conns": conns, "seconds": f"{window:.3f}",
        "players": len(players), "hunts": len(hunts), "teams": len(teams), "keyed": int(keyed),
        "requests": requests, "rps": f"{requests / window:.1f}",
        "accepted": tally.accepted, "accepted_per_s": f"{tally.accepted / window:.1f}",
        "checkin_p50_us": f"{percentile(checkin_lat, 0.50) * 1e6:.0f}",
        "checkin_p99_us": f"{percentile(checkin_lat, 0.99) * 1e6:.0f}",
        "client_cpu_pct": f"{100 * client_cpu / window:.1f}",
        "server_cpu_pct": f"{100 * server_cpu / window:.1f}",
        # Each --cpu-pids entry (with its children) on its own: the daemon, the postmaster's backends.
        "cpu_pct_by_pid": ",".join(f"{p}:{100 * c / window:.1f}" for p, c in by_pid.items()) or "none",
        "server_cpu_ms_per_accepted": f"{1000 * server_cpu / tally.accepted:.2f}" if tally.accepted else "nan",
        "mix": mix_text(mix),
    }
    if teams:
        out["mix_dropped"] = ",".join(dropped) or "none"
        out["members_out"] = members_out
        out["teams_done"] = sum(1 for t in teams.values() if t.members and not t.stops_left(hunts))
        out["team_stops_left"] = sum(t.stops_left(hunts) for t in teams.values() if t.members)
    for kind in KINDS + ("auth",):
        lat = sorted(tally.latency[kind])
        out[f"n_{kind}"] = len(lat)
        out[f"p50_{kind}_us"] = f"{percentile(lat, 0.50) * 1e6:.0f}"
        out[f"p99_{kind}_us"] = f"{percentile(lat, 0.99) * 1e6:.0f}"
        out[f"replies_{kind}"] = codes_text(tally.replies[kind])
    total = Counter()
    for kind, codes in tally.replies.items():
        for code, n in codes.items():
            total["OK" if code.startswith("OK") else code] += n
    out["replies"] = codes_text(total)
    return out


def join_crowd(port, tag, code, joiners, keyed=True):
    """Phase B: `joiners` players (1 … joiners) join the hunt of `code` at one instant, each from a
    connection of its own, all connected and logged in before the barrier. Returns the figures."""
    keys = Keys(keyed)

    async def run():
        lines = await asyncio.gather(*(Line.open(port) for _ in range(joiners)))
        try:
            auths = await asyncio.gather(*(l.ask(f"AUTH hct_{tag}_hcp{i + 1:04d}") for i, l in enumerate(lines)))
            bad = [r for _, r in auths if not r.startswith("OK")]
            if bad:
                raise SystemExit(f"{len(bad)} of {joiners} AUTHs failed: {bad[0]}")
            # The barrier: every JOIN written in one pass, nothing awaited in between.
            data = [(keys.line(f"JOIN {code}") + "\n").encode() for _ in lines]
            t0 = time.perf_counter()
            for l, d in zip(lines, data):
                l.writer.write(d)
            written = time.perf_counter() - t0

            async def read(l):
                raw = await asyncio.wait_for(l.reader.readline(), REPLY_TIMEOUT_S)
                return time.perf_counter() - t0, raw.decode(errors="replace").rstrip("\r\n")
            replies = await asyncio.gather(*(read(l) for l in lines), return_exceptions=True)
        finally:
            for l in lines:
                l.close()
        return written, replies

    written, replies = asyncio.run(run())
    codes, lat = Counter(), []
    for r in replies:
        if isinstance(r, BaseException):
            codes["NO_REPLY"] += 1
        else:
            codes[reply_code(r[1])] += 1
            lat.append(r[0])
    lat.sort()
    return {"phase": "join", "joiners": joiners, "keyed": int(keyed), "ok": codes["OK"], "replies": codes_text(codes),
            "written_ms": f"{written * 1000:.2f}", "p50_ms": f"{percentile(lat, 0.5) * 1000:.1f}",
            "last_ms": f"{(lat[-1] if lat else float('nan')) * 1000:.1f}"}


def codes_text(counter):
    return ",".join(f"{code.replace(' ', '_')}:{n}" for code, n in sorted(counter.items())) or "none"


def mix_text(mix):
    return ",".join(f"{k}={v:g}" for k, v in mix.items())


def parse_mix(text):
    mix = {}
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        if kind not in KINDS or not weight:
            raise SystemExit(f"--mix: {part!r} is not one of {', '.join(KINDS)} with a weight")
        mix[kind] = float(weight)
    if not any(mix.values()):
        raise SystemExit("--mix: every weight is 0")
    return mix


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=("mixed", "join"))
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--state")
    ap.add_argument("--conns", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--mix", default=DEFAULT_MIX)
    ap.add_argument("--cpu-pids", default="")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--code")
    ap.add_argument("--joiners", type=int, default=300)
    ap.add_argument("--label", default="")
    ap.add_argument("--unkeyed", action="store_true", help="send the writes without REQUEST keys (the old path)")
    ap.add_argument("--phase", dest="phase_name", help="the phase= printed (default: mixed, or teams for a team FILE)")
    a = ap.parse_args()
    if a.phase == "mixed":
        if not a.state or not 1 <= a.conns <= 512:
            ap.error("mixed needs --state and --conns 1..512")
        pids = [int(p) for p in a.cpu_pids.split(",") if p]
        out = mixed_crowd(a.port, a.tag, a.state, a.conns, a.seconds, a.warmup, parse_mix(a.mix), pids, a.seed,
                          keyed=not a.unkeyed, phase=a.phase_name)
    else:
        if not a.code or not 1 <= a.joiners <= 5000:
            ap.error("join needs --code and --joiners 1..5000")
        out = join_crowd(a.port, a.tag, a.code, a.joiners, keyed=not a.unkeyed)
    if a.label:
        out["label"] = a.label
    print(" ".join(f"{k}={v}" for k, v in out.items()))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
