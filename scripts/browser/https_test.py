#!/usr/bin/env python3
"""The player's page over HTTPS in headless Chromium (protocol 1.5, "HTTPS and addresses").

Usage: https_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Makes a self-signed certificate for localhost with openssl and starts `scavengerd serve` with
--http-port, --http-tls-cert and --http-tls-key against DATABASE_URL (already migrated). A host
makes and starts a hunt over TCP. Chromium, told to accept the self-signed certificate, opens
https://127.0.0.1:PORT/play (a secure page), is given a position through the DevTools protocol,
registers a player, joins the hunt by its code and checks in at the stop: accepted.

Then the same page over plain http:// from a name that is not this machine's (a second daemon
without TLS; Chromium maps the name hunt.test to 127.0.0.1, so nothing leaves the machine, but
treats the page as the insecure LAN page it stands for): the browser refuses the location, and
the page's words for it are the HTTPS message, not "allow this page to use your location".
Screenshots go to OUTPUT_DIR. Exit 0 when every check passed.
"""
import os
import subprocess
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import PageChecks, Line, chromium, start_daemon, stop_daemon

STOP = (48.8584, 2.2945)
HTTPS_NEEDED = "Your location needs this page over HTTPS (https://…). Ask the organizer for the https address."


def certificate(output):
    """A self-signed certificate for localhost and 127.0.0.1, and its key, in OUTPUT."""
    cert, key = os.path.join(output, "https-cert.pem"), os.path.join(output, "https-key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    cert, key = certificate(output)
    daemon, port, http_port, log = start_daemon(
        daemon_path, database_url, output, "--register-rate", "off", "--http-tls-cert", cert, "--http-tls-key", key)
    plain = None
    base = f"https://127.0.0.1:{http_port}"
    page = PageChecks()
    check, until, text, locate, result = page.check, page.until, page.text, page.locate, page.result
    driver = None
    try:
        host = Line(port)
        host.ok("REGISTER hostess hostess@example.org password1")
        hunt = host.ok('CREATEHUNT "Tower"')["hunt"]
        stop = host.ok(f'ADDSTOP {hunt["id"]} {STOP[0]} {STOP[1]} 40 10 "The tower"')["stop"]
        host.ok(f'STARTHUNT {hunt["id"]}')

        driver = chromium(1000, 1200, "--ignore-certificate-errors", "--host-resolver-rules=MAP hunt.test 127.0.0.1")
        page.driver = driver
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        locate(*STOP)
        wait = WebDriverWait(driver, 60)

        # ---- /play over HTTPS: a secure page, whose /ws is wss://.
        driver.get(base + "/play")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        check(driver.execute_script("return window.isSecureContext && location.protocol") == "https:",
              "the page over HTTPS is not a secure context")
        driver.find_element(By.ID, "register-name").send_keys("climber")
        driver.find_element(By.ID, "register-email").send_keys("climber@example.org")
        driver.find_element(By.ID, "register-password").send_keys("password3")
        driver.find_element(By.ID, "register-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as climber"))
        driver.find_element(By.ID, "join-code").send_keys(hunt["code"])
        driver.find_element(By.ID, "join-button").click()
        until(lambda: text("#hunt-name") == "Tower", "joining by code over HTTPS did not show the hunt")
        Select(driver.find_element(By.ID, "checkin-stop")).select_by_value(stop["id"])
        until(lambda: driver.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        driver.find_element(By.ID, "checkin-button").click()
        until(lambda: result()[0].endswith(" ok"), f"the check-in over HTTPS was not accepted: {result()}")
        driver.save_screenshot(os.path.join(output, "https-play.png"))
        board = host.ok(f'LEADERBOARD {hunt["id"]}')
        check(any(entry.get("player") == "climber" and entry.get("points") == 10 for entry in board.get("entries", [])),
              f"the leaderboard after the check-in over HTTPS: {board}")

        # ---- the same page over plain http:// from a LAN name: the location needs HTTPS.
        plain, _, plain_http_port, plain_log = start_daemon(daemon_path, database_url, output)
        insecure = f"http://hunt.test:{plain_http_port}"
        # No permission can be granted there at all: Chromium refuses geolocation to an insecure origin.
        driver.get(insecure + "/play")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        check(driver.execute_script("return window.isSecureContext") is False, "http://hunt.test is a secure context")
        said = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import("/location.js").then(({ locationNeedsHTTPS }) => {
              if (!navigator.geolocation) { done(["no geolocation", locationNeedsHTTPS(null)]); return; }
              navigator.geolocation.getCurrentPosition(
                () => done(["a position", locationNeedsHTTPS(null)]),
                (error) => done([error.message, locationNeedsHTTPS(error)]),
                { timeout: 30000 });
            });""")
        check(said[0] != "a position", f"an insecure page got the location: {said}")
        check(said[1] == HTTPS_NEEDED, f"the words for an insecure page's location: {said}")
        driver.save_screenshot(os.path.join(output, "https-insecure.png"))
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        page.failed(error, output, "https")
    finally:
        if plain is not None:
            stop_daemon(plain, plain_log)
        page.close(daemon, log)
    return page.report("HTTPS", "/play over HTTPS with a self-signed certificate joins a hunt and checks in; over plain "
                       "http:// from a LAN name the page says the location needs HTTPS")


if __name__ == "__main__":
    sys.exit(main())
