#!/usr/bin/env python3
"""A team hunt on the hunt pages in headless Chromium (protocol 1.4).

Usage: team_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` with --http-port against DATABASE_URL (already migrated). On /host a
host ticks "Team hunt", sets the largest team to 3 and a 10-minute time trial, creates the hunt
(TEAMS SIZE 3 TRIAL 600, checked over TCP), adds two stops by typing their places (10 and 20 points) and starts it. On /play a player, ann, types the
hunt's code and joins: the page says the hunt is played in teams and asks for a team; she names
"Red Foxes" and joins, and the page shows her team with her alone and the team's 10 minutes. A second player, bob, joins
the same team (typed in lower case) through /client.js's own `join(code, {team})` from a client
of his own in the same page (another session), and a third, carol, joins "Blue Jays" over TCP (a
quoted name). Without a reload, ann's page lists both members of her team and a board of teams
with their players. Bob checks in at the first stop (client.js's `checkin`): his CHECKIN's score
is the team's, and ann's page shows the find as her team's (the stop found, the team's points,
the trial's clock running: a trial's clock is the team's) without a reload. Ann checks in at the second stop on the page (the browser's location emulated):
the team has both stops and 30 points, first on the board, Blue Jays with carol and 0 points
below it; HUNT for bob says his team. Back on /host, the host's board is the same board of
teams. Screenshots go to OUTPUT_DIR. Exit 0 when every check passed.
"""
import os
import re
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import PageChecks, Line, chromium, start_daemon

GATE = (52.5200, 13.4050)
TOWER = (52.5209, 13.4050)

# Runs in the page: a client of bob's own (/client.js, another session than the page's), which
# registers and joins the hunt of CODE in the team TEAM; kept as window.__bob.
BOB_JOINS = """
const [code, team, done] = arguments;
import("/client.js").then(async ({ ScavengerClient }) => {
  const client = new ScavengerClient();
  window.__bob = client;
  await client.register("bob", "bob@example.org", "password2");
  const answer = await client.join(code, { team });
  done({ ok: answer.hunt });
}).catch((error) => done({ error: error.code + " " + error.message }));
"""

# Bob's client checks in at a stop; answers CHECKIN's JSON.
BOB_CHECKS_IN = """
const [stop, lat, lon, done] = arguments;
window.__bob.checkin(stop, lat, lon, { accuracy: 5 }).then(
  (answer) => done({ ok: answer }), (error) => done({ error: error.code + " " + error.message }));
"""

