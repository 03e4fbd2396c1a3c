#!/usr/bin/env python3
"""A time trial on the hunt pages in headless Chromium (protocol 1.4).

Usage: trial_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` with --http-port against DATABASE_URL (already migrated). On /host a
host creates a hunt with a 2-minute time trial and a badge (checked over TCP),
then over TCP a 2-minute trial with two stops is made and started. On /play a player joins it:
the page says they have 2:00 from their first check-in; they check in at the first stop and the
clock counts down from it; their check-ins are then moved 2 minutes into the past in the
database (psql: the trial's clock is PostgreSQL's, and nothing waits for it) and in the page's
record of it, the page reloaded, and it says time is up; a check-in at the second stop is refused with "time is up". The
leaderboard shows the player's trial time. Screenshots go to OUTPUT_DIR. Exit 0 when every check passed.
"""
import os
import re
import subprocess
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import PageChecks, Line, chromium, start_daemon

START = (52.5200, 13.4050)
SECOND = (52.5209, 13.4050)


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    base = f"http://127.0.0.1:{http_port}"
    page = PageChecks()
    check, until, text, locate, result = page.check, page.until, page.text, page.locate, page.result
    driver = None

    def board():
        return {cells[1]: cells for cells in driver.execute_script(
            "return [...document.querySelectorAll('#leaderboard-rows tr')].map((row) =>"
            " [...row.querySelectorAll('td')].map((cell) => cell.textContent.trim()))")}

    try:
        host = Line(port)
        host.ok("REGISTER hostess hostess@example.org password1")
        driver = chromium(1100, 1300)
        page.driver = driver
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        locate(*START)
        wait = WebDriverWait(driver, 60)

        # ---- /host: a hunt with a time trial and a badge.
        driver.get(base + "/host")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("hostess")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as hostess"))
        driver.find_element(By.ID, "create-name").send_keys("Relay")
        driver.find_element(By.ID, "create-trial").send_keys("2")
        driver.find_element(By.ID, "create-badge").send_keys("Relay runner")
        driver.find_element(By.ID, "create-button").click()
        until(lambda: text("#hunt-name") == "Relay", "the hunt with options was not created")
        until(lambda: "time trial: 2 min each" in text("#hunt-meta"), f"the host's view of the trial: {text('#hunt-meta')!r}")
        driver.save_screenshot(os.path.join(output, "trial-host.png"))
        mine = host.ok("HUNTS MINE")["hunts"]
        relay = next((h for h in mine if h["name"] == "Relay"), None)
        check(relay is not None and relay.get("teams") is None and relay.get("trial") == 120 and relay.get("badge") == "Relay runner",
              f"the hunt /host made: {relay}")

        # ---- a 2-minute trial of two stops, started.
        hunt = host.ok('CREATEHUNT "Sprint" TRIAL 120')["hunt"]
        first = host.ok(f'ADDSTOP {hunt["id"]} {START[0]} {START[1]} 40 10 "The gate"')["stop"]
        second = host.ok(f'ADDSTOP {hunt["id"]} {SECOND[0]} {SECOND[1]} 40 10 "The tower"')["stop"]
        host.ok(f'STARTHUNT {hunt["id"]}')

        # ---- /play: the clock before and after the first check-in.
        driver.execute_script("localStorage.clear()")
        driver.get(base + "/play")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "register-name").send_keys("runner")
        driver.find_element(By.ID, "register-email").send_keys("runner@example.org")
        driver.find_element(By.ID, "register-password").send_keys("password3")
        driver.find_element(By.ID, "register-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as runner"))
        driver.find_element(By.ID, "join-code").send_keys(hunt["code"])
        driver.find_element(By.ID, "join-button").click()
        until(lambda: text("#hunt-name") == "Sprint", "joining by code did not show the hunt")
        until(lambda: text("#trial-clock") == "Time trial: you have 2:00 from your first check-in.",
              f"the clock before a check-in: {text('#trial-clock')!r}")
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(first["id"])
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: result()[0].endswith(" ok"), f"the first check-in was not accepted: {result()}")
        until(lambda: re.fullmatch(r"Time trial: 1:[0-5]\d left\.", text("#trial-clock")) is not None,
              f"the clock after the first check-in: {text('#trial-clock')!r}")
        shown = text("#trial-clock")
        until(lambda: text("#trial-clock") != shown, "the clock does not count down")
        # One stop and no time yet between the first check-in and the last: no "1 in 0 s".
        until(lambda: board().get("runner", [""] * 4)[3] == "1", f"the leaderboard's trial time: {board()}")
        driver.save_screenshot(os.path.join(output, "trial-play.png"))

        # ---- time is up: the player's check-ins two minutes in the past, in PostgreSQL.
        subprocess.run(["psql", database_url, "-qc",
                        "UPDATE checkins SET created_at = created_at - interval '2 minutes' "
                        "WHERE user_id = (SELECT id FROM users WHERE name = 'runner')"], check=True)
        # This browser's record of the first check-in moves with it (the page counts from it).
        driver.execute_script("const k = arguments[0]; localStorage.setItem(k, String(Number(localStorage.getItem(k)) - 120000))",
                              f"scavenger.play.trial.{hunt['id']}.runner")
        driver.refresh()
        until(lambda: text("#hunt-name") == "Sprint", "the hunt is not open again after a reload")
        until(lambda: text("#trial-clock") == "Time trial: your time is up.", f"the clock after time ran out: {text('#trial-clock')!r}")
        locate(*SECOND)
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(second["id"])
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: "error" in result()[0], f"a check-in after time ran out was not refused: {result()}")
        check("time is up" in result()[1], f"the refusal does not say time is up: {result()}")
        driver.save_screenshot(os.path.join(output, "trial-time-up.png"))
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        page.failed(error, output, "trial")
    finally:
        page.close(daemon, log)
    return page.report("trial pages", "/host creates a hunt with a trial and a badge; /play counts a trial down from the "
              "first check-in, says when time is up, and the check-in after it is refused")


if __name__ == "__main__":
    sys.exit(main())
