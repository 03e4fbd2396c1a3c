#!/usr/bin/env python3
"""A class gets in: 30 pupils join as guests from one address (headless Chromium, selenium).

Usage: class_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` (its default limits: a school's one address must not matter to guests)
with --http-port on DATABASE_URL (already migrated). Over TCP a teacher creates a hunt that takes
30 guests, with a place stop and a photo stop, and starts it. The teacher's browser (a laptop's
window) opens /host on the hunt. Then 30 pupils, one after the other on a phone-sized page of one
Chromium (its storage cleared between pupils, as 30 phones would have it), each open the join
link /play?code=CODE from 127.0.0.1, type a name, "Join as a guest" and check in at the place stop
with an emulated location; the last one also sends a photo at the photo stop.
- Every pupil's page shows the hunt, the accepted check-in and "Playing as NAME (a guest)".
- The teacher's page shows all 30 on its board, and the photo in its review list, with no reload.
- A 31st is told the hunt has no room, next to the form; a name taken is told likewise.
Screenshots of the projector view and of a pupil's phone go to OUTPUT_DIR. Exit 0 when every
check passed.
"""
import base64
import os
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from common import PageChecks, Line, chromium, start_daemon

GATE = (48.8584, 2.2945)
TREE = (48.8590, 2.2950)
# A 2×2 PNG, red and blue.
PHOTO = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4zwAEIOI/kAAAG/ID/VxhF44AAAAASUVORK5CYII="
PUPILS = int(os.environ.get("CLASS_PUPILS", "30"))


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output)
    base = f"http://127.0.0.1:{http_port}"
    teacher_page, pupil_page = PageChecks(), PageChecks()
    pupil_page.failures = teacher_page.failures
    phone = None
    try:
        teacher = Line(port)
        teacher.ok("REGISTER teacher teacher@example.org password1")
        hunt = teacher.ok(f'CREATEHUNT "Class hunt" GUESTS {PUPILS}')["hunt"]
        code = hunt["code"]
        gate = teacher.ok(f'ADDSTOP {hunt["id"]} {GATE[0]} {GATE[1]} 40 10 "The gate"')["stop"]
        tree = teacher.ok(f'ADDSTOP {hunt["id"]} {TREE[0]} {TREE[1]} 40 15 "The tree" PROOF photo')["stop"]
        teacher.ok(f'STARTHUNT {hunt["id"]}')

        # ---- the teacher's browser, on the hunt.
        driver = chromium(1280, 800)
        teacher_page.driver = driver
        check, until, text = teacher_page.check, teacher_page.until, teacher_page.text
        driver.get(base + "/host")
        WebDriverWait(driver, 60).until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("teacher")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        WebDriverWait(driver, 60).until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as teacher"))
        until(lambda: driver.execute_script(
            "const b = [...document.querySelectorAll('#my-hunts button')].find((e) => e.textContent.trim() === 'Class hunt');"
            " if (b) b.click(); return !!b"), "the teacher's hunt is not listed")
        until(lambda: text("#hunt-name") == "Class hunt", "the hunt did not open on the teacher's page")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False})
        driver.find_element(By.ID, "projector-button").click()
        until(lambda: text("#projector-code") == code, f"the projector view's code: {text('#projector-code')!r}")
        until(lambda: driver.execute_script(
            "const i = document.querySelector('#projector-qr img'); return !!i && i.complete && i.naturalWidth > 0"),
            "the projector view's QR code is not drawn")
        driver.save_screenshot(os.path.join(output, "class-projector.png"))
        driver.find_element(By.ID, "projector-close").click()
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

        # ---- the pupils: one phone-sized page each, one after the other, all from 127.0.0.1.
        phone = chromium(900, 1000)
        pupil_page.driver = phone
        phone.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        phone.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        pupil_page.locate(*GATE)
        photo_file = os.path.abspath(os.path.join(output, "class-tree.png"))  # a file input takes absolute paths only
        with open(photo_file, "wb") as out:
            out.write(base64.b64decode(PHOTO))

        def join_as(name):
            phone.get(f"{base}/play?code={code}")
            WebDriverWait(phone, 60).until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
            pupil_page.check(phone.execute_script("return document.getElementById('guest-code').value") == code,
                             f"{name}: the join link does not fill in the guest form's code")
            phone.find_element(By.ID, "guest-name").send_keys(name)
            phone.find_element(By.ID, "guest-button").click()

        phone.set_page_load_timeout(60)
        for index in range(PUPILS):
            name = f"pupil{index + 1:02d}"
            print(f"{name} joins", flush=True)
            join_as(name)
            if not pupil_page.until(lambda: pupil_page.text("#hunt-name") == "Class hunt",
                                    f"{name}: joining as a guest did not show the hunt ({pupil_page.text('#guest-form + .form-message')!r})"):
                break
            pupil_page.check(pupil_page.text("#who") == f"Playing as {name} (a guest)", f"{name}: {pupil_page.text('#who')!r}")
            pupil_page.check(not pupil_page.shown("#guest-section") and not pupil_page.shown("#join-section"),
                             f"{name}: the join forms stay on a guest's page")
            pupil_page.until(lambda: phone.find_element(By.ID, "checkin-button").is_enabled(), f"{name}: the check-in button stays disabled")
            Select(phone.find_element(By.ID, "checkin-stop")).select_by_value(gate["id"])
            phone.find_element(By.ID, "checkin-button").click()
            pupil_page.until(lambda: pupil_page.result()[0] == "result ok" and "+10 points" in pupil_page.result()[1],
                             f"{name}: the check-in was not accepted: {pupil_page.result()}")
            pupil_page.check("error" not in (phone.find_element(By.ID, "status").get_attribute("class") or ""),
                             f"{name}: the page reports an error: {pupil_page.text('#status')!r}")
            if index == PUPILS - 1:
                pupil_page.locate(*TREE)
                Select(phone.find_element(By.ID, "checkin-stop")).select_by_value(tree["id"])
                pupil_page.until(lambda: pupil_page.shown("#photo-field"), f"{name}: no photo field for a photo stop")
                phone.find_element(By.ID, "checkin-photo").send_keys(photo_file)
                phone.find_element(By.ID, "checkin-button").click()
                pupil_page.until(lambda: "pending" in pupil_page.result()[0], f"{name}: the photo check-in is not pending: {pupil_page.result()}")
                phone.execute_script("window.scrollTo(0, 0)")
                phone.save_screenshot(os.path.join(output, "class-phone.png"))
                pupil_page.locate(*GATE)
            # The next pupil's phone holds nothing of this one.
            phone.execute_script("localStorage.clear()")

        # ---- the teacher's page, never reloaded: all 30 on its board, the photo waiting for review.
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#leaderboard-rows tr")) == PUPILS,
              f"the teacher's board holds {len(driver.find_elements(By.CSS_SELECTOR, '#leaderboard-rows tr'))} of {PUPILS} pupils")
        until(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#reviews li")) == 1, "the photo check-in did not reach the review list live")
        until(lambda: text("#review-count") == "1 photo waits for review.", f"the review count: {text('#review-count')!r}")
        driver.save_screenshot(os.path.join(output, "class-host.png"))
        board = teacher.ok(f'LEADERBOARD {hunt["id"]} LIMIT 100')["entries"]
        check(len(board) == PUPILS and all(entry["player"].startswith("pupil") for entry in board), f"the hunt's board: {board}")

        # ---- a 31st pupil: no room, said next to the form; the hunt still holds 30.
        join_as("latecomer")
        pupil_page.until(lambda: "room for no more guests" in pupil_page.text("#guest-form + .form-message"),
                         f"a 31st guest: {pupil_page.text('#guest-form + .form-message')!r}")
        check(teacher.ok(f'HUNT {hunt["id"]}')["hunt"]["players"] == PUPILS, "a refused guest changed the hunt's players")
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        teacher_page.failed(error, output, "class-teacher")
        if phone is not None:
            phone.save_screenshot(os.path.join(output, "class-pupil-failure.png"))
    finally:
        if phone is not None:
            phone.quit()
        teacher_page.close(daemon, log, not_found_fails=True)
    return teacher_page.report("a class of guests", f"{PUPILS} pupils joined as guests from one address through the join link and checked "
                               "in with an emulated location; the teacher's board shows them all and the review list the photo, live; "
                               "a 31st is told there is no room")


if __name__ == "__main__":
    sys.exit(main())
