/// The demo web client served at `/` on the HTTP port: a page that logs in, asks `NEARBY` for a
/// point (typed or from the browser's location), lists the pins with their distances, posts a
/// pin, and shows new pins arriving through `WATCH` — plain HTML and JavaScript over the `/ws`
/// WebSocket, nothing fetched from elsewhere, so it works offline. For app developers, to see
/// the protocol in use.
enum DemoPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Scavenger demo</title>
<link rel="stylesheet" href="/demo.css">
</head>
<body>
<h1>Scavenger: pins near you</h1>
<p class="meta">A demo of the line protocol over a WebSocket (<code>/ws</code>): each message is one request line, each answer one reply or event.</p>
<p id="status" role="status" aria-live="polite">Connecting…</p>

<form id="login-form">
<fieldset>
  <legend>Log in</legend>
  <label>Name or email <input id="login-name" autocomplete="username" required></label>
  <label>Password <input id="login-password" type="password" autocomplete="current-password" required></label>
  <button id="login-button" type="submit">Log in</button>
  <span id="who" class="meta"></span>
</fieldset>
</form>

<form id="place-form">
<fieldset>
  <legend>Where</legend>
  <label>Latitude <input id="lat" type="number" step="any" min="-90" max="90" value="52.52" required></label>
  <label>Longitude <input id="lon" type="number" step="any" min="-180" max="180" value="13.405" required></label>
  <label>Radius (m) <input id="radius" type="number" step="1" min="1" max="50000" value="1000" required></label>
  <button id="nearby-button" type="submit">Show nearby pins</button>
  <button id="locate-button" type="button">Use my location</button>
</fieldset>
</form>

<form id="post-form">
<fieldset>
  <legend>Leave a pin here</legend>
  <label>Message <input id="post-text" maxlength="500" size="40" required></label>
  <button id="post-button" type="submit">Post</button>
</fieldset>
</form>

<section aria-labelledby="pins-heading">
  <h2 id="pins-heading">Nearby <span id="count" class="meta"></span></h2>
  <ul id="pins"></ul>
</section>

<script src="/demo.js"></script>
</body>
</html>
"""#

    /// The page's script, served as `/demo.js`: the page has no inline script, so its CSP can
    /// forbid inline script altogether.
    static let script = #"""
"use strict";
// One WebSocket; requests are answered in order, so a queue of callbacks matches replies to
// requests. EVENT lines are not replies: they go to the watch handler.
const statusLine = document.getElementById("status");
const pinsList = document.getElementById("pins");
let socket, waiting = [], watchID = null, shown = new Map();

function say(text, isError) {
  statusLine.textContent = text;
  statusLine.className = isError ? "error" : "";
}

function quote(text) { return JSON.stringify(text); }

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(scheme + "//" + location.host + "/ws");
  socket.onopen = () => say("Connected.");
  socket.onclose = () => { say("Disconnected; reload to reconnect.", true); waiting = []; };
  socket.onmessage = (message) => {
    const line = message.data;
    if (line.startsWith("EVENT ")) { onEvent(JSON.parse(line.slice(6))); return; }
    const next = waiting.shift();
    if (next) next(line);
  };
}

// Sends a request line; resolves with the JSON of OK, rejects with the ERR line.
function request(line) {
  return new Promise((resolve, reject) => {
    waiting.push((reply) => {
      if (reply.startsWith("OK ")) resolve(JSON.parse(reply.slice(3)));
      else reject(new Error(reply));
    });
    socket.send(line);
  });
}

function place() {
  return [document.getElementById("lat").value, document.getElementById("lon").value, document.getElementById("radius").value];
}

function renderPin(pin, isNew) {
  const item = document.createElement("li");
  item.dataset.id = pin.id;
  if (isNew) item.className = "new";
  const text = document.createElement("div");
  text.className = "pin-text";
  text.textContent = pin.text || "(photo)";
  const meta = document.createElement("div");
  meta.className = "meta";
  const distance = pin.distance_m === undefined ? "" : Math.round(pin.distance_m) + " m away · ";
  meta.textContent = distance + "by " + pin.author + " · " + pin.created;
  item.append(text, meta);
  return item;
}

