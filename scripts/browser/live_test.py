#!/usr/bin/env python3
"""The hunt pages stay live, with messages where the eye is (headless Chromium, selenium).

Usage: live_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` (no mail) with --http-port on DATABASE_URL (already migrated). Over TCP a
host creates a hunt with a place stop and a photo stop and starts it, and a second hunt with no
stop. Two browsers: the host's (a laptop's window) and a pupil's (a 390×844 phone).
- The host's view: no recovery forms without mail ("Forgot your password? Ask your host."); the
  hunt's join link, its QR code and the code on the printed sheet; "Show to the class" shows the
  code and the QR code full screen (screenshot); "Start now" refuses a hunt with no stop in the
  page, and asks before starting one with stops.
- The join link /play?code=CODE: the code filled in; after signing up the join form is in view; a
  wrong code's message appears under the form, inside the phone's screen.
- The pupil's photo check-in: their page marks the stop as waiting for review; the host's review
  list shows it and its count without a reload; the host approves it and the pupil's page marks
  the stop found without a reload.
Screenshots go to OUTPUT_DIR. Exit 0 when every check passed.
"""
import base64
import os
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import PageChecks, Line, chromium, start_daemon


def click_button(driver, selector, label):
    """Clicks the button under `selector` labelled `label`, found and clicked in one step inside
    the page: the pages redraw their lists as events come, and a button found one call earlier may
    be gone. False when there is none."""
    return driver.execute_script(
        "const b = [...document.querySelectorAll(arguments[0])].find((e) => e.textContent.trim() === arguments[1]);"
        " if (b) b.click(); return !!b", selector, label)

