#!/usr/bin/env python3
"""The demo page in a real browser (headless Chromium driven by selenium).

Usage: demo_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` on free ports (the line protocol and --http-port) against DATABASE_URL
(already migrated), registers two users over TCP, then in Chromium: opens the demo page at `/`,
logs in, checks that the nearby pins are listed with their distances, and that a pin posted from
another connection appears within 2 s (through WATCH). Screenshots go to OUTPUT_DIR. Exit 0 when
every check passed.
"""
import json
import os
import socket
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Line:
    """One line-protocol connection."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")

    def call(self, line):
        self.sock.sendall(line.encode() + b"\n")
        reply = self.file.readline().decode().rstrip("\n")
        while reply.startswith("EVENT "):
            reply = self.file.readline().decode().rstrip("\n")
        return reply

    def ok(self, line):
        reply = self.call(line)
        if not reply.startswith("OK "):
            raise RuntimeError(f"{line!r} answered {reply!r}")
        return json.loads(reply[3:])


def wait_for_port(port, process, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError("scavengerd exited early")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    port, http_port = free_port(), free_port()
    log = open(os.path.join(output, "scavengerd.log"), "w")
    daemon = subprocess.Popen(
        [daemon_path, "serve", "--port", str(port), "--http-port", str(http_port), "--register-rate", "off"],
        env={**os.environ, "DATABASE_URL": database_url}, stderr=log, stdout=subprocess.DEVNULL)
    failures = []
    driver = None
    try:
        wait_for_port(port, daemon)
        wait_for_port(http_port, daemon)
        walker = Line(port)
        deadline = time.time() + 20
        while walker.call("NEARBY 0 0 1").startswith("ERR UNAVAILABLE") and time.time() < deadline:
            time.sleep(0.2)
        walker.ok("REGISTER walker walker@example.org password1")
        walker.ok('POST 52.5205 13.4050 "Free coffee at the blue kiosk"')
        walker.ok('POST 52.5190 13.4065 "Street piano under the bridge"')
        other = Line(port)
        other.ok("REGISTER wanderer wanderer@example.org password2")

        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=900,1000"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
        driver.get(f"http://127.0.0.1:{http_port}/")
        wait = WebDriverWait(driver, 10)
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("walker")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Logged in as walker"))
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#pins li")) == 2)
        texts = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#pins li .pin-text")]
        metas = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#pins li .meta")]
        if sorted(texts) != ["Free coffee at the blue kiosk", "Street piano under the bridge"]:
            failures.append(f"nearby pins listed: {texts}")
        if not all(" m away" in meta for meta in metas):
            failures.append(f"distances missing: {metas}")
        driver.save_screenshot(os.path.join(output, "demo-nearby.png"))

        # Another connection posts nearby: the page shows it within 2 s, through WATCH.
        posted = time.time()
        other.ok('POST 52.5201 13.4052 "A kite stuck in the lime tree"')
        try:
            WebDriverWait(driver, 2, poll_frequency=0.05).until(
                lambda d: "A kite stuck in the lime tree" in [e.text for e in d.find_elements(By.CSS_SELECTOR, "#pins li .pin-text")])
            print(f"the new pin appeared {time.time() - posted:.2f} s after it was posted")
        except Exception:
            failures.append("a pin posted from another connection did not appear within 2 s")
        driver.save_screenshot(os.path.join(output, "demo-live.png"))

        # And the page posts a pin itself.
        driver.find_element(By.ID, "post-text").send_keys("Posted from the browser")
        driver.find_element(By.ID, "post-button").click()
        wait.until(lambda d: "Posted from the browser" in [e.text for e in d.find_elements(By.CSS_SELECTOR, "#pins li .pin-text")])
        if not any(p["text"] == "Posted from the browser" for p in walker.ok("NEARBY 52.52 13.405 1000")["pins"]):
            failures.append("the browser's pin is not in NEARBY")
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        failures.append(f"{type(error).__name__}: {error}")
        if driver is not None:
            driver.save_screenshot(os.path.join(output, "demo-failure.png"))
    finally:
        if driver is not None:
            driver.quit()
        daemon.terminate()
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        log.close()
    for failure in failures:
        print("FAIL demo page:", failure)
    if not failures:
        print("PASS demo page: logs in, lists nearby pins with distances, shows a pin posted elsewhere within 2 s, posts one")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
