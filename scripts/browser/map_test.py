#!/usr/bin/env python3
"""Pins on the map at any zoom, in a real browser (headless Chromium driven by selenium).

Usage: map_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Writes 10,000 pins over Berlin straight into DATABASE_URL (already migrated; a few dense quarters
and a thin spread, so the daemon loads them as any restart does), starts `scavengerd serve` with
--http-port, and posts three photo pins (600×400 PNGs) over TCP, apart from the rest. Then in
Chromium, on the demo page (/): zoomed out over the city, the map shows the pins counted in cells,
every pin counted once (the cells' counts add up to MAP's total, over TCP too); selecting the
fullest cell zooms in to it; at street zoom the photos show as their 256-pixel thumbnails, and
one opens in a popup; a pin posted and deleted over TCP moves the count on the page without a
reload (WATCH MAP). On the player's page (/play), joined as a guest, the hunt's map shows the
same cells when zoomed out. Screenshots go to OUTPUT_DIR. Exit 0 when every check passed.
"""
import json
import os
import subprocess
import sys
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from common import Line, PageChecks, chromium, png, start_daemon, stop_daemon

CITY = (52.5200, 13.4050)
PINS = 10_000
# The photos stand east of the city's pins: at street zoom each is a cell of its own.
PHOTOS = [(52.5000, 13.5500), (52.5002, 13.5506), (52.4998, 13.5512)]
# The box every pin is in, and the view the test zooms out to.
CITY_BOX = (52.40, 13.20, 52.65, 13.65)

SEED_SQL = """
SELECT setseed(0.42);
INSERT INTO pins (id, author_id, lat, lon, kind, body, created_at, expires_at)
SELECT 'p' || translate(lpad(i::text, 24, '0'), '0123456789', 'abcdefghij'),
       (SELECT id FROM users WHERE name = 'mapper'),
       CASE WHEN i % 3 = 0 THEN 52.52 + (random() - 0.5) * 0.10
            ELSE 52.52 + ((i % 5) - 2) * 0.015 + (random() - 0.5) * 0.01 END,
       CASE WHEN i % 3 = 0 THEN 13.405 + (random() - 0.5) * 0.20
            ELSE 13.405 + ((i % 7) - 3) * 0.02 + (random() - 0.5) * 0.015 END,
       'text', 'Pin number ' || i, now(), now() + interval '7 days'
FROM generate_series(1, {pins}) AS i;
"""


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers.get("Content-Type"), response.read()


