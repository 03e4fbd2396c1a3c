"""Helpers shared by the browser tests: free ports, a line-protocol client, the daemon, Chromium."""
import base64
import json
import os
import socket
import struct
import subprocess
import time
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def png(width, height):
    """A WIDTH×HEIGHT PNG (a colour gradient) as base64: a photo large enough to be made smaller."""
    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in (x * 255 // width, y * 255 // height, 160))
        for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    return base64.b64encode(data).decode()


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


def start_daemon(daemon_path, database_url, output, *flags, ports=None):
    """`scavengerd serve` on free ports (line protocol and --http-port), or on PORTS (a pair),
    logging into OUTPUT; returns (process, port, http_port, log) once both ports listen and the
    feed is loaded."""
    port, http_port = ports or (free_port(), free_port())
    log = open(os.path.join(output, "scavengerd.log"), "a")
    daemon = subprocess.Popen(
        [daemon_path, "serve", "--port", str(port), "--http-port", str(http_port), *flags],
        env={**os.environ, "DATABASE_URL": database_url}, stderr=log, stdout=subprocess.DEVNULL)
    wait_for_port(port, daemon)
    wait_for_port(http_port, daemon)
    probe = Line(port)
    deadline = time.time() + 20
    while probe.call("NEARBY 0 0 1").startswith("ERR UNAVAILABLE") and time.time() < deadline:
        time.sleep(0.2)
    return daemon, port, http_port, log


def stop_daemon(daemon, log):
    daemon.terminate()
    try:
        daemon.wait(timeout=10)
    except subprocess.TimeoutExpired:
        daemon.kill()
    log.close()


def chromium(width=900, height=1000, *extra):
    """Headless Chromium (Debian's), driven by its chromedriver; `extra` flags added."""
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}", *extra):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


class PageChecks:
    """What the hunt pages' tests check a page with: failures are collected (the test goes on and
    reports them all); every wait is for a state, its 60 s only a guard against a hang (the
    machine may be busy). `driver` is set once Chromium is up. Texts are read in one script
    inside the page (as rendered, like an element's .text): the pages redraw their lists as
    events come, and an element found one call earlier may be gone."""

    def __init__(self):
        self.failures = []
        self.driver = None

    def check(self, condition, message):
        if not condition:
            self.failures.append(message)

    def until(self, condition, message):
        try:
            WebDriverWait(self.driver, 60, poll_frequency=0.05).until(lambda d: condition())
            return True
        except Exception:  # noqa: BLE001 - a wait that never ends is a failure of the check
            self.failures.append(message)
            return False

    def text(self, selector):
        return self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText.trim() : ''", selector)

    def texts(self, selector):
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.innerText.trim())", selector)

    def shown(self, selector):
        return self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return !!e && e.offsetParent !== null", selector)

    def locate(self, lat, lon, accuracy=5):
        """The browser's location, as the page's geolocation will report it."""
        self.driver.execute_cdp_cmd(
            "Emulation.setGeolocationOverride", {"latitude": lat, "longitude": lon, "accuracy": accuracy})

    def result(self):
        """The check-in result line's class and text."""
        element = self.driver.find_element(By.ID, "checkin-result")
        return element.get_attribute("class"), element.text

    def failed(self, error, output, name):
        """The run stopped on `error`: a failure, with a screenshot of the page as it was."""
        self.failures.append(f"{type(error).__name__}: {error}")
        if self.driver is not None:
            self.driver.save_screenshot(os.path.join(output, f"{name}-failure.png"))

    def close(self, daemon, log, not_found_fails=False):
        """Prints the browser console's errors (a 404 is a failure when `not_found_fails`: a file of
        the daemon's the pages asked for and did not get), quits Chromium and stops the daemon."""
        if self.driver is not None:
            for entry in self.driver.get_log("browser") if hasattr(self.driver, "get_log") else []:
                if entry.get("level") == "SEVERE":
                    print("browser console:", entry.get("message"))
                    if not_found_fails and "status of 404" in entry.get("message", ""):
                        self.failures.append(f"a 404 in the browser's console: {entry.get('message')}")
            self.driver.quit()
        stop_daemon(daemon, log)

    def report(self, what, passed):
        """Prints each failure, or that `what` passed (`passed` says what was checked); the exit code."""
        for failure in self.failures:
            print(f"FAIL {what}:", failure)
        if not self.failures:
            print(f"PASS {what}: {passed}")
        return 1 if self.failures else 0