# Bob's client reads the hunt (HUNT) and its board (LEADERBOARD).
BOB_READS = """
const [hunt, done] = arguments;
Promise.all([window.__bob.hunt(hunt), window.__bob.leaderboard(hunt)]).then(
  ([details, board]) => done({ ok: { me: details.me, entries: board.entries } }),
  (error) => done({ error: error.code + " " + error.message }));
"""


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    base = f"http://127.0.0.1:{http_port}"
    page = PageChecks()
    check, until, text, texts, shown, locate, result = page.check, page.until, page.text, page.texts, page.shown, page.locate, page.result
    driver = None

    def board():
        """The board as the page shows it, read in one step inside the page (it is redrawn as
        events come): team -> (rank, points, stops found, [members]) (the trial's time after the
        stops found is left out)."""
        rows = driver.execute_script(
            "return [...document.querySelectorAll('#leaderboard-rows tr')].map((row) => ["
            " row.dataset.player, row.querySelector('td.rank').textContent.trim(),"
            " row.querySelector('td.points').textContent.trim(), row.querySelector('td.found').textContent.trim(),"
            " row.querySelector('td.player .members') ? JSON.parse(row.querySelector('td.player .members').dataset.members) : null])")
        return {team: (rank, points, found.split(" ")[0], sorted(members) if members is not None else None)
                for team, rank, points, found, members in rows}

    def my_team():
        """The page's line about the player's team: (name, [members]), or None when hidden."""
        return driver.execute_script(
            "const line = document.getElementById('my-team'); if (line.hidden) return null;"
            " return [document.getElementById('my-team-name').textContent,"
            " JSON.parse(document.getElementById('my-team-members').dataset.members || '[]')]")

    def in_page(script, *arguments):
        answer = driver.execute_async_script(script, *arguments)
        if "error" in answer:
            raise RuntimeError(f"in the page: {answer['error']}")
        return answer["ok"]

    try:
        host = Line(port)
        host.ok("REGISTER hostess hostess@example.org password1")
        driver = chromium(1100, 1400)
        page.driver = driver
        driver.set_script_timeout(60)
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        locate(*GATE)
        wait = WebDriverWait(driver, 60)

        # ---- /host: a team hunt (the checkbox, the largest team), two stops typed, started.
        driver.get(base + "/host")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("hostess")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as hostess"))
        size = driver.find_element(By.ID, "create-team-size")
        check(not size.is_enabled() and size.get_attribute("value") == "6",
              f"the largest team before ticking 'Team hunt': enabled {size.is_enabled()}, {size.get_attribute('value')!r}")
        driver.find_element(By.ID, "create-name").send_keys("Relay")
        driver.find_element(By.ID, "create-teams").click()
        until(lambda: size.is_enabled(), "ticking 'Team hunt' does not enable the largest team")
        size.clear()
        size.send_keys("3")
        driver.find_element(By.ID, "create-trial").send_keys("10")
        driver.save_screenshot(os.path.join(output, "team-host-create.png"))
        driver.find_element(By.ID, "create-button").click()
        until(lambda: text("#hunt-name") == "Relay", "the team hunt was not created")
        until(lambda: "teams of up to 3" in text("#hunt-meta"), f"the host's view of the teams: {text('#hunt-meta')!r}")
        check(text("#leaderboard th.who") == "Team", f"the host's board is not of teams: {text('#leaderboard th.who')!r}")
        relay = next((h for h in host.ok("HUNTS MINE")["hunts"] if h["name"] == "Relay"), None)
        check(relay is not None and relay.get("teams") == 3 and relay.get("trial") == 600, f"the hunt /host made: {relay}")
        for (lat, lon), title, points in ((GATE, "Gate", 10), (TOWER, "Tower", 20)):
            for field, value in (("stop-lat", lat), ("stop-lon", lon), ("stop-title", title), ("stop-points", points)):
                driver.find_element(By.ID, field).clear()
                driver.find_element(By.ID, field).send_keys(str(value))
            driver.find_element(By.ID, "stop-button").click()
            until(lambda title=title: any(item.endswith(title) for item in texts("#stops li strong")), f"the stop {title} was not added")
        driver.find_element(By.ID, "start-button").click()
        WebDriverWait(driver, 60).until(EC.alert_is_present()).accept()
        until(lambda: "running" in text("#hunt-meta"), f"the hunt did not start: {text('#hunt-meta')!r}")
        code = text("#hunt-code")
        hunt = host.ok(f"HUNT {relay['id']}")
        stops = {stop["title"]: stop for stop in hunt["stops"]}
        check(hunt["hunt"]["state"] == "running" and set(stops) == {"Gate", "Tower"} and code == hunt["hunt"].get("code"),
              f"the hunt after /host: {hunt['hunt']}, stops {list(stops)}, code shown {code!r}")
        driver.save_screenshot(os.path.join(output, "team-host.png"))

        # ---- /play: ann joins; the page asks for a team, then shows it.
        driver.execute_script("localStorage.clear()")
        driver.get(base + "/play")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "register-name").send_keys("ann")
        driver.find_element(By.ID, "register-email").send_keys("ann@example.org")
        driver.find_element(By.ID, "register-password").send_keys("password3")
        driver.find_element(By.ID, "register-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as ann"))
        check(not shown("#join-team-field"), "the team field shows before any hunt asks for one")
        driver.find_element(By.ID, "join-code").send_keys(code)
        driver.find_element(By.ID, "join-button").click()
        until(lambda: shown("#join-team-field") and shown("#join-team-note"), "the page does not ask for a team")
        check("played in teams" in text("#join-form + .form-message"), f"the message when a team is needed: {text('#join-form + .form-message')!r}")
        check(driver.find_element(By.ID, "join-team").get_property("required"), "the team field is not required")
        check(text("#hunt-name") == "", "the hunt shows though the join was refused")
        driver.save_screenshot(os.path.join(output, "team-join-asks.png"))
        driver.find_element(By.ID, "join-team").send_keys("Red Foxes")
        driver.find_element(By.ID, "join-button").click()
        until(lambda: text("#hunt-name") == "Relay", "joining with a team did not show the hunt")
        until(lambda: my_team() == ["Red Foxes", ["ann"]], f"ann's team line: {my_team()}")
        until(lambda: text("#trial-clock") == "Time trial: your team has 10:00 from its first check-in.",
              f"the team's clock before a find: {text('#trial-clock')!r}")
        check(not shown("#join-team-field"), "the team field stays after the join")
        check(text("#leaderboard th.who") == "Team", f"the player's board is not of teams: {text('#leaderboard th.who')!r}")

        # ---- bob (client.js, a session of his own) and carol (TCP) join.
        joined = in_page(BOB_JOINS, code, "red foxes")
        check(joined.get("teams") == 3, f"client.js join's hunt: {joined}")
        carol = Line(port)
        carol.ok("REGISTER carol carol@example.org password4")
        carol.ok(f'JOIN {code} TEAM "Blue Jays"')
        until(lambda: my_team() == ["Red Foxes", ["ann", "bob"]], f"ann's team line after bob joined: {my_team()}")
        until(lambda: board().get("Red Foxes", (None,) * 4)[3] == ["ann", "bob"] and board().get("Blue Jays", (None,) * 4)[3] == ["carol"],
              f"the board of teams after the joins: {board()}")
        check(not {"ann", "bob", "carol"} & set(board()), f"a player has a row of their own: {board()}")

        # ---- bob finds the gate: the team's find, on ann's page without a reload.
        checked = in_page(BOB_CHECKS_IN, stops["Gate"]["id"], GATE[0], GATE[1])
        check(checked["checkin"]["status"] == "accepted" and checked["checkin"]["player"] == "bob"
              and checked["score"]["points"] == 10 and checked["score"]["rank"] == 1,
              f"bob's CHECKIN is not the team's standing: {checked}")
        until(lambda: board().get("Red Foxes", (None,) * 4)[:3] == ("1", "10", "1"), f"the board after bob's find: {board()}")
        until(lambda: text("#my-score") == "Team score: 10 points, 1 of 2 stops found, rank 1.", f"ann's standing: {text('#my-score')!r}")
        until(lambda: any("bob (Red Foxes) found 1. Gate (+10)" in line for line in texts("#activity li")),
              f"the find in the activity list: {texts('#activity li')}")
        until(lambda: driver.find_element(By.CSS_SELECTOR, f'#checkin-stop option[value="{stops["Gate"]["id"]}"]').get_property("disabled"),
              "the gate, found by the team, can still be chosen to check in")
        until(lambda: re.fullmatch(r"Time trial: 9:[0-5]\d left\.", text("#trial-clock")) is not None,
              f"a teammate's find does not start the team's clock: {text('#trial-clock')!r}")

        # ---- ann finds the tower on the page.
        locate(*TOWER)
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(stops["Tower"]["id"])
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: result()[0].endswith(" ok"), f"ann's check-in at the tower was not accepted: {result()}")
        check("Your team has 30 points, rank 1." in result()[1], f"the check-in's standing is not the team's: {result()}")
        until(lambda: board().get("Red Foxes") == ("1", "30", "2", ["ann", "bob"]), f"the board after ann's find: {board()}")
        until(lambda: board().get("Blue Jays") == ("2", "0", "0", ["carol"]), f"Blue Jays on the board: {board()}")
        until(lambda: text("#my-score") == "Team score: 30 points, 2 of 2 stops found, rank 1.", f"ann's standing: {text('#my-score')!r}")
        check(my_team() == ["Red Foxes", ["ann", "bob"]], f"ann's team line at the end: {my_team()}")
        check(driver.execute_script("const row = document.querySelector('#leaderboard-rows tr.me'); return row && row.dataset.player") == "Red Foxes",
              f"ann's team's row is not marked: {texts('#leaderboard-rows tr.me')}")
        check("teams of up to 3" in text("#hunt-meta") and "3 players" in text("#hunt-meta"), f"the hunt's line: {text('#hunt-meta')!r}")
        read = in_page(BOB_READS, relay["id"])
        check(read["me"] and read["me"].get("team") == "Red Foxes" and read["me"]["points"] == 30 and len(read["me"]["found"]) == 2,
              f"HUNT's me for bob through client.js: {read['me']}")
        check([(e["player"], sorted(e.get("members") or [])) for e in read["entries"]] == [("Red Foxes", ["ann", "bob"]), ("Blue Jays", ["carol"])],
              f"LEADERBOARD through client.js: {read['entries']}")
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(output, "team-play.png"))

        # ---- the host's board: the same teams, with their players.
        driver.execute_script("window.__bob && window.__bob.close(); localStorage.clear()")
        driver.get(base + "/host")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("hostess")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as hostess"))
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#my-hunts button")) == 1, "the host's hunt is not listed")
        driver.find_element(By.CSS_SELECTOR, "#my-hunts button").click()
        until(lambda: board() == {"Red Foxes": ("1", "30", "2", ["ann", "bob"]), "Blue Jays": ("2", "0", "0", ["carol"])},
              f"the host's board: {board()}")
        driver.save_screenshot(os.path.join(output, "team-host-board.png"))
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        page.failed(error, output, "team")
    finally:
        page.close(daemon, log)
    return page.report("team pages", "/host creates a team hunt with its largest team; /play asks a team hunt's joiner for a team, "
              "shows the player's team and its members, the team's finds and standing, and a board of teams")


if __name__ == "__main__":
    sys.exit(main())
