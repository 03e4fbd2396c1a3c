#!/usr/bin/env python3
"""The hunt pages in a real browser (headless Chromium driven by selenium), with its location
emulated through the DevTools protocol (Emulation.setGeolocationOverride).

Usage: hunt_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` with --http-port against DATABASE_URL (already migrated). Over TCP a
host creates a hunt with a place stop, a code stop and a photo stop and starts it, and a rival
joins it. Then
in Chromium, on the player's page (/play): an account is created, the hunt joined by its code
(typed in lower case), its stops shown on the map (a grid and a scale bar: no tiles can be
reached here); a check-in from 300 m away is refused as too far, with the distance; one at the
stop is accepted; the rival checks in over TCP and the leaderboard changes without a reload; the
host's hints arrive (one of them a script, shown as text); the player's scores across hunts and the
ranking around them follow (all time and this week); a wrong code is refused and the right
one accepted. On the host's view (/host): the host signs in, creates a hunt, places two stops by
clicking the map (their places as the map gave them, checked over TCP), sees the code stop's QR
code drawn by the daemon, starts the hunt and sends a hint; the print layout shows the QR sheet
alone; back on the first hunt, the rival's photo check-in waits for review: the host sees the
photo and approves it with a bonus, and the leaderboard follows. Screenshots go to OUTPUT_DIR. Exit 0 when every check passed.
"""
import json
import math
import os
import sys

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import PageChecks, Line, chromium, start_daemon

FOUNTAIN = (52.5200, 13.4050)
MILL = (52.5210, 13.4070)
MILL_CODE = "MILL-7731"
BAKERY = (52.5195, 13.4075)
# A 2×2 PNG, red and blue: enough for the browser to decode and show.
PHOTO = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4zwAEIOI/kAAAG/ID/VxhF44AAAAASUVORK5CYII="


