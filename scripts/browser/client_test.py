#!/usr/bin/env python3
"""scavenger.js (/client.js) in a real browser, across a restart of the daemon and a lost reply.

Usage: client_test.py SCAVENGERD DATABASE_URL OUTPUT_DIR

Starts `scavengerd serve` (daemon A) against DATABASE_URL (already migrated), then in headless
Chromium opens the demo page (which uses the module), logs in and lists the pins through its
watch; beside it, a probe in the same page imports /client.js itself and watches the same circle,
recording every event it gets. Then:

1. A restart. Daemon A is killed (SIGKILL). While it is down, a pin is posted through a second
   daemon (B) on the same database, and the probe sends a POST of its own (queued: no socket).
   A is started again on the same ports and database. Without a reload, the demo page and the
   probe reconnect, resume their watches with SINCE (the probe gets `resumed`, no `reset`), and
   the pin posted while A was down, the probe's own pin and a pin posted after the restart each
   arrive exactly once: one list item each on the page, one `pin` event each at the probe, and
   no pin id twice in the probe's events at all. The probe's queued POST is stored once.
2. A lost reply. The page is loaded through a TCP proxy that, once armed, cuts the connection
   that carries the reply to a POST instead of passing it on: the write ran, its reply was lost.
   The client reconnects, resumes its session with AUTH, sends the very same line (same
   REQUEST key) again and gets the stored reply; the pin is stored once (counted over TCP).
3. The player's page (/play) across a restart: joined to a running hunt, it shows a hint sent
   through daemon B while A is down (the client re-issues WATCH HUNT and the page reads the hunt
   again on its `resync`) and one sent after the restart (live), each once, still signed in,
   without a reload.

Every wait is for a state; the long timeouts only guard against a hang. Exit 0 when every check
passed. Screenshots go to OUTPUT_DIR.
"""
import json
import os
import socket
import sys
import threading

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from common import Line, chromium, start_daemon, stop_daemon

LAT, LON, RADIUS = 52.52, 13.405, 1000
HANG = 120  # seconds: only against a hang, never a verdict


class CuttingProxy:
    """A TCP proxy to 127.0.0.1:TARGET. Armed with a marker, it cuts (closes both ways, passing
    nothing on) the first connection whose bytes from the server contain it; then disarms."""

    def __init__(self, target):
        self.target = target
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.marker = None
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, marker):
        with self.lock:
            self.marker = marker

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, source, sink, from_server):
        tail = b""
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if from_server:
                    with self.lock:
                        marker = self.marker
                        cut = marker is not None and marker in tail + data
                        if cut:
                            self.marker = None
                            self.cuts += 1
                    if cut:
                        break
                    tail = (tail + data)[-64:]
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()

    def close(self):
        self.listener.close()


# Runs in the page: imports the module, opens a client of its own (logged in as NAME), watches
# the circle and keeps every event and status; every line the page's sockets send is logged too.
PROBE = """
const [name, password, lat, lon, radius, done] = arguments;
if (!window.__sent) {
  window.__sent = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { window.__sent.push(String(data)); return send.call(this, data); };
}
import("/client.js").then(async ({ ScavengerClient }) => {
  const client = new ScavengerClient({ minDelay: 200, maxDelay: 2000 });
  const probe = { client, events: [], statuses: [], results: {} };
  window.__probe = probe;
  client.on("status", (status) => probe.statuses.push(status));
  await client.login(name, password);
  const watch = client.watch(lat, lon, radius);
  probe.watch = watch;
  watch.on((event) => probe.events.push(event));
  await watch.ready;
  done("ok");
}).catch((error) => done("error: " + error.message));
"""

# Posts through the probe's client, keeping the reply (or the error) under LABEL.
PROBE_POST = """
const [label, lat, lon, text] = arguments;
window.__probe.client.post(lat, lon, text).then(
  (answer) => { window.__probe.results[label] = { ok: answer }; },
  (error) => { window.__probe.results[label] = { error: error.code + " " + error.message }; });
"""