def short_count(count):
    """How the page writes a count on a cell's marker (pin-map.js)."""
    if count < 1000:
        return str(count)
    if count < 10000:
        text = f"{count / 1000:.1f}"
        return (text[:-2] if text.endswith(".0") else text) + "k"
    return f"{round(count / 1000)}k"


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    page = PageChecks()
    check, until = page.check, page.until
    driver = None
    # The accounts first (a daemon of their own), then the pins written beside it, as a restore
    # or an import would; the daemon that serves the test loads them at its start.
    daemon, port, _, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    try:
        Line(port).ok("REGISTER mapper mapper@example.org password1")
        Line(port).ok("REGISTER poster poster@example.org password1")
        Line(port).ok("REGISTER teacher teacher@example.org password1")
    finally:
        stop_daemon(daemon, log)
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", database_url, "-c", SEED_SQL.format(pins=PINS)],
                   check=True, stdout=subprocess.DEVNULL)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    base = f"http://127.0.0.1:{http_port}"
    try:
        poster = Line(port)
        poster.ok("LOGIN poster password1")
        photo = png(600, 400)
        photo_ids = [poster.ok(f'POSTPHOTO {lat} {lon} {photo} CAPTION "A gradient, number {n}"')["pin"]["id"]
                     for n, (lat, lon) in enumerate(PHOTOS, 1)]
        box = " ".join(str(v) for v in CITY_BOX)
        total = poster.ok(f"MAP {box} ZOOM 11")["total"]
        check(total == PINS + len(PHOTOS), f"MAP over TCP counts {total} pins, not {PINS + len(PHOTOS)}")
        # Each photo's thumbnail is made in the background; until then its original answers.
        for pin in photo_ids:
            until(lambda: http_get(f"{base}/photos/{pin}?size=thumb")[0] == "image/jpeg", f"no thumbnail was made of {pin}")

        driver = chromium(1000, 1200)
        page.driver = driver
        driver.get(base + "/")
        WebDriverWait(driver, 60).until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        state = "return [document.getElementById('map').dataset.pinTotal, window.scavengerDemo.map.getZoom()]"

        # Zoomed out over the city: cells with counts, every pin counted once.
        driver.execute_script(f"window.scavengerDemo.map.setView([{CITY[0]}, {CITY[1] + 0.05}], 11)")
        until(lambda: driver.execute_script(state) == [str(PINS + len(PHOTOS)), 11],
              f"the zoomed-out map does not count {PINS + len(PHOTOS)} pins: {driver.execute_script(state)}")
        cells = driver.execute_script("return window.scavengerDemo.pinLayer.cells.map((c) => c.count)")
        markers = driver.execute_script("return [...document.querySelectorAll('#map .pin-cell')].map((e) => e.textContent)")
        check(sum(cells) == PINS + len(PHOTOS), f"the cells' counts add up to {sum(cells)}")
        check(len(cells) > 10 and max(cells) > 100, f"the pins are not grouped in cells: {sorted(cells)[-5:]} of {len(cells)}")
        check(sorted(markers) == sorted(short_count(c) for c in cells if c > 1),
              f"the markers do not show their cells' counts: {sorted(markers)[:10]}")
        driver.save_screenshot(os.path.join(output, "map-clusters.png"))

        # Selecting the fullest cell zooms in to it: fewer pins in view, the map deeper.
        driver.execute_script("""
            const cells = window.scavengerDemo.pinLayer.cells;
            const fullest = cells.reduce((a, b) => (b.count > a.count ? b : a));
            window.__fullest = fullest.count;
            window.scavengerDemo.pinLayer.layer.getLayers()
              .find((m) => m.getLatLng().lat === fullest.lat && m.getLatLng().lng === fullest.lon).fire("click");
        """)
        fullest = driver.execute_script("return window.__fullest")
        until(lambda: driver.execute_script(state)[1] > 11 and int(driver.execute_script(state)[0]) < PINS,
              f"selecting the fullest cell ({fullest} pins) did not zoom in: {driver.execute_script(state)}")
        zoomed = driver.execute_script(state)
        check(int(zoomed[0]) >= fullest, f"zoomed in to a cell of {fullest} pins, {zoomed[0]} are in view")
        driver.save_screenshot(os.path.join(output, "map-zoomed-in.png"))

        # At street zoom the photos are their thumbnails, each a cell of its own.
        driver.execute_script(f"window.scavengerDemo.map.setView([{PHOTOS[0][0]}, {PHOTOS[0][1] + 0.0006}], 18)")
        until(lambda: driver.execute_script(state) == ["3", 18], f"the street view of the photos: {driver.execute_script(state)}")
        thumbs = "return [...document.querySelectorAll('#map .pin-photo img.thumb')].map((i) => i.complete && i.naturalWidth)"
        until(lambda: driver.execute_script(thumbs) == [256, 256, 256],
              f"the photos are not shown as 256-pixel thumbnails: {driver.execute_script(thumbs)}")
        sources = driver.execute_script("return [...document.querySelectorAll('#map .pin-photo img.thumb')].map((i) => i.src)")
        check(sorted(sources) == sorted(f"{base}/photos/{pin}?size=thumb" for pin in photo_ids), f"thumbnail URLs: {sources}")
        driver.find_element(By.CSS_SELECTOR, "#map .pin-photo").click()
        until(lambda: driver.execute_script(
            "const i = document.querySelector('.leaflet-popup .pin-popup img.popup-thumb'); return !!i && i.complete && i.naturalWidth") == 256,
            "a photo's popup does not show its thumbnail")
        popup = driver.execute_script("const e = document.querySelector('.leaflet-popup .pin-popup'); return e ? e.innerText : ''")
        check("A gradient, number" in popup and "by poster" in popup, f"the photo's popup: {popup!r}")
        driver.save_screenshot(os.path.join(output, "map-photos.png"))

        # Live: a pin posted in view moves the count without a reload, and so does its removal.
        driver.execute_script(f"window.scavengerDemo.map.setView([{CITY[0]}, {CITY[1] + 0.05}], 11)")
        until(lambda: driver.execute_script(state) == [str(PINS + 3), 11], "back to the city view")
        live = poster.ok(f'POST {CITY[0]} {CITY[1]} "Posted while the map watched"')["pin"]["id"]
        until(lambda: driver.execute_script(state)[0] == str(PINS + 4), f"a new pin did not show: {driver.execute_script(state)}")
        check(poster.call(f"DELETE {live}") == "OK true", "the live pin could not be deleted")
        until(lambda: driver.execute_script(state)[0] == str(PINS + 3), f"a deleted pin stayed: {driver.execute_script(state)}")

        # The player's page: joined as a guest, the hunt's map shows the cells when zoomed out.
        teacher = Line(port)
        teacher.ok("LOGIN teacher password1")
        hunt = teacher.ok('CREATEHUNT "Map hunt" GUESTS 10')["hunt"]
        teacher.ok(f'ADDSTOP {hunt["id"]} {CITY[0]} {CITY[1]} 40 10 "The tower"')
        teacher.ok(f'STARTHUNT {hunt["id"]}')
        driver.get(f"{base}/play?code={hunt['code']}")
        WebDriverWait(driver, 60).until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "guest-name").send_keys("walker")
        driver.find_element(By.ID, "guest-button").click()
        until(lambda: page.text("#hunt-name") == "Map hunt", "joining as a guest did not show the hunt")
        until(lambda: page.shown("#map"), "the hunt's map is not shown")
        play_state = "return [document.getElementById('map').dataset.pinTotal, window.scavengerPlay.map.getZoom()]"
        driver.execute_script(f"window.scavengerPlay.map.setView([{CITY[0]}, {CITY[1] + 0.05}], 11)")
        until(lambda: driver.execute_script(play_state) == [str(PINS + 3), 11],
              f"the player's zoomed-out map: {driver.execute_script(play_state)}; the layer: " + json.dumps(driver.execute_script(
                  "const l = window.scavengerPlay.pinLayer; return [l.generation, l.map.getSize().x, l.map.getSize().y, l.total, String(l.lastError)]")))
        check(len(driver.find_elements(By.CSS_SELECTOR, "#map .pin-cell")) > 10, "no cells on the player's map")
        driver.execute_script("document.getElementById('map').scrollIntoView()")
        driver.save_screenshot(os.path.join(output, "map-play.png"))
        print("MAP pins per cell at zoom 11:", json.dumps(sorted(cells, reverse=True)[:8]), "…")
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        page.failed(error, output, "map")
    finally:
        page.close(daemon, log, not_found_fails=True)
    return page.report("maps", "10,000 pins zoomed out in cells adding up to MAP's total; the fullest cell zooms in; "
                       "photos as 256-pixel thumbnails at street zoom, in a popup; a pin posted and deleted moves the "
                       "count live; the player's page shows the cells")


if __name__ == "__main__":
    sys.exit(main())
