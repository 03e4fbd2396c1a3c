#!/usr/bin/env python3
"""The moderators' console in a real browser (headless Chromium driven by selenium).

Usage: console_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` with --http-port against DATABASE_URL (already migrated). Over TCP:
an author posts a photo pin, three fresh accounts report it (spam, spam, harassment), and a
moderator and a plain user register (the moderator's role set with `scavengerd user role`).
Then in Chromium at /mod/: the plain user's sign-in is refused; the moderator signs in, sees
the item with its photo, reasons and reporters' account ages, claims it, bans the author for a
day with a note, and finds the ban in the audit log. A POST without the CSRF token, or with a
wrong one, is refused and changes nothing. Screenshots of the queue, the item and the log go to
OUTPUT_DIR. Exit 0 when every check passed.
"""
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import Line, chromium, png, start_daemon, stop_daemon

# A 600×400 PNG: the queue shows it as a 256-pixel thumbnail, the item page as it is.
PHOTO = png(600, 400)


def post_form(url, fields, cookie):
    """A POST as a page of another site would make it, with the moderator's cookie; returns the status."""
    data = "&".join(f"{k}={v}" for k, v in fields.items()).encode()
    request = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    base = f"http://127.0.0.1:{http_port}"
    failures = []
    driver = None

    def check(condition, message):
        if not condition:
            failures.append(message)

    def until_true(condition, message):
        """Waits for a state (60 s only guards against a hang); a failure when it never comes."""
        try:
            WebDriverWait(driver, 60, poll_frequency=0.05).until(lambda d: condition())
        except Exception:  # noqa: BLE001 - a wait that never ends is a failure of the check
            failures.append(message)

    try:
        author = Line(port)
        author.ok("REGISTER mallory mallory@example.org password1")
        pin = author.ok(f'POSTPHOTO 52.5200 13.4050 {PHOTO} CAPTION "Buy followers now, cheap"')["pin"]["id"]
        author.ok('POST 52.5203 13.4052 "An older pin of the same author"')
        for name, reason in (("reporter1", "spam"), ("reporter2", "spam"), ("reporter3", "harassment")):
            reporter = Line(port)
            reporter.ok(f"REGISTER {name} {name}@example.org password1")
            reporter.ok(f"REPORT {pin} {reason}")
        Line(port).ok("REGISTER moderna moderna@example.org password1")
        Line(port).ok("REGISTER plainuser plainuser@example.org password1")
        subprocess.run([daemon_path, "user", "role", "moderna", "moderator"], check=True,
                       env={**os.environ, "DATABASE_URL": database_url}, stdout=subprocess.DEVNULL)

        driver = chromium(1000, 1300)
        wait = WebDriverWait(driver, 60)

        def sign_in(name):
            driver.get(f"{base}/mod/")
            wait.until(EC.presence_of_element_located((By.ID, "login")))
            driver.find_element(By.ID, "login").send_keys(name)
            driver.find_element(By.ID, "password").send_keys("password1")
            driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()

        # A plain user is refused, in words.
        sign_in("plainuser")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ".problem")))
        check("for moderators and admins" in driver.find_element(By.CSS_SELECTOR, ".problem").text,
              "a plain user's sign-in was not refused with the console-is-for-moderators message")
        check(driver.get_cookie("scavenger_mod") is None, "a refused sign-in left a session cookie")
        driver.save_screenshot(os.path.join(output, "console-refused.png"))

        # The moderator signs in and sees the item: photo, reasons, reporters' ages.
        sign_in("moderna")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f"li.item[data-item='{pin}']")))
        card = driver.find_element(By.CSS_SELECTOR, f"li.item[data-item='{pin}']")
        check("3 reports" in card.text, f"the card does not say 3 reports: {card.text!r}")
        check("spam × 2" in card.text and "harassment × 1" in card.text, f"reasons with counts missing: {card.text!r}")
        check("3 under a day old" in card.text, f"the fresh reporters are not flagged: {card.text!r}")
        image = card.find_element(By.CSS_SELECTOR, "img.thumb")
        until_true(lambda: driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) == 256,
                   "the reported photo is not shown as a 256-pixel thumbnail on the queue")
        cookie = driver.get_cookie("scavenger_mod")
        check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict",
              f"the session cookie is not HttpOnly and SameSite=Strict: {cookie}")
        driver.save_screenshot(os.path.join(output, "console-queue.png"))


        # A POST without the CSRF token, or with a wrong one, is refused and claims nothing.
        session_cookie = f"scavenger_mod={cookie['value']}"
        check(post_form(f"{base}/mod/item/{pin}/claim", {}, session_cookie) == 403, "a CSRF-less claim was not refused")
        check(post_form(f"{base}/mod/item/{pin}/claim", {"csrf": "0" * 64}, session_cookie) == 403,
              "a claim with a wrong CSRF token was not refused")
        queue = Line(port)
        queue.ok("LOGIN moderna password1")
        item = queue.ok("MODQUEUE STATUS all")["items"][0]
        check(item["status"] == "open", f"a refused POST changed the item: {item['status']}")

        # Claim, then ban the author for a day with a note.
        card.find_element(By.CSS_SELECTOR, "h2 a").click()
        wait.until(EC.presence_of_element_located((By.ID, "evidence")))
        check("Buy followers now, cheap" in driver.find_element(By.TAG_NAME, "blockquote").text, "the evidence text is missing")
        until_true(lambda: driver.execute_script(
            "const i = document.querySelector('img.photo'); return !!i && i.complete && i.naturalWidth") == 600,
            "the item page does not show the reported photo at its size")
        check(len(driver.find_elements(By.CSS_SELECTOR, "svg.map circle")) >= 3, "the map does not show the place and the nearby pin")
        check("An older pin of the same author" in driver.page_source, "the author's recent pins are missing")
        check("Author's email" in driver.page_source and "not verified" in driver.page_source,
              "the item page does not say whether the author's email is verified")
        driver.find_element(By.CSS_SELECTOR, f"form[action='/mod/item/{pin}/claim'] button").click()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ".notice")))
        check("You claimed this item" in driver.find_element(By.CSS_SELECTOR, ".notice").text, "the claim was not confirmed")
        driver.find_element(By.ID, "d-ban").click()
        Select(driver.find_element(By.ID, "duration")).select_by_value("86400")
        driver.find_element(By.ID, "note").send_keys("Spam photo; reported by three accounts")
        driver.save_screenshot(os.path.join(output, "console-item.png"))
        driver.find_element(By.CSS_SELECTOR, "form.resolve button[type=submit]").click()
        wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".notice"), "Resolved"))
        check(author.call("POST 52.52 13.405 again").startswith("ERR BANNED"), "the author is not banned")

        # The audit log has the ban, with its note.
        driver.find_element(By.LINK_TEXT, "Audit log").click()
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "table.log")))
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.log tbody tr")]
        check(rows and "ban" in rows[0] and "mallory" in rows[0] and "Spam photo; reported by three accounts" in rows[0],
              f"the newest audit-log entry is not the ban with its note: {rows[:2]}")
        check(any("claim" in row for row in rows), "the claim is not in the audit log")
        driver.save_screenshot(os.path.join(output, "console-log.png"))

        # Signing out ends the session everywhere.
        driver.find_element(By.CSS_SELECTOR, "form.signout button").click()
        wait.until(EC.presence_of_element_located((By.ID, "login")))
        check(post_form(f"{base}/mod/item/{pin}/release", {}, session_cookie) == 401, "the session still works after signing out")

        # Stored scripts (a pin's text, a report's note) show as text on the queue and the item
        # page, and never run.
        payload = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
        trickster = Line(port)
        trickster.ok("REGISTER trickster trickster@example.org password1")
        xss_pin = trickster.ok("POST 52.5204 13.4053 " + json.dumps(payload))["pin"]["id"]
        reporter = Line(port)
        reporter.ok("REGISTER reporter4 reporter4@example.org password1")
        reporter.ok(f"REPORT {xss_pin} spam NOTE " + json.dumps(payload))
        sign_in("moderna")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f"li.item[data-item='{xss_pin}']")))
        xss_card = driver.find_element(By.CSS_SELECTOR, f"li.item[data-item='{xss_pin}']")
        check(payload in xss_card.text, f"a pin's script is not shown as text on the queue: {xss_card.text!r}")
        check(not xss_card.find_elements(By.CSS_SELECTOR, "img, script"), "a pin's text became an element on the queue")
        driver.get(f"{base}/mod/item/{xss_pin}")
        wait.until(EC.presence_of_element_located((By.TAG_NAME, "main")))
        check(driver.page_source.count("&lt;script&gt;window.__xss=2&lt;/script&gt;") >= 2,
              "the pin's text and the report's note are not both shown escaped on the item page")
        check(driver.execute_script("return window.__xss === undefined") is True, "a stored script ran in the console")
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        failures.append(f"{type(error).__name__}: {error}")
        if driver is not None:
            driver.save_screenshot(os.path.join(output, "console-failure.png"))
    finally:
        if driver is not None:
            driver.quit()
        stop_daemon(daemon, log)
    for failure in failures:
        print("FAIL console:", failure)
    if not failures:
        print("PASS console: a plain user is refused; a moderator sees the reported photo with reasons and "
              "reporters' ages, claims it, bans its author for a day with a note, finds it in the audit log; "
              "CSRF-less and wrong-token POSTs are refused")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