def texts(driver, selector):
    """The texts of the elements SELECTOR finds, read at one instant (a list the page rebuilds
    is never read half old, half new)."""
    return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent)", selector)


def pin_texts(driver):
    return texts(driver, "#pins li .pin-text")


def probe_pin_ids(driver):
    return driver.execute_script(
        "return window.__probe.events.filter((e) => e.type === 'pin').map((e) => e.pin.id)")


def hint_texts(driver):
    return texts(driver, "#hints .hint-text")


def count_stored(line, text):
    """How many live pins near the point hold TEXT, asked of the daemon."""
    pins = line.ok(f"NEARBY {LAT} {LON} {RADIUS} LIMIT 200")["pins"]
    return sum(1 for pin in pins if pin["text"] == text)


def main():
    daemon_path, database_url, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    flags = ("--register-rate", "off")
    daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, *flags)
    second = None
    proxy = None
    failures = []
    driver = None

    def check(condition, message):
        if not condition:
            failures.append(message)

    try:
        walker = Line(port)
        walker.ok("REGISTER walker walker@example.org password1")
        walker.ok(f'POST {LAT + 0.0005} {LON} "Free coffee at the blue kiosk"')
        walker.ok(f'POST {LAT - 0.001} {LON + 0.0015} "Street piano under the bridge"')
        Line(port).ok("REGISTER wanderer wanderer@example.org password2")

        driver = chromium()
        wait = WebDriverWait(driver, HANG, poll_frequency=0.05)
        driver.set_script_timeout(HANG)
        driver.get(f"http://127.0.0.1:{http_port}/")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("walker")
        driver.find_element(By.ID, "login-password").send_keys("password1")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Logged in as walker"))
        wait.until(lambda d: len(pin_texts(d)) == 2)
        wait.until(lambda d: d.execute_script("const w = window.scavengerDemo.watch; return !!w && w.seq !== null"))
        started = driver.execute_async_script(PROBE, "wanderer", "password2", LAT, LON, RADIUS)
        check(started == "ok", f"the probe did not start: {started}")
        wait.until(lambda d: d.execute_script("return window.__probe.events.some((e) => e.type === 'ready')"))
        check(len(probe_pin_ids(driver)) == 2, f"the probe's snapshot: {probe_pin_ids(driver)}")
        # A mark that a reload would wipe.
        driver.execute_script("window.__notReloaded = true")

        # ---- 1. The restart: kill A, post through B meanwhile, start A again on its ports.
        daemon.kill()
        daemon.wait()
        log.close()
        wait.until(lambda d: d.execute_script("return window.__probe.statuses.includes('disconnected')"))
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "reconnecting"))
        second, second_port, _, second_log = start_daemon(daemon_path, database_url, output, *flags)
        other = Line(second_port)
        other.ok("LOGIN wanderer password2")
        while_down = "Posted while the daemon was down"
        other.ok(f'POST {LAT + 0.0002} {LON + 0.0002} {json.dumps(while_down)}')
        stop_daemon(second, second_log)
        second = None
        # The probe writes while it has no socket: queued, sent with its key once it is back.
        queued = "Queued by the probe while disconnected"
        driver.execute_script(PROBE_POST, "queued", LAT - 0.0002, LON, queued)
        daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, *flags, ports=(port, http_port))
        after = "Posted after the restart"
        wait.until(lambda d: d.execute_script("return window.__probe.client.connected"))
        wait.until(lambda d: "queued" in d.execute_script("return window.__probe.results"))
        poster = Line(port)
        poster.ok("LOGIN walker password1")
        poster.ok(f'POST {LAT - 0.0003} {LON - 0.0003} {json.dumps(after)}')
        for text in (while_down, queued, after):
            try:
                wait.until(lambda d, text=text: text in pin_texts(d))
            except Exception:  # noqa: BLE001
                failures.append(f"the demo page never showed {text!r} after the restart")
        wait.until(lambda d: len(probe_pin_ids(d)) >= 5)
        texts = pin_texts(driver)
        for text in (while_down, queued, after):
            check(texts.count(text) == 1, f"the demo page shows {text!r} {texts.count(text)} times")
        check(len(texts) == 5, f"the demo page lists {len(texts)} pins, not 5: {texts}")
        check(driver.execute_script("return window.__notReloaded === true"), "the page was reloaded")
        probe = driver.execute_script(
            "const p = window.__probe; return {events: p.events.map((e) => ({type: e.type, id: e.pin ? e.pin.id : e.id, text: e.pin ? e.pin.text : null})), statuses: p.statuses, results: p.results}")
        pin_events = [e for e in probe["events"] if e["type"] == "pin"]
        ids = [e["id"] for e in pin_events]
        check(len(ids) == len(set(ids)), f"a pin came twice to the probe: {ids}")
        for text in (while_down, queued, after):
            n = sum(1 for e in pin_events if e["text"] == text)
            check(n == 1, f"the probe got {text!r} {n} times")
        types = [e["type"] for e in probe["events"]]
        check("resumed" in types, f"the probe's watch did not resume with SINCE: {types}")
        check("reset" not in types, f"the probe's watch started over: {types}")
        check("ok" in probe["results"].get("queued", {}), f"the queued POST: {probe['results'].get('queued')}")
        counter = Line(port)
        for text in (while_down, queued, after):
            check(count_stored(counter, text) == 1, f"{text!r} is stored {count_stored(counter, text)} times")
        sent = driver.execute_script("return window.__sent")
        queued_lines = [line for line in sent if queued in line]
        check(len(queued_lines) == 1 and " REQUEST " in queued_lines[0],
              f"the queued POST went out as {queued_lines}")
        driver.save_screenshot(os.path.join(output, "client-restart.png"))
        print("after the restart: the demo page and the probe caught up without a reload; events:",
              [t for t in types if t != "pin"], "+", len(pin_events), "pins")

        # ---- 2. A lost reply: the page through a proxy that cuts the POST's reply.
        proxy = CuttingProxy(http_port)
        driver.get(f"http://127.0.0.1:{proxy.port}/")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        started = driver.execute_async_script(PROBE, "walker", "password1", LAT, LON, RADIUS)
        check(started == "ok", f"the probe did not start through the proxy: {started}")
        proxy.arm(b'OK {"pin"')
        lost = "Stored once though its reply was lost"
        driver.execute_script(PROBE_POST, "lost", LAT + 0.0001, LON - 0.0001, lost)
        wait.until(lambda d: "lost" in d.execute_script("return window.__probe.results"))
        result = driver.execute_script("return window.__probe.results.lost")
        check(proxy.cuts == 1, f"the proxy cut {proxy.cuts} connections, not 1")
        check("ok" in result, f"the POST whose reply was lost: {result}")
        sent = driver.execute_script("return window.__sent")
        posts = [line for line in sent if lost in line]
        check(len(posts) == 2 and posts[0] == posts[1] and " REQUEST " in posts[0],
              f"the POST was not resent as the same line with its key: {posts}")
        check(driver.execute_script("return window.__probe.statuses.filter((s) => s === 'connected').length") >= 2,
              "the probe did not reconnect")
        check(count_stored(counter, lost) == 1, f"the POST is stored {count_stored(counter, lost)} times")
        if "ok" in result:
            stored = [p for p in counter.ok(f"NEARBY {LAT} {LON} {RADIUS} LIMIT 200")["pins"] if p["text"] == lost]
            check(stored and stored[0]["id"] == result["ok"]["pin"]["id"],
                  "the retried POST answered another pin than the one stored")
        # The probe's watch saw it once too (a live event, on the new connection).
        wait.until(lambda d: d.execute_script(
            "return window.__probe.events.some((e) => e.type === 'pin' && e.pin.text === arguments[0])", lost))
        n = driver.execute_script(
            "return window.__probe.events.filter((e) => e.type === 'pin' && e.pin.text === arguments[0]).length", lost)
        check(n == 1, f"the probe's watch got the retried pin {n} times")
        driver.save_screenshot(os.path.join(output, "client-retry.png"))
        proxy.close()
        proxy = None

        # ---- 3. The player's page (/play) across a restart: its WATCH HUNT is re-issued and the
        # hunt read again, so a hint sent while the daemon was down shows, and one sent after.
        host = Line(port)
        host.ok("REGISTER hostess hostess@example.org password1")
        hunt = host.ok('CREATEHUNT "Across a restart"')["hunt"]
        host.ok(f'ADDSTOP {hunt["id"]} {LAT} {LON} 40 10 "The kiosk"')
        host.ok(f'STARTHUNT {hunt["id"]}')
        driver.get(f"http://127.0.0.1:{http_port}/play")
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "Connected"))
        driver.find_element(By.ID, "login-name").send_keys("wanderer")
        driver.find_element(By.ID, "login-password").send_keys("password2")
        driver.find_element(By.ID, "login-button").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "who"), "Signed in as wanderer"))
        driver.find_element(By.ID, "join-code").send_keys(hunt["code"])
        driver.find_element(By.ID, "join-button").click()
        wait.until(lambda d: d.find_element(By.ID, "hunt-name").text == "Across a restart")
        host.ok(f'HINT {hunt["id"]} "Before the restart"')
        wait.until(lambda d: "Before the restart" in hint_texts(d))
        driver.execute_script("window.__notReloaded = true")
        daemon.kill()
        daemon.wait()
        log.close()
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "reconnecting"))
        second, second_port, _, second_log = start_daemon(daemon_path, database_url, output, *flags)
        host_b = Line(second_port)
        host_b.ok("LOGIN hostess password1")
        host_b.ok(f'HINT {hunt["id"]} "While the daemon was down"')
        stop_daemon(second, second_log)
        second = None
        daemon, port, http_port, log = start_daemon(daemon_path, database_url, output, *flags, ports=(port, http_port))
        wait.until(lambda d: "While the daemon was down" in hint_texts(d))
        host = Line(port)
        host.ok("LOGIN hostess password1")
        host.ok(f'HINT {hunt["id"]} "After the restart"')
        wait.until(lambda d: "After the restart" in hint_texts(d))
        hints = hint_texts(driver)
        for text in ("Before the restart", "While the daemon was down", "After the restart"):
            check(hints.count(text) == 1, f"the player's page shows the hint {text!r} {hints.count(text)} times: {hints}")
        check(driver.execute_script("return window.__notReloaded === true"), "the player's page was reloaded")
        check(driver.find_element(By.ID, "who").text == "Signed in as wanderer", "the player's session was not resumed")
        driver.save_screenshot(os.path.join(output, "client-play-restart.png"))
    except Exception as error:  # noqa: BLE001 - any failure of the run is a failure of the check
        failures.append(f"{type(error).__name__}: {error}")
        if driver is not None:
            driver.save_screenshot(os.path.join(output, "client-failure.png"))
    finally:
        if driver is not None:
            driver.quit()
        if proxy is not None:
            proxy.close()
        if second is not None:
            stop_daemon(second, second_log)
        if daemon.poll() is None:
            stop_daemon(daemon, log)
    for failure in failures:
        print("FAIL client module:", failure)
    if not failures:
        print("PASS client module: a watch goes on across a daemon restart (pins posted while it was down, "
              "queued meanwhile and after it each arrive once, no reload); a write whose reply was lost is "
              "resent with its key and stored once; the player's page "
              "follows its hunt across a restart")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