function updateCount() { document.getElementById("count").textContent = "(" + shown.size + ")"; }

async function showNearby() {
  const [lat, lon, radius] = place();
  try {
    const page = await request(`NEARBY ${lat} ${lon} ${radius} LIMIT 50`);
    pinsList.replaceChildren();
    shown = new Map();
    for (const pin of page.pins) { shown.set(pin.id, true); pinsList.append(renderPin(pin, false)); }
    updateCount();
    if (watchID) { await request(`UNWATCH ${watchID}`).catch(() => {}); watchID = null; }
    const watch = await request(`WATCH ${lat} ${lon} ${radius}`);
    watchID = watch.watch;
    say(`Showing ${page.pins.length} pins; new ones appear as they are posted.`);
  } catch (error) { say(error.message, true); }
}

function onEvent(event) {
  if (event.watch !== watchID) return;
  if (event.type === "pin" && !shown.has(event.pin.id)) {
    shown.set(event.pin.id, true);
    pinsList.prepend(renderPin(event.pin, true));
    updateCount();
  } else if (event.type === "gone") {
    const item = pinsList.querySelector(`li[data-id="${CSS.escape(event.id)}"]`);
    if (item) item.remove();
    shown.delete(event.id);
    updateCount();
  } else if (event.type === "overflow") {
    watchID = null;
    showNearby();
  }
}

document.getElementById("login-form").addEventListener("submit", async (submit) => {
  submit.preventDefault();
  const name = document.getElementById("login-name").value;
  const password = document.getElementById("login-password").value;
  try {
    const answer = await request(`LOGIN ${quote(name)} ${quote(password)}`);
    document.getElementById("who").textContent = "Logged in as " + answer.user.name;
    say("Logged in.");
    await showNearby();
  } catch (error) { say(error.message, true); }
});

document.getElementById("place-form").addEventListener("submit", (submit) => { submit.preventDefault(); showNearby(); });

document.getElementById("locate-button").addEventListener("click", () => {
  if (!navigator.geolocation) { say("This browser cannot tell its location.", true); return; }
  navigator.geolocation.getCurrentPosition((position) => {
    document.getElementById("lat").value = position.coords.latitude.toFixed(5);
    document.getElementById("lon").value = position.coords.longitude.toFixed(5);
    showNearby();
  }, (error) => say("Location: " + error.message, true));
});

document.getElementById("post-form").addEventListener("submit", async (submit) => {
  submit.preventDefault();
  const [lat, lon] = place();
  const input = document.getElementById("post-text");
  try {
    const answer = await request(`POST ${lat} ${lon} ${quote(input.value)}`);
    input.value = "";
    say("Posted.");
    if (!shown.has(answer.pin.id)) {
      shown.set(answer.pin.id, true);
      pinsList.prepend(renderPin(answer.pin, true));
      updateCount();
    }
  } catch (error) { say(error.message, true); }
});

connect();
"""#

    /// The page's style sheet, served as `/demo.css`.
    static let style = #"""
  body { font: 16px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 46rem; padding: 1rem; color: #111; background: #fff; }
  h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
  fieldset { border: 1px solid #888; border-radius: 6px; margin: 0 0 1rem; padding: .6rem .8rem; }
  legend { font-weight: 600; padding: 0 .3rem; }
  label { display: inline-block; margin: .2rem .6rem .2rem 0; }
  input { font: inherit; padding: .25rem .4rem; border: 1px solid #555; border-radius: 4px; }
  input[type=number] { width: 8rem; }
  button { font: inherit; padding: .3rem .8rem; border: 1px solid #1a4d8f; border-radius: 4px; background: #1a4d8f; color: #fff; cursor: pointer; }
  button:focus, input:focus { outline: 3px solid #f5a623; outline-offset: 1px; }
  #status { min-height: 1.4em; color: #1a4d8f; }
  #status.error { color: #a00000; }
  ul#pins { list-style: none; padding: 0; margin: 0; }
  ul#pins li { border-bottom: 1px solid #ddd; padding: .4rem 0; }
  ul#pins li.new { background: #fff6d5; }
  .meta { color: #444; font-size: .85rem; }
  #pins-heading { font-size: 1.1rem; }
"""#
}
