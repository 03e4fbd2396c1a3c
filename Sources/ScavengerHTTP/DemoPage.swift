/// The demo web client served at `/` on the HTTP port: a page that logs in, lists the pins near a
/// point (typed or from the browser's location) with their distances through one
/// `WATCH … SNAPSHOT`, posts a pin, and shows new pins arriving — plain HTML and JavaScript over
/// the `/ws` WebSocket through scavenger.js (`/client.js`), which reconnects and resumes the
/// watch by itself; nothing fetched from elsewhere, so it works offline. For app developers, to
/// see the protocol in use.
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

<script type="module" src="/demo.js"></script>
</body>
</html>
"""#

    /// The page's script, served as `/demo.js`, an ES module over `/client.js` (scavenger.js):
    /// the page has no inline script, so its CSP can forbid inline script altogether.
    static let script = #"""
// The demo, over scavenger.js (/client.js): the client keeps one WebSocket open across drops,
// answers each request with a promise, resumes the session and the watch after reconnecting,
// and sends each write with a REQUEST key so that a retried one is done once.
import { ScavengerClient } from "/client.js";

const statusLine = document.getElementById("status");
const pinsList = document.getElementById("pins");
// The session token is kept in this browser, so a reload stays logged in (the client resumes
// it with AUTH); a token that no longer works is forgotten.
const TOKEN_KEY = "scavenger.demo.token";
const client = new ScavengerClient({ token: localStorage.getItem(TOKEN_KEY) });
client.on("session", ({ user, token, automatic }) => {
  if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
  document.getElementById("who").textContent = user ? "Logged in as " + user.name : "";
  // The page opened with a session: list what is near, as after a login.
  if (automatic && user && !watch) showNearby();
});
let watch = null;
let live = false;          // the watch's snapshot is in: new pins go on top
const shown = new Map();   // pin id → its list item

function say(text, isError) {
  statusLine.textContent = text;
  statusLine.className = isError ? "error" : "";
}

client.on("status", (status) => {
  if (status === "connected") say("Connected.");
  else if (status === "disconnected") say("Disconnected; reconnecting…", true);
});

function place() {
  return [document.getElementById("lat").value, document.getElementById("lon").value, document.getElementById("radius").value];
}

function renderPin(pin, isNew) {
  const item = document.createElement("li");
  item.dataset.id = pin.id;
  item.dataset.distance = pin.distance_m === undefined ? "" : String(pin.distance_m);
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

// Shows a pin: a changed one in its place; during the snapshot in order of distance; later on top.
function showPin(pin, isNew) {
  const item = renderPin(pin, isNew);
  const old = shown.get(pin.id);
  if (old) old.replaceWith(item);
  else if (isNew) pinsList.prepend(item);
  else {
    const after = [...pinsList.children].find((other) => other.dataset.distance !== "" && Number(other.dataset.distance) > pin.distance_m);
    pinsList.insertBefore(item, after || null);
  }
  shown.set(pin.id, item);
  updateCount();
}

function clearPins() {
  pinsList.replaceChildren();
  shown.clear();
  updateCount();
}

// One WATCH … SNAPSHOT lists the pins inside the circle and then follows it: nothing written
// between the listing and the watch is missed or shown twice.
async function showNearby() {
  const [lat, lon, radius] = place();
  if (watch) watch.close();
  clearPins();
  live = false;
  try {
    watch = client.watch(lat, lon, radius, { onEvent });
    await watch.ready;
  } catch (error) { say(error.message, true); }
}

function onEvent(event) {
  switch (event.type) {
  case "pin":
    showPin(event.pin, live);
    break;
  case "gone": {
    const item = shown.get(event.id);
    if (item) { item.remove(); shown.delete(event.id); updateCount(); }
    break;
  }
  case "ready":
    live = true;
    say(`Showing ${shown.size} pins; new ones appear as they are posted.`);
    break;
  case "reset":    // the watch could not resume: a new snapshot follows
    clearPins();
    live = false;
    break;
  case "resumed":
    say("Reconnected; caught up with what changed meanwhile.");
    break;
  }
}

document.getElementById("login-form").addEventListener("submit", async (submit) => {
  submit.preventDefault();
  const name = document.getElementById("login-name").value;
  const password = document.getElementById("login-password").value;
  try {
    const answer = await client.login(name, password);
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
    const answer = await client.post(lat, lon, input.value);
    input.value = "";
    say("Posted.");
    if (!shown.has(answer.pin.id)) showPin(answer.pin, true);
  } catch (error) { say(error.message, true); }
});

// For scripts and tests driving the page: its client and its current watch.
window.scavengerDemo = { client, get watch() { return watch; } };
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
  /* Nothing wider than a phone's screen: fields shrink to their fieldset, which shrinks to the page. */
  input, fieldset { max-width: 100%; box-sizing: border-box; }
  fieldset { min-width: 0; }
  @media (max-width: 40rem) { body { padding: .5rem; } label { display: block; margin: .2rem 0; } }
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
