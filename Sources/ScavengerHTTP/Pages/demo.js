// The demo, over scavenger.js (/client.js): the client keeps one WebSocket open across drops,
// answers each request with a promise, resumes the session and the watch after reconnecting,
// and sends each write with a REQUEST key so that a retried one is done once.
import { ScavengerClient } from "/client.js";
import { locationNeedsHTTPS } from "/location.js";
import { makeMap } from "/basemap.js";
import { PinLayer } from "/pin-map.js";

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
// The map: every pin in view at any zoom (MAP), counted in cells when they are many.
const map = makeMap("map", "map-note");
const pinLayer = new PinLayer(map, client, {
  onError: (error) => say("Map: " + error.message, true),
  describe: (total) => { document.getElementById("map-count").textContent = `(${total.toLocaleString("en")} in view)`; },
});
map.setView([Number(document.getElementById("lat").value), Number(document.getElementById("lon").value)], 14);
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
  if (pin.kind === "photo" && pin.thumb) {
    const thumb = document.createElement("img");
    thumb.className = "thumb";
    thumb.src = client.photoURL(pin.thumb);
    thumb.alt = "Photo by " + pin.author;
    thumb.width = 48;
    thumb.height = 48;
    item.append(thumb);
  }
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
  map.panTo([Number(lat), Number(lon)]);
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
  if (!navigator.geolocation) { say(locationNeedsHTTPS(null) || "This browser cannot tell its location.", true); return; }
  navigator.geolocation.getCurrentPosition((position) => {
    document.getElementById("lat").value = position.coords.latitude.toFixed(5);
    document.getElementById("lon").value = position.coords.longitude.toFixed(5);
    showNearby();
  }, (error) => say(locationNeedsHTTPS(error) || "Location: " + error.message, true));
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
window.scavengerDemo = { client, map, pinLayer, get watch() { return watch; } };