def metres(a, b):
    """Great-circle distance on the protocol's sphere (radius 6,371,008.8 m)."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(h))


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    base = f"http://127.0.0.1:{http_port}"
    page = PageChecks()
    check, until, text, texts, locate, result = page.check, page.until, page.text, page.texts, page.locate, page.result
    driver = None

    def table(selector):
        """The cells' texts of a table's rows, read in one step inside the page: the page redraws
        its tables as events come, and rows read one by one could go stale in between."""
        return driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((row) =>"
            " [...row.querySelectorAll('td')].map((cell) => cell.textContent.trim()))", selector)

    def board():
        """The leaderboard as the page shows it: player -> (rank, points, found)."""
        return {cells[1]: (cells[0], cells[2], cells[3]) for cells in table("#leaderboard-rows tr") if len(cells) == 4}

    def ranking():
        """The ranking across hunts as the page shows it: (rank, player, points) in order."""
        return [tuple(cells[:3]) for cells in table("#ranking-rows tr")]

    def phone(on):
        """A 390×844 phone's screen (or back to the window's)."""
        if on:
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        else:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def overflow():
        """How many pixels the page is wider than the phone's 390 px (a mobile viewport widens
        itself to what overflows, so its own width says nothing)."""
        return driver.execute_script("return Math.max(document.documentElement.scrollWidth, window.innerWidth) - 390")

    def map_center():
        return driver.execute_script("const c = window.scavengerHost.map.getCenter(); return [c.lat, c.lng]")

    try:
        host = Line(port)
        host.ok("REGISTER hostess hostess@example.org password1")
        hunt = host.ok('CREATEHUNT "Old town trail" DESCRIPTION "Three stops around the square"')["hunt"]
        fountain = host.ok(f'ADDSTOP {hunt["id"]} {FOUNTAIN[0]} {FOUNTAIN[1]} 40 10 "The fountain" CLUE "Where the water sings"')["stop"]
        mill = host.ok(f'ADDSTOP {hunt["id"]} {MILL[0]} {MILL[1]} 40 25 "The old mill" PROOF code CODE "{MILL_CODE}"')["stop"]
        bakery = host.ok(f'ADDSTOP {hunt["id"]} {BAKERY[0]} {BAKERY[1]} 40 15 "The bakery" PROOF photo')["stop"]
        host.ok(f'STARTHUNT {hunt["id"]}')
        rival = Line(port)
        rival.ok("REGISTER rival rival@example.org password2")
        rival.ok(f'JOIN {hunt["code"]}')

        driver = chromium(1100, 1300)
        page.driver = driver
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        far = (FOUNTAIN[0] + 0.0027, FOUNTAIN[1])  # about 300 m north of the fountain
        locate(*far)

        # ---- the player's page: an account, the hunt joined by its code.
        driver.get(base + "/play")
        wait = WebDriverWait(driver, 60)
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "register-name").send_keys("walker")
        driver.find_element(By.ID, "register-email").send_keys("walker@example.org")
        driver.find_element(By.ID, "register-password").send_keys("password3")
        driver.find_element(By.ID, "register-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as walker"))
        driver.find_element(By.ID, "join-code").send_keys(hunt["code"].lower())
        driver.find_element(By.ID, "join-button").click()
        until(lambda: text("#hunt-name") == "Old town trail", "joining by code did not show the hunt")
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#stops li")) == 3, "the hunt's three stops are not listed")
        until(lambda: set(board()) == {"walker", "rival"}, f"the leaderboard does not list both players: {board()}")
        # Before a first find the scores say so, instead of "0 of 0 hunts".
        until(lambda: text("#profile") == "No points yet: find a stop to get on the ranking.",
              f"the profile before a find: {text('#profile')!r}")
        check(driver.find_element(By.ID, "no-badges").is_displayed() and not texts("#badges li"), "badges before a find")
        # The list numbers its stops once ("1. The fountain", not "1. 1. The fountain").
        check(driver.execute_script("return getComputedStyle(document.getElementById('stops')).listStyleType") == "none",
              "the stops list adds numbers of its own")
        check(texts("#stops li strong")[:1] == ["1. The fountain"], f"the stops list: {texts('#stops li strong')}")
        check(driver.find_element(By.ID, "checkin-code").get_dom_attribute("autocapitalize") == "off",
              "the check-in code is capitalized by phones")

        # The map: Leaflet over a grid drawn on canvas (no tile server reachable), a scale bar,
        # the stops as labelled circles.
        map_element = driver.find_element(By.ID, "map")
        check(map_element.get_attribute("data-tiles") == "grid", "the map does not say it shows the grid")
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#map .grid-layer canvas")) > 0, "no grid tile was drawn")
        until(lambda: text("#map .leaflet-control-scale-line").endswith(" m"), "no scale bar in metres")
        until(lambda: {"1. The fountain", "2. The old mill", "3. The bakery"} <= set(texts("#map .leaflet-tooltip")),
              "the stops are not labelled on the map")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#map path.leaflet-interactive")) >= 6, "the stops' circles are not drawn")

        # A check-in 300 m away: refused, with the distance the daemon measured.
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(fountain["id"])
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: "too-far" in result()[0], f"no TOO_FAR shown: {result()}")
        expected = math.floor(metres(far, FOUNTAIN))
        shown = result()[1]
        check(any(f"you are {d} m from 1. The fountain" in shown for d in (expected - 1, expected, expected + 1)),
              f"the refusal does not give the distance ({expected} m): {shown!r}")
        check("Get within 40 m" in shown, f"the refusal does not say how near to get: {shown!r}")
        driver.save_screenshot(os.path.join(output, "hunt-too-far.png"))

        # At the fountain: accepted, and the leaderboard says so.
        locate(FOUNTAIN[0] + 0.00002, FOUNTAIN[1] + 0.00002)
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(fountain["id"])
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: result()[0].endswith(" ok"), f"the check-in at the fountain was not accepted: {result()}")
        check("+10 points" in result()[1], f"the accepted check-in does not give its points: {result()}")
        until(lambda: board().get("walker") == ("1", "10", "1"), f"the leaderboard does not show walker first with 10: {board()}")

        # The first find earns a badge (protocol 1.4): a toast says so, the scores list it.
        until(lambda: driver.find_element(By.ID, "toast").is_displayed() and "Badge earned: First find!" in text("#toast"),
              f"no toast for the first-find badge: {text('#toast')!r}")
        until(lambda: [b.split(" ")[0:2] for b in texts("#badges li")] == [["First", "find"]],
              f"the badges listed: {texts('#badges li')}")
        check(not driver.find_element(By.ID, "no-badges").is_displayed(), "'No badge yet' stays with a badge listed")
        check(any("walker earned the badge First find" in t for t in texts("#activity li")), "the badge is not in the activity list")
        driver.save_screenshot(os.path.join(output, "hunt-badge.png"))

        # The rival checks in over TCP: the page's leaderboard changes without a reload.
        rival.ok(f'CHECKIN {mill["id"]} {MILL[0]} {MILL[1]} ACCURACY 5 CODE "{MILL_CODE}"')
        until(lambda: board().get("rival") == ("1", "25", "1") and board().get("walker", ("",))[0] == "2",
              f"the rival's check-in did not reach the leaderboard live: {board()}")
        until(lambda: any("rival found 2. The old mill (+25)" in t for t in texts("#activity li")),
              "the rival's find is not in the activity list")
        until(lambda: text("#my-score") == "You: 10 points, 1 of 3 stops found, rank 2.",
              f"the player's own line does not follow the rival passing them: {text('#my-score')!r}")

        # Scores across hunts (PROFILE, RANKING AROUND): walker's own, then the rival ahead.
        until(lambda: text("#profile").startswith("10 points, 1 stop found, 0 of 1 hunt completed"),
              f"the profile does not show walker's points: {text('#profile')!r}")
        until(lambda: ranking() == [("1", "rival", "25"), ("2", "walker", "10")],
              f"the ranking does not follow the rival's check-in: {ranking()}")
        check("rank 2" in text("#profile"), f"the profile does not show walker's rank: {text('#profile')!r}")
        check(driver.find_element(By.CSS_SELECTOR, '#ranking-rows tr[data-player="walker"]').get_attribute("class") == "me",
              "walker's own row is not marked")
        driver.find_element(By.ID, "ranking-week").click()
        until(lambda: driver.find_element(By.ID, "ranking-week").get_attribute("aria-pressed") == "true"
              and text("#ranking-note").startswith("This week"), "the week's ranking is not shown")
        check(ranking() == [("1", "rival", "25"), ("2", "walker", "10")], f"this week's ranking: {ranking()}")
        driver.save_screenshot(os.path.join(output, "hunt-scores.png"))

        # The host's hints arrive; one holding markup shows as text and never runs.
        host.ok(f'HINT {hunt["id"]} "Listen for the wheel"')
        until(lambda: "Listen for the wheel" in texts("#hints .hint-text"), "the hint did not arrive")
        payload = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
        host.ok(f'HINT {hunt["id"]} {json.dumps(payload)}')
        until(lambda: payload in texts("#hints .hint-text"), "the hint with markup was not shown as text")
        check(driver.execute_script("return window.__xss === undefined") is True, "a hint ran as script")
        check(not driver.find_elements(By.CSS_SELECTOR, "#hints img, #activity img"), "a hint became an element")

        # The code stop: a wrong code is refused, the right one accepted (distance is not judged).
        locate(MILL[0], MILL[1] + 0.00003)
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(mill["id"])
        until(lambda: driver.find_element(By.ID, "checkin-code").is_displayed(), "no code field for a code stop")
        driver.find_element(By.ID, "checkin-code").send_keys("WRONG-0000")
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: "not this stop's code" in result()[1], f"a wrong code was not refused plainly: {result()}")
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        driver.find_element(By.ID, "checkin-code").clear()
        driver.find_element(By.ID, "checkin-code").send_keys(MILL_CODE)
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: result()[0].endswith(" ok") and "+25 points" in result()[1], f"the right code was not accepted: {result()}")
        until(lambda: board().get("walker") == ("1", "35", "2") and board().get("rival") == ("2", "25", "1"),
              f"the leaderboard after both finds: {board()}")
        until(lambda: "You: 35 points, 2 of 3 stops found, rank 1." == text("#my-score"), f"the player's score: {text('#my-score')!r}")
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(output, "hunt-play.png"))

        # A third player joins and finds a stop: the page's count of players follows.
        scout = Line(port)
        scout.ok("REGISTER scout scout@example.org password4")
        scout.ok(f'JOIN {hunt["code"]}')
        scout.ok(f'CHECKIN {fountain["id"]} {FOUNTAIN[0]} {FOUNTAIN[1]} ACCURACY 5')
        until(lambda: "3 players" in text("#hunt-meta"), f"the players' count does not follow: {text('#hunt-meta')!r}")

        # On a phone (390×844): the hunt and its map come first, and nothing is wider than the screen.
        phone(True)
        driver.execute_script("window.scrollTo(0, 0)")
        until(lambda: driver.execute_script("return document.getElementById('map').getBoundingClientRect().top") < 300,
              "on a phone the map is not near the top of /play: "
              + str(driver.execute_script("return document.getElementById('map').getBoundingClientRect().top")))
        check(overflow() <= 0, f"/play is {overflow()} px wider than a phone")
        driver.save_screenshot(os.path.join(output, "hunt-play-phone.png"))
        phone(False)

        # ---- the host's view: a new hunt, two stops placed by clicking the map.
        driver.execute_script("localStorage.clear()")
        locate(*FOUNTAIN)
        driver.get(base + "/host")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("hostess")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as hostess"))
        until(lambda: "Old town trail" in texts("#my-hunts button"), "the host's hunts are not listed")
        driver.find_element(By.ID, "create-name").send_keys("Riverside loop")
        driver.find_element(By.ID, "create-description").send_keys("Along the water")
        driver.find_element(By.ID, "create-button").click()
        until(lambda: text("#hunt-name") == "Riverside loop", "the new hunt is not shown")
        code = text("#hunt-code")
        check(len(code) == 6, f"the join code is not shown: {code!r}")
        # The map moves to where the host is (the emulated place): the scale bar says metres.
        until(lambda: text("#map .leaflet-control-scale-line").endswith(" m"), "the map did not zoom to the host's place")

        # Going to a place typed as coordinates: a bad one is refused plainly, a good one shown
        # (and remembered for the next visit).
        driver.find_element(By.ID, "goto-place").send_keys("the old town")
        driver.find_element(By.ID, "goto-button").click()
        until(lambda: "latitude, longitude" in text("#goto-form + .form-message"),
              f"a bad place is not refused plainly under its form: {text('#goto-form + .form-message')!r}")
        driver.find_element(By.ID, "goto-place").clear()
        driver.find_element(By.ID, "goto-place").send_keys("52.5300, 13.4200")
        driver.find_element(By.ID, "goto-button").click()
        until(lambda: all(abs(a - b) < 1e-4 for a, b in zip(map_center(), (52.53, 13.42))), f"go to did not move the map: {map_center()}")
        until(lambda: json.loads(driver.execute_script("return localStorage.getItem('scavenger.host.view')") or "{}").get("zoom", 0) >= 16,
              "the area is not remembered")
        # The next visit opens there, not on the host's own place (the emulated fountain).
        driver.refresh()
        until(lambda: text("#hunt-name") == "Riverside loop", "the hunt is not open again after a reload")
        check(all(abs(a - b) < 1e-4 for a, b in zip(map_center(), (52.53, 13.42))), f"the last area is not where the map opens: {map_center()}")

        placed = []
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", driver.find_element(By.ID, "map"))
        for offset, title, proof, secret in (((-140, -70), "Boathouse", "place", None), ((120, 60), "Footbridge", "code", "BRIDGE-2026")):
            ActionChains(driver).move_to_element_with_offset(driver.find_element(By.ID, "map"), *offset).click().perform()
            until(lambda: driver.find_element(By.ID, "stop-lat").get_attribute("value") != "", f"clicking the map gave {title} no place")
            lat = driver.find_element(By.ID, "stop-lat").get_attribute("value")
            lon = driver.find_element(By.ID, "stop-lon").get_attribute("value")
            driver.find_element(By.ID, "stop-title").send_keys(title)
            Select(driver.find_element(By.ID, "stop-proof")).select_by_value(proof)
            if secret:
                driver.find_element(By.ID, "stop-code").send_keys(secret)
            before = len(driver.find_elements(By.CSS_SELECTOR, "#stops li"))
            driver.find_element(By.ID, "stop-button").click()
            until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#stops li")) == before + 1, f"{title} was not added")
            placed.append((title, float(lat), float(lon), proof))

        # A place typed in the fields: out of range, refused; in range, the stop goes there.
        driver.find_element(By.ID, "stop-lat").send_keys("95")
        driver.find_element(By.ID, "stop-lon").send_keys("13.42")
        driver.find_element(By.ID, "stop-title").send_keys("Nowhere")
        driver.find_element(By.ID, "stop-button").click()
        check(driver.execute_script("return document.getElementById('stop-lat').validationMessage") != "", "a latitude of 95 is not marked")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#stops li")) == 2, "a stop at latitude 95 was added")
        for field, value in (("stop-lat", "52.5301"), ("stop-lon", "13.4202"), ("stop-title", "Lighthouse")):
            driver.find_element(By.ID, field).clear()
            driver.find_element(By.ID, field).send_keys(value)
        Select(driver.find_element(By.ID, "stop-proof")).select_by_value("place")
        driver.find_element(By.ID, "stop-button").click()
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#stops li")) == 3, "the stop at a typed place was not added")
        placed.append(("Lighthouse", 52.5301, 13.4202, "place"))

        hosted = [h for h in host.ok("HUNTS MINE")["hunts"] if h["name"] == "Riverside loop"]
        check(len(hosted) == 1 and hosted[0].get("code") == code, f"the hunt over TCP: {hosted}")
        if hosted:
            stops = host.ok(f'HUNT {hosted[0]["id"]}')["stops"]
            got = [(s["title"], round(s["lat"], 6), round(s["lon"], 6), s["proof"]) for s in sorted(stops, key=lambda s: s["n"])]
            check(got == [(t, round(a, 6), round(o, 6), p) for t, a, o, p in placed], f"the stops over TCP {got} are not where the map was clicked {placed}")
            check(len(placed) == 3 and placed[0][1] > placed[1][1] and placed[0][2] < placed[1][2],
                  f"the stops are not where the clicks were (north-west, then south-east): {placed}")

        # The code stop's QR code, drawn by the daemon, with its title under it.
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#sheet img.qr")) == 1, "no QR code for the code stop")
        until(lambda: driver.execute_script("const i = document.querySelector('#sheet img.qr'); return !!i && i.complete && i.naturalWidth > 0"),
              "the QR code's image did not load")
        qr_src = driver.find_element(By.CSS_SELECTOR, "#sheet img.qr").get_attribute("src")
        check(qr_src.startswith("data:image/svg+xml") and "2.%20Footbridge" in qr_src, "the QR code is not the daemon's SVG with the title")
        check("BRIDGE-2026" not in driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name).join(' ')"),
              "a code went into a URL")

        check(driver.find_element(By.ID, "stop-code").get_dom_attribute("autocapitalize") == "off", "the stop code is capitalized by phones")

        # Another browser (one that did not type the code) prints the sheet once the code is typed again.
        driver.execute_script("localStorage.removeItem('scavenger.host.codes')")
        next(b for b in driver.find_elements(By.CSS_SELECTOR, "#my-hunts button") if b.text == "Riverside loop").click()
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#sheet form.retype input")) == 1, "no way to type a forgotten code again")
        check(not driver.find_elements(By.CSS_SELECTOR, "#sheet img.qr"), "a QR code without its code")
        driver.find_element(By.CSS_SELECTOR, "#sheet form.retype input").send_keys("BRIDGE-2026")
        driver.find_element(By.CSS_SELECTOR, "#sheet form.retype button").click()
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#sheet img.qr")) == 1, "the code typed again is not drawn")

        # Start it (the page asks first), send a hint; the list of hunts says it runs.
        driver.find_element(By.ID, "start-button").click()
        wait.until(EC.alert_is_present()).accept()
        until(lambda: "running" in text("#hunt-meta"), "the hunt did not start")
        until(lambda: any(t.startswith("Riverside loop") and "running" in t for t in texts("#my-hunts li")),
              f"the list of hunts still says: {texts('#my-hunts li')}")
        until(lambda: driver.find_element(By.ID, "hint-text").is_enabled(), "hints stay disabled in a running hunt")
        driver.find_element(By.ID, "hint-text").send_keys("Start at the boathouse")
        driver.find_element(By.ID, "hint-button").click()
        until(lambda: "Start at the boathouse" in texts("#hints .hint-text"), "the host's hint is not listed")
        driver.save_screenshot(os.path.join(output, "hunt-host.png"))

        # /host and the demo page on a phone: nothing wider than the screen.
        phone(True)
        driver.execute_script("window.scrollTo(0, 0)")
        until(lambda: overflow() <= 0, f"/host is {overflow()} px wider than a phone")
        driver.save_screenshot(os.path.join(output, "hunt-host-phone.png"))
        driver.get(base + "/")
        until(lambda: driver.execute_script("return document.readyState") == "complete", "the demo page did not load")
        check(overflow() <= 0, f"the demo page is {overflow()} px wider than a phone")
        driver.save_screenshot(os.path.join(output, "demo-phone.png"))
        phone(False)
        driver.get(base + "/host")
        until(lambda: text("#hunt-name") == "Riverside loop", "the host's view did not come back")
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#sheet img.qr")) == 1, "the QR code is not drawn again")

        # The print layout: the QR sheet alone.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        # The emulated media applies with the next layout: wait for it rather than read the old one.
        until(lambda: not driver.find_element(By.ID, "map").is_displayed(), "the map is printed")
        until(lambda: driver.find_element(By.CSS_SELECTOR, "#sheet img.qr").is_displayed(), "the QR code is not printed")
        driver.save_screenshot(os.path.join(output, "hunt-qr-print.png"))
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})

        # Review: the rival's photo check-in waits; the host sees the photo and approves it with a bonus.
        pending = rival.ok(f'CHECKIN {bakery["id"]} {BAKERY[0]} {BAKERY[1]} ACCURACY 5 PHOTO {PHOTO}')["checkin"]
        check(pending["status"] == "pending", f"a photo check-in is not pending: {pending}")
        next(b for b in driver.find_elements(By.CSS_SELECTOR, "#my-hunts button") if b.text == "Old town trail").click()
        until(lambda: text("#hunt-name") == "Old town trail", "the host could not go back to the first hunt")
        until(lambda: [e.get_attribute("data-checkin") for e in driver.find_elements(By.CSS_SELECTOR, "#reviews li")] == [pending["id"]],
              "the photo check-in is not in the review list")
        check("rival at 3. The bakery" in text("#reviews li"), f"the review item: {text('#reviews li')!r}")
        next(b for b in driver.find_elements(By.CSS_SELECTOR, "#reviews li button") if b.text == "Show photo").click()
        until(lambda: driver.execute_script("const i = document.querySelector('#reviews .photo img'); return !!i && i.complete && i.naturalWidth === 2"),
              "the check-in's photo is not shown")
        bonus = driver.find_element(By.CSS_SELECTOR, "#reviews li input[type=number]")
        bonus.clear()
        bonus.send_keys("5")
        driver.save_screenshot(os.path.join(output, "hunt-review.png"))
        next(b for b in driver.find_elements(By.CSS_SELECTOR, "#reviews li button") if b.text == "Approve").click()
        until(lambda: not driver.find_elements(By.CSS_SELECTOR, "#reviews li"), "the approved check-in stays in the review list")
        until(lambda: board().get("rival") == ("1", "45", "2") and board().get("walker") == ("2", "35", "2"),
              f"the host's leaderboard after the approval: {board()}")
        approved = rival.ok(f'HUNT {hunt["id"]}')["me"]
        check(approved["points"] == 45 and bakery["id"] in approved["found"], f"the approval over TCP: {approved}")
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        page.failed(error, output, "hunt")
    finally:
        page.close(daemon, log, not_found_fails=True)
    return page.report("hunt pages", "joins by code, refuses a check-in too far, accepts one there and one with a code, "
              "shows a rival's score and the hints live, a toast and the list of badges for the first find, shows a script as text; the host creates a hunt, "
              "places two stops on the map, prints the code stop's QR code, starts it and sends a hint, approves a photo")


if __name__ == "__main__":
    sys.exit(main())
