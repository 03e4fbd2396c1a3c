#!/usr/bin/env python3
"""Account recovery on the player's page (/play) in headless Chromium, with real mail.

Usage: recovery_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts a real SMTP server (scripts/smtp_capture.py: aiosmtpd, each mail saved as a file) and
`scavengerd serve --smtp-url … --smtp-allow-plaintext --mail-from …` on DATABASE_URL (already
migrated). An account is made over TCP; then on /play the "forgot your password" form is sent, the
reset code is read from the mail the SMTP server received, typed into the reset form with a new
password, and the page shows the player signed in. The new password logs in over TCP, the old one
no longer does, and the code does not work twice. Then the signed-in page verifies the email:
"Mail me a code", the code from the second mail, and the page says the email is verified (for a
new account: the reset already proved rita's address).

Every wait is for a state; the long timeouts only guard against a hang. Exit 0 when every check
passed. Screenshots go to OUTPUT_DIR.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from common import Line, chromium, free_port, start_daemon, stop_daemon

HANG = 120  # seconds: only against a hang, never a verdict
CODE = re.compile(r"^    ([2-9A-HJ-NP-Z]{8})\r?$", re.M)


def mails(directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".eml"))
    return [open(os.path.join(directory, n), encoding="utf-8").read() for n in names]


def wait_for_mails(directory, count):
    deadline = time.time() + HANG
    while time.time() < deadline:
        found = mails(directory)
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise RuntimeError(f"no mail number {count} within {HANG} s")


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    mail_dir = tempfile.mkdtemp(prefix="scavenger-recovery-mail-")
    smtp_port = free_port()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "smtp_capture.py")
    smtp = subprocess.Popen([sys.executable, script, str(smtp_port), mail_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    smtp.stdout.readline()  # "listening PORT"
    daemon, port, http_port, log = start_daemon(
        daemon_path, database_url, output,
        # A plain relay on loopback: allowed only with --smtp-allow-plaintext (else STARTTLS is required).
        "--smtp-url", f"smtp://127.0.0.1:{smtp_port}", "--smtp-allow-plaintext", "--mail-from", "scavenger@test.invalid")
    driver = None
    failures = []

    def check(condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            failures.append(what)

    try:
        Line(port).ok("REGISTER rita rita@example.org password1")
        driver = chromium()
        # Signing out reloads the page: an element found just before the reload is stale after it.
        wait = WebDriverWait(driver, HANG, ignored_exceptions=[StaleElementReferenceException])
        driver.get(f"http://127.0.0.1:{http_port}/play")
        wait.until(lambda d: d.find_element(By.ID, "forgot-form").is_displayed())

        # ---- forgot password: the code comes by mail, the reset form signs the player in.
        driver.find_element(By.ID, "forgot-name").send_keys("rita")
        driver.find_element(By.ID, "forgot-button").click()
        wait.until(lambda d: d.find_element(By.ID, "reset-form").is_displayed())
        first = wait_for_mails(mail_dir, 1)[0]
        check("X-Envelope-To: rita@example.org" in first, "the reset mail goes to the account's email")
        code = CODE.search(first).group(1)
        check(driver.find_element(By.ID, "reset-name").get_attribute("value") == "rita", "the reset form has the name")
        driver.find_element(By.ID, "reset-code").send_keys(code.lower())
        driver.find_element(By.ID, "reset-password").send_keys("newpassword2")
        driver.find_element(By.ID, "reset-button").click()
        wait.until(lambda d: d.find_element(By.ID, "who").text == "Signed in as rita")
        driver.save_screenshot(os.path.join(output, "recovery-reset.png"))
        check(True, "the page shows the player signed in after RESET")
        line = Line(port)
        check(line.call("LOGIN rita newpassword2").startswith("OK "), "the new password logs in")
        check(line.call("LOGIN rita password1").startswith("ERR UNAUTHORIZED"), "the old password does not")
        check(line.call(f"RESET rita {code} newpassword3").startswith("ERR FORBIDDEN"), "the code works once")

        # A reset by mail proves the address too.
        wait.until(lambda d: d.find_element(By.ID, "email-state").text == "(email verified)")
        check(not driver.find_element(By.ID, "verify-form").is_displayed(), "no verify form for a verified email")

        # ---- a new account verifies its email, signed in.
        driver.find_element(By.ID, "logout-button").click()
        wait.until(lambda d: d.find_element(By.ID, "register-form").is_displayed())
        driver.find_element(By.ID, "register-name").send_keys("sam")
        driver.find_element(By.ID, "register-email").send_keys("sam@example.org")
        driver.find_element(By.ID, "register-password").send_keys("password1")
        driver.find_element(By.ID, "register-button").click()
        wait.until(lambda d: d.find_element(By.ID, "email-state").text == "(email not verified)")
        driver.find_element(By.ID, "verify-send-button").click()
        second = wait_for_mails(mail_dir, 2)[1]
        check("verification" in second and "X-Envelope-To: sam@example.org" in second, "the second mail is sam's verification code")
        driver.find_element(By.ID, "verify-code").send_keys(CODE.search(second).group(1))
        driver.find_element(By.ID, "verify-button").click()
        wait.until(lambda d: d.find_element(By.ID, "email-state").text == "(email verified)")
        driver.save_screenshot(os.path.join(output, "recovery-verified.png"))
        # The account box is drawn again as the state changes: wait for the form to go.
        wait.until(lambda d: not d.find_element(By.ID, "verify-form").is_displayed())
        check(len(mails(mail_dir)) == 2, "exactly two mails were sent")
    except Exception as error:  # a failed wait or a missing element
        failures.append(repr(error))
        print("FAIL", repr(error))
        if driver:
            driver.save_screenshot(os.path.join(output, "recovery-failure.png"))
    finally:
        if driver:
            driver.quit()
        stop_daemon(daemon, log)
        smtp.stdin.close()
        smtp.wait(timeout=10)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