GATE = (48.8584, 2.2945)
TREE = (48.8590, 2.2950)
# A 2×2 PNG, red and blue.
PHOTO = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4zwAEIOI/kAAAG/ID/VxhF44AAAAASUVORK5CYII="


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, "--register-rate", "off")
    base = f"http://127.0.0.1:{http_port}"
    host_page, pupil_page = PageChecks(), PageChecks()
    pupil_page.failures = host_page.failures  # one list of failures for both browsers
    pupil = None
    try:
        host = Line(port)
        host.ok("REGISTER teacher teacher@example.org password1")
        hunt = host.ok('CREATEHUNT "Schoolyard" DESCRIPTION "Two stops"')["hunt"]
        code = hunt["code"]
        host.ok(f'ADDSTOP {hunt["id"]} {GATE[0]} {GATE[1]} 40 10 "The gate"')
        tree = host.ok(f'ADDSTOP {hunt["id"]} {TREE[0]} {TREE[1]} 40 15 "The tree" PROOF photo')["stop"]
        host.ok(f'STARTHUNT {hunt["id"]}')
        empty = host.ok('CREATEHUNT "Not ready"')["hunt"]

        # ---- the host's browser.
        driver = chromium(1280, 800)
        host_page.driver = driver
        check, until, text = host_page.check, host_page.until, host_page.text
        wait = WebDriverWait(driver, 60)
        driver.get(base + "/host")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        # Without mail the recovery forms are gone and the page says whom to ask.
        check(not driver.find_elements(By.ID, "forgot-form"), "the forgot-password form shows on a daemon without mail")
        check(host_page.shown("#ask-host") and text("#ask-host") == "Forgot your password? Ask your host.",
              f"no word about a forgotten password: {text('#ask-host')!r}")
        driver.find_element(By.ID, "login-name").send_keys("teacher")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as teacher"))
        until(lambda: "Schoolyard" in host_page.texts("#my-hunts button"), "the host's hunts are not listed")
        check(click_button(driver, "#my-hunts button", "Schoolyard"), "no button for the hunt Schoolyard")
        until(lambda: text("#hunt-name") == "Schoolyard", "the hunt did not open")

        # The join link, its QR code, the code on the printed sheet.
        link = f"{base}/play?code={code}"
        until(lambda: driver.find_element(By.ID, "join-link").get_attribute("href") == link,
              f"the join link: {driver.find_element(By.ID, 'join-link').get_attribute('href')!r}, not {link!r}")
        until(lambda: driver.execute_script("const i = document.querySelector('#join-qr img'); return !!i && i.complete && i.naturalWidth > 0"),
              "the join link's QR code is not drawn")
        until(lambda: text("#sheet .join-card .card-code") == code, f"the printed join card's code: {text('#sheet .join-card .card-code')!r}")
        check(text("#review-count") == "Nothing waits for a review.", f"the review count at first: {text('#review-count')!r}")

        # "Show to the class": the code and the QR code, as large as the screen (a projector's 1280×720) allows.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})
        driver.find_element(By.ID, "projector-button").click()
        until(lambda: driver.find_element(By.ID, "projector").is_displayed() and text("#projector-code") == code,
              f"the projector view: {text('#projector-code')!r}")
        until(lambda: driver.execute_script(
            "const i = document.querySelector('#projector-qr img'); return !!i && i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width >= 300"),
            "the projector view's QR code is not drawn large")
        sizes = driver.execute_script(
            "const c = document.getElementById('projector-code').getBoundingClientRect();"
            "const q = document.querySelector('#projector-qr img').getBoundingClientRect();"
            "return [c.height / innerHeight, c.right <= innerWidth && c.bottom <= innerHeight, q.right <= innerWidth && q.bottom <= innerHeight]")
        check(sizes[0] >= 0.15 and sizes[1] and sizes[2], f"the projector's code and QR code: share of the height, inside the window: {sizes}")
        check(text("#projector-link") == f"127.0.0.1:{http_port}/play", f"the projector's address: {text('#projector-link')!r}")
        driver.save_screenshot(os.path.join(output, "live-projector.png"))
        driver.find_element(By.ID, "projector-close").click()
        until(lambda: not driver.find_element(By.ID, "projector").is_displayed(), "the projector view does not close")
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

        # ---- the pupil's phone, from the join link.
        pupil = chromium(900, 1000)
        pupil_page.driver = pupil
        pupil.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        pupil.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        pupil_page.locate(*TREE)
        pupil.get(f"{base}/play?code={code}")
        WebDriverWait(pupil, 60).until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        check(pupil.execute_script("return document.getElementById('join-code').value") == code, "the join link does not fill in the code")
        check(code in pupil_page.text("#login-form + .form-message"), f"the sign-in form does not say what the code is for: {pupil_page.text('#login-form + .form-message')!r}")
        pupil.find_element(By.ID, "register-name").send_keys("pupil")
        pupil.find_element(By.ID, "register-email").send_keys("pupil@example.org")
        pupil.find_element(By.ID, "register-password").send_keys("password2")
        pupil.find_element(By.ID, "register-button").click()
        WebDriverWait(pupil, 60).until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as pupil"))

        def in_view(selector):
            return pupil.execute_script(
                "const e = document.querySelector(arguments[0]); if (!e || e.offsetParent === null) return false;"
                "const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight", selector)

        pupil_page.until(lambda: in_view("#join-form"), "the join form is not in view after signing up from a join link")
        # A wrong code: the message is under the form, on the phone's screen.
        pupil.find_element(By.ID, "join-code").clear()
        pupil.find_element(By.ID, "join-code").send_keys("ZZZZZZ")
        pupil.find_element(By.ID, "join-button").click()
        pupil_page.until(lambda: pupil_page.text("#join-form + .form-message") == "No running or upcoming hunt has that code.",
                         f"the wrong code's message: {pupil_page.text('#join-form + .form-message')!r}")
        pupil_page.until(lambda: in_view("#join-form + .form-message"), "the wrong code's message is not on the phone's screen")
        pupil.save_screenshot(os.path.join(output, "live-play-phone-join.png"))
        pupil.find_element(By.ID, "join-code").clear()
        pupil.find_element(By.ID, "join-code").send_keys(code)
        pupil.find_element(By.ID, "join-button").click()
        pupil_page.until(lambda: pupil_page.text("#hunt-name") == "Schoolyard", "joining did not show the hunt")

        # A photo check-in from the page: pending, and the stop says it waits.
        photo_file = os.path.abspath(os.path.join(output, "tree.png"))  # a file input takes absolute paths only
        with open(photo_file, "wb") as out:
            out.write(base64.b64decode(PHOTO))
        pupil_page.until(lambda: pupil.find_element(By.ID, "checkin-button").is_enabled(), "the check-in button stays disabled")
        Select(pupil.find_element(By.ID, "checkin-stop")).select_by_value(tree["id"])
        pupil_page.until(lambda: pupil_page.shown("#photo-field"), "no photo field for a photo stop")
        pupil.find_element(By.ID, "checkin-photo").send_keys(photo_file)
        pupil.find_element(By.ID, "checkin-button").click()
        pupil_page.until(lambda: "pending" in pupil_page.result()[0], f"the photo check-in is not pending: {pupil_page.result()}")
        tree_item = f'#stops li[data-stop="{tree["id"]}"]'
        pupil_page.until(lambda: pupil.execute_script("return document.querySelector(arguments[0]).className", tree_item) == "pending"
                         and "waiting for the host's review" in pupil_page.text(tree_item),
                         f"the stop does not say it waits for review: {pupil_page.text(tree_item)!r}")

        # The host's review list follows, with its count, without a reload.
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#reviews li")) == 1, "the photo check-in did not reach the review list live")
        until(lambda: text("#review-count") == "1 photo waits for review.", f"the review count: {text('#review-count')!r}")
        check("pupil at 2. The tree" in text("#reviews li"), f"the review item: {text('#reviews li')!r}")
        driver.save_screenshot(os.path.join(output, "live-host-review.png"))
        check(click_button(driver, "#reviews li button", "Approve"), "no Approve button")
        until(lambda: not driver.find_elements(By.CSS_SELECTOR, "#reviews li") and text("#review-count") == "Nothing waits for a review.",
              f"the approved check-in stays listed: {text('#review-count')!r}")

        # The pupil's own approved find: marked found at once.
        pupil_page.until(lambda: pupil.execute_script("return document.querySelector(arguments[0]).className", tree_item) == "found",
                         f"the approved find is not marked found: {pupil_page.text(tree_item)!r}")
        pupil_page.until(lambda: pupil_page.text("#my-score") == "You: 15 points, 1 of 2 stops found, rank 1.",
                         f"the pupil's score after the approval: {pupil_page.text('#my-score')!r}")
        pupil.execute_script("window.scrollTo(0, 0)")
        pupil.save_screenshot(os.path.join(output, "live-play-phone.png"))

        # "Start now": a hunt with no stop is refused in the page; one with a stop asks first.
        check(click_button(driver, "#my-hunts button", "Not ready"), "no button for the hunt Not ready")
        until(lambda: text("#hunt-name") == "Not ready", "the second hunt did not open")
        until(lambda: not driver.find_element(By.ID, "start-button").get_property("disabled"), "Start now is disabled")
        driver.find_element(By.ID, "start-button").click()
        until(lambda: "Add at least one stop" in text("#start-button + .form-message, p:has(> #start-button) + .form-message"),
              "a hunt with no stop is not refused next to the button")
        check(host.ok(f'HUNT {empty["id"]}')["hunt"]["state"] == "scheduled", "a hunt with no stop was started")
        host.ok(f'ADDSTOP {empty["id"]} {GATE[0]} {GATE[1]} 40 10 "The gate"')
        check(click_button(driver, "#my-hunts button", "Not ready"), "no button for the hunt Not ready")
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#stops li")) == 1, "the added stop is not listed")
        driver.find_element(By.ID, "start-button").click()
        alert = wait.until(EC.alert_is_present())
        check("Start “Not ready” now" in alert.text, f"the confirmation: {alert.text!r}")
        alert.dismiss()
        check(host.ok(f'HUNT {empty["id"]}')["hunt"]["state"] == "scheduled", "a dismissed confirmation started the hunt")
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        host_page.failed(error, output, "live-host")
        if pupil is not None:
            pupil.save_screenshot(os.path.join(output, "live-pupil-failure.png"))
    finally:
        if pupil is not None:
            pupil.quit()
        host_page.close(daemon, log, not_found_fails=True)
    return host_page.report("live hunt pages", "the join link, its QR code and the projector view; /play?code= prefilled and in view; "
                            "a wrong code's message under its form on a phone; a photo check-in pending on the pupil's page and in the host's "
                            "review list with its count, live; the approved find marked found live; Start now refused without stops and confirmed")


if __name__ == "__main__":
    sys.exit(main())
